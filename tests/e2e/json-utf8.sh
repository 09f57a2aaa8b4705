#!/usr/bin/env bash
# A program at a path that is not UTF-8 (caf\xe9-\xff.bin: Latin-1 é and a
# byte no UTF-8 has), recorded: report and timeline JSON and the HTML
# report's data must decode as strict UTF-8 and parse, with \ufffd where
# the bad bytes were, in the path and in the comm made from it.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

bin=$(printf 'caf\xe9-\xff.bin')
cp "$WORKLOADS/fault-loop" "./$bin"
"$MAPSCOPE" record -o u.data -- "./$bin" 4 1 >/dev/null 2>&1 || fail "record failed"
"$MAPSCOPE" report -i u.data --format json >report.json 2>/dev/null || fail "report failed"
"$MAPSCOPE" timeline -i u.data --format json >timeline.json 2>/dev/null || fail "timeline failed"
"$MAPSCOPE" report -i u.data --format html -o report.html 2>/dev/null || fail "report --format html failed"
python3 - report.json timeline.json report.html <<'PY' || fail "an output is not valid UTF-8 JSON"
import json, sys

def text(path):
    return open(path, "rb").read().decode("utf-8", errors="strict")

want = "caf\ufffd-\ufffd.bin"
report = json.loads(text(sys.argv[1]))
names = [r["name"] for r in report["regions"]] + [r["comm"] for r in report["regions"]]
if not any(n.endswith("/" + want) for n in names) or want not in [r["comm"] for r in report["regions"]]:
    sys.exit(f"report: no region named .../{want} with that comm: {sorted(set(names))}")
changes = [json.loads(line) for line in text(sys.argv[2]).splitlines()]
if not any(c["name"].endswith("/" + want) for c in changes):
    sys.exit("timeline: no change names the program")
page = text(sys.argv[3])
data, _ = json.JSONDecoder().raw_decode(page, page.index('{"input": '))
if not any(r.get("name", "").endswith("/" + want) for r in data["regions"]):
    sys.exit("html: no region names the program")
print(f"ok: {len(report['regions'])} regions, {len(changes)} changes, {len(data['regions'])} page regions")
PY
pass "report, timeline and html output of a non-UTF-8 path decode strictly, with U+FFFD in its place"
