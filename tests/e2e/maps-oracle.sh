#!/usr/bin/env bash
# The maps oracle: the workload reads its own /proc/self/maps after every
# kind of change (threads, fork and exec included); `mapscope maps --at T`
# must print each snapshot line for line.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

"$MAPSCOPE" record -o mo.data -- "$WORKLOADS/maps-oracle" >mo.txt 2>summary.txt ||
	fail "record failed: $(cat summary.txt)"
python3 "$E2E_DIR/check-maps.py" "$MAPSCOPE" mo.txt mo.data || fail "mapscope maps differs from /proc"
pass "every snapshot matches"
