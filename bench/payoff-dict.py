#!/usr/bin/env python3
"""The real program of bench/hugepages-payoff: random lookups over a large
dict, in python3 (code nobody here wrote: CPython's dict and allocator).
Prints, as tests/workloads/payoff does:
  reads ns=N sum=S             the lookups' time
  memory rss_kb=N anon_huge_kb=N
usage: payoff-dict.py [ENTRIES] [LOOKUPS]"""
import random
import sys
import time

from payoff_report import report

n = int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000
lookups = int(sys.argv[2]) if len(sys.argv) > 2 else 4_000_000
d = {i * 7919: i for i in range(n)}
keys = [i * 7919 for i in range(n)]      # new int objects: each lookup compares by value
rnd = random.Random(1)
sample = [keys[rnd.randrange(n)] for _ in range(lookups)]   # drawn before the clock starts
t = time.perf_counter_ns()
s = 0
for k in sample:
    s += d[k]
report(time.perf_counter_ns() - t, s)
