#!/usr/bin/env bash
# The code under each region told apart as its binary's symbol table tells
# it. Two local functions of one name (touch) in two files of a program,
# each touching half of one mapping: a linker may keep their names as two
# strings (lld -O0) or share one (GNU ld). Made here both ways from one
# build, the second symbol's name pointed at another copy of the same text
# (the tail of ytouch, the first's at xtouch's): report --children lists
# two children named touch where the table has two strings, one where it
# has one, with the code named beside the replay and at once
# (MAPSCOPE_NAMER=off) alike.
source "$(dirname "$0")/lib.sh"
need_recording
command -v gcc >/dev/null || skip "gcc is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
cd "$TMP"
export MAPSCOPE_NAME_CACHE="$TMP/names"

for f in x y; do
	cat >"$f.c" <<C
static __attribute__((noinline)) void touch(volatile char *p, long n)
{
	for (long i = 0; i < n; i += 4096)
		p[i] = 1;
}
void ${f}touch(volatile char *p, long n) { touch(p, n); }
C
done
cat >main.c <<'C'
#include <sys/mman.h>
void xtouch(volatile char *p, long n);
void ytouch(volatile char *p, long n);
int main(void)
{
	long n = 64L << 12;
	char *p = mmap(0, 2 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	xtouch(p, n);
	ytouch(p + n, n);
	return 0;
}
C
gcc -O1 -fno-inline -o prog x.c y.c main.c || fail "cannot build the program"
ms_record rec.err -o t.data -- ./prog

# names SHARED: the two touch symbols' names made two strings (0) or one (1), in place.
names() {
	python3 - "$1" <<'PY' || fail "cannot point the symbols' names"
import struct, sys
shared = sys.argv[1] == "1"
b = bytearray(open("prog", "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum = struct.unpack_from("<HH", b, 0x3a)
secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
symtab = next(s for s in secs if s[1] == 2)                      # SHT_SYMTAB
strtab = secs[symtab[6]]
strs = bytes(b[strtab[4]:strtab[4] + strtab[5]])
touch = [symtab[4] + i * 24 for i in range(symtab[5] // 24)
         if strs[struct.unpack_from("<I", b, symtab[4] + i * 24)[0]:].startswith(b"touch\0")
         and b[symtab[4] + i * 24 + 4] & 0xf == 2]                 # STT_FUNC
x, y = strs.index(b"\0xtouch\0") + 2, strs.index(b"\0ytouch\0") + 2
if len(touch) != 2:
    sys.exit("%d symbols named touch" % len(touch))
struct.pack_into("<I", b, touch[0], x)
struct.pack_into("<I", b, touch[1], x if shared else y)
open("prog", "wb").write(b)
PY
}
# children NAME: report --children 16's lines naming touch, with the namer (NAME.on) and without (NAME.off).
children() {
	"$MAPSCOPE" report -i t.data --children 16 >"$1.out" 2>&1 || fail "report failed: $(head -3 "$1.out")"
	MAPSCOPE_NAMER=off "$MAPSCOPE" report -i t.data --children 16 >"$1.offout" 2>&1 || fail "report failed"
	grep -E '%  *touch  *\(' "$1.out" >"$1.on" || true
	grep -E '%  *touch  *\(' "$1.offout" >"$1.off" || true
	cmp -s "$1.out" "$1.offout" ||
		fail "$1: the report differs, the code named beside the replay and at once: $(diff "$1.out" "$1.offout" | head -4)"
}
names 0
children two
[ "$(wc -l <two.on)" = 2 ] || fail "two strings named touch: $(wc -l <two.on) children, want 2: $(cat two.out)"
names 1
children one
[ "$(wc -l <one.on)" = 1 ] || fail "one string named touch: $(wc -l <one.on) children, want 1: $(cat one.out)"
pass "two symbols of one name are two children where their strings are two, one where they share one"
