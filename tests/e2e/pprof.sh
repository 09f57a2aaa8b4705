#!/usr/bin/env bash
# report --format pprof: go tool pprof reads the profile; its sample and
# page totals are the report's, and the heaviest data-region frame (the
# root of every stack) is the report's top region. Every sample is a page
# fault here, so the faults type equals the samples. Code inlined where the
# data was touched is its own frame, under the function it was inlined into.
# Named beside the replay on a thread of its own, or in turn: the same bytes.
source "$(dirname "$0")/lib.sh"
need_recording
command -v go >/dev/null || skip "go is not installed (Debian package golang-go): go tool pprof reads the profile"
cd "$TMP"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod   # go wants somewhere to write

ms_record summary.txt -o p.data -- "$WORKLOADS/attrib" >attrib.txt
"$MAPSCOPE" report -i p.data --format json >report.json 2>/dev/null || fail "report failed"
"$MAPSCOPE" report -i p.data --format pprof -o p.pb.gz 2>err.txt || fail "report --format pprof failed: $(cat err.txt)"
[ "$(head -c 2 p.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "the profile is not gzipped"
go tool pprof -raw p.pb.gz >raw.txt 2>raw.err || fail "go tool pprof -raw cannot read it: $(cat raw.err)"
go tool pprof -top p.pb.gz >top.txt 2>&1 || fail "go tool pprof -top cannot read it"
cat >"$TMP/raw.py" <<'PY'
# go tool pprof -raw's text: the sample types, each sample's values and location ids,
# and each location's lines (innermost first), as function names.
import re
def parse(path):
    raw = open(path).read()
    samples_sec = raw.split("Samples:")[1].split("Locations")[0]
    types = [t.split("/")[0] for t in samples_sec.strip().splitlines()[0].split()]
    locs, cur = {}, None
    for line in raw.split("Locations")[1].split("Mappings")[0].splitlines():
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (.*?) \S*:\d+ s=\d+$", line)
        if m:
            cur = int(m[1])
            locs[cur] = [m[2]]
        elif cur is not None and (m := re.match(r"^\s+(.*?) \S*:\d+ s=\d+$", line)):
            locs[cur].append(m[1])
    samples = []
    for m in re.finditer(r"^\s+([\d ]+): ([\d ]+)$", samples_sec, re.M):
        vals = dict(zip(types, (int(x) for x in m[1].split())))
        samples.append((vals, [locs[int(x)] for x in m[2].split()]))
    return types, samples
PY
python3 - report.json raw.txt <<'PY' || fail "the profile does not match the report"
import json, sys
from raw import parse
rep = json.load(open(sys.argv[1]))
types, samples = parse(sys.argv[2])
tot = {t: sum(v[t] for v, _ in samples) for t in types}
roots = {}
for v, stack in samples:
    roots[stack[-1][0]] = roots.get(stack[-1][0], 0) + v["samples"]
want_s = rep["samples"]
want_p = sum(r["pages"] for r in rep["regions"]) + rep["unmapped"]["pages"]
top = max(rep["regions"], key=lambda r: r["samples"])
name = top["name"] if top["name"] and top["name"] != "[anon]" else "anon"
best = max(roots, key=roots.get)
print(f"profile: types {types}, totals {tot}, top region frame {best!r} ({roots[best]}); "
      f"report: {want_s} samples, {want_p} pages, top region {name!r} ({top['samples']})")
ok = types[:2] == ["samples", "pages"] and tot["samples"] == want_s
ok = ok and roots[best] == top["samples"] and (best == name or best.startswith(name + " "))
# Pages: each counted once in its region, under the code that touched it first.
ok = ok and tot["pages"] == want_p
# Every sample of this recording is a page fault.
ok = ok and "faults" in types and tot["faults"] == want_s and "tlb_misses" not in types
sys.exit(0 if ok else 1)
PY
# A window keeps the same samples in both.
"$MAPSCOPE" report -i p.data --time +0.001, --format json >win.json 2>/dev/null || fail "report --time failed"
"$MAPSCOPE" report -i p.data --time +0.001, --format pprof -o win.pb.gz 2>/dev/null || fail "pprof --time failed"
go tool pprof -raw win.pb.gz >winraw.txt 2>raw.err || fail "go tool pprof -raw cannot read it: $(cat raw.err)"
python3 - win.json winraw.txt <<'PY' || fail "the window's samples differ"
import json, sys
from raw import parse
want = json.load(open(sys.argv[1]))["samples"]
got = sum(v["samples"] for v, _ in parse(sys.argv[2])[1])
print(f"--time +0.001,: profile {got} samples, report {want}")
sys.exit(0 if got == want and 0 < want else 1)
PY
grep -q "Type: samples" top.txt || fail "the default sample type is not samples"
expect_status 2 "$MAPSCOPE" report -i p.data --format pprof

# Inlined code: the named workload's fill_buffer writes its buffer through poke, inlined into it.
ms_record summary.txt --call-graph fp -o n.data -- "$WORKLOADS/named" >named.txt
"$MAPSCOPE" report -i n.data --format pprof -o n.pb.gz 2>err.txt || fail "report --format pprof failed: $(cat err.txt)"
go tool pprof -raw n.pb.gz >nraw.txt 2>raw.err || fail "go tool pprof -raw cannot read it: $(cat raw.err)"
python3 - named.txt nraw.txt <<'PY' || fail "the inlined frames are wrong"
import re, sys
from raw import parse
want = re.search(r"^inlined func=(\w+) caller=(\w+) object=buffer pages=(\d+)", open(sys.argv[1]).read(), re.M)
types, samples = parse(sys.argv[2])
got = sum(v["samples"] for v, stack in samples if stack[0][:2] == [want[1], want[2]])
roots = {stack[-1][0] for v, stack in samples if stack[0][:2] == [want[1], want[2]]}
print(f"{want[1]} inlined into {want[2]}: {got} samples, expected {want[3]}; region frames {roots}")
sys.exit(0 if got == int(want[3]) and len(roots) == 1 and
         next(iter(roots)).startswith("anon 192 KiB (alloc: make_buffer (named.c:") else 1)
PY
expect_status 2 "$MAPSCOPE" report -i p.data --format pprof --sort symbol -o x.pb.gz

# The code is named on the thread that names the sites where there is one
# (two CPUs), each binary's address once, its locations made at the end in
# the order the code was met; named in turn (MAPSCOPE_NAMER=off), the
# profile is the same bytes.
for f in p n; do
	MAPSCOPE_NAMER=off "$MAPSCOPE" report -i $f.data --format pprof -o $f.off.pb.gz 2>err.txt ||
		fail "report --format pprof, MAPSCOPE_NAMER=off, failed: $(cat err.txt)"
	cmp -s $f.pb.gz $f.off.pb.gz || fail "$f.data: the profile named on the namer's thread differs from the one named in turn"
done
pass "go tool pprof reads the profile; totals and the top region frame are the report's; inlined frames; named beside or in turn, the same bytes"
