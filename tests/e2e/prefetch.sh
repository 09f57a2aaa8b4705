#!/usr/bin/env bash
# record --prefetches against the prefetch workload's printed truth: unmapped
# names walk's line, counts exactly the prefetches past the mapping's end and
# classes them past-end of that mapping; the freed case names the munmap and
# where it was called; perf script prints every hit. A binary with no
# prefetch instruction says so and records nothing extra. The uprobes are
# gone after a normal exit, Ctrl-C and kill -9 of the recorder, and a uprobe
# that mapscope did not place is never touched.
source "$(dirname "$0")/lib.sh"
need_recording
T=/sys/kernel/tracing
[ -e "$T/uprobe_events" ] || T=/sys/kernel/debug/tracing
[ -w "$T/uprobe_events" ] || skip "no writable uprobe_events in tracefs (CONFIG_UPROBE_EVENTS)"
cd "$TMP"

# A uprobe of someone else's, which every mapscope run below must leave alone.
foreign="other_$$"
echo "p:$foreign/keep /bin/true:0x0" >>"$T/uprobe_events" 2>/dev/null || foreign=""
cleanup_foreign() { [ -z "$foreign" ] || echo "-:$foreign/keep" >>"$T/uprobe_events" 2>/dev/null || true; }
trap 'cleanup_foreign; rm -rf "$TMP"' EXIT
foreign_kept() { [ -z "$foreign" ] || grep -q "^p:$foreign/keep " "$T/uprobe_events" || fail "a uprobe mapscope did not place was removed ($1)"; }

# gone PID: the group of recorder PID leaves uprobe_events within 15 s.
gone() {
	local _
	for _ in $(seq 300); do
		grep -q "^p:mapscope_$1/" "$T/uprobe_events" || return 0
		sleep 0.05
	done
	fail "uprobes of mapscope_$1 left after $2: $(grep "^p:mapscope_$1/" "$T/uprobe_events" | head -3)"
}

# past_end TRUTH JSON SYMBOL FILE: unmapped's JSON has exactly the prefetches past the end of the
# workload's mapping that its truth counts, classed past-end, at SYMBOL in FILE at its line; and
# the instruction's prefetches, bad or not.
past_end() {
	python3 - "$@" <<'PY'
import json, re, sys
truth, un, symbol, source = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
m = re.search(r"mapping start=(0x[0-9a-f]+) end=(0x[0-9a-f]+)", truth)
t = re.search(r"prefetches total=(\d+) past_end=(\d+) distance=(\d+) line=(\d+)", truth)
start, end = int(m.group(1), 16), int(m.group(2), 16)
total, past, dist, line = map(int, t.groups())
rows = [a for a in un["accesses"] if a["access"] == "prefetch"]
assert len(rows) == 1, rows
a = rows[0]
assert a["class"] == "past-end" and a["count"] == past, (a, past)
assert a["line"] == line and a["file"].endswith("/" + source) and a["symbol"].startswith(symbol), a
n = a["nearest"]
assert int(n["start"], 16) == start and int(n["end"], 16) == end and n["distance"] == 0, n
assert int(a["address"], 16) == end, a
sites = [s for s in un["prefetch_sites"] if (s["file"] or "").endswith("/" + source) and s["line"] == line]
assert len(sites) == 1 and sites[0]["prefetches"] == total and sites[0]["bad"] == past, un["prefetch_sites"]
print(f"ok: {past} of {total} prefetches of {symbol} past the end of {start:#x}-{end:#x}, {source}:{line}")
PY
}

# Past the end: the count, the line, the class and the mapping.
"$MAPSCOPE" record --prefetches -o pf.data -- "$WORKLOADS/prefetch" >wl.out 2>rec.err &
rp=$!
wait $rp || fail "record --prefetches exited $?: $(cat rec.err)"
gone $rp "a normal exit"
"$MAPSCOPE" unmapped -i pf.data --format json >un.json || fail "unmapped failed"
past_end wl.out un.json walk prefetch.c || fail "unmapped and the workload's truth differ"
total=$(sed -n 's/.*prefetches total=\([0-9]*\).*/\1/p' wl.out)
past=$(sed -n 's/.*past_end=\([0-9]*\).*/\1/p' wl.out)
line=$(sed -n 's/.*distance=[0-9]* line=\([0-9]*\).*/\1/p' wl.out)
# report lists the site with its bad prefetches; the HTML page's unmapped table has them.
"$MAPSCOPE" report -i pf.data >report.txt || fail "report failed"
grep -Eq "^ +$past +$total +[0-9.]+%  walk\+0x[0-9a-f]+ \(.*prefetch\.c:$line\)" report.txt ||
	fail "report does not list walk's $past bad prefetches of $total: $(tail -4 report.txt)"
"$MAPSCOPE" report -i pf.data --format html -o pf.html || fail "report --format html failed"
grep -q "\"class\": \"past-end\", \"access\": \"prefetch\", \"count\": $past," pf.html ||
	fail "the HTML page has no row of walk's bad prefetches"
grep -E "^\{\"code\": \"walk\+0x[0-9a-f]+ \(.*prefetch\.c:$line\)\", \"pid\": [0-9]+, \"prefetches\": $total, \"bad\": $past\}" \
	pf.html >/dev/null || fail "the HTML page does not list walk's $past bad prefetches of $total"
"$MAPSCOPE" report -i pf.data --format json >report.json || fail "report --format json failed"
python3 - report.json "$past" "$total" "$line" <<'PY' || fail "report's JSON does not list walk's bad prefetches"
import json, sys
past, total, line = map(int, sys.argv[2:])
s = json.load(open(sys.argv[1]))["prefetch_sites"]
assert [(x["line"], x["prefetches"], x["bad"]) for x in s] == [(line, total, past)] and s[0]["symbol"].startswith("walk"), s
PY
hits=$(perf script -i pf.data 2>/dev/null | grep -c "mapscope_$rp:pf") || true
[ "$hits" -eq "$total" ] || fail "perf script prints $hits uprobe hits, the workload made $total"

# Freed memory: the munmap, and where it was called.
ms_record rec2.err --prefetches --call-graph fp -o fr.data -- "$WORKLOADS/prefetch" freed >wl2.out
"$MAPSCOPE" unmapped -i fr.data --format json >fr.json || fail "unmapped failed"
python3 - wl2.out fr.json <<'PY' || fail "unmapped of the freed prefetches and the workload's truth differ"
import json, re, sys
t = re.search(r"freed prefetches=(\d+) line=(\d+)", open(sys.argv[1]).read())
count, line = map(int, t.groups())
rows = [a for a in json.load(open(sys.argv[2]))["accesses"] if a["class"] == "freed"]
assert len(rows) == 1, rows
a = rows[0]
assert a["access"] == "prefetch" and a["count"] == count and a["line"] == line, a
assert a["freed"]["call"] == "munmap" and a["freed"]["site"] and "main" in a["freed"]["site"], a["freed"]
print(f"ok: {count} prefetches into memory munmap freed, called from {a['freed']['site']}")
PY

# A guard page, the NULL page, memory never mapped: each its class, its count, the distance to the nearest map.
ms_record rec7.err --prefetches -o cl.data -- "$WORKLOADS/prefetch" classes >wl7.out
"$MAPSCOPE" unmapped -i cl.data --format json >cl.json || fail "unmapped failed"
python3 - wl7.out cl.json <<'PY' || fail "the classes of bad prefetches and the workload's truth differ"
import json, re, sys
truth = open(sys.argv[1]).read()
start = int(re.search(r"mapping start=(0x[0-9a-f]+)", truth).group(1), 16)
t = re.search(r"classes guard=(\d+) null=(\d+) never=(\d+) never_distance=(\d+) line=(\d+)", truth)
guard, null, never, dist, line = map(int, t.groups())
rows = {a["class"]: a for a in json.load(open(sys.argv[2]))["accesses"] if a["access"] == "prefetch"}
assert sorted(rows) == ["guard", "never-mapped", "null-page"], rows
for cls, n in (("guard", guard), ("null-page", null), ("never-mapped", never)):
    assert rows[cls]["count"] == n and rows[cls]["line"] == line, (cls, n, rows[cls])
nv = rows["never-mapped"]
assert int(nv["address"], 16) == start - dist, nv
assert int(nv["nearest"]["start"], 16) == start and nv["nearest"]["distance"] == dist, nv
print(f"ok: {guard} into a guard page, {null} into the NULL page, {never} never mapped, {dist} bytes below a map")
PY

# A library loaded with dlopen: probed as it is mapped, its bad prefetches counted and named.
ms_record rec4.err --prefetches -o dl.data -- "$WORKLOADS/prefetch-dlopen" "$T/uprobe_events" >wl4.out
grep "probed=1" wl4.out >/dev/null || fail "no uprobe in the dlopen'ed library: $(cat wl4.out rec4.err)"
"$MAPSCOPE" unmapped -i dl.data --format json >dl.json || fail "unmapped failed"
past_end wl4.out dl.json pf_walk prefetch-lib.c ||
	fail "unmapped of the dlopen'ed library's prefetches and its truth differ"

# No prefetch instruction: said, and nothing extra in the file.
ms_record rec3.err --prefetches -o none.data -- /bin/true
grep -q "no prefetch instruction in '.*true'" rec3.err || fail "no word of the missing prefetches: $(cat rec3.err)"
if perf script -i none.data 2>/dev/null | grep "mapscope_[0-9]*:pf" >/dev/null; then
	fail "uprobe samples recorded for a binary without prefetches"
fi

# Without root: said, with what would allow it, and the recording goes on without prefetches.
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$MAPSCOPE" record --prefetches -o - -- \
		"$WORKLOADS/prefetch" >/dev/null 2>nonroot.err || true
	grep -q "not recording prefetches: cannot write '.*uprobe_events': Permission denied; placing uprobes needs root" \
		nonroot.err || fail "no word of uprobe_events' privileges: $(cat nonroot.err)"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$MAPSCOPE" doctor >doctor.out 2>&1 || true
	grep -E "uprobes .*uprobe_events: not writable by this user: record --prefetches records no prefetches" \
		doctor.out >/dev/null || fail "doctor says nothing of uprobe_events: $(cat doctor.out)"
	grep -E "run record --prefetches as root" doctor.out >/dev/null || fail "doctor names no fix for uprobes"
	"$MAPSCOPE" doctor 2>&1 | grep -E "uprobes .*uprobe_events is writable" >/dev/null ||
		fail "doctor as root does not say uprobes may be placed"
fi

# Ctrl-C, then kill -9 of the recorder: the uprobes go all the same.
for sig in INT KILL; do
	"$MAPSCOPE" record --prefetches -o spin.data -- "$WORKLOADS/prefetch" spin >spin.out 2>spin.err &
	rp=$!
	wait_for "^p:mapscope_$rp/" "$T/uprobe_events" 10 || fail "no uprobe placed: $(cat spin.err)"
	wait_for "^ready" spin.out 10 || fail "the workload did not start"
	kill -"$sig" $rp
	wait $rp 2>/dev/null || true
	wl=$(sed -n 's/^ready pid=//p' spin.out)
	kill "$wl" 2>/dev/null || true
	gone $rp "SIG$sig of the recorder"
	foreign_kept "SIG$sig"
done
foreign_kept "the end"
pass "bad prefetches counted, classed and named; uprobes gone after exit, Ctrl-C and kill -9"
