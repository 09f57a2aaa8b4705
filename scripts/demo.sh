#!/usr/bin/env bash
# `make demo`: records the built-in workload and shows what was recorded.
set -euo pipefail
build=${1:-build}
out=$(mktemp -d /tmp/mapscope-demo.XXXXXX)
trap 'rm -rf "$out"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: recording needs root (tracepoints and tracefs); run: sudo make demo" >&2
	exit 1
fi
echo "== mapscope record -- aspace-ops (mmap, munmap, mremap, mprotect, brk, stack, threads, madvise, shm, fork, exec)"
"$build/mapscope" record -o "$out/demo.data" -- \
	"$build/tests/workloads/aspace-ops" "$build/tests/workloads/exec-target" >"$out/workload.txt"
echo
echo "== what the workload did (first lines of its own account)"
head -12 "$out/workload.txt"
echo
echo "== what the recording holds, as perf reads it"
perf script -i "$out/demo.data" --show-mmap-events --show-task-events 2>/dev/null |
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^PERF_RECORD_|^page-faults:|^syscalls:/) { sub(/:$/, "", $i); sub(/\(.*/, "", $i); n[$i]++; break } }
	     END { for (k in n) printf "  %7d  %s\n", n[k], k }' | sort -k2
echo
echo "== the unmaps perf record -d cannot see"
perf script -i "$out/demo.data" 2>/dev/null | grep -E 'sys_enter_(munmap|mremap|shmdt|madvise)' | head -6
