#!/usr/bin/env bash
# record --damon, live: a kdamond of ours monitors the command, its
# damon:damon_aggregated samples are in the file as the command's, and
# nothing of ours is left after. Only where the machine's DAMON is free:
# mapscope never touches a kdamond it did not start.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
real=/sys/kernel/mm/damon/admin
[ -e /sys/kernel/tracing/events/damon/damon_aggregated ] || skip "the kernel has no damon tracepoints (CONFIG_DAMON)"
[ -e $real/kdamonds/nr_kdamonds ] || skip "the kernel has no DAMON sysfs interface (CONFIG_DAMON_SYSFS)"
[ "$(cat $real/kdamonds/nr_kdamonds)" = 0 ] ||
	skip "DAMON is busy with the machine's own kdamond (nr_kdamonds $(cat $real/kdamonds/nr_kdamonds)), which mapscope never touches"
ms_record live.txt --damon --damon-intervals 5000,50000,500000 -o live.data -- "$WORKLOADS/fault-loop"
grep -q "DAMON" live.txt && fail "DAMON was not used: $(cat live.txt)"
perf script -i live.data -F comm,event,trace 2>/dev/null | grep "damon_aggregated" >agg.txt || fail "no damon_aggregated samples"
grep -q "fault-loop" agg.txt || fail "the aggregates are not written as the command's: $(head -3 agg.txt)"
[ "$(cat $real/kdamonds/nr_kdamonds)" = 0 ] || fail "our kdamond is left after recording"
pass "live DAMON: aggregates recorded as the command's, our kdamond removed"
