#!/usr/bin/env python3
"""Checks a recording of tests/workloads/aspace-ops against what it printed.

usage: check-record.py WORKLOAD_STDOUT PERF_SCRIPT_OUTPUT

Every printed change must appear with its exact range, and every touched
page must have a page-fault sample at that page from the thread that
touched it. Prints one line per failed check and exits 1 if any failed.
"""
import collections
import os
import sys

import perfscript  # found beside this file, or through PYTHONPATH (lib.sh)

PAGE = 4096
MAP_FIXED = 0x10
MREMAP_MAYMOVE = 1
MADV_DONTNEED = 4
PROT = {"r--": 1, "---": 0, "rw-": 3}

failures = []
checked = collections.Counter()


def fail(msg):
    failures.append(msg)


def syscall_pair(recs, tid, enter, exit_, match, result=None):
    """The first `enter` from tid that matches and whose next exit from tid
    returns `result` (any value if None): (enter, exit) or (None, None)."""
    for i, r in enumerate(recs):
        if r.kind != enter or r.tid != tid or not match(r):
            continue
        e = next((e for e in recs[i + 1:] if e.kind == exit_ and e.tid == tid), None)
        if e and (result is None or e.ret == result):
            return r, e
    return None, None


def main():
    ops = perfscript.parse_workload(open(sys.argv[1]).read())
    recs = perfscript.parse(open(sys.argv[2]).read())
    recs.sort(key=lambda r: r.time)
    mmaps = [r for r in recs if r.kind == "mmap2"]
    faults = collections.Counter()
    for r in recs:
        if r.kind == "fault":
            faults[(r.tid, r.addr // PAGE)] += 1
    touches = collections.Counter()

    for op in ops:
        kind, pid, tid = op["op"], op.get("pid"), op.get("tid")
        what = " ".join(f"{k}={hex(v) if isinstance(v, int) and v > 1 << 20 else v}"
                        for k, v in op.items())
        if kind == "touch":
            for page in range(op["start"] // PAGE, op["end"] // PAGE):
                touches[(tid, page)] += 1
        elif kind == "mmap":
            length = op["end"] - op["start"]
            fixed = op["kind"] == "fixed"
            enter, exit_ = syscall_pair(
                recs, tid, "sys_enter_mmap", "sys_exit_mmap",
                lambda r: r.len == length and (not fixed or (r.addr == op["start"] and r.flags & MAP_FIXED)),
                op["start"])
            if not enter or not exit_ or exit_.ret != op["start"]:
                fail(f"{what}: no sys_enter_mmap/sys_exit_mmap pair returning it")
            if not any(m.pid == pid and m.start <= op["start"] and op["end"] <= m.end for m in mmaps):
                fail(f"{what}: no MMAP2 covers it")
        elif kind == "munmap":
            enter, exit_ = syscall_pair(recs, tid, "sys_enter_munmap", "sys_exit_munmap",
                                        lambda r: r.addr == op["start"] and r.len == op["end"] - op["start"])
            if not enter or not exit_ or exit_.ret != 0:
                fail(f"{what}: no successful sys_enter_munmap/sys_exit_munmap with this range")
        elif kind == "mremap":
            enter, exit_ = syscall_pair(
                recs, tid, "sys_enter_mremap", "sys_exit_mremap",
                lambda r: r.addr == op["old_start"] and r.old_len == op["old_end"] - op["old_start"]
                and r.new_len == op["new_end"] - op["new_start"])
            if not enter or not exit_ or exit_.ret != op["new_start"]:
                fail(f"{what}: no sys_enter_mremap/sys_exit_mremap with these ranges")
        elif kind == "mprotect":
            enter, exit_ = syscall_pair(recs, tid, "sys_enter_mprotect", "sys_exit_mprotect",
                                        lambda r: r.start == op["start"] and r.len == op["end"] - op["start"]
                                        and r.prot == PROT[op["prot"]])
            if not enter or not exit_ or exit_.ret != 0:
                fail(f"{what}: no successful sys_enter_mprotect/sys_exit_mprotect")
            if not any(m.pid == pid and m.start == op["start"] and m.end == op["end"]
                       and m.prot.startswith(op["prot"]) for m in mmaps):
                fail(f"{what}: no MMAP2 with exactly this range and protection")
        elif kind == "brk":
            enter, exit_ = syscall_pair(recs, tid, "sys_enter_brk", "sys_exit_brk",
                                        lambda r: r.brk == op["new"])
            if not enter or not exit_ or exit_.ret != op["new"]:
                fail(f"{what}: no sys_enter_brk/sys_exit_brk moving the break there")
        elif kind == "madvise":
            enter, exit_ = syscall_pair(recs, tid, "sys_enter_madvise", "sys_exit_madvise",
                                        lambda r: r.start == op["start"] and r.len_in == op["end"] - op["start"]
                                        and r.behavior == MADV_DONTNEED)
            if not enter or not exit_ or exit_.ret != 0:
                fail(f"{what}: no successful sys_enter_madvise(MADV_DONTNEED) with this range")
        elif kind == "shmat":
            enter, exit_ = syscall_pair(recs, tid, "sys_enter_shmat", "sys_exit_shmat", lambda r: True)
            if not exit_ or exit_.ret != op["start"]:
                fail(f"{what}: no sys_exit_shmat returning it")
            if not any(m.pid == pid and m.start == op["start"] and m.end == op["end"] for m in mmaps):
                fail(f"{what}: no MMAP2 with exactly this range")
        elif kind == "shmdt":
            enter, exit_ = syscall_pair(recs, tid, "sys_enter_shmdt", "sys_exit_shmdt",
                                        lambda r: r.shmaddr == op["start"])
            if not enter or not exit_ or exit_.ret != 0:
                fail(f"{what}: no successful sys_enter_shmdt/sys_exit_shmdt")
        elif kind == "fork":
            if not any(r.kind == "fork" and r.pid == pid and r.child_pid == op["child"]
                       and r.child_tid == op["child"] for r in recs):
                fail(f"{what}: no FORK record for the child")
        elif kind == "exec":
            comm = os.path.basename(op["path"])[:15]
            if not any(r.kind == "comm" and r.exec and r.pid == pid and r.comm == comm for r in recs):
                fail(f"{what}: no COMM exec record naming '{comm}'")
        elif kind == "stack":
            stacks = [m for m in mmaps if m.pid == pid and m.name == "[stack]"]
            if not stacks:
                fail(f"{what}: no [stack] MMAP2")
            else:
                lowest = min(m.start for m in stacks)
                if lowest > op["lo"]:
                    fail(f"{what}: [stack] MMAP2 records reach down to {lowest:#x} only")
                if stacks[0].start - lowest < 1 << 20:
                    fail(f"{what}: the stack grew by {stacks[0].start - lowest} bytes, not 1 MiB")
        elif kind == "thread-stack":
            if not any(r.kind == "fork" and r.pid == pid and r.child_tid == tid for r in recs):
                fail(f"{what}: no FORK record for thread {tid}")
            if not any(m.pid == pid and m.start <= op["start"] and op["end"] <= m.end for m in mmaps):
                fail(f"{what}: no MMAP2 covers the thread's stack")
        else:
            continue
        checked[kind] += 1

    for (tid, page), n in sorted(touches.items()):
        if faults[(tid, page)] < n:
            fail(f"page {page * PAGE:#x} touched {n} time(s) by tid {tid}: "
                 f"{faults[(tid, page)]} page-fault sample(s)")
    checked["touched pages"] = len(touches)

    for f in failures[:50]:
        print("FAIL:", f)
    print("checked:", ", ".join(f"{k} {v}" for k, v in sorted(checked.items())))
    expected = {"mmap", "munmap", "mremap", "mprotect", "brk", "madvise", "shmat", "shmdt",
                "fork", "exec", "stack", "thread-stack"}
    missing = expected - set(checked)
    if missing:
        print("FAIL: the workload printed no", ", ".join(sorted(missing)))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
