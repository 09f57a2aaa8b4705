#!/usr/bin/env bash
# The decompressed copies of compressed debug files (mapscope(1),
# MAPSCOPE_DEBUG_CACHE). attrib's sites name libc's frames with file:line
# (main ← __libc_start_call_main (libc_start_call_main.h:58)), which comes
# from libc6-dbg's debug file, whose DWARF Debian compresses. A report with
# the cache off, with an empty cache (which makes the copy) and with the
# copy made: the same stdout, stderr and exit; the copy is named by libc's
# build-id, holds nothing compressed, and is used again, not made again.
# A damaged copy is made again; a cache folder others can write is not used.
source "$(dirname "$0")/lib.sh"
need_recording
command -v readelf >/dev/null || skip "readelf (binutils) is not installed"
libc=$(ldd "$WORKLOADS/attrib" | awk '/libc\.so/ { print $3 }')
id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -n "$id" ] && [ -e "$dbg" ] || skip "no separate debug file for $libc (Debian package libc6-dbg)"
readelf -SW "$dbg" | grep -E '\.debug_info .* C ' >/dev/null || skip "$dbg is not compressed: nothing to cache"
cd "$TMP"
export MAPSCOPE_NAME_CACHE=off   # names kept from an earlier run would leave libc's DWARF unread

ms_record rec.err --call-graph fp -o attrib.data -- "$WORKLOADS/attrib" >/dev/null
report() {  # report NAME CACHE: stdout, stderr and exit of a report with MAPSCOPE_DEBUG_CACHE=CACHE
	local rc=0
	MAPSCOPE_DEBUG_CACHE=$2 "$MAPSCOPE" report -i attrib.data >"$1.out" 2>"$1.err" || rc=$?
	echo "$rc" >"$1.rc"
}
same() {  # same A B: the two reports alike
	cmp -s "$1.out" "$2.out" && cmp -s "$1.err" "$2.err" && cmp -s "$1.rc" "$2.rc" ||
		fail "report $2 differs from report $1: $(diff "$1.out" "$2.out" | head -5)"
}
report off off
grep 'libc_start_call_main.h:' off.out >/dev/null || fail "the report names no libc frame with file:line: $(grep 'allocated by' off.out | head -3)"
report cold "$TMP/cache"
copy="$TMP/cache/$id.debug"
[ -f "$copy" ] || fail "no copy made at $copy: $(ls -la "$TMP/cache" 2>&1)"
readelf -SW "$copy" | grep -E '\.debug_[a-z_]+ .* C ' >/dev/null && fail "the copy still has compressed sections"
[ "$(readelf -n "$copy" | awk '/Build ID/ { print $3 }')" = "$id" ] || fail "the copy has another build-id"
[ "$(stat -c %a "$TMP/cache")" = 700 ] && [ "$(stat -c %a "$copy")" = 600 ] || fail "the cache is readable by others"
before=$(stat -c %i.%Y "$copy")
size=$(stat -c %s "$copy")
report warm "$TMP/cache"
[ "$(stat -c %i.%Y "$copy")" = "$before" ] || fail "the copy was made again though whole"
same off cold
same off warm
truncate -s -1 "$copy"                       # cut short: made again
report cut "$TMP/cache"
same off cut
[ "$(stat -c %s "$copy")" = "$size" ] || fail "a damaged copy was not made again"
mkdir -m 0777 "$TMP/loose"                   # a folder others write: not used
chmod 0777 "$TMP/loose"
report loose "$TMP/loose"
same off loose
[ -z "$(ls -A "$TMP/loose")" ] || fail "a copy was written where others can write: $(ls "$TMP/loose")"
pass "libc's debug file read from its copy: the same report cold, warm, off and from a damaged copy"
