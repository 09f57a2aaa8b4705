#!/usr/bin/env bash
# What report and heatmap write: a damaged input exits 1 in every format,
# pprof too; -o never writes through a symbolic link planted at its path
# (the link is refused and its target left alone), nor replaces a FIFO or
# a device there (written in place), and an ordinary -o still works, with
# a sensible mode.
source "$(dirname "$0")/lib.sh"
cd "$TMP"
golden="${SRC_DIR:-$E2E_DIR/../..}/tests/golden/mapscope-ops.data"
[ -f "$golden" ] || skip "no golden recording at $golden"

# Damaged copies: cut inside the data section, and a record's size flipped.
head -c 70000 "$golden" >cut.data
python3 - "$golden" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
off, size = struct.unpack_from('<QQ', b, 40)        # the data section
at, n = off, 0
while at < off + size and n < 500:                  # the 500th record's header
    at += struct.unpack_from('<H', b, at + 6)[0]
    n += 1
struct.pack_into('<H', b, at + 6, 0xfff8)           # its size now runs past the end
open('flip.data', 'wb').write(b)
PY
for f in cut.data flip.data; do
	codes=""
	for fmt in text json csv html pprof; do
		got=0
		"$MAPSCOPE" report -i $f --format $fmt -o out.$fmt >/dev/null 2>err.$fmt || got=$?
		codes="$codes $fmt=$got"
		[ $got -eq 1 ] || fail "report --format $fmt of damaged $f exited $got, expected 1 ($codes)"
		grep -q "is corrupt or truncated" err.$fmt || fail "report --format $fmt of $f did not say it is damaged: $(cat err.$fmt)"
	done
	[ -s out.pprof ] || fail "no profile of what $f holds before the damage"
	echo "ok: damaged $f:$codes"
done

# A link planted at the output path: refused, its target untouched, nothing left behind.
echo precious >target
ln -s target link
for c in "report" "report --format json" "report --format csv" "report --format html" \
	"report --format pprof" "heatmap" "heatmap --format svg"; do
	got=0
	# shellcheck disable=SC2086
	"$MAPSCOPE" $c -i "$golden" -o link >out.txt 2>err.txt || got=$?
	[ $got -eq 1 ] || fail "'$c -o link' exited $got, expected 1"
	grep -qx "mapscope: cannot write 'link': it is a symbolic link" err.txt ||
		fail "'$c -o link' said: $(cat err.txt)"
	[ "$(cat target)" = precious ] || fail "'$c -o link' wrote through the link"
	[ -L link ] || fail "'$c -o link' removed the link"
	[ "$(ls -A | grep -c tmp)" -eq 0 ] || fail "'$c -o link' left a temporary file: $(ls -A)"
	echo "ok: $c -o link refused"
done

# An ordinary -o: written whole, mode 0644 less the umask, over an older file too.
umask 027
"$MAPSCOPE" report -i "$golden" >want.txt
for i in 1 2; do
	"$MAPSCOPE" report -i "$golden" -o new.txt >out.txt || fail "report -o failed"
	cmp -s want.txt new.txt || fail "report -o wrote other bytes than stdout"
	[ "$(stat -c %a new.txt)" = 640 ] || fail "report -o made mode $(stat -c %a new.txt), expected 640"
	[ ! -s out.txt ] || fail "report -o also wrote to stdout"
done
"$MAPSCOPE" heatmap -i "$golden" -o heat.txt || fail "heatmap -o failed"
"$MAPSCOPE" heatmap -i "$golden" >want.txt
cmp -s want.txt heat.txt || fail "heatmap -o wrote other bytes than stdout"
"$MAPSCOPE" report -i "$golden" --format pprof -o p.pb || fail "report --format pprof -o failed"
[ "$(stat -c %a p.pb)" = 640 ] || fail "pprof -o made mode $(stat -c %a p.pb), expected 640"
[ "$(ls -A | grep -c tmp)" -eq 0 ] || fail "a temporary file was left: $(ls -A)"
# A FIFO or a device at the path is written in place, as a shell's > does: a
# file renamed over it would replace it (as root, -o /dev/null replaced
# /dev/null with a regular file).
"$MAPSCOPE" report -i "$golden" >want.txt
mkfifo out.fifo
timeout 20 cat out.fifo >from-fifo.txt &
reader=$!
timeout 20 "$MAPSCOPE" report -i "$golden" -o out.fifo || fail "report -o FIFO failed"
wait $reader || fail "the FIFO's reader got no end of file"
[ -p out.fifo ] || fail "report -o FIFO put a regular file in the FIFO's place"
cmp -s want.txt from-fifo.txt || fail "report -o FIFO wrote other bytes than stdout"
rm out.fifo
if [ "$(id -u)" -eq 0 ] && mknod null-dev c 1 3 2>/dev/null; then
	for c in "report" "report --format pprof" "heatmap --format svg"; do
		# shellcheck disable=SC2086
		"$MAPSCOPE" $c -i "$golden" -o null-dev || fail "$c -o a null device failed"
		[ -c null-dev ] || fail "$c -o a null device put a regular file in its place"
	done
	rm null-dev
	echo "ok: -o a character device writes it in place"
else
	echo "skip: -o a character device: not root, or no mknod here"
fi
[ "$(ls -A | grep -c tmp)" -eq 0 ] || fail "a temporary file was left: $(ls -A)"
# A directory that cannot be written: the error names the target, nothing is made.
got=0
"$MAPSCOPE" report -i "$golden" -o "$TMP/no/such/dir/x.txt" 2>err.txt || got=$?
[ $got -eq 1 ] && grep -q "cannot create '$TMP/no/such/dir/x.txt': No such file or directory" err.txt ||
	fail "-o into a missing directory: exit $got, $(cat err.txt)"
# stdout that cannot be written (a full disk): exit 1 and say so, never a cut output taken for whole.
if [ -w /dev/full ]; then
	for c in report "report --format json" "report --format csv" timeline hugepages unmapped "heatmap --format svg" \
		"maps --pid 15327 --at last"; do
		got=0
		# shellcheck disable=SC2086
		"$MAPSCOPE" $c -i "$golden" >/dev/full 2>err.txt || got=$?
		[ $got -eq 1 ] && grep -q "cannot write the output to stdout: No space left on device" err.txt ||
			fail "$c to /dev/full: exit $got, $(cat err.txt)"
	done
fi
pass "outputs are written whole, never through a link; damaged inputs exit 1 in every format; a failed write exits 1"
