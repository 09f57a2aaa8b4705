#!/usr/bin/env bash
# Records the aspace-ops workload and checks every change it printed, and
# every page it touched, against the recording as perf script reads it.
source "$(dirname "$0")/lib.sh"
need_recording

cd "$TMP"
ms_record summary.txt -o ops.data -- "$WORKLOADS/aspace-ops" "$WORKLOADS/exec-target" >ops.txt
cat summary.txt
[ "$(stat -c %a ops.data)" = 600 ] || fail "ops.data has mode $(stat -c %a ops.data), not 0600"
perf_script ops.data >ops.script || fail "perf script failed: $(cat "$TMP/perf-script.err")"
python3 "$E2E_DIR/check-record.py" ops.txt ops.script || fail "the recording does not match the workload"
grep -q '^touch pid=.* start=' ops.txt || fail "the workload printed no touches"
pass "every printed change and touched page is in the recording"

# Each thread's stack is named [stack:TID]: the page-fault samples carry no
# registers, so the name comes from the stack pointer on the thread's other
# samples (its syscalls, and the stack pointer's own event).
"$MAPSCOPE" report -i ops.data --format json >ops.json 2>/dev/null || fail "report failed"
python3 - ops.txt ops.json <<'PY' || fail "thread stacks are not named"
import json, re, sys
rep = json.load(open(sys.argv[2]))
bad = n = 0
for m in re.finditer(r"^thread-stack pid=(\d+) tid=(\d+) start=(0x[0-9a-f]+) end=(0x[0-9a-f]+)",
                     open(sys.argv[1]).read(), re.M):
    pid, tid, lo, hi = int(m[1]), int(m[2]), int(m[3], 16), int(m[4], 16)
    n += 1
    rows = [r for r in rep["regions"] if r["pid"] == pid and int(r["start"], 16) <= lo and hi <= int(r["end"], 16)]
    if not rows or rows[0]["name"] != f"[stack:{tid}]" or rows[0]["kind"] != "thread-stack":
        print(f"FAIL: thread {tid}'s stack is {rows[0]['name'] if rows else 'in no region'}"); bad = 1
sys.exit(bad or n == 0)
PY
pass "every thread's stack is named [stack:TID]"
