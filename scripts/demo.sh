#!/usr/bin/env bash
# `make demo`: records the built-in workload and prints its report.
set -euo pipefail
build=${1:-build}
out=$(mktemp -d /tmp/mapscope-demo.XXXXXX)
trap 'rm -rf "$out"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: recording needs root (tracepoints and tracefs); run: sudo make demo" >&2
	exit 1
fi
echo "== mapscope record --call-graph fp -- aspace-ops"
echo "   (mmap, MAP_FIXED, munmap, mremap, mprotect, brk, stack growth, threads, madvise, shm, fork, exec)"
"$build/mapscope" record --call-graph fp -o "$out/demo.data" -- \
	"$build/tests/workloads/aspace-ops" "$build/tests/workloads/exec-target" >/dev/null
echo
echo "== mapscope report: every page fault charged to the mapping that held it, with the code that touched it"
"$build/mapscope" report -i "$out/demo.data" --children 2 >"$out/report.txt"
head -40 "$out/report.txt"
echo
echo "== mapscope timeline: the unmaps and remaps that perf record -d cannot see"
"$build/mapscope" timeline -i "$out/demo.data" >"$out/timeline.txt"
grep -E ' (unmap|remap|brk|madvise) ' "$out/timeline.txt" | head -12 || true
echo
echo "== mapscope heatmap: where in each region, and when, the accesses landed (five of its bands)"
"$build/mapscope" heatmap -i "$out/demo.data" >"$out/heatmap.txt"
awk '/region [0-9]+: [0-9]+ samples/ { n++ } n > 0 && n <= 5' "$out/heatmap.txt" | head -45
echo
"$build/mapscope" report -i "$out/demo.data" --format html -o mapscope-demo.html
echo "== mapscope report --format html: all of it on one page, which opens from disk: $PWD/mapscope-demo.html"
