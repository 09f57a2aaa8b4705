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
        # The site: "drop_buffer (badaccess.c:27) \u2190 main (badaccess.c:60) \u2190 ..."
        ok = ok and a["freed"]["call"] == "munmap" and a["freed"]["site"].startswith(o["released_by"] + " (badaccess.c:")
    print(("ok: " if ok else "FAIL: ") + f"{o['func']}: {a['class']} at {a['symbol']} ({a['file']}:{a['line']})")
    bad |= not ok
if len(got) != len(want):
    print(f"FAIL: {len(got)} entries reported, the workload made {len(want)} bad accesses"); bad = 1
sys.exit(bad)
PY

# NULL-pointer reads: a page fault's address 0 is an access, not "no
# address": five reads of 0 and three of 0x10, each listed as null-page with
# the function that made it; record's summary counts what report counts.
"$MAPSCOPE" record -o null.data -- "$WORKLOADS/nullpage" >null.txt 2>null.err || fail "record (nullpage) failed"
"$MAPSCOPE" unmapped -i null.data --format json >null.json || fail "unmapped (nullpage) failed"
"$MAPSCOPE" report -i null.data --format json >rep.json || fail "report (nullpage) failed"
cat null.err
python3 - null.txt null.json null.err rep.json <<'PY' || fail "NULL-pointer reads not reported as null-page accesses"
import json, re, sys
import perfscript
want = [o for o in perfscript.parse_workload(open(sys.argv[1]).read()) if o["op"] == "access"]
got = json.load(open(sys.argv[2]))["accesses"]
bad = 0
for o in want:
    hits = [a for a in got if a["symbol"].split("+")[0] == o["func"]]
    ok = len(hits) == 1 and hits[0]["class"] == "null-page" and int(hits[0]["address"], 16) == o["addr"] \
         and hits[0]["count"] == o["count"] and hits[0]["file"].endswith("nullpage.c")
    print(("ok: " if ok else "FAIL: ") + f"{o['func']}: {hits}")
    bad |= not ok
nulls = sum(a["count"] for a in got if a["class"] == "null-page")
if nulls != 8 or len(got) != 2:
    print(f"FAIL: {nulls} null-page reads in {len(got)} entries, the workload made 8 in 2 functions"); bad = 1
m = re.search(r"\((\d+) data addresses", open(sys.argv[3]).read())
rep = json.load(open(sys.argv[4]))
if not m or int(m.group(1)) != rep["samples"]:
    print(f"FAIL: record's summary says {m and m.group(1)} data addresses, report charged {rep['samples']}"); bad = 1
if rep["set_aside"]["zero_address"]:
    print(f"FAIL: report set aside {rep['set_aside']['zero_address']} page faults at address 0"); bad = 1
sys.exit(bad)
PY
pass "each bad access reported with its class, function and line; nothing else; NULL reads as null-page"
