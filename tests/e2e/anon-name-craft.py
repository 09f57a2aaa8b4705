#!/usr/bin/env python3
"""prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) on a kernel that has it, from a
recording of one that has not (CONFIG_ANON_VMA_NAME off: every call fails
with -EINVAL). The recording of rules/anon-name holds each call's entry,
the name record read (mapscope:user_string) and the exit's -EINVAL; this
writes a copy whose exits say what a kernel with the option returns (0,
and -ENOMEM for the call over a hole), then checks `mapscope maps --at`
after each call against the VMAs and [anon:NAME]s such a kernel makes of
the workload's 8 pages (mm/vma.c: split at the range's ends, merged with
neighbours whose names match).

usage: anon-name-craft.py MAPSCOPE RECORDING WORKLOAD_STDOUT
"""
import struct
import subprocess
import sys

P = 4096
HEADER = struct.Struct("<8sQQQQQQQQQ")  # magic, size, attr_size, attrs, data, event_types


def bits(t):
    names = ["IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD", "STREAM_ID", "RAW"]
    return {n: bool(t & (1 << i)) for i, n in enumerate(names)} | {"IDENTIFIER": bool(t & (1 << 16))}


def evsels(buf):
    """(sample_type, ids, config) of each attr, and the data section."""
    magic, size, attr_size, a_off, a_size, d_off, d_size = struct.unpack_from("<8sQQQQQQ", buf, 0)
    out = []
    for k in range(a_size // attr_size):
        at = a_off + k * attr_size
        typ, _, config, _, stype = struct.unpack_from("<IIQQQ", buf, at)
        ids_off, ids_size = struct.unpack_from("<QQ", buf, at + attr_size - 16)
        ids = struct.unpack_from(f"<{ids_size // 8}Q", buf, ids_off)
        out.append((typ, config, stype, set(ids)))
    return out, d_off, d_size


def raw_at(stype, rec, at):
    """The offset of a sample's RAW size word (no CALLCHAIN in these tracepoints' samples)."""
    b = bits(stype)
    off = at + 8 + 8 * b["IDENTIFIER"] + 8 * b["IP"] + 8 * b["TID"] + 8 * b["TIME"] + 8 * b["ADDR"]
    off += 8 * (b["ID"] + b["STREAM_ID"] + b["CPU"] + b["PERIOD"])
    assert not b["CALLCHAIN"] and not b["READ"]
    return off


def tp_ids(mapscope, data):
    """The tracepoint config of sys_exit_prctl and of mapscope:user_string, from perf's evlist."""
    out = subprocess.run(["perf", "evlist", "-v", "-i", data], capture_output=True, text=True).stdout
    ids = {}
    for line in out.splitlines():
        name = line.split(":", 2)
        for want in ("syscalls:sys_exit_prctl", "mapscope:user_string"):
            if line.startswith(want + ":"):
                cfg = [p for p in line.split(", ") if p.startswith("config: ")][0]
                ids[want] = int(cfg.split(": ")[1], 0)
    return ids


def craft(mapscope, data, crafted):
    buf = bytearray(open(data, "rb").read())
    ev, d_off, d_size = evsels(buf)
    cfg = tp_ids(mapscope, data)
    exits = [e for e in ev if e[0] == 2 and e[1] == cfg["syscalls:sys_exit_prctl"]][0]
    names = [e for e in ev if e[0] == 2 and e[1] == cfg.get("mapscope:user_string", -1)]
    at, end, n, strings = d_off, d_off + d_size, 0, []
    results = {0: 0, 1: 0, 2: 0, 3: 0, 4: -12}     # the fifth call runs over a hole
    while at < end:
        typ, misc, size = struct.unpack_from("<IHH", buf, at)
        if typ == 9:
            ident = struct.unpack_from("<Q", buf, at + 8)[0]
            if ident in exits[3]:
                raw = raw_at(exits[2], buf, at) + 4
                ret = struct.unpack_from("<q", buf, raw + 16)[0]
                assert ret == -22 or ret == 0, f"prctl returned {ret}"
                struct.pack_into("<q", buf, raw + 16, results.get(n, 0))
                n += 1
            elif names and ident in names[0][3]:
                raw = raw_at(names[0][2], buf, at) + 4
                loc = struct.unpack_from("<I", buf, raw + 12)[0]
                strings.append(bytes(buf[raw + (loc & 0xffff):raw + (loc & 0xffff) + (loc >> 16) - 1]).decode())
        at += size
    open(crafted, "wb").write(buf)
    return n, strings


def expected(step, a):
    """Page -> name (None: no name; missing: unmapped) of the 8 pages after each step."""
    pages = {i: None for i in range(8)}
    steps = ["mapped", "named-middle", "named-next", "named-stack", "unnamed", "named-over-hole"]
    k = steps.index(step)
    if k >= 1:
        pages.update({2: "mapscope-one", 3: "mapscope-one"})
    if k >= 2:
        pages.update({4: "mapscope-one", 5: "mapscope-one"})
    if k >= 3:
        pages[0] = "mapscope-2"
    if k >= 4:
        pages.update({i: None for i in range(2, 6)})
    if k >= 5:
        pages = {i: "mapscope-hole" for i in range(6)}
    lines, i = [], 0
    while i < 8:
        if i not in pages:
            i += 1
            continue
        j = i
        while j + 1 in pages and pages[j + 1] == pages[i]:
            j += 1
        lines.append((a + i * P, a + (j + 1) * P, pages[i]))
        i = j + 1
    return lines


def got_lines(mapscope, data, pid, time, a):
    out = subprocess.run([mapscope, "maps", "-i", data, "--pid", pid, "--at", time],
                         capture_output=True, text=True, check=True).stdout
    lines = []
    for line in out.splitlines():
        f = line.split(None, 5)
        s, e = (int(x, 16) for x in f[0].split("-"))
        if e <= a or s >= a + 8 * P:
            continue
        name = f[5] if len(f) > 5 else ""
        name = name[6:-1] if name.startswith("[anon:") else None if not name else "?" + name
        lines.append((max(s, a), min(e, a + 8 * P), name))
    return lines


def main():
    mapscope, data, out = sys.argv[1:4]
    text = open(out).read().splitlines()
    a = int([l for l in text if l.startswith("map ")][0].split()[1], 16)
    n, strings = craft(mapscope, data, data + ".crafted")
    want_strings = ["mapscope-one", "mapscope-one", "mapscope-2", "mapscope-hole"]
    bad = 0
    if strings != want_strings:
        print(f"FAIL: the names recorded are {strings}, not {want_strings}")
        bad += 1
    if n != 5:
        print(f"FAIL: {n} prctl exits in the recording, not 5")
        return 1
    for line in text:
        if not line.startswith("snapshot "):
            continue
        kv = dict(p.split("=", 1) for p in line.split()[1:])
        want, got = expected(kv["step"], a), got_lines(mapscope, data + ".crafted", kv["pid"], kv["time"], a)
        if want != got:
            bad += 1
            print(f"FAIL: step {kv['step']}: want {want}, got {got}")
        else:
            print(f"ok: step {kv['step']}: {len(want)} VMAs as a kernel with anon names has them")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
