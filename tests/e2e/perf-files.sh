#!/usr/bin/env bash
# perf.data files as perf users make them, recorded here with perf itself:
# compressed (-z, file and pipe), build-ids injected (perf inject -b, file
# and pipe), group reads (PERF_FORMAT_LOST), a lone sys_enter tracepoint,
# and cpu-clock -d (ADDR 0 on every sample). Each must be read whole: the
# samples counted as perf script counts them, and what the file holds
# charged as the workload says it happened.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

# report_json FILE [ARGS]: mapscope's JSON report of FILE ("-": stdin from $2).
report_json() {
	local f=$1
	shift
	"$MAPSCOPE" report --children 0 --format json -i "$f" "$@" 2>err.txt ||
		fail "report -i $f failed: $(cat err.txt)"
	grep -q 'skipping' err.txt && fail "report -i $f skipped samples: $(grep skipping err.txt | head -2)"
	return 0
}

# perf_count FILE [EVENT]: samples perf script prints (of EVENT only, where given).
perf_count() {
	perf script -i "$1" -F event 2>/dev/null | grep -c "${2:-}" || true
}

# json_field FILE EXPR: a Python expression over the report r.
json_field() {
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

# check_counts NAME JSON PERF-COUNT: every sample read, none set aside as malformed.
check_counts() {
	local got
	got=$(json_field "$2" 'r["file_samples"]')
	[ "$got" -eq "$3" ] || fail "$1: mapscope read $got samples, perf script $3"
	[ "$(json_field "$2" 'r["set_aside"]["malformed"] + r["set_aside"]["unknown_event"]')" -eq 0 ] ||
		fail "$1: samples dropped: $(json_field "$2" 'r["set_aside"]')"
	pass "$1: $got samples, as perf script counts them"
}

rec() { perf record -q "$@" -- "$WORKLOADS/attrib" 2>rec.err; }

# Compressed, file and pipe mode.
rec -z -d -e page-faults -c 1 -o z.data >at-z.txt || fail "perf record -z: $(cat rec.err)"
perf report -i z.data --header-only >z.header 2>/dev/null || true
grep -qi 'compressed' z.header || skip "this perf did not compress (built without zstd)"
report_json z.data >z.json
check_counts "perf record -z" z.json "$(perf_count z.data)"
rec -z -d -e page-faults -c 1 -o - >zp.data 2>/dev/null || fail "perf record -z -o -: $(cat rec.err)"
"$MAPSCOPE" report --children 0 --format json -i - <zp.data >zp.json 2>err.txt || fail "report -i - of -z failed: $(cat err.txt)"
check_counts "perf record -z -o - | mapscope report -i -" zp.json "$(perf_count zp.data)"

# perf inject -b: build-id records of 100 bytes and the like, file and pipe.
rec -d -e page-faults -c 1 -o f.data >/dev/null || fail "perf record: $(cat rec.err)"
perf inject -b -i f.data -o fi.data 2>inj.err || fail "perf inject -b: $(cat inj.err)"
report_json fi.data >fi.json
check_counts "perf inject -b" fi.json "$(perf_count fi.data)"
perf record -q -d -e page-faults -c 1 -o - -- "$WORKLOADS/attrib" 2>/dev/null |
	perf inject -b >pi.data 2>inj.err || fail "perf record -o - | perf inject -b: $(cat inj.err)"
"$MAPSCOPE" report --children 0 --format json -i - <pi.data >pi.json 2>err.txt ||
	fail "report of perf inject -b's pipe failed: $(cat err.txt)"
check_counts "perf record -o - | perf inject -b" pi.json "$(perf_count pi.data)"

# Group reads: perf 6.x adds PERF_FORMAT_LOST, a field after each value.
rec -d -e '{page-faults,cpu-clock}:S' -o g.data >/dev/null || fail "perf record of a group: $(cat rec.err)"
perf evlist -v -i g.data >g.evlist 2>/dev/null || true
grep -q 'read_format: .*LOST' g.evlist ||
	echo "note: this perf did not set PERF_FORMAT_LOST; the group is read all the same"
report_json g.data >g.json
# perf script prints one line per member of the group for each sample record.
check_counts "group read {page-faults,cpu-clock}:S" g.json "$(perf_count g.data page-faults)"

# A lone sys_enter_munmap: applied as it comes, never holding the maps after it.
rec -d -e page-faults -c 1 -e syscalls:sys_enter_munmap -o lone.data >at.txt ||
	fail "perf record with sys_enter_munmap: $(cat rec.err)"
report_json lone.data >lone.json
check_counts "lone sys_enter_munmap" lone.json "$(perf_count lone.data)"
python3 - at.txt lone.json <<'PY' || fail "the lone munmap entries were not applied"
import json, sys
import perfscript
rep = json.load(open(sys.argv[2]))
bad = 0
for o in perfscript.parse_workload(open(sys.argv[1]).read()):
    if o["op"] != "region" or o["name"] not in ("first", "reused"):
        continue
    rows = sorted((r for r in rep["regions"] if r["pid"] == o["pid"] and int(r["start"], 16) == o["start"]
                   and int(r["end"], 16) == o["end"]), key=lambda r: r["id"])
    got = rows[o["order"]]["samples"] if len(rows) > o["order"] else None
    print(f"{'ok' if got == o['faults'] else 'FAIL'}: {o['name']}: {got} samples, the workload caused {o['faults']}")
    bad |= got != o["faults"]
if not rep["uncertain"]:
    print("FAIL: a file without mremap is not marked uncertain"); bad = 1
sys.exit(bad)
PY
pass "a lone sys_enter_munmap unmaps; the maps after it are not held back"

# cpu-clock with -d: perf sets ADDR, 0 on every sample. Not accesses to anything.
perf record -q -d -e cpu-clock -c 100000 -o cc.data -- "$WORKLOADS/attrib" >/dev/null 2>rec.err ||
	fail "perf record -e cpu-clock -d: $(cat rec.err)"
n=$(perf_count cc.data)
report_json cc.data >cc.json
check_counts "cpu-clock -d" cc.json "$n"
[ "$(json_field cc.json 'r["set_aside"]["zero_address"]')" -eq "$n" ] ||
	fail "cpu-clock -d: not every address-0 sample was set aside: $(json_field cc.json 'r["set_aside"]')"
grep -q 'at address 0' err.txt || fail "cpu-clock -d: the report does not say why samples were set aside"
"$MAPSCOPE" unmapped -i cc.data >un.txt 2>/dev/null || fail "unmapped -i cc.data failed"
[ "$(grep -c . un.txt)" -le 1 ] || fail "unmapped lists address-0 samples: $(head -3 un.txt)"
pass "cpu-clock -d: $n samples at address 0, set aside and said so; none listed as unmapped"
