#!/usr/bin/env bash
# record --referenced on a workload with a hot and a cold region of equal
# size (tests/workloads/hotcold.c): after both were written once, the hot
# one shows many times the cold one's referenced pages in every interval;
# perf reads the samples and prints their fields; report, hugepages and
# heatmap use them and say so; hugepages advises the hot one first (the
# cold one is older, and first touches alone rank it first).
source "$(dirname "$0")/lib.sh"
need_recording
[ -w /proc/self/clear_refs ] || skip "/proc/PID/clear_refs is not writable here"
cd "$TMP"

ms_record rec.err --referenced=50 -o r.data -- "$WORKLOADS/hotcold" 1.5 >hc.txt
grep -q '^done rewrites=' hc.txt || fail "the workload did not finish: $(cat hc.txt)"
perf script -i r.data >script.txt 2>script.err || fail "perf script cannot read the recording: $(tail -3 script.err)"
perf report -i r.data --stdio >perfreport.txt 2>&1 || fail "perf report cannot read the recording: $(tail -3 perfreport.txt)"

python3 - hc.txt script.txt <<'PY' || fail "the referenced pages per interval are wrong"
import re, sys
wl = open(sys.argv[1]).read()
reg = {m[0]: int(m[1], 16) for m in re.findall(r"region name=(\w+) start=0x([0-9a-f]+)", wl)}
touched = int(re.search(r"touched t=(\d+)", wl)[1])
per = {}   # interval end (ns) -> {start: referenced}
for line in open(sys.argv[2]):
    if "mapscope:vma_referenced:" not in line:
        continue
    f = dict(kv.split("=", 1) for kv in line.split("mapscope:vma_referenced:")[1].split())
    for k in ("pid", "interval_ns", "referenced", "rss", "anon", "anon_huge"):
        int(f[k])          # every field printed, as a number
    t = int(round(float(re.search(r"(\d+\.\d+):", line)[1]) * 1e9))
    per.setdefault((t, int(f["interval_ns"])), {})[int(f["start"], 16)] = int(f["referenced"])
ivs = [iv for (t, iv) in sorted(per)]
if not all(40e6 <= iv <= 1e9 for iv in ivs[1:]):      # the first ends at the first tick
    print(f"FAIL: intervals of {ivs} ns with --referenced=50"); sys.exit(1)
after = [(t, v) for (t, iv), v in sorted(per.items()) if t - iv > touched + 1e6]
if len(after) < 5:
    print(f"FAIL: {len(after)} intervals after the first writes, of {len(per)}"); sys.exit(1)
bad = 0
for t, v in after:
    hot, cold = v.get(reg["hot"]), v.get(reg["cold"])
    if hot is None or cold is None:
        print(f"FAIL: an interval at {t} lacks a region: {v}"); bad = 1; continue
    if hot < 8 * max(cold, 4096):
        print(f"FAIL: at {t} the hot region has {hot} bytes referenced, the cold {cold}"); bad = 1
print(f"{len(after)} intervals after the first writes: hot {min(v[reg['hot']] for _, v in after) >> 10}"
      f"-{max(v[reg['hot']] for _, v in after) >> 10} KiB, cold at most {max(v[reg['cold']] for _, v in after) >> 10} KiB")
sys.exit(bad)
PY

"$MAPSCOPE" report -i r.data --format json >report.json || fail "report failed"
"$MAPSCOPE" report -i r.data --format csv >report.csv || fail "report --format csv failed"
"$MAPSCOPE" report -i r.data >report.txt || fail "report (text) failed"
"$MAPSCOPE" hugepages -i r.data --format json >huge.json || fail "hugepages failed"
python3 - hc.txt report.json huge.json report.csv <<'PY' || fail "report or hugepages ignore the access"
import csv, json, re, sys
reg = {m[0]: int(m[1], 16) for m in re.findall(r"region name=(\w+) start=0x([0-9a-f]+)", open(sys.argv[1]).read())}
rep = json.load(open(sys.argv[2]))
assert "record --referenced" in rep["access_evidence"], rep.get("access_evidence")
row = {n: next(r for r in rep["regions"] if int(r["start"], 16) == a) for n, a in reg.items()}
h, c = row["hot"], row["cold"]
print(f"report: hot mean {h['referenced_pages_mean']} peak {h['referenced_pages_peak']} hot {h['hot_share_ppm']} ppm; "
      f"cold mean {c['referenced_pages_mean']} peak {c['referenced_pages_peak']} hot {c['hot_share_ppm']} ppm")
assert h["access_intervals"] >= 5 and h["referenced_pages_mean"] >= 3 * max(c["referenced_pages_mean"], 1)
assert h["referenced_pages_peak"] <= 8192 and h["hot_share_ppm"] > 4 * c["hot_share_ppm"]
rows = list(csv.DictReader(open(sys.argv[4])))
hc = next(r for r in rows if r["start"] and int(r["start"], 16) == reg["hot"])
assert int(hc["referenced_pages_mean"]) == h["referenced_pages_mean"], hc
adv = [a for a in json.load(open(sys.argv[3]))["advice"] if a["advised"]]
first = int(adv[0]["region"]["start"], 16)
print(f"hugepages: first advised {hex(first)} ({'hot' if first == reg['hot'] else 'not hot'}): {adv[0]['reason']}")
assert first == reg["hot"] and "record --referenced" in adv[0]["reason"]
PY
grep -q 'ongoing access from accessed bits' report.txt || fail "the text report does not say what its access columns come from"
"$MAPSCOPE" heatmap -i r.data >heat.txt || fail "heatmap failed"
grep -q '^heat: the share of each cell found accessed per interval, from accessed bits' heat.txt ||
	fail "the heatmap does not say it drew the accessed bits: $(head -2 heat.txt)"
"$MAPSCOPE" heatmap -i r.data --format svg >heat.svg || fail "heatmap --format svg failed"
grep -q 'heat: accessed bits' heat.svg || fail "the SVG heatmap does not say it drew the accessed bits"
grep -q "^heat (the most of a cell's bytes accessed in an interval, log scale):  ' ' none  '.' [0-9.e-]*%" heat.txt ||
	fail "the heatmap's legend does not say that it measures the share accessed: $(grep '^heat (' heat.txt)"
grep -q '>heat: share accessed (log scale):</text>' heat.svg && grep -q 'text-anchor="end">100%</text>' heat.svg ||
	fail "the SVG heatmap's legend does not say that it measures the share accessed, up to 100%"
"$MAPSCOPE" report -i r.data --format html -o r.html || fail "report --format html failed"
grep -q '"access": *"accessed bits per interval' r.html && grep -q '"ref_mean": *[0-9]' r.html ||
	fail "the HTML report carries no access figures"
pass "the hot region's referenced pages are many times the cold one's in every interval; report, hugepages and heatmap use them"
