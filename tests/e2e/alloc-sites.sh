#!/usr/bin/env bash
# Allocation sites by default: record copies the user stack on the mapping
# syscalls only, and report unwinds it through glibc malloc to the code
# that asked, in a workload built without frame pointers (its ground truth
# is printed), and in python3, whose anonymous memory must be at least 90%
# under a named site. --no-alloc-stacks leaves the stacks, and so the
# sites, out.
source "$(dirname "$0")/lib.sh"
need_recording
command -v python3 >/dev/null || skip "python3 is not installed (it checks the reports, and is traced)"
cd "$TMP"

ms_record sites.err -o sites.data -- "$WORKLOADS/alloc-sites" >truth.txt
grep -q ', 0 records lost' sites.err || fail "records lost: $(cat sites.err)"
"$MAPSCOPE" report -i sites.data --format json >sites.json || fail "report failed"
ms_record bare.err --no-alloc-stacks -o bare.data -- "$WORKLOADS/alloc-sites" >bare-truth.txt
"$MAPSCOPE" report -i bare.data --format json >bare.json || fail "report of --no-alloc-stacks failed"
python3 - truth.txt sites.json bare-truth.txt bare.json <<'PY' || fail "allocation sites are wrong"
import json, sys
bad = 0
def check(ok, what):
    global bad
    print(("ok: " if ok else "FAIL: ") + what)
    bad |= not ok
def regions(truth, report):
    rs = json.load(open(report))["regions"]
    for line in open(truth):
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        start = int(f["start"], 16)
        yield f, next(r for r in rs if int(r["start"], 16) <= start < int(r["end"], 16))
for f, r in regions(sys.argv[1], sys.argv[2]):
    site = r["alloc"] or ""
    check(site.startswith(f["alloc"] + " (alloc-sites.c:") and f" \u2190 {f['caller']} (alloc-sites.c:" in site,
          f"{f['name']}: site '{site}', expected {f['alloc']} (alloc-sites.c:N) \u2190 {f['caller']} (alloc-sites.c:M)")
for f, r in regions(sys.argv[3], sys.argv[4]):
    check(r["alloc"] is None, f"--no-alloc-stacks, {f['name']}: no site ({r['alloc']})")
sys.exit(bad)
PY
pass "heap and mmap'd malloc memory named at make_small and make_big, called from main; none without stacks"

# python3 itself, not a wrapper script in front of it (pyenv's shims are bash).
py=$(python3 -c 'import sys; print(sys.executable)')
cat >loop.py <<'PY'
d = {}
l = []
for i in range(200000):
    d[i] = [i, str(i)]
    l.append({"k": i, "v": [i] * 4})
print(len(d), len(l))
PY
ms_record py.err -o py.data -- "$py" loop.py >/dev/null
grep -q ', 0 records lost' py.err || fail "python3: records lost: $(cat py.err)"
"$MAPSCOPE" report -i py.data --format json >py.json || fail "report of python3 failed"
python3 - py.json <<'PY' || fail "python3's anonymous memory is not named"
import json, sys
rs = [r for r in json.load(open(sys.argv[1]))["regions"] if r["kind"] in ("anon", "heap")]
total = sum(r["samples"] for r in rs)
named = sum(r["samples"] for r in rs if r["alloc"])
print(f"python3: {named} of {total} anonymous-memory samples under a named site ({100 * named / max(total, 1):.1f}%)")
top = max(rs, key=lambda r: r["samples"])
print(f"largest: {top['samples']} samples, {top['alloc']}")
sys.exit(not (total > 1000 and named >= 0.9 * total))
PY
pass "python3: at least 90% of anonymous-memory samples under a named site"
