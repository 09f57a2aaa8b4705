#!/usr/bin/env bash
# Hugepage advice follows the memory, not the address (the huge-move
# workload says what it did): the region's pages and faults cover its whole
# life, the pages mremap moved count in their new home, the advised range
# covers only what the region holds at the end and never the hole another
# region took, a region gone by the end is advised with no range (its
# action says how, for the next run, never --apply), and
# --apply --dry-run offers only the live ranges.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

record_triggered "$WORKLOADS/huge-move" hm.txt hm.data

"$MAPSCOPE" hugepages -i hm.data --format json >advice.json || fail "hugepages failed"
python3 - hm.txt advice.json <<'PY' || fail "the advice does not follow the memory"
import json, sys
r = {}
for line in open(sys.argv[1]):
    if line.startswith("range "):
        kv = dict(p.split("=") for p in line.split()[1:])
        r[kv["name"]] = (int(kv["start"], 16), int(kv["end"], 16))
adv = json.load(open(sys.argv[2]))["advice"]
MIB = 1 << 20
def holding(name):
    """The advice of the smallest region whose extent holds the range (a moved region's spans its homes)."""
    s, e = r[name]
    inside = [a for a in adv if int(a["region"]["start"], 16) <= s and e <= int(a["region"]["end"], 16)]
    return min(inside, key=lambda a: int(a["region"]["end"], 16) - int(a["region"]["start"], 16), default=None)
bad = 0
def check(ok, what):
    global bad
    print(f"{'ok' if ok else 'FAIL'}: {what}")
    bad |= not ok
home, hole, gone = holding("home"), holding("hole"), holding("gone")
check(home and home["advised"], "the moved region is advised")
# Its whole life: 12 MiB touched before (the hole's 2 MiB and the moved MiB among them),
# then its new home but for the moved MiB (which did not fault again) and 128 pages.
want = 12 * 256 + 23 * 256 - 128
check(home and home["pages"] == want and home["faults"] == want, f"its pages and faults cover its life: {home and home['pages']}, {home and home['faults']}, want {want}")
# The range: its new home, all of it, whose first span is dense only with the pages that moved there.
check(home and home["start"] and (int(home["start"], 16), int(home["end"], 16)) == r["home"],
      f"the advised range is the new home {r['home'][0]:#x}-{r['home'][1]:#x}: {home and home['start']}-{home and home['end']}")
hs, he = r["hole"]
for a in adv:
    if a["start"] and a is not hole:
        check(not (int(a["start"], 16) < he and hs < int(a["end"], 16)), f"{a['start']}-{a['end']} stays out of the hole another region took")
check(hole and hole["advised"] and (int(hole["start"], 16), int(hole["end"], 16)) == r["hole"], "the region in the hole is advised on its own memory")
check(gone and gone["advised"] and gone["start"] is None and gone["how"] and "--apply" not in gone["action"]
      and "mapscope run --hugepages" in gone["action"],
      f"the region gone by the end is advised with no range: {gone and gone['reason']}")
sys.exit(bad)
PY
"$MAPSCOPE" hugepages -i hm.data --apply -p $wl --dry-run >dry.txt 2>&1 || fail "--dry-run failed: $(cat dry.txt)"
[ "$(grep -c 'would collapse' dry.txt)" -eq 2 ] || fail "--dry-run should offer the two live ranges: $(cat dry.txt)"
gone_start=$(sed -n 's/^range name=gone start=0x\([0-9a-f]*\).*/\1/p' hm.txt)
! grep -q "$gone_start" dry.txt || fail "--dry-run offers the range of a region that is gone: $(cat dry.txt)"
pass "hugepage advice follows the memory: moved pages, live ranges only, gone regions without a range"
