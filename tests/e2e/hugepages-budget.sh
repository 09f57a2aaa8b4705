#!/usr/bin/env bash
# hugepages --budget: the case only ongoing access can decide. hotcold
# makes two 32 MiB regions, writes both in full once, then rewrites one
# (hot) and leaves the other (cold); room for one region's hugepages. With
# record --referenced the advice keeps the hot one (by the address the
# workload prints) and leaves the cold one out for lack of room, and the
# advice file it saves holds that one rule. Without it, both rank level by
# first touches: the advice says which of the two deserves the room cannot
# be told, in both regions' reasons and in JSON, and names --referenced.
#
# The figures are exact (16 spans each: 32 MiB advised, 32 MiB left out)
# only where every first touch was recorded: records lost take spans from
# the regions, and where they leave both within the room nothing is left
# out. So the rings hold the whole run whenever record drains them: 1024
# pages a CPU (4 MiB) for about 16,500 samples of 56 bytes. (--call-graph
# dwarf, which copies 8 KiB of stack with each, needed 130 MiB and lost
# thousands of records on a loaded machine.) A recording that still lost
# some is skipped, with what it lost: its figures are not the ones checked.
source "$(dirname "$0")/lib.sh"
need_recording
[ -w /proc/self/clear_refs ] || skip "/proc/PID/clear_refs is not writable here"
cd "$TMP"

ms_record ref.err --referenced=50 -m 1024 -o ref.data -- "$WORKLOADS/hotcold" 1.5 >ref.txt
ms_record plain.err -m 1024 -o plain.data -- "$WORKLOADS/hotcold" 1.5 >plain.txt
all_recorded ref.err plain.err
for f in ref plain; do
	"$MAPSCOPE" hugepages -i $f.data --budget 32M --format json >$f.json || fail "hugepages --budget -i $f.data failed"
	"$MAPSCOPE" hugepages -i $f.data --budget 32M >$f.out || fail "hugepages --budget -i $f.data (text) failed"
done
"$MAPSCOPE" hugepages -i ref.data --budget 32M --save advice.json >/dev/null 2>save.err ||
	fail "hugepages --budget --save failed: $(cat save.err)"
grep -q "1 rule for 1 advised region saved" save.err || fail "the advice file does not hold the kept region alone: $(cat save.err)"

python3 - ref.txt ref.json plain.txt plain.json <<'PY' || fail "the budget's advice is wrong"
import json, re, sys

def load(wl, js):
    reg = {m[0]: int(m[1], 16) for m in re.findall(r"region name=(\w+) start=0x([0-9a-f]+)", open(wl).read())}
    j = json.load(open(js))
    by = {int(a["region"]["start"], 16): a for a in j["advice"]}
    return reg, j, by[reg["hot"]], by[reg["cold"]]

bad = 0
reg, j, hot, cold = load(sys.argv[1], sys.argv[2])
print(f"--referenced: hot advised {hot['advised']}, cold advised {cold['advised']} no_room {cold['no_room']}; "
      f"budget {j['budget']}")
ok = hot["advised"] and not hot["no_room"] and not cold["advised"] and cold["no_room"] \
     and cold["reason"].startswith("no room:") and "ongoing access" in hot["reason"] \
     and hot["level_with"] is None and cold["level_with"] is None \
     and hot["spans"] == 16 and cold["spans"] == 16 \
     and j["budget"] == {"bytes": 32 << 20, "advised_bytes": 32 << 20, "left_out": 1, "left_out_bytes": 32 << 20} \
     and [a for a in j["advice"] if a["advised"]] == [hot]
if not ok:
    print(f"FAIL: with --referenced the budget did not go to the hot region alone:\n{hot}\n{cold}"); bad = 1

reg, j, hot, cold = load(sys.argv[3], sys.argv[4])
kept, out = (hot, cold) if hot["advised"] else (cold, hot)
print(f"first touches only: kept {'hot' if kept is hot else 'cold'}; left out: {out['reason'][:60]}...")
ok = kept["advised"] and out["no_room"] and kept["benefit"] == out["benefit"] \
     and out["level_with"] == kept["region"]["id"] and kept["level_with"] == out["region"]["id"] \
     and "cannot be told" in out["reason"] and "arbitrary" in kept["reason"] \
     and "--referenced" in out["reason"]
if not ok:
    print(f"FAIL: by first touches alone the advice does not say it cannot tell them apart:\n{kept}\n{out}"); bad = 1
sys.exit(bad)
PY
grep -q '^# budget: room for 32 MiB of hugepages: 32 MiB advised; left out for lack of room: 1 region (32 MiB)$' ref.out ||
	fail "the text does not say what the budget left out: $(grep budget ref.out)"
grep -q 'which of the two deserves the room cannot be told' plain.out || fail "the text does not say the two tie"
pass "with --referenced the budget goes to the hot region; by first touches alone the advice says it cannot tell"
