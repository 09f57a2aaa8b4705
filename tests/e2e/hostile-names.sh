#!/usr/bin/env bash
# Names in a recording are anyone's: a comm and a mapped file whose names
# hold a newline, ESC [31m, a UTF-8 CSI and a forged row ("9999 99.99%
# FAKE") reach every text and CSV output, and the warnings, escaped (\n,
# \x1b, \xc2\x9b), on the line they belong to: no raw control byte, no
# forged line.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

"$MAPSCOPE" record -o h.data -- "$WORKLOADS/hostile-names" "$TMP" >wl.txt 2>rec.txt ||
	fail "record failed: $(cat rec.txt)"
grep -q '^file pages=16' wl.txt || fail "the workload did not run: $(cat wl.txt)"
pid=$(awk -F, '/,rw-s,file,/ { print $3 }' <("$MAPSCOPE" report -i h.data --format csv))
[ -n "$pid" ] || fail "no row for the mapped file in the CSV report"
at=$("$MAPSCOPE" timeline -i h.data --abs | awk '$4 == "map" && /FAKE/ { printf "%.0f\n", $1 + 1; exit }')
[ -n "$at" ] || fail "no map of the file in the timeline"

want='/map\n   9999 99.99%  FAKE \x1b[31mred\xc2\x9b0m\tx'
# clean NAME FILE: no control byte but newline, no C1 CSI, no forged line.
clean() {
	if LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]|\xc2\x9b' "$2"; then
		fail "$1 printed a raw control byte: $(LC_ALL=C grep -naP '[\x00-\x09\x0b-\x1f\x7f]|\xc2\x9b' "$2" | cat -A | head -3)"
	fi
	if grep -qaE '^ *9999 99\.99%|^FAKE' "$2"; then
		fail "$1 printed a forged line: $(grep -naE '^ *9999 99\.99%|^FAKE' "$2" | head -3)"
	fi
}
# shows NAME FILE STRING: the escaped name is there.
shows() {
	grep -qaF -- "$3" "$2" || fail "$1 does not show '$3': $(head -5 "$2")"
}

for c in "report" "report --sort symbol,dso" "report --sort daddr-symbol" "report --sort alloc" \
	"report --format csv" "report --sort symbol --format csv" "timeline" "maps --pid $pid --at $at" \
	"hugepages" "unmapped" "heatmap"; do
	# shellcheck disable=SC2086
	"$MAPSCOPE" $c -i h.data >out.txt 2>err.txt || fail "'$c' failed: $(cat err.txt)"
	clean "'$c'" out.txt
	clean "'$c' (stderr)" err.txt
	echo "ok: $c"
done
"$MAPSCOPE" report -i h.data >out.txt
shows report out.txt "$want"
shows report out.txt '\n\x1b[31mFAKE 99.9 '
"$MAPSCOPE" report -i h.data --format csv >out.txt
shows "report --format csv" out.txt "\"$TMP$want\""
shows "report --format csv" out.txt ',"\n\x1b[31mFAKE 99.9",'
[ "$(wc -l <out.txt)" -eq "$(python3 -c 'import csv, sys; print(sum(1 for _ in csv.reader(open(sys.argv[1]))))' out.txt)" ] ||
	fail "a CSV record spans lines"
"$MAPSCOPE" timeline -i h.data >out.txt
shows timeline out.txt "$want"
"$MAPSCOPE" maps -i h.data --pid "$pid" --at "$at" >out.txt
shows maps out.txt "$want"
"$MAPSCOPE" heatmap -i h.data >out.txt
shows heatmap out.txt "$want"

# watch prints the same changes live.
"$MAPSCOPE" watch -- "$WORKLOADS/hostile-names" "$TMP" >out.txt 2>err.txt || fail "watch failed: $(cat err.txt)"
clean watch out.txt
clean "watch (stderr)" err.txt
shows watch out.txt "$want"
# A warning that names a binary: the program is swapped for another ELF
# file after recording, so its build-id differs and report says so, naming
# it; the name's newline and ESC must reach stderr escaped.
bin=$(printf 'prog\n   9999 99.99%%  FAKE \033[31mred')
cp "$WORKLOADS/fault-loop" "./$bin"
"$MAPSCOPE" record -o w.data -- "./$bin" 4 1 >/dev/null 2>rec.txt || fail "record of '$bin' failed: $(cat rec.txt)"
cp "$WORKLOADS/badaccess" "./$bin"
"$MAPSCOPE" report -i w.data >out.txt 2>err.txt || fail "report of w.data failed: $(cat err.txt)"
clean "report of a swapped binary (stderr)" err.txt
shows "report of a swapped binary (stderr)" err.txt 'prog\n   9999 99.99%  FAKE \x1b[31mred'"' is not the binary that was recorded"
pass "names with control bytes are escaped in every text and CSV output and warning"
