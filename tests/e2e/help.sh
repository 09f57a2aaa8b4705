#!/usr/bin/env bash
# --help teaches, `help CMD` says the same, --version matches the build, and
# every option --help lists is documented in the man page.
source "$(dirname "$0")/lib.sh"
cd "$TMP"

"$MAPSCOPE" --help >top.txt || fail "--help exited non-zero"
grep -q '^EXAMPLES' top.txt || fail "mapscope --help has no EXAMPLES"
"$MAPSCOPE" help record >a.txt && "$MAPSCOPE" record --help >b.txt || fail "help exited non-zero"
cmp -s a.txt b.txt || fail "'mapscope help record' differs from 'mapscope record --help'"
grep -q '^EXAMPLES' a.txt || fail "record --help has no EXAMPLES"
version=$(sed -n 's/^project(mapscope VERSION \([0-9.]*\).*/\1/p' "$SRC_DIR/CMakeLists.txt")
[ "$("$MAPSCOPE" --version)" = "mapscope $version" ] || fail "--version is not 'mapscope $version'"

for opt in $(grep -oE -- '--[a-z][a-z-]+' a.txt | sort -u); do
	[ "$opt" = --help ] && continue
	grep -q -- "${opt//-/\\\\-}" "$SRC_DIR/docs/mapscope-record.1" ||
		fail "option $opt is in --help but not in docs/mapscope-record.1"
done
for cmd in $(sed -n 's/^  \([a-z]*\)  .*/\1/p' top.txt); do
	[ -f "$SRC_DIR/docs/mapscope-$cmd.1" ] || fail "no man page docs/mapscope-$cmd.1"
done
pass "help, version and man pages agree"
