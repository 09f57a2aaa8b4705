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
