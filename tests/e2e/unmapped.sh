#!/usr/bin/env bash
# Accesses to unmapped memory: a just-unmapped address, a PROT_NONE guard
# page and a never-mapped address, each from its own function, must be
# reported with the right class and function (and, for the freed one, the
# call that freed it and where from), and nothing else of the workload.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

"$MAPSCOPE" record --call-graph fp -o bad.data -- "$WORKLOADS/badaccess" >bad.txt 2>/dev/null ||
	fail "record failed"
"$MAPSCOPE" unmapped -i bad.data --format json >un.json || fail "unmapped failed"
"$MAPSCOPE" unmapped -i bad.data >un.txt || fail "unmapped (text) failed"
cat un.txt
python3 - bad.txt un.json <<'PY' || fail "wrong unmapped report"
import json, sys
import perfscript
want = [o for o in perfscript.parse_workload(open(sys.argv[1]).read()) if o["op"] == "access"]
got = json.load(open(sys.argv[2]))["accesses"]
bad = 0
for o in want:
    hits = [a for a in got if int(a["address"], 16) == o["addr"]]
    if len(hits) != 1:
        print(f"FAIL: {o['func']}: {len(hits)} entries for {o['addr']:#x}"); bad = 1; continue
    a = hits[0]
    ok = a["class"] == o["class"] and a["symbol"].split("+")[0] == o["func"] and a["count"] == 1 \
         and a["file"] and a["file"].endswith("badaccess.c")
    if o["class"] == "freed":
        ok = ok and a["freed"]["call"] == "munmap" and a["freed"]["site"] == o["released_by"]
    print(("ok: " if ok else "FAIL: ") + f"{o['func']}: {a['class']} at {a['symbol']} ({a['file']}:{a['line']})")
    bad |= not ok
if len(got) != len(want):
    print(f"FAIL: {len(got)} entries reported, the workload made {len(want)} bad accesses"); bad = 1
sys.exit(bad)
PY
pass "each bad access reported with its class, function and line; nothing else"
