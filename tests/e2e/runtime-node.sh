#!/usr/bin/env bash
# The freeze oracle on a runtime nobody here wrote: node running a small
# allocation loop (V8's heap, code ranges and their mprotects) is frozen
# with SIGSTOP at 5 instants; every process's /proc/PID/maps, read while
# frozen, must equal `mapscope maps --at` that instant. Recorded from the
# start, and attached to.
source "$(dirname "$0")/lib.sh"
need_recording
command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"
cd "$TMP"
loop='let a=[];setInterval(()=>{for(let i=0;i<1e5;i++)a.push({i:i,s:"x"+i});if(a.length>1e6)a=[];},10)'
python3 "$SRC_DIR/bench/freeze-oracle.py" "$MAPSCOPE" -- node -e "$loop" || fail "node: maps differ from /proc"
python3 "$SRC_DIR/bench/freeze-oracle.py" "$MAPSCOPE" --attach -- node -e "$loop" ||
	fail "node (attach): maps differ from /proc"
pass "node, recorded and attached: every frozen snapshot equals mapscope maps"
