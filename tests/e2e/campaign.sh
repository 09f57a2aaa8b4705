#!/usr/bin/env bash
# A campaign of damaged recordings: a few hundred variants of the golden
# recordings (byte flips, a cut), each read by report (JSON and HTML),
# every fourth by timeline (JSON) and unmapped too. None may hang or
# crash; JSON and HTML must be valid UTF-8 and JSON must parse; where
# samples were lost (fewer in the file than the original has), a message
# must say so. CAMPAIGN=N sets the variants of each recording (default 100).
source "$(dirname "$0")/lib.sh"
golden="$SRC_DIR/tests/golden"
n=${CAMPAIGN:-100}
cd "$TMP"

# runs NAME ARGS...: mapscope ARGS, bounded; NAME.out, NAME.err, and the status in $rc.
runs() {
	local name=$1
	shift
	rc=0
	timeout 20 "$MAPSCOPE" "$@" >"$name.out" 2>"$name.err" || rc=$?
	[ "$rc" -ne 124 ] || fail "mapscope $* hangs"
	[ "$rc" -lt 128 ] || fail "mapscope $* died of signal $((rc - 128)): $(tail -3 "$name.err")"
	! grep -q 'Sanitizer' "$name.err" || fail "mapscope $* made a sanitizer report: $(grep -m3 Sanitizer "$name.err")"
}

total=0
for base in mapscope-ops perf-ops; do
	runs "$base" report -i "$golden/$base.data" --format json
	python3 "$E2E_DIR/perfdata-craft.py" flips "$golden/$base.data" v "$n" || fail "cannot make the variants"
	for ((i = 0; i < n; i++)); do
		f=v.$i
		runs "j.$base.$i" report -i "$f" --format json --children 2
		# What each said: checked with the JSON, in one go, below.
		said=0
		! grep -qE 'warning|corrupt|cannot' "j.$base.$i.err" || said=1
		echo "$base $i $rc $said" >>runs.txt
		runs h report -i "$f" --format html
		iconv -f UTF-8 -t UTF-8 h.out >/dev/null 2>&1 || fail "report --format html of variant $i of $base is not UTF-8"
		if [ $((i % 4)) -eq 0 ]; then        # every fourth by the other commands too: the same reader
			runs t timeline -i "$f" --format json
			iconv -f UTF-8 -t UTF-8 t.out >/dev/null 2>&1 || fail "timeline --format json of variant $i of $base is not UTF-8"
			runs u unmapped -i "$f"
		fi
		rm -f "$f"
		total=$((total + 1))
	done
done
python3 - <<'PY' || fail "the JSON reports of the variants: see above"
import json, sys
def samples(name):
    return json.loads(open(name, "rb").read().decode("utf-8", "strict"))["file_samples"]
want = {b: samples(f"{b}.out") for b in ("mapscope-ops", "perf-ops")}
bad = 0
for line in open("runs.txt"):
    base, i, rc, said = line.split()
    name = f"j.{base}.{i}.out"
    raw = open(name, "rb").read()
    if int(rc) > 1 or not raw:
        continue
    try:
        got = samples(name)
    except (UnicodeDecodeError, ValueError) as e:
        print(f"variant {i} of {base}: report --format json is not valid JSON in UTF-8: {e}")
        bad += 1
        continue
    if got < want[base] and said == "0":
        print(f"variant {i} of {base}: {got} of {want[base]} samples, exit {rc}, and nothing said")
        bad += 1
sys.exit(bad > 0)
PY
pass "$total damaged variants, 2 to 4 commands each: no hang, no crash, valid UTF-8 JSON and HTML, every loss said"
