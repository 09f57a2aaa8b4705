#!/usr/bin/env python3
"""The freeze oracle: records a program (or attaches to it), freezes its
whole process tree with SIGSTOP at N instants, reads every process's
/proc/PID/maps while frozen, and compares each with `mapscope maps --pid P
--at T`, T read from CLOCK_MONOTONIC while frozen. Prints K/N per process
snapshot and the first differences.

usage: freeze-oracle.py MAPSCOPE [--attach] [--snapshots N] [--every S] -- CMD...
"""
import argparse, difflib, os, signal, subprocess, sys, tempfile, time


def tree(root):
    """root and all its descendants, from /proc."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mapscope")
    ap.add_argument("--attach", action="store_true")
    ap.add_argument("--snapshots", type=int, default=5)
    ap.add_argument("--every", type=float, default=0.5)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--label", help="what to call the program in the result line")
    ap.add_argument("--record-opt", action="append", default=[],
                    help="an option for mapscope record (--no-vma-tree, say); may be repeated")
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="freeze-")
    data = os.path.join(tmp, "f.data")
    if a.attach:
        prog = subprocess.Popen(a.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(a.every)
        rec = subprocess.Popen([a.mapscope, "record", *a.record_opt, "-o", data, "-p", str(prog.pid)],
                               stderr=subprocess.PIPE, text=True)
        # It says so once its events are on and the maps read: snapshots start after that
        # (a warning may come first).
        said = []
        while True:
            line = rec.stderr.readline()
            said.append(line.strip())
            if not line or "recording" in line:
                break
        if "recording" not in line:
            print(f"record -p did not start: {' / '.join(s for s in said if s)}")
            prog.kill()
            rec.wait()
            subprocess.run(["rm", "-rf", tmp])
            return 1
        root = prog.pid
    else:
        rec = subprocess.Popen([a.mapscope, "record", *a.record_opt, "-o", data, "--"] + a.cmd,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        root = None
        for _ in range(200):              # the command, once record has started it (10 s at most)
            kids = [p for p in tree(rec.pid) if p != rec.pid]
            if kids:
                root = min(kids)
                break
            time.sleep(0.05)
        time.sleep(0.3)
    snaps = []
    for _ in range(a.snapshots):
        time.sleep(a.every)
        if root is None:
            break
        procs = tree(root)
        for p in procs:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        time.sleep(0.05)                  # let the stops land
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        for p in tree(root):
            try:
                with open(f"/proc/{p}/maps") as f:
                    snaps.append((p, t, f.read().splitlines()))
            except OSError:
                pass
        for p in procs:
            try:
                os.kill(p, signal.SIGCONT)
            except ProcessLookupError:
                pass
    if a.attach:
        rec.send_signal(signal.SIGINT)
        rec.wait()
        prog.kill()
    else:
        for p in tree(root) if root else []:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        rec.wait()
    ok = 0
    for p, t, want in snaps:
        run = subprocess.run([a.mapscope, "maps", "-i", data, "--pid", str(p), "--at", str(t)],
                             capture_output=True, text=True)
        got = run.stdout.splitlines()
        if got == want:
            ok += 1
            continue
        if not a.quiet:
            print(f"differs: pid {p} at {t}: {run.stderr.strip()}")
            for d in list(difflib.unified_diff(want, got, "/proc", "mapscope", lineterm="", n=0))[:12]:
                print("   ", d)
    label = a.label or " ".join(a.cmd[:2])
    print(f"{label}{' (attach)' if a.attach else ''}: {ok}/{len(snaps)} process snapshots equal")
    if snaps and ok == len(snaps):
        subprocess.run(["rm", "-rf", tmp])
        return 0
    print(f"the recording is kept: {data}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
