#!/usr/bin/env bash
# record writes its data zstd-compressed by default, as perf record -z
# does. On recordings of workloads made here, every command's output
# (stdout, stderr, exit) is byte-identical on the compressed file and on its
# plain twin (the same records, opened with libzstd by perfzstd.py), perf
# script prints the same from both, and the file is smaller. --no-compress
# writes no compressed record, -z sets the level, a pipe is compressed only
# when asked, and Ctrl-C leaves every counted sample in the file.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
pz() { /usr/bin/python3 "$E2E_DIR/perfzstd.py" "$@"; }

# out DIR: every command's output on DIR/rec.data, in DIR (run there, so that the paths printed match).
out() {
	local i=0 c
	for c in "report" "report --children 0" "report --format json" "report --format csv" \
		"report --sort sym" "timeline" "timeline --format json" "unmapped" "unmapped --format json" \
		"hugepages" "maps --at last" "heatmap" "heatmap --format svg" "report --format html -o r.html" \
		"report --format pprof -o r.pb" "index" "maps --at last" "timeline --time 0,0.01"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		(cd "$1" && { timeout 120 "$MAPSCOPE" $c -i rec.data >"$i.out" 2>"$i.err" && echo 0 || echo $?; } >"$i.rc")
	done
	[ -s "$1/rec.data.msidx" ] || fail "index wrote no $1/rec.data.msidx: $(cat "$1/16.err")"
	perf script -i "$1/rec.data" --show-mmap-events --show-task-events >"$1/perf.script" 2>"$1/perf.err" ||
		fail "perf script cannot read $1/rec.data: $(head -3 "$1/perf.err")"
	# The index holds the file's size and a hash of its bytes: its own, not compared.
	rm "$1/rec.data" "$1/rec.data.msidx"
}

# same NAME RECORD-OPTIONS... -- CMD: the compressed recording against its plain twin.
same() {
	local name=$1 zsize psize nz nplain n
	shift
	rm -rf z p
	mkdir z p
	ms_record "$name.err" -o z/rec.data "$@" >/dev/null
	read -r nz nplain < <(pz count z/rec.data)
	[ "$nz" -gt 0 ] && [ "$nplain" -eq 0 ] || fail "$name: $nz compressed records and $nplain plain ones"
	perf report -i z/rec.data --header-only 2>/dev/null | grep '# compressed : Zstd, level = ' >"$name.hdr" ||
		fail "$name: perf finds no COMPRESSED feature"
	pz plain z/rec.data p/rec.data
	zsize=$(stat -c %s z/rec.data)
	psize=$(stat -c %s p/rec.data)
	[ $((zsize * 3)) -lt "$psize" ] || fail "$name: compressed $zsize bytes, plain $psize: not 3 times smaller"
	n=$(perf script -i z/rec.data -F tid 2>/dev/null | wc -l)
	[ "$n" -eq "$(summary_samples "$name.err")" ] ||
		fail "$name: perf script shows $n samples, record wrote $(summary_samples "$name.err")"
	out z
	out p
	diff -r z p >diff.txt || fail "$name: outputs differ compressed and plain: $(head -5 diff.txt)"
	pass "$name: 18 commands and perf script alike compressed and plain; $zsize bytes against $psize ($(cat "$name.hdr"))"
}
same aspace-ops -- "$WORKLOADS/aspace-ops"
same attrib-fp-z9 -z 9 --call-graph fp -- "$WORKLOADS/attrib"
grep 'level = 9' attrib-fp-z9.hdr >/dev/null || fail "-z 9: $(cat attrib-fp-z9.hdr)"
same python3 -- /usr/bin/python3 -c 'import json; x = [bytearray(1 << 16) for i in range(300)]; json.dumps(list(range(10000)))'

# --no-compress: the records as they are, no COMPRESSED feature.
ms_record plain.err --no-compress -o plain.data -- "$WORKLOADS/aspace-ops" >/dev/null
[ "$(pz count plain.data | cut -d' ' -f1)" -eq 0 ] || fail "--no-compress wrote compressed records"
! perf report -i plain.data --header-only 2>/dev/null | grep '# compressed' >/dev/null ||
	fail "--no-compress: the file says it is compressed"
for bad in "-z 0" "-z 23" "-z 3 --no-compress" "-z x"; do
	# shellcheck disable=SC2086
	expect_status 2 "$MAPSCOPE" record $bad -o bad.data -- /bin/true 2>/dev/null
done
pass "--no-compress writes plain records; -z 0, -z 23, -z x and -z with --no-compress are usage errors"

# A pipe: plain unless -z is given; read whole from stdin either way.
for opt in "" "-z 3"; do
	# shellcheck disable=SC2086
	"$MAPSCOPE" record $opt -o - -- "$WORKLOADS/aspace-ops" 2>pipe.err >pipe.data || fail "record $opt -o - failed"
	n=$(perf script -i - <pipe.data 2>/dev/null | grep -vc PERF_RECORD || true)
	[ "$n" -eq "$(summary_samples pipe.err)" ] || fail "pipe $opt: perf script reads $n samples of $(summary_samples pipe.err)"
	"$MAPSCOPE" report -i - --children 0 <pipe.data >pipe.txt 2>pipe.rerr || fail "pipe $opt: report -i - failed: $(cat pipe.rerr)"
	nz=$(pz count pipe.data | cut -d' ' -f1)
	if [ -n "$opt" ]; then [ "$nz" -gt 0 ]; else [ "$nz" -eq 0 ]; fi || fail "pipe $opt: $nz compressed records"
done
pass "pipe mode: plain by default, compressed with -z; perf script and report read both from stdin"

# Ctrl-C: what was counted is in the file, the last piece flushed at close.
"$MAPSCOPE" record -o int.data -- "$WORKLOADS/spinner" >spin.txt 2>int.err &
rec=$!
wait_for '^ready' spin.txt || fail "the spinner did not start"
sleep 1
kill -INT $rec
wait $rec || fail "record exited $? after Ctrl-C: $(cat int.err)"
want=$(summary_samples int.err)
n=$(perf script -i int.data 2>/dev/null | grep -vc PERF_RECORD || true)
ours=$("$MAPSCOPE" report -i int.data --children 0 --format json 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["file_samples"])')
[ "$n" -eq "$want" ] && [ "$ours" -eq "$want" ] || fail "Ctrl-C: record counted $want samples, perf script reads $n, report $ours"
pass "Ctrl-C: all $want samples counted are in the file"
