#!/usr/bin/env bash
# Hostile recordings (tests/golden/bad/cases.txt), made from the golden
# recording by perfdata-craft.py, against their checked-in expected
# outputs and exit statuses: what each says of its damage, and what it
# makes of the rest, stay as reviewed. Needs no privileges. After a
# reviewed change: UPDATE=1 MAPSCOPE=build/mapscope bash tests/e2e/golden-bad.sh
source "$(dirname "$0")/lib.sh"
bad="$SRC_DIR/tests/golden/bad"
cd "$TMP"

n=0
while IFS='|' read -r expected status craft args; do
	expected=${expected// /}
	status=${status// /}
	case "$expected" in ''|'#'*) continue ;; esac
	case "$craft" in *zstd*) command -v zstd >/dev/null || { echo "skipped $expected: no zstd command"; continue; } ;; esac
	read -r kind arg <<<"$craft"
	# shellcheck disable=SC2086
	python3 "$E2E_DIR/perfdata-craft.py" "$kind" "$SRC_DIR/tests/golden/mapscope-ops.data" in.data $arg ||
		fail "perfdata-craft.py $craft failed"
	rc=0
	# shellcheck disable=SC2086
	"$MAPSCOPE" ${args//IN/in.data} >out 2>err || rc=$?
	[ "$rc" = "$status" ] || fail "mapscope$args on '$craft' exited $rc, not $status: $(cat err)"
	if [ "${UPDATE:-}" = 1 ]; then
		cp out "$bad/$expected"
	elif ! diff -u "$bad/$expected" out >diff; then
		head -40 diff
		fail "mapscope$args on '$craft' differs from bad/$expected"
	fi
	n=$((n + 1))
done <"$bad/cases.txt"
[ "$n" -ge 6 ] || fail "only $n hostile cases ran"
pass "$n hostile recordings: outputs and exit statuses as expected"
