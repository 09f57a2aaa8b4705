#!/usr/bin/env bash
# perf record -d at perf's 4 kHz keeps a fault in many, each with its
# period: the 32 MiB tables the workload touches whole are advised as
# dense, with pages estimated near all of them (where at least two samples
# a 2 MiB span were kept), and said to be estimates, never "too sparse"
# for having been sampled.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

perf record -q -d -e page-faults -F 4000 -o perf.data -- "$WORKLOADS/advise" >adv.txt 2>rec.txt ||
	fail "perf record failed: $(cat rec.txt)"
"$MAPSCOPE" hugepages -i perf.data --format json >adv.json 2>err.txt || fail "hugepages failed: $(cat err.txt)"
"$MAPSCOPE" hugepages -i perf.data 2>/dev/null | head -4
status=0
python3 - adv.txt adv.json <<'PY' || status=$?
import json, sys
import perfscript
tables = [o for o in perfscript.parse_workload(open(sys.argv[1]).read()) if o["op"] == "table"]
adv = json.load(open(sys.argv[2]))["advice"]
bad = 0
for t in tables:
    a = next((a for a in adv if int(a["region"]["start"], 16) <= t["start"] and t["end"] <= int(a["region"]["end"], 16)), None)
    if a is None:
        print(f"FAIL: no advice for the {t['via']} table"); bad = 1; continue
    print(f"{t['via']}: advised={a['advised']} pages={a['pages']} samples={a['samples']} "
          f"period={a['sample_period']} reason: {a['reason']}")
    if a["samples"] == a["pages"]:
        sys.exit(77)                 # perf kept every fault: nothing was sampled to check
    ok = a["advised"] and a["estimated"] and a["sample_period"] > 1 and "~ estimated from 1 in" in a["reason"] \
         and "too sparse" not in a["reason"]
    if not ok:
        print(f"FAIL: the {t['via']} table, touched whole, is not advised as an estimate"); bad = 1
    # Its pages are estimated from the 2 MiB spans that samples fell in: with fewer than two samples a span on
    # average (perf -F lowers its rate on a busy machine: 2 samples of 8192 faults were seen), a quarter of the
    # spans can have none by chance, and the estimate says nothing of the estimator.
    spans = (t["end"] - t["start"] + (2 << 20) - 1) // (2 << 20)
    if a["samples"] < 2 * spans:
        print(f"the {t['via']} table's page estimate not checked: {a['samples']} samples over {spans} spans")
    elif a["pages"] < 8192 * 3 // 4:
        print(f"FAIL: the {t['via']} table, touched whole, is estimated at {a['pages']} pages of 8192"); bad = 1
sys.exit(bad)
PY
[ $status -ne 77 ] || skip "perf kept every fault of the workload at -F 4000: nothing sampled to check"
[ $status -eq 0 ] || fail "a 4 kHz perf recording's advice is wrong"
pass "perf -F: touched whole is dense, estimated, never too sparse"
