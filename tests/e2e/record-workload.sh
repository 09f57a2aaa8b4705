#!/usr/bin/env bash
# Records the aspace-ops workload and checks every change it printed, and
# every page it touched, against the recording as perf script reads it.
source "$(dirname "$0")/lib.sh"
need_recording

cd "$TMP"
"$MAPSCOPE" record -o ops.data -- "$WORKLOADS/aspace-ops" "$WORKLOADS/exec-target" \
	>ops.txt 2>summary.txt || fail "record exited $?: $(cat summary.txt)"
cat summary.txt
[ "$(stat -c %a ops.data)" = 600 ] || fail "ops.data has mode $(stat -c %a ops.data), not 0600"
perf_script ops.data >ops.script || fail "perf script failed: $(cat "$TMP/perf-script.err")"
python3 "$E2E_DIR/check-record.py" ops.txt ops.script || fail "the recording does not match the workload"
grep -q '^touch pid=.* start=' ops.txt || fail "the workload printed no touches"
pass "every printed change and touched page is in the recording"
