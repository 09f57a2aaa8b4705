#!/usr/bin/env bash
# Code names of the runtimes people profile, against perf on the same file:
# node --perf-basic-prof (its JS frames from /tmp/perf-PID.map, V8's C++
# demangled) and a JVM with -XX:+DumpPerfMapAtExit (its Java frames). The
# maps are read when the report runs, as perf reads them; each name's
# sample count must be perf's (perf lists one row per map entry: summed by
# name), for the names holding 0.5% or more (below, a symbol with aliases
# at one address may be named by another alias: libdwfl's choice, not perf's).
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
maps=()
trap 'rm -f "${maps[@]}"; rm -rf "$TMP"' EXIT

# first_exec DATA: the pid of the recording's first exec: the process recorded.
first_exec() {
	"$MAPSCOPE" timeline -i "$1" --format json >"$1.timeline" 2>/dev/null || fail "timeline of $1 failed"
	/usr/bin/python3 -c 'import json,sys; print(next(e["pid"] for e in map(json.loads, open(sys.argv[1])) if e["op"] == "exec"))' \
		"$1.timeline"
}

# compare DATA WHAT PATTERN...: mapscope's rows by symbol against perf's, for the names matching each pattern.
compare() {
	local data=$1 what=$2
	shift 2
	"$MAPSCOPE" report -i "$data" --sort symbol --format json >"$what.json" 2>"$what.err" ||
		fail "$what: report failed: $(cat "$what.err")"
	perf report -i "$data" --stdio --sort sym -F sample,sym >"$what.perf" 2>/dev/null ||
		fail "$what: perf report failed"
	/usr/bin/python3 - "$what.json" "$what.perf" "$what" "$@" <<'PY' || fail "$what: names differ from perf's"
import json, re, sys
import perfscript
ours = {}
for r in json.load(open(sys.argv[1]))["regions"]:      # overloads share a name: one row each, as perf
    ours[r["symbol"]] = ours.get(r["symbol"], 0) + r["samples"]
perf = perfscript.report_samples_by_symbol(open(sys.argv[2]).read())
total = sum(ours.values())
bad = 0
for pattern in sys.argv[4:]:
    names = [n for n in ours if re.match(pattern, n)]
    got = sum(ours[n] for n in names)
    if got * 100 < total:
        print(f"FAIL: {sys.argv[3]}: names like {pattern!r} hold {got} of {total} samples: {names[:5]}")
        bad = 1
    for n in names:
        if ours[n] * 200 < total:      # below 0.5%: aliases at one address may be named apart
            continue
        ok = ours[n] == perf.get(n)
        print(("ok: " if ok else "FAIL: ") + f"{sys.argv[3]}: {n[:90]}: {ours[n]} samples, perf {perf.get(n)}")
        bad |= not ok
mangled = [n for n in ours if n.startswith("_Z")]
if mangled:
    print(f"FAIL: {sys.argv[3]}: mangled names left: {mangled[:3]}")
    bad = 1
sys.exit(bad)
PY
}

if command -v node >/dev/null; then
	cat >n1.js <<'EOF'
function work(n) { let a = []; for (let i = 0; i < n; i++) a.push({ i: i, s: "x" + i }); return a.length; }
let t = 0; for (let k = 0; k < 6; k++) t += work(2e5); console.log(t);
EOF
	"$MAPSCOPE" record -o node.data -- node --perf-basic-prof n1.js >node.out 2>node.rec ||
		fail "node: record failed: $(cat node.rec)"
	pid=$(first_exec node.data)
	maps+=("/tmp/perf-$pid.map")
	[ -s "/tmp/perf-$pid.map" ] || fail "node --perf-basic-prof wrote no /tmp/perf-$pid.map"
	compare node.data node '^JS:' '^v8::internal::'
	pass "node --perf-basic-prof: JS frames named from its perf map, V8's C++ demangled, counts equal to perf's"
	# Without its map, the same JIT code is [unknown] again, and no other name changes.
	mv "/tmp/perf-$pid.map" "/tmp/perf-$pid.map.away"
	maps+=("/tmp/perf-$pid.map.away")
	"$MAPSCOPE" report -i node.data --sort symbol --format json >nomap.json 2>/dev/null || fail "report without the map failed"
	! grep '"JS:' nomap.json >/dev/null || fail "JS names without a perf map"
else
	echo "SKIP(part): node is not installed (Debian package nodejs)"
fi

if command -v java >/dev/null && command -v javac >/dev/null; then
	cat >Touch.java <<'EOF'
public class Touch {
    static Object keep;
    static long fill(int n) {
        long sum = 0;
        for (int k = 0; k < n; k++) { long[] a = new long[128]; a[k & 127] = k; keep = a; sum += a[(k + 1) & 127]; }
        return sum;
    }
    public static void main(String[] args) {
        long t = 0;
        for (int r = 0; r < 40; r++) t += fill(20000);
        System.out.println(t);
    }
}
EOF
	javac -d . Touch.java 2>javac.err || fail "javac failed: $(cat javac.err)"
	"$MAPSCOPE" record -o jvm.data -- java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
		-XX:+UseSerialGC -Xmn256m -Xmx512m -Xshare:off -cp . Touch >jvm.out 2>jvm.rec ||
		fail "java: record failed: $(cat jvm.rec)"
	pid=$(first_exec jvm.data)
	maps+=("/tmp/perf-$pid.map")
	[ -s "/tmp/perf-$pid.map" ] || fail "java -XX:+DumpPerfMapAtExit wrote no /tmp/perf-$pid.map"
	compare jvm.data jvm '.*Touch\.fill'
	pass "a JVM with -XX:+DumpPerfMapAtExit: its Java frames named, counts equal to perf's"
else
	echo "SKIP(part): java is not installed (Debian package openjdk-17-jdk-headless)"
fi
command -v node >/dev/null || command -v java >/dev/null || skip "neither node nor java is installed"
