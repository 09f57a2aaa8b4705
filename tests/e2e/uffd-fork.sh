#!/usr/bin/env bash
# A VMA tree written by another process's task: tests/workloads/uffd-fork
# has a thread of the parent close the child's userfaultfd, whose release
# merges the child's two VMAs back into one in the parent's thread. Under
# the syscall-stop tracer, `mapscope maps --at` must print every snapshot
# (the child's merged layout and the parent's split one included) line
# for line: the write goes to the process whose mm the writer held
# locked (mmap_lock tracepoints), not to the writer's own; "grow" has the
# closing thread grow its stack first (a lock the kernel downgrades, so no
# write lock's release is seen). Then a fork and exec loop, whose forks
# write their children's trees.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
TRACER=$WORKLOADS/syscall-stop
CHECK=$E2E_DIR/../tools/syscall-stop-check.py

"$WORKLOADS/uffd-fork" >probe.txt 2>probe.err || {
	[ $? -eq 77 ] && skip "$(cat probe.err)"
	fail "uffd-fork failed on its own: $(cat probe.err)"
}
[ -r /sys/kernel/tracing/events/mmap_lock/mmap_lock_acquire_returned/format ] ||
	[ -r /sys/kernel/debug/tracing/events/mmap_lock/mmap_lock_acquire_returned/format ] ||
	skip "this kernel has no mmap_lock tracepoints: a write is charged to its writer's process"
for mode in plain grow; do
	ms_record summary.txt -o uf-$mode.data -- "$TRACER" -o uf-$mode.snap -- "$WORKLOADS/uffd-fork" $mode >uf-$mode.txt
	python3 "$CHECK" --min-snapshots 20 "$MAPSCOPE" uf-$mode.snap uf-$mode.data >check.txt || fail "$mode: $(tail -20 check.txt)"
	pass "$mode: every syscall-stop snapshot matches: $(tail -1 check.txt)"
	# The scenario took place: a snapshot of the child with the mapping whole
	# (merged by the parent's thread), and one of the parent with it split.
	python3 - "$(cat uf-$mode.txt)" uf-$mode.snap <<'PY' || fail "$mode: the snapshots do not show the release's merge"
import re, sys
lo, hi = (int(x, 16) for x in sys.argv[1].split("-"))
snaps, cur = [], None
for line in open(sys.argv[2]):
    if line.startswith("snapshot "):
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        cur = (int(f["pid"]), int(f["tgid"]), [])
        snaps.append(cur)
    elif cur and re.match(r"[0-9a-f]+-[0-9a-f]+ ", line):
        a, b = (int(x, 16) for x in line.split()[0].split("-"))
        if lo <= a < hi:
            cur[2].append((a, b))
parent = min(tgid for _, tgid, _ in snaps)
whole = [t for _, t, v in snaps if t != parent and v == [(lo, hi)]]
split = [t for _, t, v in snaps if t == parent and len(v) == 2]
print("child snapshots with it whole: %d, parent's with it split: %d" % (len(whole), len(split)))
sys.exit(0 if whole and split else 1)
PY
	pass "$mode: the child's VMAs were merged by the parent's thread, the parent's stayed split"
done

# A fork copies its VMAs into the child's tree under the child's lock,
# nested in its own: those writes stay the forker's (the FORK record
# copies the layout), and none waits for the child's mm, which an exec
# frees at once and a later process may get at the same address. With
# the same addresses in every process (setarch -R), a write given to the
# wrong process shows as a split VMA of the shell or of /bin/true.
setarch -R "$MAPSCOPE" record -o fx.data -- "$TRACER" -o fx.snap -- sh -c 'for i in $(seq 30); do /bin/true; done' \
	>fx.txt 2>fx.err || fail "record of the fork loop: $(tail -3 fx.err)"
# (It catches a copy given to a later process only where the kernel gives
# that process the freed mm's address; unit/mmlock checks the rule itself.)
python3 "$CHECK" --min-snapshots 300 "$MAPSCOPE" fx.snap fx.data >check-fx.txt || fail "$(tail -20 check-fx.txt)"
pass "a fork and exec loop: every syscall-stop snapshot matches: $(tail -1 check-fx.txt)"
