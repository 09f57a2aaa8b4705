#!/usr/bin/env bash
# A recording of a program with more binaries than a low open-file limit
# allows: each binary whose symbols are read keeps a descriptor (libdwfl
# holds it), so a replay raises its soft limit to the hard one, and reads
# every binary under a soft limit of 24 as it does without one.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
command -v python3 >/dev/null || skip "python3 is not installed (it is traced: it maps dozens of libraries)"
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 256 ] || skip "the hard open-file limit is $(ulimit -Hn): nothing to raise to"

# python3 itself, not a wrapper script in front of it (pyenv's shims are bash).
py=$(python3 -c 'import sys; print(sys.executable)')
ms_record rec.txt -o py.data -- "$py" -c 'import ctypes, decimal, hashlib, json, sqlite3, ssl, zlib; print(len(bytearray(1 << 22)))' >/dev/null
"$MAPSCOPE" report -i py.data >free.txt 2>free.err || fail "report exited $?: $(cat free.err)"
bins=$(grep -o ' /[^ ]*$' free.txt | sort -u | wc -l)
status=0
(ulimit -Sn 24 && exec "$MAPSCOPE" report -i py.data >low.txt 2>low.err) || status=$?
[ "$status" -eq 0 ] || fail "report under a soft limit of 24 exited $status: $(head -3 low.err)"
cmp -s free.txt low.txt || fail "report differs under a soft limit of 24: $(diff free.txt low.txt | head -4)"
cmp -s free.err low.err || fail "report warns under a soft limit of 24: $(head -3 low.err)"
pass "python3 ($bins binaries with samples): the same report under a soft open-file limit of 24"
