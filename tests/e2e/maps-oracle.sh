#!/usr/bin/env bash
# The maps oracle: the workload reads its own /proc/self/maps after every
# kind of change (threads, fork and exec included); `mapscope maps --at T`
# must print each snapshot line for line.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

ms_record summary.txt -o mo.data -- "$WORKLOADS/maps-oracle" >mo.txt
python3 "$E2E_DIR/check-maps.py" "$MAPSCOPE" mo.txt mo.data || fail "mapscope maps differs from /proc"
pass "every snapshot matches"

# Without the kernel's VMA tree writes: the model's own rules alone.
ms_record summary.txt --no-vma-tree -o mo-nt.data -- "$WORKLOADS/maps-oracle" >mo-nt.txt
python3 "$E2E_DIR/check-maps.py" "$MAPSCOPE" mo-nt.txt mo-nt.data || fail "mapscope maps differs from /proc (--no-vma-tree)"
pass "every snapshot matches without the VMA tree's writes"

# The same with holes between the binary's segments (64 KiB alignment): the
# kernel's ELF loader maps the whole image and unmaps past the first segment
# with no record; the model cuts the first map by the program headers.
ms_record summary.txt -o moh.data -- "$WORKLOADS/maps-oracle-holes" >moh.txt
python3 "$E2E_DIR/check-maps.py" "$MAPSCOPE" moh.txt moh.data || fail "mapscope maps differs from /proc (segment holes)"
pass "every snapshot matches, with holes between the segments"
