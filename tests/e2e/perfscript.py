"""Parses `perf script` output into records, for the end-to-end checks.

Run perf script with PERF_SCRIPT_ARGS (below) so the layout is fixed:
    PID/TID TIME: EVENT: REST
"""
import re

PERF_SCRIPT_ARGS = ["--show-mmap-events", "--show-task-events",
                    "-F", "sw:pid,tid,time,event,addr,ip",
                    "-F", "trace:pid,tid,time,event,trace"]

_LINE = re.compile(r"^\s*(\d+)/(\d+)\s+(\d+\.\d+):\s+(.*)$")
_MMAP2 = re.compile(r"PERF_RECORD_MMAP2 (\d+)/(\d+): \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (\S+) "
                    r"(\S+) (\d+) (\d+)\]: (\S+) ?(.*)$")
_FORK = re.compile(r"PERF_RECORD_FORK\((\d+):(\d+)\):\((\d+):(\d+)\)")
_COMM = re.compile(r"PERF_RECORD_COMM( exec)?: (.*):(\d+)/(\d+)$")


class Rec:
    def __init__(self, kind, pid, tid, time, **kw):
        self.kind, self.pid, self.tid, self.time = kind, pid, tid, time
        self.__dict__.update(kw)

    def __repr__(self):
        return f"Rec({self.__dict__})"


def _fields(text):
    out = {}
    for part in text.split(", "):
        if ": " in part:
            k, v = part.split(": ", 1)
            try:
                out[k.strip()] = int(v, 16)
            except ValueError:
                out[k.strip()] = v
    return out


def parse(text):
    recs = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        pid, tid, t, rest = int(m[1]), int(m[2]), float(m[3]), m[4]
        if rest.startswith("PERF_RECORD_MMAP2"):
            mm = _MMAP2.match(rest)
            if mm:
                start, length = int(mm[3], 16), int(mm[4], 16)
                recs.append(Rec("mmap2", int(mm[1]), int(mm[2]), t, start=start,
                                end=start + length, prot=mm[9], name=mm[10]))
        elif rest.startswith("PERF_RECORD_FORK"):
            f = _FORK.match(rest)
            recs.append(Rec("fork", int(f[3]), int(f[4]), t, child_pid=int(f[1]), child_tid=int(f[2])))
        elif rest.startswith("PERF_RECORD_EXIT"):
            recs.append(Rec("exit", pid, tid, t))
        elif rest.startswith("PERF_RECORD_COMM"):
            c = _COMM.match(rest)
            if c:
                recs.append(Rec("comm", int(c[3]), int(c[4]), t, exec=bool(c[1]), comm=c[2]))
        elif rest.startswith("PERF_RECORD"):
            recs.append(Rec(rest.split()[0][12:].lower(), pid, tid, t))
        elif rest.startswith("page-faults:"):
            addr, ip = rest[len("page-faults:"):].split()[:2]
            recs.append(Rec("fault", pid, tid, t, addr=int(addr, 16), ip=int(ip, 16)))
        elif rest.startswith("syscalls:"):
            name, _, body = rest[len("syscalls:"):].partition(":")
            body = body.strip()
            if name.startswith("sys_exit_"):
                recs.append(Rec(name, pid, tid, t, ret=int(body, 16)))
            else:
                recs.append(Rec(name, pid, tid, t, **_fields(body)))
    return recs


def parse_workload(text):
    """Workload lines: OP pid=P tid=T key=value..."""
    ops = []
    for line in text.splitlines():
        parts = line.split()
        if not parts or "=" not in line:
            continue
        d = {"op": parts[0]}
        for p in parts[1:]:
            k, _, v = p.partition("=")
            d[k] = int(v, 16) if v.startswith("0x") else (int(v) if v.isdigit() else v)
        ops.append(d)
    return ops


def report_samples_by_symbol(text):
    """`perf report --stdio --sort sym -F sample,sym`: samples per name, of the first event (the page faults).

    perf lists one row per symbol it made (a JIT's every map entry): rows of one name are summed.
    """
    out, section = {}, 0
    for line in text.splitlines():
        if line.startswith("# Samples:"):
            section += 1
        m = re.match(r"\s+(\d+)\s+\[.\] (.*?)\s*$", line)
        if m and section == 1:
            out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
    return out
