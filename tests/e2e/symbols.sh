#!/usr/bin/env bash
# Symbols: the named workload's three functions, two global arrays and its
# allocation helper must be named with exact counts; a deleted or rebuilt
# binary gives one warning and raw addresses, never wrong names.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

check_symbols() {  # check_symbols WORKLOAD CALL-GRAPH-MODE, or WORKLOAD perf (perf record -d: no chains)
if [ "$2" = perf ]; then
	perf record -q -d -e page-faults -c 1 -o n.data -- "$WORKLOADS/$1" >n.txt 2>/dev/null || fail "perf record failed"
else
	"$MAPSCOPE" record --call-graph "$2" -o n.data -- "$WORKLOADS/$1" >n.txt 2>/dev/null || fail "record failed"
fi
"$MAPSCOPE" report -i n.data --format json >regions.json || fail "report failed"
"$MAPSCOPE" report -i n.data --format json --sort daddr-symbol >daddr.json || fail "report --sort daddr-symbol failed"
"$MAPSCOPE" report -i n.data --format json --sort symbol >symbol.json || fail "report --sort symbol failed"
"$MAPSCOPE" report -i n.data --sort region,symbol >/dev/null || fail "report --sort region,symbol failed"
perf report -i n.data --stdio >/dev/null 2>perf.err || fail "perf report rejects a --call-graph $2 recording: $(cat perf.err)"

python3 - n.txt regions.json daddr.json symbol.json "$2" <<'PY' || fail "symbols are wrong"
import json, sys
import perfscript
ops = perfscript.parse_workload(open(sys.argv[1]).read())
regions = json.load(open(sys.argv[2]))["regions"]
daddr = {r["daddr_symbol"]: r["samples"] for r in json.load(open(sys.argv[3]))["regions"]}
code = {r["symbol"]: r["samples"] for r in json.load(open(sys.argv[4]))["regions"]}
where = {o["name"]: o for o in ops if o["op"] in ("object", "region")}
bad = 0
def check(ok, what):
    global bad
    print(("ok: " if ok else "FAIL: ") + what)
    bad |= not ok
def region_of(addr):
    return next(r for r in regions if int(r["start"], 16) <= addr < int(r["end"], 16))
for o in ops:
    if o["op"] != "touched":
        continue
    r = region_of(where[o["object"]]["start"])
    got = {s["symbol"]: s["samples"] for s in r["symbols"]}.get(o["func"], 0)
    check(got == o["pages"], f"{o['func']} in the region of {o['object']}: {got} samples, expected {o['pages']}")
    check(code.get(o["func"]) == o["pages"], f"--sort symbol: {o['func']} {code.get(o['func'])}, expected {o['pages']}")
    if o["object"].startswith("table"):
        check(daddr.get(o["object"]) == o["pages"],
              f"--sort daddr-symbol: {o['object']} {daddr.get(o['object'])}, expected {o['pages']}")
buf = region_of(where["buffer"]["start"])
if sys.argv[5] != "perf":    # perf record -d has no call chains to find it with
    site = buf["alloc"] or ""
    check(site.startswith("make_buffer (named.c:") and " \u2190 main (named.c:" in site,
          f"the buffer's allocation site: {site} (chain {buf['alloc_chain']})")
sys.exit(bad)
PY

pass "$1 with --call-graph $2: functions, data objects and (with chains) the allocation site named exactly"
}

check_symbols named fp
check_symbols named-nofp dwarf         # no frame pointers: the copied stacks are unwound
check_symbols named perf               # samples of one fixed layout: charged in runs

# A binary deleted after recording: one warning, raw addresses, no crash.
cp "$WORKLOADS/named" ./gone
"$MAPSCOPE" record -o gone.data -- ./gone >/dev/null 2>&1 || fail "record of ./gone failed"
rm ./gone
"$MAPSCOPE" report -i gone.data >gone.txt 2>gone.err || fail "report after deleting the binary exited $?"
[ "$(grep -c "$TMP/gone" gone.err)" -eq 1 ] || fail "expected one warning about the deleted binary: $(cat gone.err)"
! grep -q fill_table_a gone.txt || fail "names shown for a binary that is gone"
pass "deleted binary: one warning ($(head -1 gone.err)), raw addresses"

# A binary rebuilt after recording: its build-id differs; no wrong names.
# File mode, and pipe mode, where the build-ids travel as records.
cp "$WORKLOADS/named" ./prog
"$MAPSCOPE" record -o prog.data -- ./prog >/dev/null 2>&1 || fail "record of ./prog failed"
"$MAPSCOPE" record -o - -- ./prog >prog-pipe.data 2>/dev/null || fail "pipe-mode record of ./prog failed"
"$MAPSCOPE" report -i - <prog-pipe.data >prog.txt 2>prog.err || fail "report of the pipe exited $?"
grep -q fill_table_a prog.txt || fail "pipe mode: no names before the rebuild: $(head -3 prog.err)"
cp "$WORKLOADS/named-nofp" ./prog
for how in file pipe; do
	if [ $how = file ]; then
		"$MAPSCOPE" report -i prog.data >prog.txt 2>prog.err
	else
		"$MAPSCOPE" report -i - <prog-pipe.data >prog.txt 2>prog.err
	fi || fail "$how mode: report after rebuilding exited $?"
	[ "$(grep -c 'is not the binary that was recorded' prog.err)" -eq 1 ] ||
		fail "$how mode: expected one build-id warning: $(cat prog.err)"
	! grep -q fill_table_a prog.txt || fail "$how mode: names shown from a different build"
done
pass "rebuilt binary: build-id mismatch warned once, raw addresses, file and pipe mode"
