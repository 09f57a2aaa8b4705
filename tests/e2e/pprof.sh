#!/usr/bin/env bash
# report --format pprof: go tool pprof reads the profile; its sample and
# page totals are the report's, and the heaviest data-region frame (the
# root of every stack) is the report's top region.
source "$(dirname "$0")/lib.sh"
need_recording
command -v go >/dev/null || skip "go is not installed (Debian package golang-go): go tool pprof reads the profile"
cd "$TMP"
export HOME="$TMP" GOCACHE="$TMP/gocache" GOFLAGS=-mod=mod   # go wants somewhere to write

"$MAPSCOPE" record -o p.data -- "$WORKLOADS/attrib" >attrib.txt 2>summary.txt || fail "record failed: $(cat summary.txt)"
"$MAPSCOPE" report -i p.data --format json >report.json 2>/dev/null || fail "report failed"
"$MAPSCOPE" report -i p.data --format pprof -o p.pb.gz 2>err.txt || fail "report --format pprof failed: $(cat err.txt)"
[ "$(head -c 2 p.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "the profile is not gzipped"
go tool pprof -raw p.pb.gz >raw.txt 2>raw.err || fail "go tool pprof -raw cannot read it: $(cat raw.err)"
go tool pprof -top p.pb.gz >top.txt 2>&1 || fail "go tool pprof -top cannot read it"
python3 - report.json raw.txt <<'PY' || fail "the profile does not match the report"
import json, re, sys
rep = json.load(open(sys.argv[1]))
raw = open(sys.argv[2]).read()
samples_sec = raw.split("Samples:")[1].split("Locations")[0]
locs = {int(m[1]): m[2] for m in re.finditer(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (.*?) :\d+ s=\d+$", raw.split("Locations")[1], re.M)}
tot_s = tot_p = 0
roots = {}
for m in re.finditer(r"^\s+(\d+)\s+(\d+): ([\d ]+)$", samples_sec, re.M):
    s, p, ids = int(m[1]), int(m[2]), [int(x) for x in m[3].split()]
    tot_s += s
    tot_p += p
    root = locs[ids[-1]]
    roots[root] = roots.get(root, 0) + s
want_s = rep["samples"]
want_p = sum(r["pages"] for r in rep["regions"]) + rep["unmapped"]["pages"]
top = max(rep["regions"], key=lambda r: r["samples"])
name = top["name"] if top["name"] and top["name"] != "[anon]" else "anon"
best = max(roots, key=roots.get)
print(f"profile: {tot_s} samples, {tot_p} pages, top region frame {best!r} ({roots[best]}); "
      f"report: {want_s} samples, {want_p} pages, top region {name!r} ({top['samples']})")
ok = tot_s == want_s and roots[best] == top["samples"] and (best == name or best.startswith(name + " "))
# Pages: a region's pages are counted once under it, but split among its code symbols in the profile.
ok = ok and tot_p >= want_p
sys.exit(0 if ok else 1)
PY
grep -q "Type: samples" top.txt || fail "the default sample type is not samples"
expect_status 2 "$MAPSCOPE" report -i p.data --format pprof
pass "go tool pprof reads the profile; totals and the top region frame are the report's"
