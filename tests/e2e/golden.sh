#!/usr/bin/env bash
# Golden tests: checked-in recordings (ours and perf's) and their expected
# report, maps and timeline outputs. Needs no privileges. After a reviewed
# change of output, regenerate with: UPDATE=1 MAPSCOPE=build/mapscope
# WORKLOADS=build/tests/workloads bash tests/e2e/golden.sh
source "$(dirname "$0")/lib.sh"
golden="$SRC_DIR/tests/golden"
cd "$golden"

n=0
while IFS='|' read -r expected args; do
	expected=${expected// /}
	case "$expected" in ''|'#'*) continue ;; esac
	# shellcheck disable=SC2086
	"$MAPSCOPE" $args >"$TMP/out" 2>"$TMP/err" || fail "mapscope$args exited $?: $(cat "$TMP/err")"
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$TMP/out" "$expected"
	elif ! diff -u "$expected" "$TMP/out" >"$TMP/diff"; then
		head -40 "$TMP/diff"
		fail "mapscope$args differs from $expected"
	fi
	n=$((n + 1))
done <cases.txt
[ "$n" -ge 10 ] || fail "only $n golden cases ran"

# perf's file has no unmap records: the report must say so.
"$MAPSCOPE" report -i perf-ops.data 2>"$TMP/err" >/dev/null
grep -q 'attribution is uncertain' "$TMP/err" || fail "no uncertainty warning for perf's recording"
grep -q '"uncertain": true' perf-ops.report.json || fail "perf's JSON report is not marked uncertain"
grep -q '"uncertain": false' mapscope-ops.report.json || fail "our JSON report is marked uncertain"
# The code under each region: most samples first, ties by name, the same every run.
for f in perf-ops.data mapscope-ops.data; do
	"$MAPSCOPE" report -i "$f" --format json --children 5 >"$TMP/c1.json" 2>/dev/null || fail "report -i $f failed"
	"$MAPSCOPE" report -i "$f" --format json --children 5 >"$TMP/c2.json" 2>/dev/null || fail "report -i $f failed"
	cmp -s "$TMP/c1.json" "$TMP/c2.json" || fail "two reports of $f differ"
	python3 - "$TMP/c1.json" <<'PY' || fail "the code symbols of $f are not in order"
import json, sys
ties = 0
for r in json.load(open(sys.argv[1]))["regions"]:
    keys = [(-s["samples"], s["symbol"], s["dso"]) for s in r["symbols"]]
    if keys != sorted(keys):
        sys.exit(f"{r['start']}: {keys}")
    ties += sum(a[0] == b[0] for a, b in zip(keys, keys[1:]))
if not ties:
    sys.exit("no tied symbols to check")
PY
done
# The timeline says the protection of maps, protects and remaps, and the advice of madvise.
grep -q ' protect .* r-- ' mapscope-ops.timeline.txt || fail "the timeline shows no protection for protect"
grep -q '"op": "madvise".*"advice": "dontneed"' mapscope-ops.timeline.json || fail "the JSON timeline shows no advice"
grep -q '"op": "map".*"prot": "r-x"' mapscope-ops.timeline.json || fail "the JSON timeline shows no protection for map"
# maps: a thread's id gives its process's maps, as /proc/TID/maps does; a
# process that has exited has none left at the end, which is said, and
# --at last shows them as they were when it exited.
"$MAPSCOPE" maps -i mapscope-ops.data --pid 15328 --at +0.012 >"$TMP/tid.txt" 2>/dev/null || fail "maps --pid TID failed"
diff -u mapscope-ops.maps.txt "$TMP/tid.txt" || fail "maps --pid 15328 (a thread of 15327) differs from its process's maps"
status=0
"$MAPSCOPE" maps -i mapscope-ops.data --pid 15327 --at end >"$TMP/end.txt" 2>"$TMP/end.err" || status=$?
[ "$status" -eq 1 ] && grep -q 'had exited by then' "$TMP/end.err" && grep -q -- '--at last' "$TMP/end.err" ||
	fail "maps --at end of an exited process: exit $status, $(cat "$TMP/end.err")"
"$MAPSCOPE" maps -i mapscope-ops.data --pid 15327 --at last >"$TMP/last.txt" 2>/dev/null || fail "maps --at last failed"
grep -q 'exec-target$' "$TMP/last.txt" || fail "maps --at last does not show the last image's maps: $(head -3 "$TMP/last.txt")"
pass "$n golden outputs match; maps by thread id, and of an exited process"
