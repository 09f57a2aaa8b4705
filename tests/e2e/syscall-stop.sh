#!/usr/bin/env bash
# The syscall-stop check: tests/tools/syscall-stop stops the maps oracle at
# the exit of every address-space syscall, every task stopped, and reads
# /proc/TID/maps; `mapscope maps --at` of the tracer's own recording must
# print each of those snapshots line for line (K/N exact).
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
TRACER=$WORKLOADS/syscall-stop
CHECK=$E2E_DIR/../tools/syscall-stop-check.py

ms_record summary.txt -o mo.data -- "$TRACER" -o mo.snap -- "$WORKLOADS/maps-oracle" >mo.txt
# The oracle's own snapshots, 24 of them, make 24 of its syscalls at least.
python3 "$CHECK" --min-snapshots 60 "$MAPSCOPE" mo.snap mo.data || fail "mapscope maps differs from /proc at a syscall stop"
pass "maps oracle: every syscall-stop snapshot matches"
grep -q '^snapshot pid=[0-9]* .*step=[0-9]*:clone3 ' mo.snap || fail "no snapshot at a thread's creation: the tracer missed clone3"

# The checker sees a difference: one mapping dropped from one snapshot.
awk '/^snapshot .*:munmap /{n++} n==1 && !done && /^[0-9a-f]+-/{done=1; next} {print}' mo.snap >bad.snap
! cmp -s mo.snap bad.snap || fail "could not make a damaged snapshot file"
python3 "$CHECK" --max-diffs 1 "$MAPSCOPE" bad.snap mo.data >bad.txt && fail "the checker passed a damaged snapshot: $(cat bad.txt)"
grep -q "^$(( $(grep -c '^snapshot ' mo.snap) - 1 ))/$(grep -c '^snapshot ' mo.snap) exact" bad.txt ||
	fail "the checker did not count one inexact snapshot: $(tail -1 bad.txt)"
pass "the checker counts a damaged snapshot as inexact"

# Without the kernel's VMA tree writes: the model's own rules alone.
ms_record summary.txt --no-vma-tree -o mo-nt.data -- "$TRACER" -o mo-nt.snap -- "$WORKLOADS/maps-oracle" >mo-nt.txt
python3 "$CHECK" --min-snapshots 60 "$MAPSCOPE" mo-nt.snap mo-nt.data || fail "mapscope maps differs from /proc at a syscall stop (--no-vma-tree)"
pass "maps oracle without the VMA tree: every syscall-stop snapshot matches"
