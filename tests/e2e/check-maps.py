#!/usr/bin/env python3
"""For each /proc/self/maps snapshot the maps-oracle workload printed, runs
`mapscope maps --pid P --at T` and compares line for line.

usage: check-maps.py MAPSCOPE WORKLOAD_STDOUT RECORDING [MIN_SNAPSHOTS]

MIN_SNAPSHOTS (24, the maps oracle's) catches a workload that stopped early.

No normalisation: [vsyscall], of which the kernel writes no record, is
shown too (mapscope record writes it after each exec).
"""
import difflib
import subprocess
import sys


def main():
    mapscope, out, data = sys.argv[1:4]
    lines = open(out).read().split("\n")
    checked = bad = 0
    i = 0
    while i < len(lines):
        if not lines[i].startswith("snapshot "):
            i += 1
            continue
        kv = dict(p.split("=", 1) for p in lines[i].split()[1:])
        j = lines.index("end-snapshot", i)
        want = lines[i + 1:j]
        run = subprocess.run([mapscope, "maps", "-i", data, "--pid", kv["pid"], "--at", kv["time"]],
                             capture_output=True, text=True)
        got = run.stdout.rstrip("\n").split("\n") if run.stdout else []
        checked += 1
        if run.returncode or got != want:
            bad += 1
            print(f"FAIL: step {kv['step']} (pid {kv['pid']}, time {kv['time']}): "
                  f"exit {run.returncode} {run.stderr.strip()}")
            for d in difflib.unified_diff(want, got, "/proc/self/maps", "mapscope maps", lineterm="", n=1):
                print("   ", d)
        else:
            print(f"ok: step {kv['step']}: {len(want)} lines identical")
        i = j + 1
    print(f"{checked} snapshots, {bad} different")
    steps_expected = int(sys.argv[4]) if len(sys.argv) > 4 else 24
    if checked < steps_expected:
        print(f"FAIL: only {checked} snapshots; the workload takes at least {steps_expected}")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
