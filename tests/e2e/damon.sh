#!/usr/bin/env bash
# record --damon: a kdamond is made only where none exists, never touching
# one that mapscope did not start (this machine runs one from boot: the
# fallback line, and the tree as it was); ours is configured as asked and
# torn down on a clean end and when the recorder is killed with SIGKILL
# (its watchdog does it). A fake DAMON tree (MAPSCOPE_DAMON_SYSFS) stands
# for sysfs, with a sleeping process for the kdamond's thread. The live
# path is damon-live.sh.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
[ -e /sys/kernel/tracing/events/damon/damon_aggregated ] || skip "the kernel has no damon tracepoints (CONFIG_DAMON)"
real=/sys/kernel/mm/damon/admin

# snapshot ROOT: the tree as sysfs shows it: below a count file nr_X, only X/0 .. X/N-1 exist.
snapshot() {
	python3 - "$1" <<'EOF'
import os, sys
def walk(d, rel):
    names = sorted(os.listdir(d))
    counts = {n[3:]: n for n in names if n.startswith("nr_") and os.path.isfile(os.path.join(d, n))}
    for n in names:
        p = os.path.join(d, n)
        if os.path.isdir(p):
            if n in counts:
                k = int(open(os.path.join(d, counts[n])).read().split()[0] or 0)
                for i in range(k):
                    walk(os.path.join(p, str(i)), f"{rel}{n}/{i}/")
            elif not n.isdigit():
                walk(p, f"{rel}{n}/")
        elif n in ("state", "pid") or n.startswith("nr_") or os.path.dirname(rel) != "":
            try:
                print(f"{rel}{n}: {open(p).read().strip()}")
            except OSError:
                pass
walk(sys.argv[1], "")
EOF
}

# fake_tree ROOT NR STATE KPID: kdamond 0, one context, one target, as the kernel lays them out.
fake_tree() {
	local c=$1/kdamonds/0/contexts/0 f
	mkdir -p $c/monitoring_attrs/intervals $c/monitoring_attrs/nr_regions $c/targets/0 $c/schemes
	echo "$2" >$1/kdamonds/nr_kdamonds
	echo "$3" >$1/kdamonds/0/state
	echo "$4" >$1/kdamonds/0/pid
	echo 0 >$1/kdamonds/0/contexts/nr_contexts
	echo vaddr >$c/operations
	for f in intervals/sample_us intervals/aggr_us intervals/update_us nr_regions/min nr_regions/max; do
		echo 0 >$c/monitoring_attrs/$f
	done
	echo 0 >$c/targets/nr_targets
	echo 0 >$c/targets/0/pid_target
	echo 0 >$c/schemes/nr_schemes
}

wait_file() {  # wait_file FILE TEXT: until FILE reads TEXT (5 s at most)
	local _
	for _ in $(seq 100); do [ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0; sleep 0.05; done
	return 1
}

sleep 600 &
kthread=$!
trap 'kill $kthread 2>/dev/null || true; rm -rf "$TMP"' EXIT

# This machine's own kdamond: one clear line, the recording goes on, DAMON as it was.
if [ "$(cat $real/kdamonds/nr_kdamonds)" != 0 ]; then
	snapshot $real >real-before.txt
	ms_record busy.txt --damon -o busy.data -- "$WORKLOADS/hotcold" 0.3 >/dev/null
	grep -q "^mapscope: not using DAMON: a kdamond that mapscope did not start exists.*--referenced instead" busy.txt ||
		fail "no fallback line for the machine's kdamond: $(cat busy.txt)"
	[ "$(grep -c 'DAMON' busy.txt)" -eq 1 ] || fail "more than one line about DAMON: $(cat busy.txt)"
	perf script -i busy.data >busy.script 2>/dev/null || fail "the fallback recording does not read"
	grep -q "mapscope:vma_referenced:" busy.script || fail "the fallback recorded no accessed bits (--referenced)"
	snapshot $real >real-after.txt
	diff real-before.txt real-after.txt || fail "the machine's kdamond was touched"
	pass "the machine's kdamond: one line (what, why), recorded with --referenced in its place, DAMON untouched"
fi

# Someone else's kdamond in the fake tree: not a byte changes.
fake_tree busy 1 on 1
cp -a busy busy.orig
MAPSCOPE_DAMON_SYSFS=$TMP/busy ms_record fbusy.txt --damon -o fbusy.data -- true
grep -q "not using DAMON" fbusy.txt || fail "no fallback line on a busy fake tree: $(cat fbusy.txt)"
diff -r busy.orig busy || fail "a kdamond that mapscope did not start was changed"
pass "a kdamond that is not ours: left byte for byte"

# Ours, killed with SIGKILL mid-recording: the watchdog turns it off and removes it.
fake_tree free 0 off $kthread
snapshot free >free-before.txt
MAPSCOPE_DAMON_SYSFS=$TMP/free "$MAPSCOPE" record --damon --damon-intervals 2000,40000,500000 \
	--damon-regions 5,50 -o kill.data -- "$WORKLOADS/spinner" >spin.txt 2>kill.txt &
rec=$!
c=free/kdamonds/0/contexts/0
wait_file free/kdamonds/0/state on || fail "our kdamond was not turned on: $(cat kill.txt)"
wait_for '^ready' spin.txt || fail "the workload did not start"
child=$(sed -n 's/^ready pid=//p' spin.txt)
[ "$(cat free/kdamonds/nr_kdamonds)" = 1 ] || fail "nr_kdamonds is not 1 while recording"
[ "$(cat $c/targets/0/pid_target)" = "$child" ] || fail "the target is $(cat $c/targets/0/pid_target), not the command ($child)"
[ "$(cat $c/monitoring_attrs/intervals/sample_us),$(cat $c/monitoring_attrs/intervals/aggr_us),$(cat $c/monitoring_attrs/intervals/update_us)" = 2000,40000,500000 ] ||
	fail "the intervals were not set as asked"
[ "$(cat $c/monitoring_attrs/nr_regions/min),$(cat $c/monitoring_attrs/nr_regions/max)" = 5,50 ] ||
	fail "the region counts were not set as asked"
kill -9 $rec
wait $rec 2>/dev/null || true
kill $child 2>/dev/null || true
wait_file free/kdamonds/nr_kdamonds 0 || fail "our kdamond is left after the recorder was killed"
[ "$(cat free/kdamonds/0/state)" = off ] || fail "our kdamond was not turned off"
snapshot free >free-after.txt
diff free-before.txt free-after.txt || fail "the tree is not as it was after SIGKILL"
pass "SIGKILL of the recorder: our kdamond off and removed, the tree as it was"

# Ours, on a clean end: removed before record returns.
fake_tree clean 0 off $kthread
snapshot clean >clean-before.txt
MAPSCOPE_DAMON_SYSFS=$TMP/clean ms_record clean.txt --damon -o clean.data -- sleep 0.3
grep -q "DAMON" clean.txt && fail "a line about DAMON where ours worked: $(cat clean.txt)"
snapshot clean >clean-after.txt
diff clean-before.txt clean-after.txt || fail "the tree is not as it was after a clean end"
perf script -i clean.data >/dev/null 2>&1 || fail "perf cannot read a --damon recording"
pass "a clean end: our kdamond removed before record returned"
