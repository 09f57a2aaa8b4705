#!/usr/bin/env bash
# One rule's reproducer (tests/workloads/rules/RULE.c), recorded from its
# start, with and without the VMA tree: every /proc/self/maps snapshot it prints must equal
# `mapscope maps --at` its time, and so must every snapshot the syscall-stop
# tracer (tests/tools/syscall-stop), which runs it, takes at each of its
# address-space syscalls. Run by ctest as rules/RULE.
source "$(dirname "$0")/../lib.sh"
rule=${1:?usage: check.sh RULE}
need_recording
cd "$TMP"

# With the kernel's VMA tree writes (where it has them) and without: the
# model's own rules must get the same maps.
# read-fault is the exception: only the tree shows what a read fault did;
# and remap-picked: only the tree's writes say where a move the kernel
# placed went before the call returns.
# renamed waits until record has drained its last rename, reading the
# recording as it is written (MS_RULE_RECORDING): uncompressed, then.
modes=(tree no-tree)
case $rule in read-fault | remap-picked) modes=(tree) ;; esac
for mode in "${modes[@]}"; do
	opt=()
	[ "$mode" = no-tree ] && opt=(--no-vma-tree)
	[ "$rule" = renamed ] && opt+=(--no-compress)
	MS_RULE_RECORDING="$TMP/rule-$mode.data" "$MAPSCOPE" record "${opt[@]}" -o "rule-$mode.data" -- \
		"$WORKLOADS/syscall-stop" -o "rule-$mode.snap" -- "$WORKLOADS/rule-$rule" >"rule-$mode.txt" 2>summary.txt || {
		status=$?
		grep -q '^skip:' "rule-$mode.txt" && skip "$(sed -n 's/^skip: //p' "rule-$mode.txt")"
		fail "record ($mode) failed ($status): $(cat summary.txt)"
	}
	if [ "$mode" = tree ] && ! perf evlist -i "rule-$mode.data" 2>/dev/null | grep '^maple_tree:ma_write$' >/dev/null; then
		case $rule in read-fault | remap-picked) skip "this kernel has no maple_tree:ma_write tracepoint" ;; esac
		echo "note: no maple_tree:ma_write on this kernel: the model's rules alone"
	fi
	# Its exit status says it ran to the end: every snapshot it takes is there.
	python3 "$E2E_DIR/check-maps.py" "$MAPSCOPE" "rule-$mode.txt" "rule-$mode.data" 1 ||
		fail "mapscope maps differs from /proc ($mode)"
	pass "rule $rule ($mode): every snapshot matches"
	python3 "$E2E_DIR/../tools/syscall-stop-check.py" "$MAPSCOPE" "rule-$mode.snap" "rule-$mode.data" ||
		fail "mapscope maps differs from /proc at a syscall stop ($mode)"
	pass "rule $rule ($mode): every syscall-stop snapshot matches"
done
