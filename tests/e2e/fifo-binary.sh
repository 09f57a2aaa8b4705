#!/usr/bin/env bash
# A binary that is a FIFO by the time of the report: report (every format),
# hugepages and unmapped must not block opening it, and must count the same
# samples as with the binary there, its addresses shown raw.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

cp "$WORKLOADS/badaccess" ./prog
"$MAPSCOPE" record -o p.data -- ./prog >prog.txt 2>rec.txt || fail "record failed: $(cat rec.txt)"

# counts TAG: the sample counts of every command and format, one per line, into TAG.counts.
counts() {
	local t=$1 run="timeout 20 $MAPSCOPE"
	$run report -i p.data >"$t.txt" 2>"$t.err" || fail "$t: report exited $?: $(cat "$t.err")"
	$run report -i p.data --format json >"$t.json" 2>/dev/null || fail "$t: report --format json exited $?"
	$run report -i p.data --format csv >"$t.csv" 2>/dev/null || fail "$t: report --format csv exited $?"
	$run report -i p.data --format pprof -o "$t.pb.gz" 2>/dev/null || fail "$t: report --format pprof exited $?"
	$run report -i p.data --format html -o "$t.html" 2>/dev/null || fail "$t: report --format html exited $?"
	$run hugepages -i p.data --format json >"$t.huge.json" 2>/dev/null || fail "$t: hugepages exited $?"
	$run hugepages -i p.data >/dev/null 2>&1 || fail "$t: hugepages (text) exited $?"
	$run unmapped -i p.data --format json >"$t.unmapped.json" 2>/dev/null || fail "$t: unmapped exited $?"
	$run unmapped -i p.data >/dev/null 2>&1 || fail "$t: unmapped (text) exited $?"
	python3 - "$t" >"$t.counts" <<'PY' || fail "$t: cannot read the outputs"
import csv, gzip, json, re, sys
t = sys.argv[1]
print("text", re.search(r"^# samples: (\d+)", open(t + ".txt").read(), re.M).group(1))
print("json", json.load(open(t + ".json"))["samples"])
print("csv", sum(int(r["samples"]) for r in csv.DictReader(open(t + ".csv"))))
print("pprof", len(gzip.open(t + ".pb.gz").read()) > 0)
print("html", "<html" in open(t + ".html").read().lower())
print("hugepages", sum(a["samples"] for a in json.load(open(t + ".huge.json"))["advice"]))
print("unmapped", sum(a["count"] for a in json.load(open(t + ".unmapped.json"))["accesses"]))
PY
}

counts before
grep -q '^unmapped [1-9]' before.counts || fail "the workload's bad accesses were not seen: $(cat before.counts)"
grep -q touch_freed before.unmapped.json || fail "no names with the binary there"
rm ./prog
mkfifo ./prog
counts fifo
diff before.counts fifo.counts >/dev/null || fail "counts differ with the binary a FIFO: $(diff before.counts fifo.counts)"
! grep -q touch_freed fifo.unmapped.json || fail "names shown for a binary that is a FIFO"
pass "binary replaced by a FIFO: report (text, json, csv, pprof, html), hugepages, unmapped finished, same counts ($(tr '\n' ' ' <fifo.counts))"
