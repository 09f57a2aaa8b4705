#!/usr/bin/env python3
"""The sparse real program of bench/hugepages-payoff: python3 (CPython's
own allocation paths, code nobody here wrote) holding a dense table it
reads at random and a large buffer it writes sparsely, the pattern where
advising every mapping costs memory:
  table   bytearray(TABLE MiB): CPython's PyByteArray_Resize mallocs it
          and zeroes it whole, one fault per 4 KiB page without hugepages
  sparse  an anonymous private mmap.mmap of SPARSE MiB (CPython's mmap
          module maps it), then one byte in every 64th page is written,
          as a hash table or an arena used thinly
Then READS random reads of the table (timed). Prints, as
tests/workloads/payoff does:
  reads ns=N sum=S             the reads' time
  memory rss_kb=N anon_huge_kb=N
usage: payoff-sparse.py [TABLE_MIB] [SPARSE_MIB] [READS]"""
import mmap
import random
import sys
import time

from payoff_report import report

table_mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
sparse_mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
reads = int(sys.argv[3]) if len(sys.argv) > 3 else 2_000_000
table = bytearray(table_mib << 20)
sparse = mmap.mmap(-1, sparse_mib << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, sparse_mib << 20, 64 * 4096):
    sparse[off] = 1
rnd = random.Random(1)
idx = [rnd.randrange(len(table)) for _ in range(reads)]   # drawn before the clock starts
t = time.perf_counter_ns()
s = 0
for i in idx:
    s += table[i]
report(time.perf_counter_ns() - t, s)
