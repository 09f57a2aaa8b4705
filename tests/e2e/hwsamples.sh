#!/usr/bin/env bash
# Hardware memory samples as Intel PEBS, AMD IBS and Arm SPE write them,
# which this machine cannot take, from synthetic recordings (ms-synth,
# whose ground truth is printed): report's TLB, level and latency columns
# in text, CSV and JSON; unmapped names the bad prefetch and the wild load,
# and classes hardware prefetch samples as it classes record --prefetches'.
# A page-fault recording's report has none of the columns.
source "$(dirname "$0")/lib.sh"
cd "$TMP"
synth="$WORKLOADS/ms-synth"

for style in pebs ibs spe; do
	"$synth" $style $style.data >$style.truth || fail "ms-synth $style failed"
	grep -q "tlb_misses 50, weight 100\*4+50\*300+20\*40 = 16200" $style.truth || fail "$style: the ground truth changed"
	"$MAPSCOPE" report -i $style.data >$style.txt 2>/dev/null || fail "$style: report failed"
	grep -q "tlb-miss level        latency  name" $style.txt || fail "$style: no memory columns: $(cat $style.txt)"
	# 180 samples, 50 dTLB misses, most from L1, 16200 cycles over the 170 weighted: 95.
	grep -Eq "^ +180 .* 50 L1 +95  \[anon\]$" $style.txt || fail "$style: the region's columns are wrong: $(cat $style.txt)"
	grep -Eq "^ +2 .* 1 RAM +200  \[unmapped\]$" $style.txt || fail "$style: the unmapped row's columns are wrong"
	"$MAPSCOPE" report -i $style.data --format csv >$style.csv 2>/dev/null || fail "$style: report csv failed"
	head -1 $style.csv | grep ",tlb_misses,level,weight_sum,weighted$" >/dev/null || fail "$style: no CSV columns"
	grep -q "^180,.*,50,L1,16200,170$" $style.csv || fail "$style: CSV row wrong: $(cat $style.csv)"
	"$MAPSCOPE" report -i $style.data --format json >$style.json 2>/dev/null || fail "$style: report json failed"
	python3 - $style.json <<'EOF' || fail "$style: JSON memory wrong"
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["regions"] if x["start"] == "0x10000000"][0]["memory"]
assert r == {"samples": 180, "tlb_misses": 50, "level": "L1", "levels": {"L1": 110, "L3": 20, "RAM": 50},
             "weight_sum": 16200, "weighted": 170}, r
assert d["unmapped"]["memory"]["samples"] == 2
EOF
	"$MAPSCOPE" unmapped -i $style.data >$style.un 2>/dev/null || fail "$style: unmapped failed"
	grep -Eq "^never-mapped prefetch +1 +4242 +0x30000000 .* 0x400100$" $style.un || fail "$style: no bad prefetch: $(cat $style.un)"
	grep -Eq "^never-mapped load +1 +4242 +0x30001000 " $style.un || fail "$style: no wild load"
	pass "$style: TLB, level and latency columns; the bad prefetch is an unmapped prefetch"
done

# Hardware prefetch samples (PEBS load latency, SPE): classed as the uprobes' are, and counted per instruction.
for style in pebs spe; do
	"$synth" $style-prefetch $style-pf.data >$style-pf.truth || fail "ms-synth $style-prefetch failed"
	grep -q "0x400300 9 of which past-end 3" $style-pf.truth || fail "$style-prefetch: the ground truth changed"
	"$MAPSCOPE" unmapped -i $style-pf.data --format json >$style-pf.json 2>/dev/null || fail "$style: unmapped failed"
	python3 - $style-pf.json $style-pf.truth <<'EOF' || fail "$style: hardware prefetches classed wrong"
import json, re, sys
d = json.load(open(sys.argv[1]))
t = re.search(r"past-end 3 \(after (0x[0-9a-f]+)\).* never-mapped 1 \((\d+) above (0x[0-9a-f]+)\)",
              open(sys.argv[2]).read())
end, dist, below = int(t.group(1), 16), int(t.group(2)), int(t.group(3), 16)
rows = {(a["class"], a["ip"]): a for a in d["accesses"]}
assert {k: a["count"] for k, a in rows.items()} == {("past-end", "0x400300"): 3, ("guard", "0x400310"): 2,
        ("null-page", "0x400320"): 1, ("never-mapped", "0x400330"): 1}, rows
assert all(a["access"] == "prefetch" for a in rows.values()), rows
pe = rows[("past-end", "0x400300")]["nearest"]
assert int(pe["end"], 16) == end and pe["distance"] == 0, pe
gd = rows[("guard", "0x400310")]["nearest"]
assert gd["start"] == "0x20000000" and gd["end"] == "0x20001000" and gd["distance"] == 0, gd
nv = rows[("never-mapped", "0x400330")]["nearest"]
assert int(nv["end"], 16) == below and nv["distance"] == dist, nv
sites = {s["ip"]: (s["prefetches"], s["bad"]) for s in d["prefetch_sites"]}
assert sites == {"0x400300": (9, 3), "0x400310": (2, 2), "0x400320": (1, 1), "0x400330": (1, 1)}, sites
EOF
	pass "$style: hardware prefetches past the end, into a guard page, the NULL page and never-mapped memory"
done

# Page faults only: the report is as it always was, without the columns.
(cd "$SRC_DIR/tests/golden" && "$MAPSCOPE" report --children 0 -i mapscope-ops.data) >golden.txt 2>/dev/null || fail "report of the golden file failed"
cmp -s golden.txt "$SRC_DIR/tests/golden/mapscope-ops.report.txt" || fail "a page-fault report changed"
pass "a page-fault recording's report: unchanged"
