#!/usr/bin/env bash
# With a ring buffer too small for the fault rate, records are lost: the
# kernel's LOST records reach the file and the summary counts them exactly,
# and every command that reads the file says its attribution is uncertain.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

ms_record summary.txt -m 1 -o lost.data -- "$WORKLOADS/fault-loop" 64 1
cat summary.txt
ours=$(sed -n 's/.*, \([0-9]*\) records lost.*/\1/p' summary.txt)
[ "$ours" -gt 0 ] || skip "a 1-page ring lost nothing this time: nothing to count"
grep -q 'hint: records were lost' summary.txt || fail "no hint about the lost records"
perfs=$(perf script -i lost.data --show-lost-events 2>/dev/null |
	awk '/PERF_RECORD_LOST/ { for (i = 1; i < NF; i++) if ($i == "lost") s += $(i + 1) } END { print s + 0 }')
[ "$perfs" -eq "$ours" ] || fail "perf sees $perfs lost records, the summary says $ours"
pass "$ours lost records, written as LOST records and counted"

# --all: the ring may have lost every map of the program, leaving each
# sample unmapped and each region of it without samples.
pid=$("$MAPSCOPE" report --all -i lost.data --format json 2>/dev/null |
	python3 -c 'import json,sys; print([r["pid"] for r in json.load(sys.stdin)["regions"] if r["pid"]][0])')
for cmd in report timeline unmapped hugepages "maps --pid $pid --at end"; do
	# shellcheck disable=SC2086
	"$MAPSCOPE" $cmd -i lost.data >out.txt 2>err.txt || true
	grep -q "lost $ours records, from .* attribution is uncertain" err.txt ||
		fail "$cmd does not say the attribution is uncertain: $(cat err.txt)"
done
grep -q "[0-9]* noticed as process $pid wrote next" err.txt || fail "the warnings do not name the process the LOST records name: $(cat err.txt)"
grep -q "the records lost may be any process's" err.txt || fail "the warnings do not say a lost record may be any process's: $(cat err.txt)"
"$MAPSCOPE" maps -i lost.data --pid "$pid" --at last >/dev/null 2>err.txt || true
grep -q "records were lost before then ($ours in the recording, of any process" err.txt || fail "maps does not say records were lost before then: $(cat err.txt)"
"$MAPSCOPE" report --all -i lost.data --format json >r.json 2>/dev/null || true
grep -q '"records_lost": true' r.json || fail "no region of the process is marked: records lost"
grep -q '"uncertain": true' r.json || fail "the JSON report of a file with lost records is not marked uncertain"
"$MAPSCOPE" report -i lost.data >r.txt 2>/dev/null || true
grep -q '(attribution uncertain)' r.txt || fail "the text report of a file with lost records is not marked uncertain"
pass "report, timeline, unmapped, hugepages and maps each say the attribution is uncertain"
