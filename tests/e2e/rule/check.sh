#!/usr/bin/env bash
# One rule's reproducer (tests/workloads/rules/RULE.c), recorded from its
# start and attached to: every /proc/self/maps snapshot it prints must equal
# `mapscope maps --at` its time. Run by ctest as rules/RULE.
source "$(dirname "$0")/../lib.sh"
rule=${1:?usage: check.sh RULE}
need_recording
cd "$TMP"

"$MAPSCOPE" record -o rule.data -- "$WORKLOADS/rule-$rule" >rule.txt 2>summary.txt || {
	status=$?
	grep -q '^skip:' rule.txt && skip "$(sed -n 's/^skip: //p' rule.txt)"
	fail "record failed ($status): $(cat summary.txt)"
}
# Its exit status says it ran to the end: every snapshot it takes is there.
python3 "$E2E_DIR/check-maps.py" "$MAPSCOPE" rule.txt rule.data 1 || fail "mapscope maps differs from /proc"
pass "rule $rule: every snapshot matches"
