#!/usr/bin/env bash
# The heatmap: one band per region with samples, whose samples add up to the
# report's mapped samples; a valid SVG (xmllint); a text grid with colour on a
# pseudo-terminal, without it through a pipe or with NO_COLOR; --region picks
# one band; a region moved by mremap keeps its band, marked R. The first band
# is the busiest region (text and SVG; --sort address: by address), each
# output has its legend and time axis, and --min-share hides the bands below
# it, as the report's shares say.
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
grep -v '^\[heap\]' heap.txt | grep 'pid [0-9]*, region [0-9]*:' >/dev/null && fail "--region '[heap]' drew other regions"
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

# The busiest first, in SVG and text; --sort address: by pid and address. The legends and axes.
"$MAPSCOPE" heatmap -i hm.data --sort address --format svg -o addr.svg 2>/dev/null || fail "--sort address failed"
xmllint --noout addr.svg || fail "the --sort address SVG is not well-formed XML"
python3 - report.json hm.svg pipe.txt addr.svg <<'PY' || fail "the heatmap does not lead with the busiest region"
import json, re, subprocess, sys
rep = json.load(open(sys.argv[1]))
regions = {r["id"]: r for r in rep["regions"] if r["samples"]}
busiest = max(regions.values(), key=lambda r: (r["samples"], -r["pid"], -int(r["start"], 16)))

def xpath(svg, expr):
    return subprocess.run(["xmllint", "--xpath", expr, svg], capture_output=True, text=True).stdout

ns = "*[local-name()='%s']"
first = xpath(sys.argv[2], f"string(//{ns % 'g'}[@class='band'][1]/@data-region)")
if int(first) != busiest["id"]:
    sys.exit(f"FAIL: the SVG's first band is region {first}, the busiest is {busiest['id']} ({busiest['samples']} samples)")
svg_samples = [int(x) for x in re.findall(r'data-samples="(\d+)"', open(sys.argv[2]).read())]
if svg_samples != sorted(svg_samples, reverse=True):
    sys.exit(f"FAIL: the SVG's bands are not the busiest first: {svg_samples[:8]}")
legend = xpath(sys.argv[2], f"count(//{ns % 'g'}[@class='legend']/{ns % 'rect'})")
if int(legend) != 11 or "heat: samples per cell (log scale)" not in open(sys.argv[2]).read():
    sys.exit(f"FAIL: the SVG has no colour legend ({legend} swatches)")
axes = xpath(sys.argv[2], f"count(//{ns % 'g'}[@class='axis'])")
if int(axes) != 2 or ">seconds from the start<" not in open(sys.argv[2]).read():
    sys.exit(f"FAIL: the SVG has {axes} time axes, not one above and one below")
addr = [int(x) for x in re.findall(r'<g class="band" data-region="(\d+)"', open(sys.argv[4]).read())]
want = sorted(regions, key=lambda i: (regions[i]["pid"], int(regions[i]["start"], 16), i))
if addr != want:
    sys.exit(f"FAIL: --sort address drew {addr[:6]}, by address it is {want[:6]}")

text = open(sys.argv[3]).read()
heads = re.findall(r"pid (\d+), region (\d+): (\d+) samples \(([\d.]+)%\); a cell: ([\d.]+ [KMG]iB) by ([\d.]+) s", text)
if not heads or int(heads[0][1]) != busiest["id"]:
    sys.exit(f"FAIL: the text's first band is {heads[:1]}, the busiest is region {busiest['id']}")
if [int(h[2]) for h in heads] != sorted((int(h[2]) for h in heads), reverse=True):
    sys.exit("FAIL: the text's bands are not the busiest first")
total = sum(r["samples"] for r in regions.values())
if abs(float(heads[0][3]) - 100 * busiest["samples"] / total) > 0.01:
    sys.exit(f"FAIL: the first band's share {heads[0][3]}% is not {100 * busiest['samples'] / total:.2f}%")
# The legend: each character with the samples it stands for, the last reaching the busiest text cell.
legend = re.search(r"^heat \(samples per cell, log scale\):  ' ' none((?:  '.' \d+(?:-\d+)?)+)$", text, re.M)
if not legend:
    sys.exit("FAIL: the text grid has no legend for ' .:-=+*#%@'")
if not re.search(r"^  time \(s\)  0\.\d+ .* \d+\.\d+$", text, re.M) or "seconds from the recording's start" not in text:
    sys.exit("FAIL: the text grid has no time axis in seconds")
print(f"ok: region {busiest['id']} ({busiest['samples']} samples) leads in SVG and text; legends and axes; --sort address")
PY

# --min-share: the bands under it are hidden and counted; over every band's share, none is left.
read -r share kept hidden < <(python3 - report.json <<'PY'
import json, sys
s = sorted((r["samples"] for r in json.load(open(sys.argv[1]))["regions"] if r["samples"]), reverse=True)
cut = (s[2] + s[3]) / 2 / sum(s) * 100            # between the third and the fourth busiest
print(f"{cut:.4f}", sum(1 for x in s if 100 * x / sum(s) >= cut), sum(1 for x in s if 100 * x / sum(s) < cut))
PY
)
"$MAPSCOPE" heatmap -i hm.data --min-share "$share" --format svg -o share.svg 2>/dev/null || fail "--min-share $share failed"
[ "$(grep -c '<g class="band"' share.svg)" -eq "$kept" ] ||
	fail "--min-share $share drew $(grep -c '<g class="band"' share.svg) bands, $kept have that share"
grep -q "; $hidden more under --min-share" share.svg || fail "the SVG does not say that --min-share hid $hidden bands"
"$MAPSCOPE" heatmap -i hm.data --min-share "$share%" >share.txt 2>/dev/null || fail "--min-share $share% failed"
[ "$(grep -c 'pid [0-9]*, region [0-9]*:' share.txt)" -eq "$kept" ] || fail "--min-share $share% drew other bands in text"
grep -q "($hidden regions under --min-share left out)" share.txt || fail "the text does not say what --min-share hid"
expect_status 1 "$MAPSCOPE" heatmap -i hm.data --min-share 100
expect_status 2 "$MAPSCOPE" heatmap -i hm.data --min-share 101
expect_status 2 "$MAPSCOPE" heatmap -i hm.data --sort nothing
expect_status 2 "$MAPSCOPE" heatmap --format png
pass "SVG valid with a band per region, text coloured on a terminal only, --region, marks, busiest first, legends, --min-share"
