#!/usr/bin/env bash
# --help teaches, `help CMD` says the same, --version matches the build;
# each command's --help and its man page list the same options, and the
# command parses exactly those (its --help is printed from its table).
source "$(dirname "$0")/lib.sh"
cd "$TMP"

# The options a --help lists, a line each: "-i --input", "--pid".
help_options() {
	sed -n 's/^  \(-[a-zA-Z]\), \(--[a-z][a-z-]*\).*/\1 \2/p; s/^      \(--[a-z][a-z-]*\).*/\1/p' "$1" | sort -u
}

# The options a man page's OPTIONS section documents (its .TP tags), in the same form.
man_options() {
	awk '/^\.SH/ { opts = ($2 == "OPTIONS") } opts && prev == ".TP" { print } { prev = $0 }' "$1" |
		sed 's/\\-/-/g; s/\\f[BIRP]//g' |
		awk '{ s = ""; for (i = 2; i <= NF; i++) if ($i ~ /^--?[a-zA-Z]/) s = s (s ? " " : "") $i; print s }' |
		sort -u
}

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
	help_options a.txt >help-opts.txt
	man_options "$man" >man-opts.txt
	grep -q -- '^-h --help$' help-opts.txt || fail "$cmd --help does not list -h, --help"
	diff help-opts.txt man-opts.txt >opts.diff ||
		fail "$cmd: --help (<) and docs/mapscope-$cmd.1 (>) list different options: $(grep '^[<>]' opts.diff | tr '\n' ' ')"
	# Every option listed is parsed (a value missing, or another usage error, but never unknown).
	for opt in $(tr ' ' '\n' <help-opts.txt | grep -v -- '^-h$\|^--help$'); do
		timeout 20 "$MAPSCOPE" "$cmd" "$opt" </dev/null >/dev/null 2>err.txt || true
		! grep -q "unknown option" err.txt || fail "$cmd: $opt is in --help but not parsed: $(cat err.txt)"
	done
	expect_status 2 "$MAPSCOPE" "$cmd" --no-such-option 2>err.txt
	grep -q "unknown option '--no-such-option'" err.txt || fail "$cmd: an option in no table was taken"
	grep -q "$cmd" "$SRC_DIR/README.md" || fail "the README does not mention '$cmd'"
	echo "ok: $cmd"
done
pass "help, version and man pages agree"
