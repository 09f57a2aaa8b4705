#!/usr/bin/env bash
# The namer's answers kept on disk (MAPSCOPE_NAME_CACHE): a report run again
# gives the same bytes as with the cache off, in every format, and writes
# nothing to the cache (every answer came from it); a debug file that
# appears after the answers were kept is read (the site gets its file:line),
# as with the cache off; a damaged cache file is taken for none and written
# again whole. The workload is the named one, stripped, its debug file
# found by .gnu_debuglink beside it.
source "$(dirname "$0")/lib.sh"
need_recording
command -v objcopy >/dev/null || skip "objcopy is not installed (Debian package binutils)"
cd "$TMP"
export MAPSCOPE_NAME_CACHE="$TMP/names"

cp "$WORKLOADS/named" prog
objcopy --only-keep-debug prog prog.debug && strip --strip-all prog && objcopy --add-gnu-debuglink=prog.debug prog ||
	fail "cannot strip the workload"
mv prog.debug away.debug
ms_record rec.err --call-graph fp -o n.data -- ./prog

# run NAME ARGS...: report ARGS of n.data into NAME.out (stdout and stderr), the cache on.
run() {
	local name=$1
	shift
	"$MAPSCOPE" report -i n.data "$@" >"$name.out" 2>&1 || fail "report $* exited $?: $(head -3 "$name.out")"
}
# same_as_off NAME ARGS...: NAME.out is what report ARGS gives with the cache off.
same_as_off() {
	local name=$1
	shift
	MAPSCOPE_NAME_CACHE=off "$MAPSCOPE" report -i n.data "$@" >"$name.off" 2>&1 || fail "report $* (cache off) failed"
	cmp -s "$name.out" "$name.off" || fail "report $* differs with the cache on ($name.out) and off ($name.off)"
}
# sites: the allocation sites regions.out (report --format json) names, for a message.
sites() {
	grep -o '"alloc": "[^"]*"' regions.out | sort -u | head -3 | tr '\n' ' '
}

# The namer runs where a second CPU and 4096 descriptors are there (namer.c, it_pays()): the cache is its.
[ "$(nproc)" -gt 1 ] || skip "one CPU: the report names on its own thread, and keeps no names"
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge 4096 ] ||
	skip "fewer than 4096 descriptors allowed (ulimit -n): the report names on its own thread, and keeps no names"
unset MAPSCOPE_NAMER
formats=("--format json" "--children 0" "--format csv" "--sort symbol")
run regions --format json
files=("$MAPSCOPE_NAME_CACHE"/*.names)
[ -e "${files[0]}" ] || fail "a report kept no names in $MAPSCOPE_NAME_CACHE"
grep -q 'make_buffer (named.c:' regions.out && fail "the site has a line with no debug file: the test proves nothing"
for f in "${formats[@]}"; do
	# shellcheck disable=SC2086 # each entry is its options
	run cold $f
	stat -c '%i %Y' "$MAPSCOPE_NAME_CACHE"/*.names >before.txt
	# shellcheck disable=SC2086
	run warm $f
	stat -c '%i %Y' "$MAPSCOPE_NAME_CACHE"/*.names >after.txt
	cmp -s cold.out warm.out || fail "report $f: a second run differs from the first"
	cmp -s before.txt after.txt || fail "report $f: a second run wrote the cache again (an answer not found in it)"
	# shellcheck disable=SC2086
	same_as_off warm $f
done
pass "a second report gives the same bytes as the first and as with the cache off, in ${#formats[@]} forms, and writes nothing to the cache"

"$MAPSCOPE" report -i n.data --format pprof -o cold.pb.gz 2>/dev/null || fail "pprof failed"
"$MAPSCOPE" report -i n.data --format pprof -o warm.pb.gz 2>/dev/null || fail "pprof failed"
MAPSCOPE_NAME_CACHE=off "$MAPSCOPE" report -i n.data --format pprof -o off.pb.gz 2>/dev/null || fail "pprof failed"
cmp -s warm.pb.gz off.pb.gz && cmp -s cold.pb.gz warm.pb.gz || fail "the profile differs with the cache on and off"
pass "the profile's code, named from the cache, is the same bytes"

mv away.debug prog.debug
run regions --format json
grep -q 'make_buffer (named.c:' regions.out || fail "the debug file put beside the binary was not read: $(sites)"
same_as_off regions --format json
pass "a debug file that appears later is read: the site has its file:line, as with the cache off"

export MAPSCOPE_NAME_CACHE="$TMP/names2"      # a folder with the JSON report's file alone
run regions --format json
files=("$MAPSCOPE_NAME_CACHE"/*.names)
[ ${#files[@]} -eq 1 ] || fail "one report made ${#files[@]} cache files"
head -c 20 "${files[0]}" >cut && mv cut "${files[0]}"
run regions --format json
same_as_off regions --format json
[ "$(stat -c %s "${files[0]}")" -gt 20 ] || fail "the damaged cache file was not written again"
stat -c '%i %Y' "${files[0]}" >before.txt
run again --format json
stat -c '%i %Y' "${files[0]}" >after.txt
cmp -s regions.out again.out || fail "the cache written again answers otherwise"
cmp -s before.txt after.txt || fail "the cache written again lacks answers: the next run wrote it once more"
pass "a damaged cache file is taken for none, and written again whole"
