#!/usr/bin/env bash
# The tables people read: rows with no samples left out (and counted),
# sizes for people beside the bytes of JSON, the perms of the memory the
# samples touched, the event named in the header; one way to say time
# (seconds from the start, --abs for the clock's ns, perf's --time form);
# ranges low-high with 0x; shares that mean the same under every filter;
# alloc under --children 0; unmapped samples under any --sort.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

ms_record rec.err -o r.data -- "$WORKLOADS/reserve" >truth.txt
read -r rstart rend < <(sed -n 's/^reserve start=\(0x[0-9a-f]*\) end=\(0x[0-9a-f]*\).*/\1 \2/p' truth.txt)
read -r ustart uend < <(sed -n 's/^untouched start=\(0x[0-9a-f]*\) end=\(0x[0-9a-f]*\).*/\1 \2/p' truth.txt)
read -r bold bgrown bshrunk < <(sed -n 's/^brk old=\(0x[0-9a-f]*\) grown=\(0x[0-9a-f]*\) shrunk=\(0x[0-9a-f]*\)/\1 \2 \3/p' truth.txt)
[ -n "$rstart" ] && [ -n "$ustart" ] && [ -n "$bshrunk" ] || fail "the workload printed no ground truth: $(cat truth.txt)"

"$MAPSCOPE" report -i r.data >rep.txt 2>rep.err || fail "report failed: $(cat rep.err)"
"$MAPSCOPE" report -i r.data --all >all.txt 2>/dev/null || fail "report --all failed"

# The reservation: 1 GiB reserved, 5 MiB touched, rw-p where made ---p.
row=$(grep " $rstart-$rend " rep.txt) || fail "no row for the reservation $rstart-$rend: $(head -12 rep.txt)"
echo "$row" | grep ' 1\.0 GiB  *5\.0 MiB rw-p  anon ' >/dev/null ||
	fail "the reservation's row lacks '1.0 GiB 5.0 MiB rw-p anon': $row"
grep -A1 " $rstart-$rend " rep.txt | grep 'perms of most of it ---p; its samples touched rw-p (1280 samples' >/dev/null ||
	fail "no line under the reservation says it was ---p and touched rw-p: $(grep -A2 " $rstart-$rend " rep.txt)"
pass "the reservation: 1.0 GiB reserved, 5.0 MiB touched, rw-p (made ---p), range $rstart-$rend"

# Rows with no samples: left out by default, counted, shown by --all.
grep " $ustart-$uend " rep.txt >/dev/null && fail "the untouched mapping is listed by default"
grep " $ustart-$uend " all.txt >/dev/null || fail "--all does not list the untouched mapping"
zero=$(awk '$1 == 0 && $3 ~ /^[0-9]+$/' all.txt | wc -l)
grep "^# $zero regions with no samples are not shown (--all shows them)$" rep.txt >/dev/null ||
	fail "the header does not count the $zero rows --all adds: $(grep '^#' rep.txt)"
[ "$(grep -vc '^#' all.txt)" -gt "$(grep -vc '^#' rep.txt)" ] || fail "--all shows no more rows"
grep 'regions with no samples' all.txt >/dev/null && fail "--all still says rows are hidden"
pass "$zero rows with no samples left out and counted; --all shows them"

grep "^# samples of event 'page-faults': page faults, each the first touch of a page" rep.txt >/dev/null ||
	fail "the header does not name the event and what it means: $(grep '^#' rep.txt)"
pass "the header names the event: page faults, first touches"

# JSON: exact bytes, the touched perms, the hidden count, the events.
"$MAPSCOPE" report -i r.data --format json >r.json 2>/dev/null || fail "report --format json failed"
"$MAPSCOPE" report -i r.data --format json --children 0 >r0.json 2>/dev/null || fail "report --children 0 failed"
"$MAPSCOPE" report -i r.data --format csv >r.csv 2>/dev/null || fail "report --format csv failed"
python3 - r.json r0.json r.csv "$rstart" "$zero" <<'PY' || fail "the JSON or CSV is wrong"
import csv, json, sys
d, d0 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = [l for l in open(sys.argv[3]) if not l.startswith("#")]
start, zero = sys.argv[4], int(sys.argv[5])
r = [x for x in d["regions"] if x.get("start") == start]
assert len(r) == 1, "no region at %s" % start
r = r[0]
assert r["size"] == 1 << 30, r["size"]
assert r["perms"] == "---p", r["perms"]
assert r["touched_size"] == 1280 * 4096, r["touched_size"]
assert [(t["perms"], t["samples"]) for t in r["touched_perms"]] == [("rw-p", 1280)], r["touched_perms"]
assert d["hidden_regions"] == zero, (d["hidden_regions"], zero)
assert all(x["samples"] > 0 for x in d["regions"]), "a region with no samples in the JSON"
assert d["sample_events"] == [{"name": "page-faults", "measures": "first_touch"}], d["sample_events"]
# --children 0 keeps the allocation site and chain.
r0 = [x for x in d0["regions"] if x.get("start") == start][0]
assert r["alloc"] and r0["alloc"] == r["alloc"], (r["alloc"], r0["alloc"])
assert r0["alloc_chain"] == r["alloc_chain"], (r["alloc_chain"], r0["alloc_chain"])
c = [x for x in csv.DictReader(rows) if x["start"] == start][0]
assert int(c["touched_size"]) == 1280 * 4096 and c["touched_perms"] == "rw-p" and int(c["size"]) == 1 << 30, c
assert c["alloc"] == r["alloc"], c["alloc"]
PY
pass "JSON and CSV: exact sizes, touched perms, hidden_regions, sample_events; --children 0 keeps alloc"

# Shares: of all the recording's samples, under --comm and --time alike.
total=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' r.json)
share=$(grep " $rstart-$rend " rep.txt | awk '{ print $2 }')
want=$(awk -v t="$total" 'BEGIN { printf "%.2f%%", 128000 / t }')
[ "$share" = "$want" ] || fail "the reservation's share is $share, 1280 of $total is $want"
first=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["start_ns"])' r.json)
for f in "--comm reserve" "--time +0,+100" "--time $((first / 1000000000)).$(printf %09d $((first % 1000000000))),"; do
	# shellcheck disable=SC2086
	"$MAPSCOPE" report -i r.data $f >f.txt 2>f.err || fail "report $f failed: $(cat f.err)"
	got=$(grep " $rstart-$rend " f.txt | awk '{ print $2 }')
	[ "$got" = "$want" ] || fail "under $f the reservation's share is $got, not $want"
	grep "^# shares are of all $total samples of the recording, under any --pid, --comm or --time$" f.txt >/dev/null ||
		fail "under $f the header does not say what shares are of"
done
pass "shares: $want under no filter, --comm, --time (relative and perf's seconds)"

# --time: perf's form (seconds with a point) is the same window as ns.
t1=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[x for x in d["regions"] if x.get("start")==sys.argv[2]][0]; print(r["first_ns"], r["last_ns"])' r.json "$rstart")
read -r f_ns l_ns <<<"$t1"
sec() { printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000)); }
"$MAPSCOPE" report -i r.data --time "$f_ns,$l_ns" --format json >ns.json 2>/dev/null || fail "--time in ns failed"
"$MAPSCOPE" report -i r.data --time "$(sec "$f_ns"),$(sec "$l_ns")" --format json >s.json 2>s.err ||
	fail "--time $(sec "$f_ns"),$(sec "$l_ns") (perf's form) was refused: $(cat s.err)"
cmp -s ns.json s.json || fail "--time in seconds and in ns differ: $(head -c 200 s.json) / $(head -c 200 ns.json)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [x["samples"] for x in d["regions"] if x.get("start")==sys.argv[2]] == [1280]' s.json "$rstart" ||
	fail "the window of the reservation's samples does not hold them all"
expect_status 2 "$MAPSCOPE" report -i r.data --time 1.2.3,
pass "--time $(sec "$f_ns"),$(sec "$l_ns") (perf's form) is the window $f_ns,$l_ns"

# Times: seconds from the start by default, the clock's ns with --abs.
abs_first=$("$MAPSCOPE" report -i r.data --abs 2>/dev/null | grep " $rstart-$rend " | awk '{ print $(NF - 2) }')
[ "$abs_first" = "$f_ns" ] || fail "report --abs gives $abs_first as the first time, JSON $f_ns"
rel_first=$(grep " $rstart-$rend " rep.txt | awk '{ print $(NF - 2) }')
want=$(awk -v a="$f_ns" -v b="$first" 'BEGIN { printf "%.6f", (a - b) / 1e9 }')
[ "$rel_first" = "$want" ] || fail "report gives $rel_first as the first time, not $want"

"$MAPSCOPE" timeline -i r.data >tl.txt 2>/dev/null || fail "timeline failed"
"$MAPSCOPE" timeline -i r.data --abs >tla.txt 2>/dev/null || fail "timeline --abs failed"
"$MAPSCOPE" timeline -i r.data --format json >tl.json 2>/dev/null || fail "timeline --format json failed"
head -1 tl.txt | grep '^ *time ' >/dev/null || fail "timeline's first column is not 'time': $(head -1 tl.txt)"
python3 - tl.txt tla.txt tl.json "$first" <<'PY' || fail "timeline's times are wrong"
import json, sys
rel = [l.split()[0] for l in open(sys.argv[1]).readlines()[1:] if not l.startswith("#")]
ab = [l.split()[0] for l in open(sys.argv[2]).readlines()[1:] if not l.startswith("#")]
js = [json.loads(l)["time_ns"] for l in open(sys.argv[3]) if '"time_ns"' in l]
t0 = int(sys.argv[4])
assert len(rel) == len(ab) == len(js) > 10, (len(rel), len(ab), len(js))
assert [int(a) for a in ab] == js, "--abs is not time_ns"
assert rel == ["%.6f" % ((t - t0) / 1e9) for t in js], "not seconds from the start"
PY
# The brk that shrinks: low-high, and said.
lo=$(printf '0x%x' "$bshrunk") hi=$(printf '0x%x' "$bgrown")
grep -E " brk +$lo-$hi +shrink +\[heap\]" tl.txt >/dev/null ||
	fail "the brk shrink is not '$lo-$hi shrink': $(grep ' brk ' tl.txt)"
grep -E ' (map|unmap|brk|protect) ' tl.txt | grep -vE ' 0x[0-9a-f]+-0x[0-9a-f]+ ' >/dev/null &&
	fail "a range without 0x: $(grep -E ' (map|unmap|brk|protect) ' tl.txt | grep -vE ' 0x[0-9a-f]+-0x[0-9a-f]+ ' | head -2)"
pass "times: report and timeline in seconds from the start, --abs in the clock's ns; brk shrink $lo-$hi"

# unmapped: addresses with 0x; under --sort samples,alloc JSON counts the unmapped samples as the default does.
ms_record bad.err -o b.data -- "$WORKLOADS/badaccess" >bad.txt
"$MAPSCOPE" unmapped -i b.data >un.txt 2>/dev/null || fail "unmapped failed"
addr=$(sed -n 's/.*func=touch_wild.*addr=\(0x[0-9a-f]*\).*/\1/p' bad.txt)
grep " $addr " un.txt >/dev/null || fail "unmapped does not give $addr with 0x: $(cat un.txt)"
for s in "" "--sort samples,alloc" "--sort region,symbol" "--sort dso"; do
	# shellcheck disable=SC2086
	"$MAPSCOPE" report -i b.data $s --format json >u.json 2>/dev/null || fail "report $s failed"
	n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["unmapped"]["samples"])' u.json)
	[ "$n" -ge 2 ] || fail "report ${s:-(default)} --format json counts $n unmapped samples"
	[ -z "$s" ] && want_un=$n
	[ "$n" = "$want_un" ] || fail "report $s counts $n unmapped samples, the default $want_un"
done
pass "unmapped: $addr with 0x; $want_un unmapped samples under every --sort"

# A region whose samples touched two perms (badaccess's guard page and the
# rest): the line under its row names each, as the JSON counts them.
"$MAPSCOPE" report -i b.data --format json >b.json 2>/dev/null || fail "report --format json of badaccess failed"
"$MAPSCOPE" report -i b.data >b.txt 2>/dev/null || fail "report of badaccess failed"
"$MAPSCOPE" report -i b.data --abs >ba.txt 2>/dev/null || fail "report --abs of badaccess failed"
python3 - b.json b.txt ba.txt <<'PY' || fail "the line of a region's touched perms is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
rel, ab = open(sys.argv[2]).read(), open(sys.argv[3]).read()
two = [r for r in d["regions"] if len(r["touched_perms"]) >= 2]
assert two, "no region of badaccess touched two perms"
for r in two:
    for text, when in ((rel, lambda t: "%.6f s" % ((t - d["start_ns"]) / 1e9)), (ab, lambda t: "%d ns" % t)):
        want = " " * 18 + "perms of most of it %s; its samples touched " % r["perms"] + ", ".join(
            "%s (%d samples, the first at %s)" % (t["perms"], t["samples"], when(t["first_ns"])) for t in r["touched_perms"])
        assert want + "\n" in text, "missing: %r" % want
PY
pass "a region that touched two perms: each named under its row, in seconds and --abs ns"

# watch: seconds from when it began, --abs the clock's ns; the brk shrink low-high.
if "$MAPSCOPE" watch -- "$WORKLOADS/reserve" >w.txt 2>w.err; then
	head -1 w.txt | grep '^ *time ' >/dev/null || fail "watch's first column is not 'time': $(head -1 w.txt)"
	read -r wgrown wshrunk < <(sed -n 's/^brk old=0x[0-9a-f]* grown=\(0x[0-9a-f]*\) shrunk=\(0x[0-9a-f]*\)/\1 \2/p' w.txt)
	grep -E "^ *[0-9]+\.[0-9]{6} .* brk +$wshrunk-$wgrown +shrink " w.txt >/dev/null ||
		fail "watch does not print the brk shrink as seconds and $wshrunk-$wgrown: $(grep ' brk ' w.txt)"
	awk '$1 ~ /^[0-9]+\.[0-9]+$/ && $1 > 60 { bad = 1 } END { exit bad }' w.txt ||
		fail "watch gives times over a minute from its start: $(head -3 w.txt)"
	"$MAPSCOPE" watch --abs -- "$WORKLOADS/reserve" >wa.txt 2>/dev/null || fail "watch --abs failed"
	now=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
	awk -v now="$now" '$4 == "map" && ($1 !~ /^[0-9]+$/ || $1 > now || $1 < now - 60e9) { bad = 1 } END { exit bad }' wa.txt ||
		fail "watch --abs does not give CLOCK_MONOTONIC ns: $(sed -n 2,3p wa.txt)"
	pass "watch: seconds from its start, --abs in CLOCK_MONOTONIC ns, brk shrink $wshrunk-$wgrown"
else
	echo "note: watch failed here ($(head -1 w.err)): its times not checked"
fi
