#!/usr/bin/env bash
# mapscope watch --json on the recorder's workload: every change it prints
# appears, with its exact range, in order; the command's exit is reported;
# -p attaches to a running process and sees its unmaps.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

"$MAPSCOPE" watch --json -- "$WORKLOADS/aspace-ops" "$WORKLOADS/exec-target" >out.txt 2>err.txt ||
	fail "watch exited $?: $(cat err.txt)"
grep -q "'$WORKLOADS/aspace-ops' exited with status 0" err.txt || fail "the exit status is not reported: $(cat err.txt)"
# Under --json the command's own output goes to stderr: stdout is JSON, every line.
python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' out.txt ||
	fail "the JSON stream holds a line that is not JSON: $(grep -v '^{' out.txt | head -3)"
grep -q '^mmap pid=' err.txt || fail "the command's output is not on stderr: $(head -3 err.txt)"
cat out.txt err.txt >mixed.txt
python3 "$E2E_DIR/check-watch.py" mixed.txt || fail "watch missed or reordered changes"

"$MAPSCOPE" watch --json --ops unmap -- "$WORKLOADS/aspace-ops" >ops.txt 2>/dev/null
ops=$(python3 -c 'import json,sys; print(" ".join(sorted({json.loads(l)["op"] for l in sys.stdin})))' <ops.txt)
[ "$ops" = unmap ] || fail "--ops unmap printed: $ops"

start_spinner spin.txt
timeout -s INT 1 "$MAPSCOPE" watch --json -p "$spinner" >att.txt 2>att.err || true
grep -q '"op": "unmap"' att.txt || fail "watch -p saw no unmap of the spinner: $(head -3 att.txt) $(cat att.err)"
kill $spinner
status=0; "$MAPSCOPE" watch -p 4000000 2>/dev/null || status=$?
[ $status -eq 1 ] || fail "watching a process that does not exist exited $status"
pass "watch reports every change in order, filters by op, attaches with -p"
