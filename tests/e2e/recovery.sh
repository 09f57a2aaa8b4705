#!/usr/bin/env bash
# No recording is lost: a recorder killed with SIGKILL, one that reaches the
# file size limit, and one whose disk fills up (a small tmpfs), compressed or
# not, leave files that mapscope report and perf both read, with the samples
# and the unmaps written before the end, and that report calls unfinished.
# The workload maps, touches and unmaps a page in a loop, so the file holds
# both kinds whenever it stops.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

# check NAME FILE MIN-UNMAPS [RECORD-ERR]: report and perf read FILE alike; it has samples and unmaps; it is
# called unfinished; and where RECORD-ERR (record's stderr) is given, its summary counts the samples FILE holds.
check() {
	local name=$1 f=$2 min=$3 ours perfs unmaps
	"$MAPSCOPE" report --children 0 --format json -i "$f" >r.json 2>r.err ||
		fail "$name: report exited $?: $(cat r.err)"
	grep -q 'was not finished' r.err || fail "$name: report does not say the recording was not finished: $(cat r.err)"
	grep -q 'recovered [0-9]* records' r.err || fail "$name: report does not say how much it recovered"
	ours=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["file_samples"])' r.json)
	perfs=$(perf script -i "$f" 2>p.err | grep -vc PERF_RECORD || true)
	[ "$perfs" -gt 0 ] || fail "$name: perf cannot read the file: $(head -3 p.err)"
	[ "$ours" -eq "$perfs" ] || fail "$name: mapscope reads $ours samples, perf script $perfs"
	if [ -n "${4:-}" ]; then
		[ "$(summary_samples "$4")" -eq "$ours" ] ||
			fail "$name: record's summary counts $(summary_samples "$4") samples, the file holds $ours"
	fi
	unmaps=$("$MAPSCOPE" timeline -i "$f" --format json 2>/dev/null |
		python3 -c 'import json,sys; print(sum(json.loads(l).get("op") == "unmap" for l in sys.stdin if l.strip()))')
	[ "$unmaps" -ge "$min" ] || fail "$name: only $unmaps unmaps recovered"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["samples"] == 0)' r.json ||
		fail "$name: no data samples recovered"
	pass "$name: $ours samples and $unmaps unmaps, read alike by mapscope and perf"
}

# SIGKILL of the recorder, after it has flushed a few times. Plain, the
# file grows in 2 MiB steps written as zeros first: the killed file is a
# whole number of steps, with zeros past the table its header points at.
for mode in compressed plain; do
	opt=()
	[ $mode = plain ] && opt=(--no-compress)
	"$MAPSCOPE" record "${opt[@]}" -o killed.data -- "$WORKLOADS/spinner" >spinner.txt 2>rec.err &
	rec=$!
	wait_for '^ready' spinner.txt || true
	sleep 1
	# the workload outlives its recorder: this one is stopped after it, by its pid (not every spinner on the machine)
	kids=$(pgrep -P $rec || true)
	kill -KILL $rec
	wait $rec 2>/dev/null || true
	kill -KILL $kids $(sed -n 's/^ready pid=\([0-9]*\)$/\1/p' spinner.txt) 2>/dev/null || true
	if [ $mode = plain ]; then
		size=$(stat -c %s killed.data)
		[ $((size % (2 << 20))) -eq 0 ] || fail "SIGKILL (plain): the file is $size bytes, not whole 2 MiB steps"
	fi
	check "SIGKILL ($mode)" killed.data 10
	rm -f killed.data
done

# The file size limit (ulimit -f): a write past it fails with EFBIG (record
# ignores SIGXFSZ, which killed it, mid-write), the file is cut back to its
# last flush, and record says so and exits 1. Compressed, 256 KiB; plain,
# 3 MiB, which ends the file's 2 MiB steps in the middle of one.
for mode in compressed plain; do
	opt=() kib=256
	[ $mode = plain ] && opt=(--no-compress) kib=3072
	rm -f limited.data
	status=0
	(ulimit -f $kib && exec "$MAPSCOPE" record "${opt[@]}" -o limited.data -- "$WORKLOADS/fault-loop" 64 8) \
		>/dev/null 2>limit.err || status=$?
	cat limit.err
	[ "$status" -eq 1 ] || fail "size limit ($mode): record exited $status, not 1"
	grep -q 'File too large' limit.err || fail "size limit ($mode): the error does not say so"
	grep -q "file size limit ($((kib * 1024)) bytes)" limit.err ||
		fail "size limit ($mode): the hint does not name the limit"
	size=$(stat -c %s limited.data)
	[ "$size" -le $((kib * 1024)) ] || fail "size limit ($mode): the file is $size bytes, past the limit"
	check "size limit ($mode)" limited.data 1 limit.err
done

# A limit below what the headers take (8 KiB: the tracing data alone is
# more): nothing was recorded, so no file is left, and record says so.
rm -f tiny.data
status=0
(ulimit -f 8 && exec "$MAPSCOPE" record -o tiny.data -- "$WORKLOADS/fault-loop" 1 1) >/dev/null 2>tiny.err || status=$?
[ "$status" -eq 1 ] || fail "size limit below the headers: record exited $status, not 1: $(cat tiny.err)"
grep -q "cannot write 'tiny.data': File too large; nothing was recorded, and the file is removed" tiny.err ||
	fail "size limit below the headers: the error does not say so: $(cat tiny.err)"
[ ! -e tiny.data ] || fail "size limit below the headers: a file of $(stat -c %s tiny.data) bytes is left"
pass "size limit below the headers: no file left, and record says why"

# A full disk: a small tmpfs, and a workload that writes more. Compressed
# (the default), its 131,000 faults take 0.8 MiB: the tmpfs is 256 KiB;
# plain, 7 MiB: 4 MiB.
mkdir small
mount -t tmpfs -o size=4m tmpfs small 2>mount.err || skip "cannot mount a small tmpfs here: $(cat mount.err)"
trap 'umount "$TMP/small" 2>/dev/null; rm -rf "$TMP"' EXIT
for mode in compressed plain; do
	opt=()
	if [ $mode = plain ]; then opt=(--no-compress); else mount -o remount,size=256k small; fi
	[ $mode = plain ] && mount -o remount,size=4m small
	rm -f small/full.data
	status=0
	"$MAPSCOPE" record "${opt[@]}" -o small/full.data -- "$WORKLOADS/fault-loop" 64 8 >/dev/null 2>full.err || status=$?
	cat full.err
	[ "$status" -eq 1 ] || fail "disk full ($mode): record exited $status, not 1"
	grep -q 'No space left on device' full.err || fail "disk full ($mode): the error does not say so"
	written=$(sed -n "s/.* \([0-9.]*\) MiB written to 'small\/full.data'.*/\1/p" full.err)
	size=$(stat -c %s small/full.data)
	python3 -c 'import sys; w, s = float(sys.argv[1]), int(sys.argv[2]) / 2**20; sys.exit(abs(w - s) > 0.06)' "$written" "$size" ||
		fail "disk full ($mode): the summary says $written MiB, the file holds $size bytes"
	cp small/full.data full.data
	check "disk full ($mode)" full.data 1 full.err
done
