#!/usr/bin/env bash
# A region's perms in a report are those of most of its bytes, as the
# kernel holds them at its end: after one mprotect over many of its pieces
# (tests/workloads/protect-runs: every other page of the last CUT cut
# read-only, then all CUT made read-exec in one call, which the kernel
# merges into one VMA), with the VMA tree's writes and without. The
# workload prints its region's lines of /proc/self/maps at the end: the
# ground truth.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

for cut in 60 90 30; do
	for mode in tree no-tree; do
		opt=()
		[ "$mode" = no-tree ] && opt=(--no-vma-tree)
		"$MAPSCOPE" record "${opt[@]}" -o "p-$cut-$mode.data" -- "$WORKLOADS/protect-runs" "$cut" \
			>"p-$cut-$mode.txt" 2>rec.txt || fail "record (cut $cut, $mode) failed: $(cat rec.txt)"
		"$MAPSCOPE" report -i "p-$cut-$mode.data" --all --format json >"p-$cut-$mode.json" 2>report.err ||
			fail "report (cut $cut, $mode) exited $?: $(cat report.err)"
		python3 - "p-$cut-$mode.txt" "p-$cut-$mode.json" <<'PY' || fail "cut $cut, $mode: the region's perms are not the kernel's"
import collections, json, re, sys
lines = open(sys.argv[1]).read().split("\n")
m = re.match(r"protect-runs start=(0x[0-9a-f]+) end=(0x[0-9a-f]+) cut=(\d+)", lines[0])
start, end = int(m.group(1), 16), int(m.group(2), 16)
size = collections.Counter()
for l in lines[1:]:
    if l:
        lo, hi = (int(x, 16) for x in l.split()[0].split("-"))
        size[l.split()[1]] += min(hi, end) - max(lo, start)
want = size.most_common(1)[0][0]
vmas = sum(1 for l in lines[1:] if l)
regions = [r for r in json.load(open(sys.argv[2]))["regions"] if int(r["start"], 16) == start]
if len(regions) != 1:
    sys.exit("%d regions start at %#x" % (len(regions), start))
got = regions[0]["perms"]
print("kernel: %d VMAs, %s; report: %s" % (vmas, dict(size), got))
sys.exit(0 if got == want else 1)
PY
		pass "cut $cut ($mode): the region's perms are those of most of it"
	done
done
