"""What the python3 programs of bench/hugepages-payoff print at their end,
as tests/workloads/payoff does:
  reads ns=N sum=S             the timed phase
  memory rss_kb=N anon_huge_kb=N"""


def report(ns, total):
    print(f"reads ns={ns} sum={total}")
    rss = huge = -1
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("Rss:"):
            rss = int(line.split()[1])
        elif line.startswith("AnonHugePages:"):
            huge = int(line.split()[1])
    print(f"memory rss_kb={rss} anon_huge_kb={huge}")
