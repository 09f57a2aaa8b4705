#!/usr/bin/env bash
# Hostile recordings, made from the golden one by perfdata-craft.py: each
# loss is counted and said (stderr, and a "losses" line in every output),
# damage exits 1, names are read only as far as their record goes, and
# compressed data is checked: cut short, a data size that leaves data out,
# and a "zstd bomb" that expands 12,000 to 1 are refused with a message.
# Needs no privileges.
source "$(dirname "$0")/lib.sh"
golden="$SRC_DIR/tests/golden/mapscope-ops.data"
craft() { python3 "$E2E_DIR/perfdata-craft.py" "$@" || fail "perfdata-craft.py $* failed"; }
cd "$TMP"

# run NAME ARGS...: mapscope ARGS into NAME.out and NAME.err; the exit status in $rc.
run() {
	local name=$1
	shift
	rc=0
	"$MAPSCOPE" "$@" >"$name.out" 2>"$name.err" || rc=$?
}

# damaged FILE WARNING LOSSES CMD...: CMD -i FILE exits 1, warns (an ERE) and carries the losses (an ERE).
damaged() {
	local f=$1 warn=$2 losses=$3
	shift 3
	run d "$@" -i "$f"
	[ "$rc" -eq 1 ] || fail "'$*' of $f: exit $rc"
	grep -Eq -- "$warn" d.err || fail "'$*' of $f does not warn as expected: $(cat d.err)"
	grep -Eq -- "(losses\": \"|^# losses: )$losses" d.out || fail "'$*' of $f does not carry its losses: $(head -3 d.out)"
}

# Records the kernel lost: said on stderr and in every output, in that output's way; exit 0.
craft lost "$golden" lost.data 1000
pid=15327
for c in "report" "report --format csv" "report --format json" "report --format html" "timeline" "timeline --format json" \
	"unmapped" "unmapped --format json" "hugepages" "hugepages --format json" "heatmap" \
	"heatmap --format svg" "maps --pid $pid --at +0.012"; do
	# shellcheck disable=SC2086
	run out $c -i lost.data
	[ "$rc" -eq 0 ] || fail "'$c' of a file with lost records exited $rc: $(cat out.err)"
	grep -q 'lost 1000 records' out.err || fail "'$c' does not warn of the lost records: $(cat out.err)"
	case "$c" in
	*json* | *html*) want='"losses": "1000 records lost by the kernel, from 0.000051 s to 0.000051 s; attribution is uncertain"' ;;
	*svg*) want='<text class="losses" x="4" y="[0-9]*" fill="#c00">losses: 1000 records lost by the kernel' ;;
	*) want='^# losses: 1000 records lost by the kernel, from 0.000051 s to 0.000051 s; attribution is uncertain$' ;;
	esac
	grep -q "$want" out.out || fail "'$c' does not carry the losses in its output: $(head -3 out.out)"
done
"$MAPSCOPE" timeline -i lost.data --format json 2>/dev/null |
	python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]' || fail "the JSON timeline does not parse"
run pprof report -i lost.data --format pprof -o lost.pb.gz
[ "$rc" -eq 0 ] || fail "pprof of a file with lost records exited $rc"
zcat lost.pb.gz | grep -a 'losses: 1000 records lost by the kernel' >/dev/null || fail "the pprof profile has no losses comment"
run save hugepages -i lost.data --save lost-advice.json
[ "$rc" -eq 0 ] || fail "hugepages --save of a file with lost records exited $rc: $(cat save.err)"
grep -q '"losses": "1000 records lost by the kernel, from 0.000051 s to 0.000051 s; attribution is uncertain"' \
	lost-advice.json || fail "the advice file does not carry the losses: $(head -c 300 lost-advice.json)"
# A file without losses carries no losses line.
"$MAPSCOPE" report -i "$golden" --format csv 2>/dev/null | grep '^# losses' >/dev/null && fail "a whole file has a losses line"
pass "lost records: said on stderr, and by each of 15 outputs in its own way"

# A map the kernel lost: what fell in it is uncertain, not never-mapped, in
# the process and in the child it forked, which started with a copy; and
# so when the LOST record names the child instead: it names the task that
# wrote next on that CPU's ring, not the one whose records were dropped (a
# storm under -m 1 lost a shell's libc maps under its child's name, and
# the shell's faults in libc were then never-mapped).
for as in "" 15330; do
	craft lose-map${as:+-as} "$golden" lostmap.data $as
	run lm unmapped -i lostmap.data --format json
	[ "$rc" -eq 0 ] || fail "unmapped of a file with a lost map${as:+ named $as} exited $rc: $(cat lm.err)"
	python3 - lm.out <<'PY' || fail "the accesses to the lost map${as:+ named $as} are not all uncertain"
import json, sys
acc = json.load(open(sys.argv[1]))["accesses"]
classes = sorted(set((a["pid"], a["class"]) for a in acc))
print(classes)
sys.exit(classes != [(15327, "uncertain"), (15330, "uncertain")])
PY
done
pass "accesses to a map whose record was lost are uncertain, in the process and its child, whichever the loss names"

# A record of a type nobody defines: counted, said, exit 1.
craft unknown-type "$golden" unknown.data
run u report -i unknown.data --format json
[ "$rc" -eq 1 ] || fail "a record of an unknown type: exit $rc"
grep -q 'skipping a record of type 61 at byte offset 2824: it is of a type nobody defines' u.err || fail "no warning of the unknown record: $(cat u.err)"
grep -q '"losses": "1 records of unknown or unasked-for types skipped; attribution is uncertain"' u.out ||
	fail "the JSON report does not count the unknown record"
want=$("$MAPSCOPE" report -i "$golden" --format json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["file_samples"])')
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["file_samples"])' u.out)
[ "$got" -eq $((want - 1)) ] || fail "$got samples of $want, with one sample's type flipped"
pass "a record of an unknown type: counted, said, exit 1"

# A damaged size that swallows the records after it, an MMAP2's (more bytes
# than any has) or a sample's (more than its event's): what it covered is
# lost, so it is said, carried, and exits 1, as any other damage does.
for ty in 10 9; do
	craft swallow "$golden" swallow.data $ty
	for c in "report --format json" "unmapped --format json" "timeline" "hugepages" "heatmap"; do
		# shellcheck disable=SC2086
		damaged swallow.data "skipping a (record of type $ty|sample) at byte offset [0-9]+.*the records it covers are lost" \
			'1 (damaged records|samples that do not fit their records) skipped' $c
	done
done
pass "a record grown over the records after it: said, carried, exit 1"

# A sample whose type byte flipped to one of the types perf writes among the
# data itself (CPU_MAP, THREAD_MAP) but without what those hold, to AUX (no
# event of the file has an AUX area), or to MMAP (perf's 48-byte sample is
# too short for one): the sample is lost, so it is said, carried, exit 1.
for case in "$golden 74" "$golden 73" "$golden 11" "$SRC_DIR/tests/golden/perf-ops.data 1"; do
	read -r f ty <<<"$case"
	craft retype "$f" retyped.data "$ty"
	# shellcheck disable=SC2086
	damaged retyped.data "skipping (a record of type $ty|an MMAP record) at byte offset [0-9]+" \
		'1 (damaged records|records of unknown or unasked-for types) skipped' report --format csv
done
pass "a sample retyped as a record it does not fit: said, carried, exit 1"

# Data cut where a record ends reads as a whole, shorter file: the time of the
# last sample, which perf's SAMPLE_TIME holds, says it is not (the golden
# recording of mapscope is older than its SAMPLE_TIME: perf's is used).
craft cut-between "$SRC_DIR/tests/golden/perf-ops.data" between.data
for c in "report --format csv" "timeline" "unmapped" "hugepages --format json"; do
	# shellcheck disable=SC2086
	damaged between.data 'the data ends at 0\.008279 s, before the last sample its header records \(0\.015809 s\)' \
		'the data is damaged or cut short' $c
done
run whole report -i "$SRC_DIR/tests/golden/perf-ops.data"
[ "$rc" -eq 0 ] || fail "the whole perf recording: exit $rc, $(cat whole.err)"
pass "data cut where a record ends: said by the last sample's time, carried, exit 1"

# perf writes ~0 as the last sample's time where its samples have no TIME
# (perf record --no-timestamp): no time to reach, no damage.
craft no-sample-time "$SRC_DIR/tests/golden/perf-ops.data" notime.data
for c in "report --format csv" "timeline" "unmapped"; do
	# shellcheck disable=SC2086
	run nt $c -i notime.data
	[ "$rc" -eq 0 ] || fail "'$c' of a file whose SAMPLE_TIME is ~0: exit $rc, $(cat nt.err)"
	! grep -q 'cut short' nt.err || fail "'$c' of a file whose SAMPLE_TIME is ~0 says it was cut: $(cat nt.err)"
done
pass "SAMPLE_TIME of ~0 (samples without TIME): no damage said, exit 0"

# Names without their NUL: read up to the trailer, never into it; counted, exit 1.
craft mmap-no-nul "$golden" noname.data
run n timeline -i noname.data
[ "$rc" -eq 1 ] || fail "an MMAP2 name with no NUL: exit $rc"
grep -Eq ' B{48}$' n.out || fail "the name runs into the trailer: $(grep -a BBB n.out | cat -A | head -2)"
grep -q 'names with no end inside their record' n.err || fail "no warning of the name cut short: $(cat n.err)"
grep -q '^# losses: 1 names with no end cut short' n.out || fail "the timeline does not carry the cut name"
craft comm-no-nul "$golden" nocomm.data
run c report -i nocomm.data --format json
[ "$rc" -eq 1 ] || fail "a COMM name with no NUL: exit $rc"
grep -Eq '"comm": "C{15}"' c.out || fail "the comm is not read up to its trailer: $(grep -a CCC c.out | head -2)"
pass "MMAP2 and COMM names with no NUL: read as far as the record goes, said, exit 1"

# The HTML page carries each kind of loss too, in its data and as a warning on the page.
for f in unknown.data noname.data; do
	run h report -i $f --format html
	[ "$rc" -eq 1 ] || fail "report --format html of $f: exit $rc"
	run j report -i $f --format json
	want=$(grep -o '"losses": "[^"]*"' j.out) || fail "no losses in the JSON report of $f"
	grep -qF "$want" h.out || fail "the HTML page of $f does not carry its losses ($want)"
done
if command -v chromium >/dev/null; then
	cp h.out page.html
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/chromium" --dump-dom "file://$TMP/page.html" \
		>page.dom 2>/dev/null || fail "chromium could not open the page"
	grep -q '<div class="warn">Losses: 1 names with no end cut short; attribution is uncertain.</div>' page.dom ||
		fail "the page does not show its losses: $(grep -o '<div id="warnings">.*</div>' page.dom | head -c 300)"
else
	echo "chromium is not installed (Debian package chromium): the page's warning is not checked"
fi
pass "the HTML page carries what was lost, as the other outputs do"

command -v zstd >/dev/null || skip "no zstd command to compress with (scripts/install-deps.sh installs it)"
# Compressed as perf record -z does: the same report.
craft zstd-ok "$golden" z.data
"$MAPSCOPE" report -i "$golden" >plain.txt 2>/dev/null
run z report -i z.data
[ "$rc" -eq 0 ] && cmp -s plain.txt z.out || fail "the compressed file reads differently: exit $rc, $(diff plain.txt z.out | head -5)"
craft zstd-short "$golden" zshort.data
run zs report -i zshort.data --format csv
[ "$rc" -eq 1 ] && grep -q "data size is smaller than its data" zs.err || fail "a short data size: exit $rc, $(cat zs.err)"
grep -q '^# losses: the data is damaged or cut short' zs.out || fail "the CSV of a damaged file has no losses line"
craft zstd-cut "$golden" zcut.data
run zc report -i zcut.data
[ "$rc" -eq 1 ] && grep -q "ends inside a zstd block" zc.err || fail "compressed data cut short: exit $rc, $(cat zc.err)"
# A record that expands to 64 MiB of records, over 10,000 times its size.
craft zstd-bomb "$golden" bomb.data 64
for c in report timeline unmapped hugepages heatmap; do
	run b "$c" -i bomb.data
	[ "$rc" -eq 1 ] && grep -q "refusing compressed data that expands to more than 2048 times its size" b.err ||
		fail "$c of a zstd bomb: exit $rc, $(cat b.err)"
done
pass "compressed data: read as perf writes it; cut short, a short data size and a bomb refused, exit 1"
