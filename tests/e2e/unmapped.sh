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
# vm.mmap_min_addr: the null pages end where the recording machine's does.
# A read 32 KiB into a NULL struct pointer is a null-page access where it
# is 64 KiB, a never-mapped one where it is 4 KiB (the workload says which,
# from /proc); mapscope's recording carries the value, perf's does not:
# 64 KiB is then assumed, and both outputs say which.
"$MAPSCOPE" record -o far.data -- "$WORKLOADS/nullpage" far >far.txt 2>/dev/null || fail "record (nullpage far) failed"
perf record -q -c 1 -e page-faults -d -o farperf.data -- "$WORKLOADS/nullpage" far >/dev/null 2>&1 ||
	fail "perf record (nullpage far) failed"
for f in far farperf; do
	"$MAPSCOPE" unmapped -i $f.data --format json >$f.json 2>/dev/null || fail "unmapped -i $f.data failed"
	"$MAPSCOPE" unmapped -i $f.data >$f.un 2>/dev/null || fail "unmapped -i $f.data (text) failed"
done
python3 - far.txt far.json farperf.json <<'PY' || fail "the null pages do not end at the recording's vm.mmap_min_addr"
import json, re, sys
m = re.search(r"func=read_far class=(\S+) addr=0x8000 count=2 mmap_min_addr=(\d+)", open(sys.argv[1]).read())
want_cls, machine = m[1], int(m[2])
bad = 0
for path, limit, assumed, cls in ((sys.argv[2], machine, False, want_cls),
                                  (sys.argv[3], 65536, True, "null-page")):
    j = json.load(open(path))
    far = [a for a in j["accesses"] if a["symbol"].split("+")[0] == "read_far"]
    ok = j["mmap_min_addr"] == limit and j["mmap_min_addr_assumed"] is assumed and len(far) == 1 \
         and far[0]["class"] == cls and far[0]["count"] == 2
    print(("ok: " if ok else "FAIL: ") + f"{path}: mmap_min_addr {j['mmap_min_addr']} assumed "
          f"{j['mmap_min_addr_assumed']}, read_far {[a['class'] for a in far]} (want {limit}, {assumed}, {cls})")
    bad |= not ok
sys.exit(bad)
PY
grep -q "^# null-page: below $(cat /proc/sys/vm/mmap_min_addr) (vm.mmap_min_addr of the recording machine)" far.un ||
	fail "the text does not say where the null pages end: $(head -2 far.un)"
grep -q "^# null-page: below 65536, assumed" farperf.un || fail "the text does not say 64 KiB was assumed: $(head -2 farperf.un)"
pass "each bad access reported with its class, function and line; nothing else; NULL reads as null-page, below the recorded vm.mmap_min_addr"
