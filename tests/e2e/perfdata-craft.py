#!/usr/bin/env python3
"""Makes hostile perf.data files out of a good one, for the tests.

usage: perfdata-craft.py KIND IN OUT [ARG]

KIND is one of:
  lost N          a LOST record of N records after the first user MMAP2
  lose-map        the user MMAP2 that the most samples fall in replaced by a
                  LOST record of one record, as when the kernel loses it
  lose-map-as PID as lose-map, the LOST record naming process PID, as the
                  kernel names whichever task writes next on that CPU
  unknown-type    the first sample's type made 61, which no one defines
  retype TYPE     the first sample's type made TYPE, as a flipped byte does
  mmap-no-nul     the first user MMAP2's name filled with 'B', no NUL
  comm-no-nul     the first COMM's name filled with 'C', no NUL
  swallow TYPE    the first record of TYPE (10: a user MMAP2, 9: a sample)
                  grown over the records after it, as a damaged size does:
                  an MMAP2 to more bytes than any has, a sample to more than
                  its event's; it ends where one of them ends
  zstd-ok         the records after the first ten compressed (COMPRESSED2,
                  a zstd frame each, as perf record -z writes them)
  zstd-short      as zstd-ok, the first compressed record's data size 16 short
  zstd-cut        as zstd-ok, the last compressed record's data cut by 8 bytes
  zstd-bomb MIB   a compressed record that expands to MIB MiB of records
  many-maps N     IN's first COMM, then N mappings of one process, each
                  touched once: N MMAP2 and N samples (ARG: N)
  cut-between     the data cut where its middle record ends: a whole, shorter
                  recording but for the SAMPLE_TIME it was closed with
  no-sample-time  the whole file, its SAMPLE_TIME's times ~0, as perf writes
                  them where its samples have no TIME (--no-timestamp)
  flip SEED       SEED picks 1 to 8 random byte flips in the data, or a cut
  flips N         N files OUT.0 ... OUT.N-1, each as flip with its index
The crafted inputs live here, as a script, rather than as checked-in
binaries. IN is a file of mapscope record (its first event the page
faults, with sample_id_all). Needs the zstd command for the zstd kinds.
"""
import random
import struct
import subprocess
import sys

SAMPLE, MMAP2, COMM, LOST, ROUND, COMPRESSED2 = 9, 10, 3, 2, 68, 83
HEADER_SAMPLE_TIME = 21
# sample_type bits
IP, TID, TIME, ADDR, ID, CPU, STREAM_ID, IDENTIFIER = 1, 2, 4, 8, 64, 128, 512, 1 << 16


class PerfData:
    def __init__(self, raw):
        self.raw = raw
        magic, _, attr_size = struct.unpack_from("<8sQQ", raw, 0)
        if magic != b"PERFILE2":
            sys.exit("not a perf.data file")
        self.attr_off, self.attr_len, self.data_off, self.data_len = struct.unpack_from("<QQQQ", raw, 24)
        stype, = struct.unpack_from("<Q", raw, self.attr_off + 24)
        flags, = struct.unpack_from("<Q", raw, self.attr_off + 40)
        self.stype = stype
        sid_all = (flags >> 18) & 1
        self.trailer = 8 * bin(stype & (TID | TIME | ID | STREAM_ID | CPU | IDENTIFIER)).count("1") if sid_all else 0
        self.recs = []
        p, end = self.data_off, self.data_off + self.data_len
        while p + 8 <= end:
            typ, misc, size = struct.unpack_from("<IHH", raw, p)
            if size < 8:
                break
            self.recs.append(bytearray(raw[p:p + size]))
            p += size

    def first(self, typ, pred=lambda r: True):
        for i, r in enumerate(self.recs):
            if struct.unpack_from("<I", r, 0)[0] == typ and pred(r):
                return i
        sys.exit(f"no record of type {typ} in the input")

    def sample_time_off(self):
        """TIME's offset in a sample of the first event."""
        return 8 + 8 * bin(self.stype & (IDENTIFIER | IP | TID)).count("1")

    def write(self, path, data):
        """The input with its data section replaced by data; what follows it moves."""
        raw, old_end = self.raw, self.data_off + self.data_len
        delta = len(data) - self.data_len
        head = bytearray(raw[:self.data_off])
        struct.pack_into("<Q", head, 48, len(data))
        tail = bytearray(raw[old_end:])
        nfeat = sum(bin(b).count("1") for b in raw[72:104])
        for k in range(nfeat):      # the feature table, right after the data
            off, size = struct.unpack_from("<QQ", tail, 16 * k)
            if off >= old_end:
                struct.pack_into("<QQ", tail, 16 * k, off + delta, size)
        with open(path, "wb") as f:
            f.write(head + data + tail)


def user_mmap2(r):
    pid, = struct.unpack_from("<I", r, 8)
    return pid not in (0, 0xffffffff) and len(r) - 8 - 64 - 40 >= 16


def compress(data):
    return subprocess.run(["zstd", "-q", "-c", "-1"], input=data, stdout=subprocess.PIPE, check=True).stdout


def compressed_record(z, short=0):
    size = (8 + 8 + len(z) + 7) & ~7
    return struct.pack("<IHHQ", COMPRESSED2, 0, size, len(z) - short) + z + b"\0" * (size - 16 - len(z))


def zstd_records(pd, kind):
    plain = b"".join(pd.recs[:10])
    rest, chunks, cur = pd.recs[10:], [], b""
    for r in rest:              # about 40 KiB of records a frame: the compressed record fits its u16 size
        if len(cur) + len(r) > 40960:
            chunks.append(cur)
            cur = b""
        cur += bytes(r)
    chunks.append(cur)
    zs = [compress(c) for c in chunks if c]
    if kind == "zstd-cut":
        zs[-1] = zs[-1][:-8]
    out = [compressed_record(z, 16 if kind == "zstd-short" and i == 0 else 0) for i, z in enumerate(zs)]
    return plain + b"".join(out)


def bomb(pd, mib):
    rnd = struct.pack("<IHH", ROUND, 0, 8)
    p = subprocess.Popen(["zstd", "-q", "-c", "-19"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    block = rnd * (1 << 17)             # 1 MiB of FINISHED_ROUND records
    import threading
    out = []
    t = threading.Thread(target=lambda: out.append(p.stdout.read()))
    t.start()
    for _ in range(mib):
        p.stdin.write(block)
    p.stdin.close()
    t.join()
    p.wait()
    z = out[0]
    if len(z) > 65535 - 16:
        sys.exit(f"the bomb compresses to {len(z)} bytes, more than a record holds: ask for fewer MiB")
    return b"".join(pd.recs) + compressed_record(z)


def many_maps(pd, n):
    comm = pd.recs[pd.first(COMM)]
    mm = pd.recs[pd.first(MMAP2, user_mmap2)]
    smp = pd.recs[pd.first(SAMPLE, lambda r: len(r) > pd.sample_time_off() + 16)]
    pid, tid = struct.unpack_from("<II", comm, 8)
    t_at, a_at = pd.sample_time_off(), pd.sample_time_off() + 8
    t0, = struct.unpack_from("<Q", smp, t_at)
    name = b"//anon".ljust(8, b"\0")
    body = struct.pack("<IIQQQIIQQII", pid, tid, 0, 4096, 0, 0, 0, 0, 0, 3, 0x22) + name
    trailer = bytearray(mm[len(mm) - pd.trailer:])
    out = [bytes(comm)]
    base = 0x100000000
    for i in range(n):
        t = t0 + 2 * i
        m = bytearray(struct.pack("<IHH", MMAP2, 0x2, 8 + len(body) + len(trailer)) + body + trailer)
        struct.pack_into("<Q", m, 8 + 8, base + i * 0x2000)
        struct.pack_into("<II", m, len(m) - pd.trailer, pid, tid)
        struct.pack_into("<Q", m, len(m) - pd.trailer + 8, t)
        s = bytearray(smp)
        struct.pack_into("<II", s, t_at - 8, pid, tid)
        struct.pack_into("<QQ", s, t_at, t + 1, base + i * 0x2000 + 0x10)
        out += [bytes(m), bytes(s)]
        if i % 4096 == 4095:
            out.append(struct.pack("<IHH", ROUND, 0, 8))
    return b"".join(out)


def swallow(pd, typ):
    i = pd.first(typ, user_mmap2 if typ == MMAP2 else lambda r: True)
    need = 8 + 64 + 4096 + 48 + 8 if typ == MMAP2 else len(pd.recs[i]) + 1
    j, size = i + 1, len(pd.recs[i])
    while size < need:
        size += len(pd.recs[j])
        j += 1
    grown = bytearray(b"".join(bytes(r) for r in pd.recs[i:j]))
    struct.pack_into("<H", grown, 6, size)
    pd.recs[i:j] = [grown]


def lose_map(pd, as_pid=0):
    a_at = pd.sample_time_off() + 8
    addrs = [struct.unpack_from("<Q", r, a_at)[0] for r in pd.recs
             if struct.unpack_from("<I", r, 0)[0] == SAMPLE and len(r) >= a_at + 8]
    best, most = None, 0
    for i, r in enumerate(pd.recs):
        if struct.unpack_from("<I", r, 0)[0] != MMAP2 or not user_mmap2(r):
            continue
        start, length = struct.unpack_from("<QQ", r, 16)
        n = sum(start <= a < start + length for a in addrs)
        if n > most:
            best, most = i, n
    if best is None:
        sys.exit("no map holds a sample")
    r = pd.recs[best]
    trailer = r[len(r) - pd.trailer:]
    if as_pid:
        trailer = bytearray(trailer)
        struct.pack_into("<II", trailer, 0, as_pid, as_pid)
    pd.recs[best] = struct.pack("<IHHQQ", LOST, 0, 24 + len(trailer), 0, 1) + trailer


def no_sample_time(pd):
    """SAMPLE_TIME's first and last sample times made ~0, where the file has the feature."""
    feats = int.from_bytes(pd.raw[72:104], "little")
    if not feats >> HEADER_SAMPLE_TIME & 1:
        sys.exit("the input has no SAMPLE_TIME")
    k = bin(feats & ((1 << HEADER_SAMPLE_TIME) - 1)).count("1")
    raw = bytearray(pd.raw)
    off, size = struct.unpack_from("<QQ", raw, pd.data_off + pd.data_len + 16 * k)
    if size < 16:
        sys.exit("SAMPLE_TIME shorter than its two times")
    raw[off:off + 16] = b"\xff" * 16
    pd.raw = bytes(raw)


def flip(pd, seed):
    rnd = random.Random(seed)
    data = bytearray(b"".join(pd.recs))
    if rnd.random() < 0.15:             # cut short, inside a record or between two
        return bytes(data[:rnd.randrange(8, len(data))])
    for _ in range(rnd.randint(1, 8)):
        i = rnd.randrange(len(data))
        data[i] ^= 1 << rnd.randrange(8) if rnd.random() < 0.7 else rnd.randrange(1, 256)
    return bytes(data)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    kind, src, dst = sys.argv[1:4]
    arg = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    pd = PerfData(open(src, "rb").read())
    if kind == "lost":
        i = pd.first(MMAP2, user_mmap2)
        r = pd.recs[i]
        trailer = r[len(r) - pd.trailer:]
        pd.recs.insert(i + 1, struct.pack("<IHHQQ", LOST, 0, 24 + len(trailer), 0, arg or 1000) + trailer)
    elif kind == "lose-map":
        lose_map(pd)
    elif kind == "lose-map-as":
        lose_map(pd, arg)
    elif kind in ("unknown-type", "retype"):
        struct.pack_into("<I", pd.recs[pd.first(SAMPLE)], 0, arg if kind == "retype" else 61)
    elif kind == "mmap-no-nul":
        r = pd.recs[pd.first(MMAP2, user_mmap2)]
        r[8 + 64:len(r) - pd.trailer] = b"B" * (len(r) - pd.trailer - 8 - 64)
    elif kind == "swallow":
        swallow(pd, arg)
    elif kind == "comm-no-nul":
        r = pd.recs[pd.first(COMM)]
        r[16:len(r) - pd.trailer] = b"C" * (len(r) - pd.trailer - 16)
    elif kind in ("zstd-ok", "zstd-short", "zstd-cut"):
        pd.write(dst, zstd_records(pd, kind))
        return
    elif kind == "zstd-bomb":
        pd.write(dst, bomb(pd, arg or 256))
        return
    elif kind == "many-maps":
        pd.write(dst, many_maps(pd, arg or 1000))
        return
    elif kind == "cut-between":
        pd.write(dst, b"".join(bytes(r) for r in pd.recs[:len(pd.recs) // 2]))
        return
    elif kind == "no-sample-time":
        no_sample_time(pd)
    elif kind == "flip":
        pd.write(dst, flip(pd, arg))
        return
    elif kind == "flips":
        for i in range(arg):
            pd.write(f"{dst}.{i}", flip(pd, i))
        return
    else:
        sys.exit(f"unknown kind '{kind}'\n{__doc__}")
    pd.write(dst, b"".join(bytes(r) for r in pd.recs))


if __name__ == "__main__":
    main()
