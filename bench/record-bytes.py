#!/usr/bin/env python3
"""Bytes of a perf.data file's data section by record kind (samples by event).

usage: bench/record-bytes.py FILE [N]: the total, samples, bytes per sample and
per page-fault sample, and the N largest kinds (default 14). File mode only.
A compressed file (perf record -z, mapscope record) is also given in the
file's own bytes per sample; its kinds are counted in the records it holds,
before compression.
"""
import collections
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'e2e'))
import perfzstd  # noqa: E402

f = sys.argv[1]
b = open(f, 'rb').read()
file_data = struct.unpack_from('<Q', b, 48)[0]
records, ncompressed, _ = perfzstd.records(b)
_, _, attr_size = struct.unpack_from('<8sQQ', b, 0)
ao, asz, do, dsz = struct.unpack_from('<QQQQ', b, 24)
names = subprocess.run(['perf', 'evlist', '-i', f], capture_output=True, text=True).stdout.split('\n')
names = [n for n in names if n and not n.startswith('#')]
idmap = {}
for i in range(asz // attr_size):
    off = ao + i * attr_size
    io, isz = struct.unpack_from('<QQ', b, off + attr_size - 16)
    for k in range(isz // 8):
        idmap[struct.unpack_from('<Q', b, io + 8 * k)[0]] = names[i] if i < len(names) else str(i)
bytes_ = collections.Counter(); cnt = collections.Counter()
b = records; p = 0; end = len(records)
tnames = {1:'MMAP',3:'COMM',4:'EXIT',5:'THROTTLE',7:'FORK',9:'SAMPLE',10:'MMAP2',2:'LOST',68:'FINISHED_ROUND'}
while p < end:
    t, _, size = struct.unpack_from('<IHH', b, p)
    if size == 0:
        break
    if t == 9:
        ident = struct.unpack_from('<Q', b, p + 8)[0]
        k = 'sample ' + (names[0] if len(names) == 1 else idmap.get(ident, '?'))
    else:
        k = tnames.get(t, str(t))
    bytes_[k] += size; cnt[k] += 1
    p += size
tot = sum(bytes_.values())
ns = sum(v for k, v in cnt.items() if k.startswith('sample'))
nf = sum(v for k, v in cnt.items() if k.startswith('sample page-faults'))
print(f"{f}: {tot} data bytes, {ns} samples, {tot / max(ns, 1):.1f} bytes per sample, "
      f"{tot / max(nf, 1):.1f} per page-fault sample ({nf})")
if ncompressed:
    print(f"  compressed: {file_data} bytes in the file, {file_data / max(ns, 1):.1f} bytes per sample "
          f"({tot / max(file_data, 1):.1f}x), {os.path.getsize(f)} bytes with the headers")
for k, v in bytes_.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 14):
    print(f"  {k:40s} {cnt[k]:8d} recs {v:10d} B  avg {v/cnt[k]:.0f}")
