#!/usr/bin/env bash
# Every perf.data in shared/perfdata-corpus (other projects' files: perf
# 3.2 to 6.16, four architectures, file and pipe mode) through report,
# timeline and unmapped. Where perf reads a file, mapscope must read as
# many samples as its README says perf script printed; where perf cannot,
# mapscope either reads it or says clearly why not (exit 1, a message
# naming the cause). Nothing may crash, hang, or print nothing.
source "$(dirname "$0")/lib.sh"
corpus="${CORPUS_DIR:-$SRC_DIR/../shared/perfdata-corpus}"
[ -f "$corpus/README.md" ] || skip "no perf.data corpus at $corpus (shared/perfdata-corpus beside the clone)"
cd "$TMP"

# run NAME CMD...: runs CMD with a time limit; rc in $rc, output in out.txt, err.txt.
run() {
	local name=$1
	shift
	rc=0
	timeout 60 "$@" >out.txt 2>err.txt || rc=$?
	[ "$rc" -ne 124 ] || fail "$name: hung (killed after 60 s)"
	[ "$rc" -lt 128 ] || fail "$name: died by signal $((rc - 128))"
}

# The README's table: | file | version | arch | mode | features | perf samples |
grep '^| [a-z]*__' "$corpus/README.md" | awk -F'|' '{gsub(/ /, "", $2); gsub(/ /, "", $5); gsub(/ /, "", $7); print $2, $5, $7}' >table.txt
[ -s table.txt ] || fail "cannot read the corpus README's table"
files=0
while read -r file mode want; do
	f="$corpus/$file"
	[ -f "$f" ] || fail "$file is in the README but not in the corpus"
	files=$((files + 1))
	want=${want%\*}              # '*': counted by perf on a copy with the newer attr cut short
	run "report $file" "$MAPSCOPE" report --children 0 --format json -i "$f"
	if [ "$want" = "-" ]; then
		# perf fails on it: read it, or refuse it saying why.
		if [ "$rc" -ne 0 ]; then
			[ "$rc" -eq 1 ] || fail "report $file: exit $rc, not 1, for a file it cannot read"
			grep -qE 'corrupt|not supported|cannot|does not' err.txt ||
				fail "report $file: exit 1 without saying why: $(head -2 err.txt)"
			echo "ok: $file: refused, as perf refuses it: $(grep -m1 -E 'corrupt|not supported|cannot|does not' err.txt)"
		else
			got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["file_samples"])' out.txt)
			[ "$got" -gt 0 ] || fail "report $file: exit 0 with no samples read"
			echo "ok: $file: $got samples (perf cannot read this file)"
		fi
	else
		[ "$rc" -eq 0 ] || fail "report $file: exit $rc: $(grep -v 'cannot read' err.txt | head -2)"
		got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["file_samples"])' out.txt)
		[ "$got" = "$want" ] || fail "report $file: $got samples, perf script printed $want"
		if [ "$mode" = pipe ]; then
			run "report -i - <$file" sh -c '"$0" report --children 0 --format json -i - <"$1"' "$MAPSCOPE" "$f"
			[ "$rc" -eq 0 ] || fail "report -i - <$file: exit $rc: $(head -2 err.txt)"
			got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["file_samples"])' out.txt)
			[ "$got" = "$want" ] || fail "report -i - <$file: $got samples from stdin, perf script printed $want"
		fi
		echo "ok: $file: $got samples, as perf script printed"
	fi
	for cmd in timeline unmapped; do
		run "$cmd $file" "$MAPSCOPE" "$cmd" -i "$f"
		if [ "$want" = "-" ] && [ "$rc" -eq 1 ]; then
			continue
		fi
		[ "$rc" -eq 0 ] || fail "$cmd $file: exit $rc: $(grep -v 'cannot read' err.txt | head -2)"
		[ -s out.txt ] || fail "$cmd $file: printed nothing"
	done
	run "report (text) $file" "$MAPSCOPE" report --children 0 -i "$f"
	[ -s out.txt ] || fail "report $file: printed nothing"
	if ! grep -q 'with a data address' out.txt; then
		[ "$want" = "-" ] || fail "report $file: no sample totals in the text report"
	elif grep -q '(0 with a data address)$' out.txt; then
		# No data address in the file at all: the report names the events it has.
		grep -q 'has no data addresses: its events' err.txt ||
			fail "report $file: no data addresses, and it does not say so"
	fi
done <table.txt
[ "$files" -ge 50 ] || fail "only $files corpus files in the README's table"
pass "$files corpus files: read as perf reads them, or refused with the reason"
