#!/usr/bin/env bash
# maps --at at scale: the shape of the kernel's mm selftest
# virtual_address_range, 262,144 maps placed top down, each merged with
# the one before into a VMA that grows down (its MMAP2 record and the VMA
# tree's writes report the whole VMA each time), then all unmapped. At the
# peak the workload copies /proc/self/maps; `maps --at` that instant must
# print it line for line: the count of VMAs, and the big merged ones from
# the lowest chunk to the highest. Not timed (docs/PERFORMANCE.md has the
# figures). VA_RANGE_CHUNKS=N sets the number of maps.
source "$(dirname "$0")/lib.sh"
need_recording
n=${VA_RANGE_CHUNKS:-262144}
cd "$TMP"

# check NAME [RECORD-OPTION...]: records the workload (one read-write chunk in
# 65,536, so that four VMAs of their own cut the read-only one) and compares.
check() {
	local name=$1 pid peak first last lines
	shift
	ms_record rec.txt --no-alloc-stacks -m 8192 -o va.data "$@" -- \
		"$WORKLOADS/va-range" snap.txt "$n" 4 65536 >out.txt
	grep -q ' 0 records lost' rec.txt || skip "records were lost ($name): $(cat rec.txt)"
	read -r pid peak first last lines < <(sed -n \
		's/^va-range pid=\([0-9]*\) chunks=[0-9]* lines=\([0-9]*\) peak=\([0-9]*\) first=0x\([0-9a-f]*\) last=0x\([0-9a-f]*\).*/\1 \3 \4 \5 \2/p' out.txt)
	[ -n "$lines" ] || fail "the workload said nothing usable: $(cat out.txt)"
	"$MAPSCOPE" maps -i va.data --pid "$pid" --at "$peak" >maps.txt 2>err.txt ||
		fail "maps --at of $n maps ($name) exited $?: $(cat err.txt)"
	grep -v '^#' maps.txt >got.txt || true
	[ "$(wc -l <got.txt)" -eq "$lines" ] ||
		fail "maps --at ($name) printed $(wc -l <got.txt) VMAs, /proc had $lines"
	grep -q "^$first-" got.txt || fail "no VMA starts at the lowest chunk, $first ($name)"
	last=$(printf '%x' $((0x$last + 4096)))
	grep -q "^[0-9a-f]*-$last r--p" got.txt || fail "no read-only VMA ends past the highest chunk, at $last ($name)"
	diff snap.txt got.txt >diff.txt || fail "maps --at ($name) differs from /proc: $(head -5 diff.txt)"
	pass "$n maps ($name): $lines VMAs, as /proc had them"
}

check "with the VMA tree"
check "without the VMA tree" --no-vma-tree
