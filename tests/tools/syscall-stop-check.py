#!/usr/bin/env python3
"""Compares every /proc/TID/maps snapshot that tests/tools/syscall-stop
wrote with `mapscope maps --pid TID --at MID` of the recording made of the
tracer (`mapscope record -- syscall-stop -o SNAPS -- CMD`), and reports
K/N exact, with the differences of the first few that are not.

usage: syscall-stop-check.py [--max-diffs N] [--min-snapshots N] [--no-fail]
                             MAPSCOPE SNAPSHOTS RECORDING

Exit status: 0 if every snapshot is exact (or --no-fail), 1 otherwise;
--min-snapshots (default 1) catches a tracer that saw too little.
"""
import argparse
import concurrent.futures
import difflib
import os
import subprocess
import sys


def snapshots(path):
    """(header fields, maps lines) for each snapshot in the file."""
    lines = open(path, errors="surrogateescape").read().split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("snapshot "):
            i += 1
            continue
        kv = dict(p.split("=", 1) for p in lines[i].split()[1:])
        j = lines.index("end-snapshot", i)
        yield kv, lines[i + 1:j]
        i = j + 1


def model(mapscope, data, kv):
    run = subprocess.run([mapscope, "maps", "-i", data, "--pid", kv["pid"], "--at", kv["time"]],
                         capture_output=True, text=True, errors="surrogateescape")
    got = run.stdout.rstrip("\n").split("\n") if run.stdout else []
    return run.returncode, run.stderr.strip(), got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-diffs", type=int, default=5)
    ap.add_argument("--min-snapshots", type=int, default=1)
    ap.add_argument("--no-fail", action="store_true")
    ap.add_argument("mapscope")
    ap.add_argument("snapshots")
    ap.add_argument("recording")
    a = ap.parse_args()

    snaps = list(snapshots(a.snapshots))
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as ex:
        results = list(ex.map(lambda s: model(a.mapscope, a.recording, s[0]), snaps))
    exact = 0
    shown = 0
    bycall = {}
    for (kv, want), (rc, err, got) in zip(snaps, results):
        call = kv["step"].split(":", 1)[-1]
        ok = rc == 0 and got == want
        n = bycall.setdefault(call, [0, 0])
        n[1] += 1
        if ok:
            exact += 1
            n[0] += 1
            continue
        if shown < a.max_diffs:
            shown += 1
            print(f"DIFF: step {kv['step']} ret={kv.get('ret')} (pid {kv['pid']}, time {kv['time']}): "
                  f"exit {rc} {err}")
            for d in difflib.unified_diff(want, got, "/proc/TID/maps", "mapscope maps", lineterm="", n=1):
                print("   ", d)
    print("by call: " + ", ".join(f"{c} {k}/{n}" for c, (k, n) in sorted(bycall.items())))
    print(f"{exact}/{len(snaps)} exact")
    if len(snaps) < a.min_snapshots:
        print(f"FAIL: only {len(snaps)} snapshots; at least {a.min_snapshots} expected")
        return 1
    return 0 if a.no_fail or exact == len(snaps) else 1


if __name__ == "__main__":
    sys.exit(main())
