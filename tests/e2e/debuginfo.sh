#!/usr/bin/env bash
# Separate debug files: the named workload stripped of every symbol, its
# debug file found as libdwfl, gdb and perf find one: by .gnu_debuglink
# (beside the binary) and by build-id (/usr/lib/debug/.build-id/xx/rest.debug,
# made here and removed at the end). Its functions must be named with the
# workload's exact counts, as perf names them, and the allocation site must
# say file:line; with no debug file, no function is named.
source "$(dirname "$0")/lib.sh"
need_recording
command -v objcopy >/dev/null || skip "objcopy is not installed (Debian package binutils)"
cd "$TMP"
made="" made_dir=""
trap 'rm -f "$made"; [ -z "$made_dir" ] || rmdir "$made_dir" 2>/dev/null; rm -rf "$TMP"' EXIT

cp "$WORKLOADS/named" prog
objcopy --only-keep-debug prog prog.debug && strip --strip-all prog && objcopy --add-gnu-debuglink=prog.debug prog ||
	fail "cannot strip the workload"
"$MAPSCOPE" record --call-graph fp -o n.data -- ./prog >n.txt 2>/dev/null || fail "record failed"

# check WHAT: the functions and the site, from the report of n.data.
check() {
	"$MAPSCOPE" report -i n.data --format json --sort symbol >symbol.json 2>"$1.err" || fail "$1: report failed"
	"$MAPSCOPE" report -i n.data --format json >regions.json 2>>"$1.err" || fail "$1: report failed"
	perf report -i n.data --stdio --sort sym -F sample,sym >perf.txt 2>/dev/null || fail "$1: perf report failed"
	/usr/bin/python3 - n.txt symbol.json regions.json perf.txt "$1" <<'PY' || fail "$1: not named from the debug file"
import json, sys
import perfscript
ops = perfscript.parse_workload(open(sys.argv[1]).read())
code = {r["symbol"]: r["samples"] for r in json.load(open(sys.argv[2]))["regions"]}
regions = json.load(open(sys.argv[3]))["regions"]
perf = perfscript.report_samples_by_symbol(open(sys.argv[4]).read())
bad = 0
for o in ops:
    if o["op"] == "touched":
        got = code.get(o["func"])
        ok = got == o["pages"] == perf.get(o["func"])
        print(("ok: " if ok else "FAIL: ") + f"{sys.argv[5]}: {o['func']}: {got} samples, expected {o['pages']}, perf {perf.get(o['func'])}")
        bad |= not ok
start = next(o["start"] for o in ops if o["op"] in ("object", "region") and o["name"] == "buffer")
site = next(r for r in regions if int(r["start"], 16) <= start < int(r["end"], 16))["alloc"] or ""
ok = site.startswith("make_buffer (named.c:") and " \u2190 main (named.c:" in site
print(("ok: " if ok else "FAIL: ") + f"{sys.argv[5]}: the buffer's site: {site}")
sys.exit(bad or not ok)
PY
}

check debuglink
pass "stripped, with .gnu_debuglink: functions named with exact counts, as perf names them; the site has file:line"

id=$(readelf -n prog | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ ${#id} -ge 16 ] || fail "no build-id read from the workload"
[ -d "/usr/lib/debug/.build-id/${id:0:2}" ] || made_dir="/usr/lib/debug/.build-id/${id:0:2}"   # removed again at exit
if mkdir -p "/usr/lib/debug/.build-id/${id:0:2}" 2>/dev/null && [ ! -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
	made="/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	mv prog.debug "$made"
	check build-id
	pass "stripped, its debug file under /usr/lib/debug/.build-id: named alike"
	rm -f "$made"
else
	echo "SKIP(part): /usr/lib/debug/.build-id is not writable here, or already holds this build-id"
	rm prog.debug
fi
"$MAPSCOPE" report -i n.data --sort symbol >none.txt 2>/dev/null || fail "report without a debug file failed"
! grep fill_table_a none.txt >/dev/null || fail "functions named with no debug file: the test proves nothing"
pass "with no debug file, the stripped functions are not named"
