#!/usr/bin/env bash
# The do: line of hugepage advice is a thing to type or change: a dense
# table from malloc gets glibc's tunable (with the glibc version of the
# program), one mmapped by make_buffer gets madvise at that function; both
# are named in "alloc", never null, and the column says how, never "-".
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

"$MAPSCOPE" record -o adv.data -- "$WORKLOADS/advise" >adv.txt 2>rec.txt ||
	fail "record failed: $(cat rec.txt)"
"$MAPSCOPE" hugepages -i adv.data --format json >adv.json || fail "hugepages failed"
"$MAPSCOPE" hugepages -i adv.data >adv-text.txt || fail "hugepages (text) failed"
cat adv-text.txt
glibc=$(ldd --version 2>/dev/null | sed -n '1s/.* \([0-9]\+\.[0-9]\+\)$/\1/p')
python3 - adv.txt adv.json "$glibc" <<'PY' || fail "the do: lines do not say what to do"
import json, sys
import perfscript
tables = [o for o in perfscript.parse_workload(open(sys.argv[1]).read()) if o["op"] == "table"]
adv = json.load(open(sys.argv[2]))["advice"]
glibc = sys.argv[3]
bad = 0
for t in tables:
    a = next((a for a in adv if int(a["region"]["start"], 16) <= t["start"] and t["end"] <= int(a["region"]["end"], 16)), None)
    if a is None:
        print(f"FAIL: no advice for the {t['via']} table"); bad = 1; continue
    print(f"{t['via']}: how={a['how']} alloc={a['alloc']} action: {a['action']}")
    if t["via"] == "malloc":
        ok = a["how"] == "glibc-tunable" and "GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in a["action"] \
             and (not glibc or f"glibc is {glibc}" in a["action"]) and a["alloc"]
    else:
        ok = a["how"] == "madvise-at-site" and (a["alloc"] or "").split(" ")[0] == t["func"] and \
             f"MADV_HUGEPAGE) right after the mmap in {t['func']}" in a["action"]
    ok = ok and a["advised"] and "mapscope run --hugepages advice.json" in a["action"]
    if not ok:
        print(f"FAIL: the {t['via']} table's do: line"); bad = 1
sys.exit(bad)
PY
! grep -q 'where it is made$' adv-text.txt || fail "a do: line says 'where it is made' without saying where"
grep -q 'glibc.malloc.hugetlb=1 ' adv-text.txt || fail "the advise column does not say how for the malloc table"
pass "malloc's table gets glibc's tunable, make_buffer's madvise there"
