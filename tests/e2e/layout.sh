#!/usr/bin/env bash
# The tree keeps the shape DESIGN.md and STYLE.md give it: no library file
# over 800 lines, no function over 80 (lib/ and src/), every library module
# with a unit test file of its own name, and the CLI free of perf records'
# raw offsets and of perf_event_open (only lib/kernel/ opens events), and
# no script piping into grep -q.
source "$(dirname "$0")/lib.sh"
: "${SRC_DIR:?run under ctest, or set SRC_DIR to the source tree}"
cd "$SRC_DIR"

bad=0
while read -r n f; do
	[ "$f" = total ] && continue
	echo "FAIL: $f has $n lines (over 800: split it along the jobs it does)"
	bad=1
done < <(find lib -name '*.[ch]' -print0 | xargs -0 wc -l | awk '$1 > 800')

# A function: a line that opens with '{' in column 0 after its signature,
# up to the '}' in column 0 that closes it.
long=$(for f in lib/*/*.c src/*.c; do
	awk -v f="$f" '/^\{/ { s = NR; name = prev }
		/^\}/ { if (s && NR - s - 1 > 80) printf "%s: %d lines: %s\n", f, NR - s - 1, name; s = 0 }
		{ prev = $0 }' "$f"
done)
[ -z "$long" ] || { echo "FAIL: functions over 80 lines:"; echo "$long"; bad=1; }

for f in lib/*/*.c; do
	b=$(basename "$f" .c)
	[ -f "tests/unit/test_$b.c" ] || { echo "FAIL: $f has no tests/unit/test_$b.c"; bad=1; }
done

if grep -n 'perf_event_open\|(const char \*)h *+\|h + 8\b' src/*.c src/*.h; then
	echo "FAIL: src/ opens perf events or reads perf records by offset (lib/ does that)"
	bad=1
fi
# Under pipefail, a pipe into grep -q fails when grep exits at its first match
# and cmd then dies of SIGPIPE: a test so written passes or fails by timing.
if grep -nE '[^|]\|[[:space:]]*grep[[:space:]]+-[a-zA-Z]*q' tests/e2e/*.sh scripts/*.sh bench/*.sh; then
	echo "FAIL: a pipe into grep -q under pipefail (write grep ... >/dev/null, which reads to the end)"
	bad=1
fi
# capstone is opened at record --prefetches' first scan (lib/symbols/prefetch.c): linked, its relocations
# cost every command's start about 8 ms and 370 page faults here.
if readelf -d "$MAPSCOPE" | grep libcapstone >/dev/null; then
	echo "FAIL: $MAPSCOPE needs libcapstone at start: open it at the first scan instead"
	bad=1
fi
[ $bad -eq 0 ] || exit 1
pass "$(ls lib/*/*.c | wc -l) modules, each under 800 lines with a test of its name; no function over 80 lines"
