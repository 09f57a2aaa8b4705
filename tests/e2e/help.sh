#!/usr/bin/env bash
# --help teaches, `help CMD` says the same, --version matches the build, and
# every option a command's --help lists is documented in its man page.
source "$(dirname "$0")/lib.sh"
cd "$TMP"

"$MAPSCOPE" --help >top.txt || fail "--help exited non-zero"
grep -q '^EXAMPLES' top.txt || fail "mapscope --help has no EXAMPLES"
version=$(sed -n 's/^project(mapscope VERSION \([0-9.]*\).*/\1/p' "$SRC_DIR/CMakeLists.txt")
[ "$("$MAPSCOPE" --version)" = "mapscope $version" ] || fail "--version is not 'mapscope $version'"

commands=$(sed -n 's/^  \([a-z]*\)  .*/\1/p' top.txt)
[ -n "$commands" ] || fail "mapscope --help lists no commands"
for cmd in $commands; do
	man="$SRC_DIR/docs/mapscope-$cmd.1"
	[ -f "$man" ] || fail "no man page docs/mapscope-$cmd.1"
	grep -q "mapscope-$cmd" "$SRC_DIR/CMakeLists.txt" || fail "docs/mapscope-$cmd.1 is not installed"
	"$MAPSCOPE" help "$cmd" >a.txt && "$MAPSCOPE" "$cmd" --help >b.txt || fail "$cmd: help exited non-zero"
	cmp -s a.txt b.txt || fail "'mapscope help $cmd' differs from 'mapscope $cmd --help'"
	grep -q '^EXAMPLES' a.txt || fail "$cmd --help has no EXAMPLES"
	for opt in $(sed -n 's/^ *\(-[a-z], \)\?\(--[a-z][a-z-]*\).*/\2/p' a.txt | sort -u); do
		[ "$opt" = --help ] && continue
		grep -q -- "${opt//-/\\\\-}" "$man" || fail "$cmd: option $opt is in --help but not in its man page"
	done
	grep -q "$cmd" "$SRC_DIR/README.md" || fail "the README does not mention '$cmd'"
	echo "ok: $cmd"
done
pass "help, version and man pages agree"
