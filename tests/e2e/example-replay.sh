#!/usr/bin/env bash
# examples/replay.c, a region table in 40 lines of the public API: its
# total and its rows must be mapscope report's.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
[ -x "$WORKLOADS/example-replay" ] || fail "examples/replay.c was not built"

ms_record summary.txt -o ex.data -- "$WORKLOADS/attrib" >attrib.txt
"$WORKLOADS/example-replay" ex.data >ex.txt 2>ex.err || fail "example-replay failed: $(cat ex.err)"
"$MAPSCOPE" report -i ex.data --all --format json >report.json 2>/dev/null || fail "report failed"
python3 - ex.txt report.json <<'PY' || exit 1
import json, sys
ex = open(sys.argv[1]).read().split("\n")
rep = json.load(open(sys.argv[2]))
total = int([l for l in ex if l.startswith("total ")][0].split()[1])
want = rep["samples"]
if want != sum(r["samples"] for r in rep["regions"]) + rep["unmapped"]["samples"]:
    sys.exit("FAIL: report's own total does not add up")
if total != want or total == 0:
    sys.exit(f"FAIL: the example's total {total}, report's {want}")
rows = {}
for l in ex[1:]:
    f = l.split()
    if len(f) >= 4 and f[0].isdigit():
        rows[(int(f[0]), int(f[-1]))] = rows.get((int(f[0]), int(f[-1])), 0) + 1
want_rows = {}
for r in rep["regions"]:
    k = (r["pid"], r["samples"])
    want_rows[k] = want_rows.get(k, 0) + 1
if rows != want_rows:
    sys.exit(f"FAIL: the example's rows (pid, samples) differ from report's")
print(f"ok: total {total} and {sum(rows.values())} rows, as report has them")
PY
pass "examples/replay.c agrees with mapscope report"
