#!/usr/bin/env bash
# libmapscope exports its public API and nothing else: the functions and
# objects its headers declare, the version script's list and the shared
# library's dynamic symbols are one set; each symbol carries the version
# node MAPSCOPE_0; and every function of watch.h, session.h and version.h
# has a man3 page.
source "$(dirname "$0")/lib.sh"
build=$(dirname "$MAPSCOPE")
so=$build/libmapscope.so
[ -f "$so" ] || fail "no shared library at $so"
cd "$TMP"

python3 "$E2E_DIR/public-api.py" "$SRC_DIR"/include/mapscope/*.h "$build/generated/mapscope/version.h" >headers.txt
[ "$(wc -l <headers.txt)" -gt 100 ] || fail "the headers declare only $(wc -l <headers.txt) functions: public-api.py misread them"
grep -qx ms_watch_open headers.txt && grep -qx ms_version headers.txt && grep -qx ms_report_analysis headers.txt ||
	fail "public-api.py missed a declaration it must see: $(head -3 headers.txt)"
grep -q ms_samples_addr headers.txt && fail "public-api.py counted a static inline function"
sed -n '/^global:/,/^local:/p' "$SRC_DIR/lib/libmapscope.map" | sed -n 's/^\t\(ms_[a-z0-9_]*\);$/\1/p' | sort >map.txt
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRV]$/ { print $3 }' | sed 's/@.*//' | sort -u >exported.txt

diff headers.txt map.txt >d1.txt || fail "lib/libmapscope.map differs from the headers (< headers, > map): $(head -10 d1.txt)"
diff headers.txt exported.txt >d2.txt || fail "the library's exports differ from the headers (< headers, > exported): $(head -10 d2.txt)"
if nm -D --defined-only --with-symbol-versions "$so" 2>/dev/null | grep ' ms_' | grep -v '@@MAPSCOPE_0' >/dev/null; then
	fail "an export without the MAPSCOPE_0 version: $(nm -D --defined-only --with-symbol-versions "$so" | grep ' ms_' | grep -v '@@MAPSCOPE_0' | head -3)"
fi
pass "$(wc -l <exported.txt) exports, each declared in a public header and listed in the version script"

python3 "$E2E_DIR/public-api.py" "$SRC_DIR/include/mapscope/watch.h" "$SRC_DIR/include/mapscope/session.h" \
	"$build/generated/mapscope/version.h" >documented.txt
while read -r f; do
	page=$SRC_DIR/docs/man3/$f.3
	[ -f "$page" ] || fail "no man3 page for $f (docs/man3/$f.3)"
	target=$page
	if grep -q '^\.so ' "$page"; then
		target=$SRC_DIR/docs/$(sed -n 's/^\.so //p' "$page")
		[ -f "$target" ] || fail "docs/man3/$f.3 points at a page that is not there: $(cat "$page")"
	fi
	grep -q "^\.BI \".*\b$f(" "$target" || fail "the man3 page of $f has no synopsis line for it"
	grep -q "^\.BR $f ()" "$target" || fail "the man3 page of $f does not describe it"
done <documented.txt
pass "$(wc -l <documented.txt) functions of watch.h, session.h and version.h, each with its man3 page"
