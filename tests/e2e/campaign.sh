#!/usr/bin/env bash
# A campaign of damaged recordings: a few hundred variants of the golden
# recordings (byte flips, a cut), each read by report (JSON and HTML),
# every fourth by timeline (JSON) and unmapped too. None may hang or crash; JSON and
# HTML must be valid UTF-8 and JSON must parse; where samples were lost
# (fewer in the file than the original has), a message must say so.
# CAMPAIGN=N sets the number of variants of each recording (default 100).
source "$(dirname "$0")/lib.sh"
golden="$SRC_DIR/tests/golden"
n=${CAMPAIGN:-100}
cd "$TMP"

# runs NAME ARGS...: mapscope ARGS, bounded; NAME.out, NAME.err, and the status in $rc.
runs() {
	local name=$1
	shift
	rc=0
	timeout 10 "$MAPSCOPE" "$@" >"$name.out" 2>"$name.err" || rc=$?
	[ "$rc" -ne 124 ] || fail "mapscope $* hangs"
	[ "$rc" -lt 128 ] || fail "mapscope $* died of signal $((rc - 128)): $(tail -3 "$name.err")"
	! grep -q 'Sanitizer' "$name.err" || fail "mapscope $* made a sanitizer report: $(grep -m3 Sanitizer "$name.err")"
}

file_samples() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["file_samples"])' "$1" 2>/dev/null || echo 0
}

total=0 silent=0
for base in mapscope-ops perf-ops; do
	runs orig report -i "$golden/$base.data" --format json
	want=$(file_samples orig.out)
	python3 "$E2E_DIR/perfdata-craft.py" flips "$golden/$base.data" v "$n" || fail "cannot make the variants"
	for ((i = 0; i < n; i++)); do
		f=v.$i
		runs j report -i "$f" --format json --children 2
		if [ "$rc" -le 1 ] && [ -s j.out ]; then
			python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' j.out ||
				fail "report --format json of variant $i of $base is not valid JSON in UTF-8"
			got=$(file_samples j.out)
			if [ "$got" -lt "$want" ] && ! grep -qE 'warning|corrupt|cannot' j.err; then
				silent=$((silent + 1))
				echo "variant $i of $base: $got of $want samples, exit $rc, and nothing said"
			fi
		fi
		runs h report -i "$f" --format html
		iconv -f UTF-8 -t UTF-8 h.out >/dev/null 2>&1 || fail "report --format html of variant $i of $base is not UTF-8"
		total=$((total + 1))
		if [ $((i % 4)) -eq 0 ]; then        # every fourth by the other commands too: the same reader
			runs t timeline -i "$f" --format json
			iconv -f UTF-8 -t UTF-8 t.out >/dev/null 2>&1 || fail "timeline --format json of variant $i of $base is not UTF-8"
			runs u unmapped -i "$f"
		fi
		rm -f "$f"
	done
done
[ "$silent" -eq 0 ] || fail "$silent of $total variants lost samples without a word"
pass "$total damaged variants, 2 to 4 commands each: no hang, no crash, valid UTF-8 JSON and HTML, every loss said"
