#!/usr/bin/env bash
# With a ring buffer too small for the fault rate, records are lost: the
# kernel's LOST records reach the file and the summary counts them exactly.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

"$MAPSCOPE" record -m 1 -o lost.data -- "$WORKLOADS/fault-loop" 64 1 2>summary.txt ||
	fail "record failed: $(cat summary.txt)"
cat summary.txt
ours=$(sed -n 's/.* samples, \([0-9]*\) records lost.*/\1/p' summary.txt)
[ "$ours" -gt 0 ] || skip "a 1-page ring lost nothing this time: nothing to count"
grep -q 'hint: records were lost' summary.txt || fail "no hint about the lost records"
perfs=$(perf script -i lost.data --show-lost-events 2>/dev/null |
	awk '/PERF_RECORD_LOST/ { for (i = 1; i < NF; i++) if ($i == "lost") s += $(i + 1) } END { print s + 0 }')
[ "$perfs" -eq "$ours" ] || fail "perf sees $perfs lost records, the summary says $ours"
pass "$ours lost records, written as LOST records and counted"
