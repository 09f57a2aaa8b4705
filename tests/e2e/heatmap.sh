#!/usr/bin/env bash
# The heatmap: one band per region with samples, whose samples add up to the
# report's mapped samples; a valid SVG (xmllint); a text grid with colour on a
# pseudo-terminal, without it through a pipe or with NO_COLOR; --region picks
# one band; a region moved by mremap keeps its band, marked R.
source "$(dirname "$0")/lib.sh"
need_recording
command -v xmllint >/dev/null || skip "xmllint is not installed (Debian package libxml2-utils)"
command -v script >/dev/null || skip "script is not installed (Debian package bsdutils)"
cd "$TMP"

ms_record summary.txt -o hm.data -- "$WORKLOADS/aspace-ops" "$WORKLOADS/exec-target" >ops.txt
"$MAPSCOPE" report -i hm.data --format json >report.json 2>/dev/null || fail "report failed"

"$MAPSCOPE" heatmap -i hm.data --format svg -o hm.svg 2>err.txt || fail "heatmap --format svg failed: $(cat err.txt)"
xmllint --noout hm.svg || fail "the SVG is not well-formed XML"
python3 - report.json hm.svg <<'PY' || fail "the SVG's bands do not match the report"
import json, re, sys
rep = json.load(open(sys.argv[1]))
svg = open(sys.argv[2]).read()
bands = {int(m[1]): int(m[3]) for m in re.finditer(r'<g class="band" data-region="(\d+)" data-pid="(\d+)" data-samples="(\d+)"', svg)}
want = {r["id"]: r["samples"] for r in rep["regions"] if r["samples"]}
if bands != want:
    sys.exit(f"FAIL: bands {len(bands)} (samples {sum(bands.values())}), report's regions with samples "
             f"{len(want)} (samples {sum(want.values())})")
print(f"ok: {len(bands)} bands, one per region with samples, {sum(bands.values())} samples as report has them")
PY

# Through a pipe: no escape sequences, the ramp's characters; a band header per region shown.
"$MAPSCOPE" heatmap -i hm.data >pipe.txt 2>/dev/null || fail "heatmap (text) failed"
grep -q $'\033' pipe.txt && fail "escape sequences through a pipe"
grep -q '[.:=+*#%@]' pipe.txt || fail "no cells drawn through a pipe"
# On a pseudo-terminal: coloured cells; with NO_COLOR: none.
script -qec "$MAPSCOPE heatmap -i hm.data" /dev/null >tty.txt 2>/dev/null || true
grep -q $'\033\[48;5;' tty.txt || fail "no colour on a terminal"
NO_COLOR=1 script -qec "$MAPSCOPE heatmap -i hm.data" /dev/null >nocolor.txt 2>/dev/null || true
grep -q $'\033\[48;5;' nocolor.txt && fail "colour with NO_COLOR set"
grep -q '[.:=+*#%@]' nocolor.txt || fail "no cells drawn with NO_COLOR"

# --region: one band; the region that mremap moved keeps its band and its R mark.
"$MAPSCOPE" heatmap -i hm.data --region '[heap]' >heap.txt 2>/dev/null || fail "--region '[heap]' failed"
[ "$(grep -c 'pid [0-9]*, region [0-9]*:' heap.txt)" -ge 1 ] || fail "--region '[heap]' drew no band"
grep -v '^\[heap\]' heap.txt | grep -q 'pid [0-9]*, region [0-9]*:' && fail "--region '[heap]' drew other regions"
# The region that mremap moved (the second mremap: a move) is drawn in its own band, with its R mark.
moved=$(python3 - ops.txt report.json <<'PY'
import json, re, sys
moves = [m for m in re.finditer(r"^mremap pid=(\d+) .*old_start=(0x\w+) .*new_start=(0x\w+)", open(sys.argv[1]).read(), re.M)
         if m[2] != m[3]]
rep = json.load(open(sys.argv[2]))
if moves:
    pid, new = int(moves[0][1]), int(moves[0][3], 16)
    ids = [r["id"] for r in rep["regions"] if r["pid"] == pid and int(r["start"], 16) <= new < int(r["end"], 16)]
    print(ids[0] if ids else "")
PY
)
[ -n "$moved" ] || fail "the moved region is not in the report"
if "$MAPSCOPE" heatmap -i hm.data --region "$moved" >one.txt 2>one.err; then
	[ "$(grep -c 'pid [0-9]*, region [0-9]*:' one.txt)" -eq 1 ] || fail "--region $moved drew $(grep -c 'region' one.txt) bands"
	edge=$(grep -A1 'pid [0-9]*, region [0-9]*:' one.txt | sed -n 2p)
	grep -q R <<<"$edge" || fail "the moved region's band has no R mark: $edge"
else
	grep -q "no region '$moved' with samples" one.err || fail "--region $moved failed: $(cat one.err)"
	echo "note: the moved region had no samples, so it has no band"
fi
expect_status 1 "$MAPSCOPE" heatmap -i hm.data --region '[nothing]'
expect_status 2 "$MAPSCOPE" heatmap --format png
pass "SVG valid with a band per region, text coloured on a terminal only, --region, marks"
