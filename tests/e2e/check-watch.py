#!/usr/bin/env python3
"""Checks `mapscope watch --json` output against what aspace-ops printed.

usage: check-watch.py OUTPUT   (the workload's lines and watch's JSON lines, mixed)

Every change the workload printed must appear as an event with its exact
range, and those events must come in the order the workload made them.
"""
import json
import os
import sys

import perfscript  # found beside this file, or through PYTHONPATH (lib.sh)


def main():
    text = open(sys.argv[1]).read().splitlines()
    events = [json.loads(l) for l in text if l.startswith("{")]
    ops = perfscript.parse_workload("\n".join(l for l in text if not l.startswith("{")))
    h = lambda a: int(a, 16) if a else None

    def find(after, pred):
        for i in range(after + 1, len(events)):
            if pred(events[i]):
                return i
        return None

    last, bad, matched = -1, 0, 0
    for o in ops:
        k, pid = o["op"], o.get("pid")
        e = lambda ev, op: ev["op"] == op and ev["pid"] == pid
        if k == "mmap" or k == "shmat":
            pred = lambda ev: e(ev, "map") and h(ev["start"]) == o["start"] and h(ev["end"]) == o["end"]
        elif k == "munmap" or k == "shmdt":
            pred = lambda ev: e(ev, "unmap") and h(ev["start"]) == o["start"] and h(ev["end"]) == o["end"]
        elif k == "mremap":
            pred = lambda ev: (e(ev, "remap") and h(ev["start"]) == o["old_start"] and h(ev["end"]) == o["old_end"]
                               and h(ev["new_start"]) == o["new_start"] and h(ev["new_end"]) == o["new_end"])
        elif k == "mprotect":
            pred = lambda ev: e(ev, "protect") and h(ev["start"]) == o["start"] and h(ev["end"]) == o["end"]
        elif k == "brk":
            pred = lambda ev: e(ev, "brk") and h(ev["start"]) == o["old"] and h(ev["end"]) == o["new"]
        elif k == "madvise":
            pred = lambda ev: e(ev, "madvise") and h(ev["start"]) == o["start"] and h(ev["end"]) == o["end"]
        elif k == "fork":
            pred = lambda ev: e(ev, "fork") and ev.get("child_pid") == o["child"]
        elif k == "exec":
            name = os.path.basename(o["path"])[:15]
            pred = lambda ev: e(ev, "exec") and ev["name"] == name
        elif k == "stack":
            pred = lambda ev: e(ev, "stack-grow") and h(ev["start"]) <= o["lo"]
        else:
            continue
        # fork is printed by the parent after the child's own lines: look from the start.
        i = find(-1 if k == "fork" else last, pred)
        if i is None:
            print(f"FAIL: {o} has no event{' after the previous one' if find(-1, pred) is not None else ''}")
            bad = 1
            continue
        if k != "fork":
            last = i
        matched += 1
    print(f"{matched} changes found in order among {len(events)} events")
    if matched < 20:
        print("FAIL: the workload printed too few changes")
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
