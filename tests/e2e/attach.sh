#!/usr/bin/env bash
# Attach to a running process with -p, stop with SIGINT: the file is valid
# and holds the process's maps as they were, PROT_NONE included, its
# threads' names, and what it did while we watched.
source "$(dirname "$0")/lib.sh"
need_recording

cd "$TMP"
start_spinner spin.txt

"$MAPSCOPE" record -p "$spinner" -o att.data 2>summary.txt &
rec=$!
# Wait until record says it is recording (events enabled, maps read).
wait_for 'recording 1 process' summary.txt 10 || fail "record never said it was recording: $(cat summary.txt)"
sleep 0.3
kill -INT $rec
status=0; wait $rec || status=$?
cat summary.txt
[ $status -eq 0 ] || fail "record exited $status after SIGINT"
grep -q 'stopped by signal' summary.txt || fail "the summary does not say it was stopped"

perf_script att.data >att.script || fail "perf script failed: $(cat "$TMP/perf-script.err")"
python3 - spin.txt att.script <<'PY' || fail "the recording lacks the process's state"
import re
import sys
import perfscript
ops = perfscript.parse_workload(open(sys.argv[1]).read())
recs = perfscript.parse(open(sys.argv[2]).read())
pid = next(o["pid"] for o in ops if o["op"] == "ready")
bad = 0
for o in ops:
    if o["op"] == "region":
        # The kernel merges adjacent anonymous mappings alike: a VMA may be larger.
        if not any(r.kind == "mmap2" and r.pid == pid and r.start <= o["start"] and o["end"] <= r.end
                   and r.prot.startswith(o["prot"]) for r in recs):
            print(f"no MMAP2 {o['start']:#x}-{o['end']:#x} {o['prot']}"); bad = 1
        # Read from /proc, stamped when it was read (its trailer laid out as the event's), and made
        # by no thread (its trailer's tid 0): a thread inside a mapping call must not take it for its own.
        for line in open(sys.argv[2]):
            m = re.match(r"\s*(\d+)/(\d+)\s+([\d.]+): PERF_RECORD_MMAP2 (\d+)/\d+: \[0x([0-9a-f]+)\((0x[0-9a-f]+)\)", line)
            if m and int(m[4]) == pid and int(m[5], 16) <= o["start"] < int(m[5], 16) + int(m[6], 16) and \
               (float(m[3]) == 0 or int(m[2]) != 0):
                print(f"the MMAP2 of {o['start']:#x} read from /proc has time 0 or a thread's tid: {line.strip()}")
                bad = 1
    if o["op"] == "thread":
        if not any(r.kind == "comm" and r.pid == pid and r.tid == o["tid"] for r in recs):
            print(f"no COMM for thread {o['tid']}"); bad = 1
if not any(r.kind == "comm" and r.pid == pid and r.tid == pid and r.comm == "spinner" for r in recs):
    print("no COMM for the process"); bad = 1
# The loop maps, touches and unmaps a page every millisecond: some must show.
if not any(r.kind == "sys_enter_munmap" and r.pid == pid for r in recs):
    print("no munmap recorded while attached"); bad = 1
if not any(r.kind == "fault" and r.pid == pid for r in recs):
    print("no page fault recorded while attached"); bad = 1
sys.exit(bad)
PY
kill $spinner
pass "attached, stopped by SIGINT; maps (PROT_NONE too), threads and live changes recorded"

# Six processes at once: the rings grow by default (1024 pages per 4), and
# -m still decides where given. Every process's own maps are there.
pids=()
for i in 1 2 3 4 5 6; do
	"$WORKLOADS/spinner" >"spin$i.txt" &
	pids+=($!)
done
trap 'kill ${pids[*]} $spinner 2>/dev/null || true; rm -rf "$TMP"' EXIT
for i in 1 2 3 4 5 6; do
	wait_for '^ready' "spin$i.txt" || true
done
list=$(IFS=,; echo "${pids[*]}")
timeout -s INT 2 "$MAPSCOPE" record -v -p "$list" -o six.data 2>six.txt || true
grep -q '^mapscope: ring buffers of 2048 pages per CPU$' six.txt ||
	fail "6 processes: expected rings of 2048 pages: $(grep 'ring buffers' six.txt)"
grep -q '0 records lost' six.txt || fail "6 processes: records lost: $(tail -1 six.txt)"
for p in "${pids[@]}"; do
	"$MAPSCOPE" maps -i six.data --pid "$p" --at end 2>/dev/null | grep . >/dev/null ||
		fail "6 processes: no maps of process $p"
done
timeout -s INT 1 "$MAPSCOPE" record -v -m 512 -p "$list" -o six-m.data 2>six-m.txt || true
grep -q '^mapscope: ring buffers of 512 pages per CPU$' six-m.txt || fail "-m 512 was not kept"
kill "${pids[@]}"
pass "six processes attached at once: rings of 2048 pages, -m kept, every process's maps"
