#!/usr/bin/env bash
# What report writes: a damaged input exits 1 in every format, pprof too.
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

pass "damaged inputs exit 1 in every format"
