#!/usr/bin/env bash
# report --format html, opened from disk by headless Chromium: the page's
# DOM after its script ran must hold the report's rows (samples by region
# id), one heatmap band per region with samples, the timeline's changes,
# the hugepage advice and the unmapped accesses; a selection and an order
# named in the URL's fragment must hold, and so must a click on a band and
# on a column's header (tests/e2e/cdp.py, over the DevTools protocol); the
# page must fetch nothing and log nothing to the console. On 10,022 regions the page shows a page of
# rows and bands and says how many there are. A screenshot is kept in
# $ARTEFACTS (default: ./test-artefacts). The heatmap leads with the
# busiest band and has its colour legend and time axis.
source "$(dirname "$0")/lib.sh"
need_recording
command -v chromium >/dev/null || skip "chromium is not installed (Debian package chromium)"
ARTEFACTS=${ARTEFACTS:-$PWD/test-artefacts}
mkdir -p "$ARTEFACTS"
cd "$TMP"

# dom PAGE[#FRAGMENT] OUT: the DOM after the scripts ran; fails on any console line.
dom() {
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/chromium" --enable-logging=stderr \
		--v=0 --dump-dom "file://$TMP/$1" >"$2" 2>"$2.log" || fail "chromium could not open $1: $(tail -3 "$2.log")"
	if grep -q ':CONSOLE' "$2.log"; then
		fail "the page logged to the console: $(grep ':CONSOLE' "$2.log" | head -3)"
	fi
	grep -q 'data-ready="true"' "$2" || fail "the page's script did not finish on $1"
}

ms_record rec.txt -o ops.data -- "$WORKLOADS/aspace-ops" "$WORKLOADS/exec-target" >ops.txt
"$MAPSCOPE" report -i ops.data --all --format json >report.json 2>/dev/null || fail "report failed"
"$MAPSCOPE" timeline -i ops.data --format json >timeline.json 2>/dev/null || fail "timeline failed"
"$MAPSCOPE" hugepages -i ops.data --format json >huge.json 2>/dev/null || fail "hugepages failed"
"$MAPSCOPE" report -i ops.data --format html -o ops.html 2>err.txt || fail "report --format html failed: $(cat err.txt)"

# Self-contained: no script, style, font or image from elsewhere.
if grep -Eqi '(src|href)=|url\(|@import|https?://' ops.html; then
	fail "the page refers to something outside it: $(grep -Eoi '(src|href)=[^ >]*|url\([^)]*\)|@import[^;]*|https?://[^" ]*' ops.html | head -3)"
fi

dom ops.html ops.dom
python3 - report.json timeline.json huge.json ops.dom <<'PY' || fail "the page does not show what report, timeline and hugepages say"
import json, re, sys
rep = json.load(open(sys.argv[1]))
changes = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
huge = json.load(open(sys.argv[3]))["advice"]
dom = open(sys.argv[4]).read()

def table(tid):
    m = re.search(r'<table id="%s">(.*?)</table>' % tid, dom, re.S)
    if not m:
        sys.exit(f"FAIL: no table {tid}")
    return m[1]

body = re.search(r"<tbody>(.*?)</tbody>", table("regions"), re.S)[1]
rows = {int(m[1]): int(m[2]) for m in re.finditer(r'<tr data-region="(\d+)"[^>]*><td class="num">(\d+)</td>', body)}
want = {r["id"]: r["samples"] for r in rep["regions"]}
if rows != want:
    sys.exit(f"FAIL: table has {len(rows)} rows, report {len(want)}; differing: "
             f"{sorted(set(rows.items()) ^ set(want.items()))[:5]}")
foot = re.search(r"<tfoot>(.*?)</tfoot>", table("regions"), re.S)[1]
if not re.search(r'<td class="num">%d</td>' % rep["unmapped"]["samples"], foot):
    sys.exit("FAIL: the unmapped row's samples differ from the report's")

bands = {int(m[1]): int(m[2]) for m in re.finditer(r'<div class="band" data-region="(\d+)" data-samples="(\d+)"', dom)}
want = {r["id"]: r["samples"] for r in rep["regions"] if r["samples"]}
if bands != want:
    sys.exit(f"FAIL: {len(bands)} heatmap bands, {len(want)} regions with samples")
# The heatmap leads with the busiest region, and its legend and time axis are there.
order = [int(m[1]) for m in re.finditer(r'<div class="band" data-region="\d+" data-samples="(\d+)"', dom)]
if order[0] != max(want.values()) or order != sorted(order, reverse=True):
    sys.exit(f"FAIL: the heatmap's bands are not the busiest first: {order[:8]}")
# The legend's top: the busiest cell of all bands, as the page's data holds them (cell index, count pairs).
data = json.loads(re.search(r'<script type="application/json" id="ms-data">(.*?)</script>', dom, re.S)[1])
top = max(max(b["cells"][1::2]) for b in data["heat"]["bands"] if b["cells"])
scale = re.search(r'<span id="heat-scale">(.*?)</span>\s*<span><span class="mk"', dom, re.S)
if not scale or "samples per cell (log scale)" not in scale[1] or f">1</span>" not in scale[1] or \
        f">{top}</span>" not in scale[1]:
    sys.exit(f"FAIL: no colour legend from 1 to {top} samples a cell: {scale and scale[1][:200]}")
if not re.search(r'<div class="axis" data-axis="top" data-step="[0-9.e-]+"><div class="label">seconds from the start', dom) \
        or 'data-axis="bottom"' not in dom:
    sys.exit("FAIL: no time axis in seconds above and below the bands")

note = re.search(r'id="changes-note">(\d+) changes', dom)
shown = len(re.findall(r"<tr", re.search(r"<tbody>(.*?)</tbody>", table("changes"), re.S)[1]))
if not note or int(note[1]) != len(changes) or shown != min(500, len(changes)):
    sys.exit(f"FAIL: timeline says {note and note[1]} changes and shows {shown}; mapscope timeline has {len(changes)}")

# Each change says what the timeline says of it: the protection, the advice (madvise), the lock state, or a
# brk's shrink.
def what(c):
    if c["op"] == "brk" and c["end"] and c["start"] and int(c["end"], 16) < int(c["start"], 16):
        return "shrink"
    return c["prot"] or c["advice"] or c["lock"] or ""
said = [(c["op"], c["what"]) for c in data["changes"]]
want = [(c["op"], what(c)) for c in changes[:len(said)]]
if said != want:
    bad = [(a, b) for a, b in zip(said, want) if a != b]
    sys.exit(f"FAIL: the page's changes say {bad[0][0]} where the timeline says {bad[0][1]} ({len(bad)} differ)")
if not any(w == "dontneed" for _, w in said) or not any(w == "shrink" for _, w in said):
    sys.exit("FAIL: the workload's madvise and brk shrink are not among the page's changes")

hrows = len(re.findall(r"<tr", re.search(r"<tbody>(.*?)</tbody>", table("huge"), re.S)[1]))
if hrows != len(huge) or ('id="huge-section" hidden' in dom) != (not huge):
    sys.exit(f"FAIL: {hrows} hugepage rows, hugepages has {len(huge)}")
if 'id="unmapped-section" hidden' not in dom:
    sys.exit("FAIL: an unmapped-access section for a recording without any")
print(f"ok: {len(rows)} rows, {len(bands)} bands, {len(changes)} changes, {hrows} hugepage rows as the commands say")
PY

# A time window: the table and the heatmap's bands count the window's samples only.
"$MAPSCOPE" report -i ops.data --all --time +0.002, --format json >win.json 2>/dev/null || fail "report --time failed"
"$MAPSCOPE" report -i ops.data --time +0.002, --format html -o win.html 2>err.txt ||
	fail "report --time --format html failed: $(cat err.txt)"
dom win.html win.dom
python3 - win.json win.dom <<'PY' || fail "the page of a time window is wrong"
import json, re, sys
rep = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
bands = {int(m[1]): int(m[2]) for m in re.finditer(r'<div class="band" data-region="(\d+)" data-samples="(\d+)"', dom)}
want = {r["id"]: r["samples"] for r in rep["regions"] if r["samples"]}
if bands != want or not want or "Only the samples of the window +0.002," not in dom:
    sys.exit(f"FAIL: window bands {sum(bands.values())} samples in {len(bands)}, report {sum(want.values())} in {len(want)}")
print(f"ok: --time +0.002,: {len(bands)} bands, {sum(bands.values())} samples, as report has them")
PY

# A region chosen in the fragment (as a click on its band chooses it), and an order.
moved=$(python3 - ops.txt report.json <<'PY'
import json, re, sys
moves = [m for m in re.finditer(r"^mremap pid=(\d+) .*old_start=(0x\w+) .*new_start=(0x\w+)", open(sys.argv[1]).read(), re.M)
         if m[2] != m[3]]
rep = json.load(open(sys.argv[2]))
pid, new = int(moves[0][1]), int(moves[0][3], 16)
print([r["id"] for r in rep["regions"] if r["pid"] == pid and int(r["start"], 16) <= new < int(r["end"], 16)][0])
PY
) || fail "the moved region is not in the report"
dom "ops.html#region=$moved&sort=pages&dir=desc" sel.dom
python3 - "$moved" sel.dom <<'PY' || fail "the selection or the order named in the fragment does not hold"
import re, sys
rid, dom = sys.argv[1], open(sys.argv[2]).read()
sel = re.findall(r'<tr data-region="(\d+)" class="sel"', dom)
if sel != [rid]:
    sys.exit(f"FAIL: selected rows {sel}, wanted {rid}")
if f"<strong>Region {rid}:" not in dom:
    sys.exit("FAIL: no card for the selected region")
changes = re.search(r'<table id="changes">.*?<tbody>(.*?)</tbody>', dom, re.S)[1]
ids = re.findall(r'<tr(?: data-region="(\d+)")?>', changes)
if not ids or set(ids) != {rid} or "<td>remap</td>" not in changes:
    sys.exit(f"FAIL: the timeline shows {len(ids)} changes of regions {sorted(set(ids))}, not region {rid}'s with its remap")
head = re.search(r'<table id="regions"><thead>(.*?)</thead>', dom, re.S)[1]
if not re.search(r'data-key="pages" aria-sort="descending"', head):
    sys.exit("FAIL: the pages column is not marked as the order")
body = re.search(r'<table id="regions">.*?<tbody>(.*?)</tbody>', dom, re.S)[1]
pages = [int(re.findall(r"<td[^>]*>([^<]*)</td>", row)[10]) for row in re.findall(r"<tr.*?</tr>", body)]
if pages != sorted(pages, reverse=True):
    sys.exit(f"FAIL: rows not by pages, most first: {pages[:10]}")
print(f"ok: region {rid} selected (row, card, its {len(ids)} changes), rows by pages")
PY
grep -q "<div class=\"band sel\" data-region=\"$moved\"" sel.dom || fail "the moved region's band is not selected"

# By first sample, oldest first: regions with none ('-') before the others, then in time order.
dom "ops.html#sort=first&dir=asc" first.dom
python3 - first.dom <<'PY' || fail "rows by first sample are out of order"
import re, sys
dom = open(sys.argv[1]).read()
body = re.search(r'<table id="regions">.*?<tbody>(.*?)</tbody>', dom, re.S)[1]
first = [re.findall(r"<td[^>]*>([^<]*)</td>", row)[11] for row in re.findall(r"<tr.*?</tr>", body)]
key = [float("-inf") if v == "-" else float(v) for v in first]
if key != sorted(key) or "-" not in first:
    sys.exit(f"FAIL: first column {first[:12]}")
print(f"ok: by first sample, {first.count('-')} without samples first, then in time order")
PY

# Clicks, as a mouse makes them, over the DevTools protocol: on the moved region's band, then on a header.
python3 "$E2E_DIR/cdp.py" "$(command -v chromium)" "$TMP/cdp" ops.html "$moved" "$ARTEFACTS/html-report-clicked.png" ||
	fail "clicking through the page went wrong"

chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/chromium" --window-size=1400,2400 \
	--screenshot="$ARTEFACTS/html-report.png" "file://$TMP/ops.html#region=$moved" >/dev/null 2>&1 ||
	fail "chromium could not take a screenshot"
[ "$(head -c 8 "$ARTEFACTS/html-report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "the screenshot is not a PNG"
cp ops.html "$ARTEFACTS/html-report.html"
echo "screenshot: $ARTEFACTS/html-report.png"

# Unmapped accesses: one row per group that mapscope unmapped finds.
ms_record rec.txt -o bad.data -- "$WORKLOADS/badaccess" >/dev/null
"$MAPSCOPE" unmapped -i bad.data --format json >unmapped.json 2>/dev/null || fail "unmapped failed"
"$MAPSCOPE" report -i bad.data --format html -o bad.html 2>err.txt || fail "report --format html failed: $(cat err.txt)"
dom bad.html bad.dom
python3 - unmapped.json bad.dom <<'PY' || fail "the unmapped accesses differ"
import json, re, sys
acc = json.load(open(sys.argv[1]))["accesses"]
dom = open(sys.argv[2]).read()
body = re.search(r'<table id="unmapped">.*?<tbody>(.*?)</tbody>', dom, re.S)[1]
rows = re.findall(r"<tr><td>([\w-]+)</td><td>[\w-]+</td><td class=\"num\">(\d+)</td>", body)
want = [(a["class"], str(a["count"])) for a in acc]
if not acc or 'id="unmapped-section" hidden' in dom or rows != want:
    sys.exit(f"FAIL: page rows {rows}, mapscope unmapped {want}")
print(f"ok: {len(rows)} unmapped-access rows")
PY

# A recording without data addresses (perf record without -d): the page says why it is empty.
perf record -q -e page-faults -c 1 -o nod.data -- "$WORKLOADS/attrib" >/dev/null 2>&1 || fail "perf record failed"
"$MAPSCOPE" report -i nod.data --format html -o nod.html 2>/dev/null || fail "report --format html failed on a perf file"
dom nod.html nod.dom
grep -q 'class="warn">No sample was charged' nod.dom || fail "an empty page does not say why"
grep -q 'id="heat-note">No samples to draw' nod.dom || fail "an empty heatmap does not say so"

# Usage errors: a page onto a terminal, a grouping the page has no table for, an unknown format.
if command -v script >/dev/null; then
	script -qec "$MAPSCOPE report -i ops.data --format html" /dev/null >tty.txt 2>&1 && fail "html onto a terminal was written"
	grep -q 'name the file with -o' tty.txt || fail "html onto a terminal: $(cat tty.txt)"
fi
expect_status 2 "$MAPSCOPE" report -i ops.data --format html --sort symbol -o x.html
expect_status 2 "$MAPSCOPE" report -i ops.data --format pdf 2>fmt.txt
grep -q 'use text, json, csv, pprof or html' fmt.txt || fail "the unknown-format error does not list the formats"

# 10,022 regions: a page of rows and bands, and the count of all. Every
# mapping's records are needed, and its stack copy is not (no site is
# checked): with one (4 KiB each, 48 MiB in all) a 4 MiB ring lost
# records in two of three runs at a load of 2.5, and the page had 3,138
# and 8,926 regions. Without, the run is 7 MiB, held whole by 16 MiB
# rings; a recording that lost records anyway is skipped, last, with
# what it lost.
ms_record rec.txt --no-alloc-stacks -m 4096 -o many.data -- "$WORKLOADS/many-maps" 10000 2 >many.txt
all_recorded rec.txt
"$MAPSCOPE" report -i many.data --all --format json >many.json 2>/dev/null || fail "report failed"
"$MAPSCOPE" report -i many.data --format html -o many.html 2>err.txt || fail "report --format html failed: $(cat err.txt)"
dom many.html many.dom
python3 - many.json many.dom <<'PY' || fail "the page of 10,000 regions is wrong"
import json, re, sys
rep = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
n, busy = len(rep["regions"]), sum(1 for r in rep["regions"] if r["samples"])
if n < 10000:
    sys.exit(f"FAIL: the workload made {n} regions")
body = re.search(r'<table id="regions">.*?<tbody>(.*?)</tbody>', dom, re.S)[1]
rows = [int(x) for x in re.findall(r'<tr data-region="\d+"[^>]*><td class="num">(\d+)</td>', body)]
top = sorted((r["samples"] for r in rep["regions"]), reverse=True)[:500]
if rows != top or f"500 of {n} regions shown" not in dom:
    sys.exit(f"FAIL: {len(rows)} rows shown, not the 500 busiest of {n}")
bands = re.findall(r'<div class="band" data-region', dom)
if len(bands) != 500 or f"The 500 busiest of {busy} bands are shown" not in dom:
    sys.exit(f"FAIL: {len(bands)} bands shown of {busy}")
print(f"ok: {n} regions: 500 rows and 500 bands shown, counts stated")
PY
pass "the HTML page holds the report's rows, bands, changes, advice and unmapped accesses; fragment; 10k regions"
