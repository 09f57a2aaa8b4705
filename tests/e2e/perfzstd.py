#!/usr/bin/env python3
"""The data of a perf.data file with its compressed records opened.

usage: perfzstd.py plain IN OUT   writes OUT: IN with the records of its data
                                  section as they were before compression
                                  (the COMPRESSED feature left out)
       perfzstd.py count IN       prints "COMPRESSED PLAIN": the data section's
                                  compressed records and the others (a pipe's
                                  records, in pipe mode)

perf record -z and mapscope record write one zstd stream, cut into
COMPRESSED (81) or COMPRESSED2 (83) records, and never end its frame, which
the zstd command will not read to its end: libzstd's streaming decoder is
called here (ctypes), as perf and mapscope call it.
As a module: records(raw) -> (data bytes with compressed records opened,
number of compressed records, number of others).
"""
import ctypes
import ctypes.util
import struct
import sys

COMPRESSED, COMPRESSED2, HEADER_COMPRESSED, TRACING_DATA = 81, 83, 27, 66


class _Buf(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


_zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
_zstd.ZSTD_createDStream.restype = ctypes.c_void_p
_zstd.ZSTD_initDStream.argtypes = [ctypes.c_void_p]
_zstd.ZSTD_initDStream.restype = ctypes.c_size_t
_zstd.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Buf), ctypes.POINTER(_Buf)]
_zstd.ZSTD_decompressStream.restype = ctypes.c_size_t
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_isError.restype = ctypes.c_uint
_zstd.ZSTD_freeDStream.argtypes = [ctypes.c_void_p]


class Decompressor:
    """One zstd stream, fed a piece at a time."""

    def __init__(self):
        self.d = _zstd.ZSTD_createDStream()
        _zstd.ZSTD_initDStream(self.d)
        self.out = ctypes.create_string_buffer(1 << 17)

    def feed(self, data):
        src = ctypes.create_string_buffer(bytes(data), len(data))
        inb = _Buf(ctypes.cast(src, ctypes.c_void_p), len(data), 0)
        parts = []
        while True:
            outb = _Buf(ctypes.cast(self.out, ctypes.c_void_p), len(self.out), 0)
            r = _zstd.ZSTD_decompressStream(self.d, ctypes.byref(outb), ctypes.byref(inb))
            if _zstd.ZSTD_isError(r):
                raise ValueError("the compressed data does not decompress")
            parts.append(self.out.raw[:outb.pos])
            if inb.pos == inb.size and outb.pos < outb.size:
                return b"".join(parts)

    def __del__(self):
        _zstd.ZSTD_freeDStream(self.d)


def header(raw):
    """(data offset, data size, feature bits) of a file."""
    if raw[:8] != b"PERFILE2":
        sys.exit("not a perf.data file in file mode")
    data_off, data_size = struct.unpack_from("<QQ", raw, 40)
    feats = struct.unpack_from("<4Q", raw, 72)
    return data_off, data_size, [i for i in range(256) if feats[i // 64] >> (i % 64) & 1]


def records(raw):
    if raw[:8] == b"PERFILE2" and struct.unpack_from("<Q", raw, 8)[0] == 16:
        p, end = 16, len(raw)                      # a pipe: records from the start
    else:
        data_off, data_size, _ = header(raw)
        p, end = data_off, data_off + data_size
    z, out, nz, nplain = Decompressor(), bytearray(), 0, 0
    while p + 8 <= end:
        typ, _, size = struct.unpack_from("<IHH", raw, p)
        if size < 8:
            raise ValueError(f"a record of size {size} at {p}")
        if typ == COMPRESSED:
            out += z.feed(raw[p + 8:p + size])
            nz += 1
        elif typ == COMPRESSED2:
            n, = struct.unpack_from("<Q", raw, p + 8)
            out += z.feed(raw[p + 16:p + 16 + n])
            nz += 1
        else:
            out += raw[p:p + size]
            nplain += 1
            if typ == TRACING_DATA:            # its data follows, outside its size
                p += struct.unpack_from("<I", raw, p + 8)[0]
        p += size
    return bytes(out), nz, nplain


def plain(raw):
    """The file as it would be had its data not been compressed."""
    data_off, data_size, bits = header(raw)
    data, _, _ = records(raw)
    old_end = data_off + data_size
    table = [struct.unpack_from("<QQ", raw, old_end + 16 * i) for i in range(len(bits))]
    late_from = old_end + 16 * len(bits)
    keep = [(b, s) for b, s in zip(bits, table) if b != HEADER_COMPRESSED]
    new_end = data_off + len(data)
    new_late = new_end + 16 * len(keep)
    # Sections before the data stay; those after the table move with it, in their order.
    late = sorted((s for _, s in keep if s[0] >= late_from), key=lambda s: s[0])
    moved, at, blobs = {}, new_late, []
    for off, size in late:
        moved[off] = at
        blobs.append(raw[off:off + size])
        at += size
    out = bytearray(raw[:data_off]) + data
    for _, (off, size) in keep:
        out += struct.pack("<QQ", moved.get(off, off), size)
    for b in blobs:
        out += b
    struct.pack_into("<Q", out, 48, len(data))
    feats = [0, 0, 0, 0]
    for b, _ in keep:
        feats[b // 64] |= 1 << (b % 64)
    struct.pack_into("<4Q", out, 72, *feats)
    return bytes(out)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "plain":
        raw = open(sys.argv[2], "rb").read()
        open(sys.argv[3], "wb").write(plain(raw))
    elif len(sys.argv) == 3 and sys.argv[1] == "count":
        _, nz, nplain = records(open(sys.argv[2], "rb").read())
        print(nz, nplain)
    else:
        sys.exit(__doc__)
