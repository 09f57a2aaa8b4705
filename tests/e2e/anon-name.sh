#!/usr/bin/env bash
# prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME): record reads each call's name
# (mapscope:user_string, from the stack the entry copied where the name was
# built there); this kernel lacks CONFIG_ANON_VMA_NAME, so every call
# failed and rules/anon-name checks that nothing changed. Here the
# recording is made into one of a kernel that has it (the exits' results
# rewritten: tests/e2e/anon-name-craft.py), and maps --at must show the
# [anon:NAME] VMAs such a kernel makes, split and merged by name. The
# rewriting edits records in place: they are recorded not compressed.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
"$MAPSCOPE" record --no-compress --no-vma-tree -o an.data -- "$WORKLOADS/rule-anon-name" >an.txt 2>summary.txt ||
	fail "record failed: $(cat summary.txt)"
/usr/bin/python3 "$E2E_DIR/anon-name-craft.py" "$MAPSCOPE" an.data an.txt ||
	fail "mapscope maps differs from the VMAs prctl's names make"
pass "anon names: every step's VMAs and names as a kernel with CONFIG_ANON_VMA_NAME has them"
