#!/usr/bin/env bash
# The reader's fast path for files in time order (mapscope record merges
# its rings and says so in the file) against the sort queue that every
# other file goes through (MAPSCOPE_SORT_QUEUE=1 forces it), and
# compressed data decompressed ahead on a thread against in turn
# (MAPSCOPE_READ_AHEAD=1 and 0), and the report's allocation sites and the
# code under each region (--children) named on a second thread as the
# recording is read against when each row is printed, or as each sample is
# charged (MAPSCOPE_NAMER=off), and the stream run ahead on a thread of
# its own against in turn (MAPSCOPE_STREAM_AHEAD=1 and 0), and the names
# kept on disk, read by a first run and a second, against none kept
# (MAPSCOPE_NAME_CACHE=off): every command's output must be
# byte-identical each way, on real recordings of
# python3, node, a JVM and headless chromium made here (each skipped with
# its reason where the runtime is missing), on the golden recordings, and
# on the perf.data corpus where it is present.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

# record NAME CMD...: NAME.data, or a line saying why not.
record() {
	local name=$1
	shift
	command -v "$1" >/dev/null || { echo "skip: $name: '$1' is not installed"; return 0; }
	timeout 120 "$MAPSCOPE" record -o "$name.data" -- "$@" >/dev/null 2>"$name.err" ||
		{ echo "skip: $name: the recording failed: $(tail -1 "$name.err")"; rm -f "$name.data"; }
}
record python3 /usr/bin/python3 -c 'import json; x = [bytearray(1 << 16) for i in range(500)]; json.dumps(list(range(10000)))'
record node node -e 'let a = []; for (let i = 0; i < 200; i++) a.push(new Float64Array(1 << 14).fill(i));'
if command -v javac >/dev/null; then
	printf 'public class Alloc { public static void main(String[] a) { long s = 0; for (int i = 0; i < 300; i++) { byte[] b = new byte[1 << 16]; b[i] = 1; s += b.length; } System.out.println(s); } }\n' >Alloc.java
	javac Alloc.java 2>/dev/null && record jvm java -cp "$TMP" Alloc
else
	echo "skip: jvm: javac is not installed"
fi
cat >page.html <<'HTML'
<html><body><script>
let a = []; for (let i = 0; i < 50; i++) a.push(new Float64Array(1 << 16).fill(i));
document.body.textContent = "n " + a.length;
</script></body></html>
HTML
record chromium chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/chr" --dump-dom "file://$TMP/page.html"

files=()
ordered=0
for f in *.data; do
	[ -e "$f" ] || continue
	files+=("$f")
	if grep -a 'records in time order' "$f" >/dev/null; then ordered=$((ordered + 1)); fi
done
[ "${#files[@]}" -gt 0 ] || skip "no runtime could be recorded here"
# Merged and said so, as a rule: a late record (rare) makes one file say nothing, never all.
[ "$ordered" -gt 0 ] || fail "none of ${files[*]} says its records are in time order"
for f in "$SRC_DIR"/tests/golden/*.data; do files+=("$f"); done
corpus="$SRC_DIR/../shared/perfdata-corpus"
if [ -d "$corpus" ]; then
	for f in $(ls "$corpus" | grep '\.data$' | head -20); do files+=("$corpus/$f"); done
fi

# out DIR F: every command's output on F into DIR (stdout, stderr and exit status).
out() {
	local dir=$1 f=$2 i=0 c
	mkdir -p "$dir"
	for c in "report" "report --children 0" "report --children 16" "report --children 0 --format json" \
		"report --format json" "report --format csv" "timeline" \
		"timeline --format json" "unmapped" "hugepages" "maps --at last" "heatmap" "heatmap --format svg" \
		"report --format html" "report --format pprof -o pprof.pb"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		timeout 120 "$MAPSCOPE" $c -i "$f" >"$dir/$i.out" 2>"$dir/$i.err" && echo 0 >"$dir/$i.rc" || echo $? >"$dir/$i.rc"
	done
	if [ -e pprof.pb ]; then mv pprof.pb "$dir/"; fi
}
checked=0
for f in "${files[@]}"; do
	MAPSCOPE_STREAM_AHEAD=1 out fast "$f"
	MAPSCOPE_SORT_QUEUE=1 out queue "$f"
	diff -r fast queue >diff.txt || fail "$f: the fast path's outputs differ from the sort queue's: $(head -5 diff.txt)"
	MAPSCOPE_READ_AHEAD=1 out ahead "$f"
	MAPSCOPE_READ_AHEAD=0 out turn "$f"
	diff -r ahead turn >diff.txt || fail "$f: decompressed ahead, the outputs differ from in turn: $(head -5 diff.txt)"
	MAPSCOPE_NAMER=off out later "$f"
	diff -r fast later >diff.txt || fail "$f: sites named on a second thread, the outputs differ from named later: $(head -5 diff.txt)"
	MAPSCOPE_STREAM_AHEAD=0 out streamturn "$f"
	diff -r fast streamturn >diff.txt || fail "$f: the stream run ahead on a thread, the outputs differ from in turn: $(head -5 diff.txt)"
	rm -rf "$TMP/names"
	MAPSCOPE_NAME_CACHE="$TMP/names" out cold "$f"
	MAPSCOPE_NAME_CACHE="$TMP/names" out warm "$f"
	MAPSCOPE_NAME_CACHE=off out nocache "$f"
	diff -r nocache cold >diff.txt || fail "$f: names kept, a first run's outputs differ from none kept: $(head -5 diff.txt)"
	diff -r nocache warm >diff.txt || fail "$f: names kept, a second run's outputs differ from none kept: $(head -5 diff.txt)"
	diff -r fast nocache >diff.txt || fail "$f: with no names kept, the outputs differ: $(head -5 diff.txt)"
	rm -rf fast queue ahead turn later streamturn cold warm nocache
	checked=$((checked + 1))
done
pass "$checked files ($ordered recorded here in time order): 15 commands' outputs byte-identical with and" \
	"without the sort queue, with compressed data decompressed ahead or in turn, with sites and code named" \
	"on a second thread or later, with the stream run ahead or in turn, and with names kept on disk" \
	"(a first run, a second) or none ($(nproc) CPUs)"
