#!/usr/bin/env bash
# A campaign of damaged recordings: a few hundred variants of the golden
# recordings (byte flips, a cut), each read by report (JSON and HTML),
# every fourth by timeline (JSON) and unmapped too. None may hang or
# crash; JSON and HTML must be valid UTF-8 and JSON must parse; where
# samples were lost (fewer in the file than the original has), report must
# exit 1, say so on stderr (a warning of the damage, not perf's usual one
# that it has no unmaps) and carry it in the JSON's losses line. A flip that
# makes a LOST record reads as the kernel's loss, which exits 0: that one
# is allowed where the losses line names it. CAMPAIGN=N sets the variants
# of each recording (default 100).
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
		grep -v 'does not record munmap and mremap' "j.$base.$i.err" >said.txt || true
		! grep -qE 'warning|corrupt|cannot' said.txt || said=1
		echo "$base $i $rc $said" >>runs.txt
		runs h report -i "$f" --format html
		iconv -f UTF-8 -t UTF-8 h.out >/dev/null 2>&1 || fail "report --format html of variant $i of $base is not UTF-8"
		if [ $((i % 4)) -eq 0 ]; then        # every fourth by the other commands too: the same reader
			runs t timeline -i "$f" --format json
			python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1], "rb").read().decode("utf-8").splitlines()]' \
				t.out 2>/dev/null || fail "timeline --format json of variant $i of $base is not JSON lines in UTF-8"
			runs u unmapped -i "$f"
		fi
		rm -f "$f"
		total=$((total + 1))
	done
done
python3 - <<'PY' || fail "the JSON reports of the variants: see above"
import json, sys
def report(name):
    return json.loads(open(name, "rb").read().decode("utf-8", "strict"))
want = {b: report(f"{b}.out")["file_samples"] for b in ("mapscope-ops", "perf-ops")}
bad = 0
for line in open("runs.txt"):
    base, i, rc, said = line.split()
    name = f"j.{base}.{i}.out"
    raw = open(name, "rb").read()
    if int(rc) > 1 or not raw:
        continue
    try:
        r = report(name)
    except (UnicodeDecodeError, ValueError) as e:
        print(f"variant {i} of {base}: report --format json is not valid JSON in UTF-8: {e}")
        bad += 1
        continue
    got, losses = r["file_samples"], r.get("losses", "")
    if got >= want[base]:
        continue
    kernel = "records lost by the kernel" in losses
    if said == "0" or not losses or (rc != "1" and not kernel):
        print(f"variant {i} of {base}: {got} of {want[base]} samples, exit {rc}, "
              f"{'a warning' if said == '1' else 'no warning'}, losses: {losses or 'none'}")
        bad += 1
sys.exit(bad > 0)
PY
pass "$total damaged variants, 2 to 4 commands each: no hang, no crash, valid UTF-8 JSON and HTML, every loss said and carried, exit 1"
