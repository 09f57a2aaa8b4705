#!/usr/bin/env bash
# --call-graph fp: samples carry the user call chain. The workload recurses
# 300 frames deep through recurse(); the deepest stack faults must show the
# frames (the kernel caps a chain at kernel.perf_event_max_stack, 127 here).
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

ms_record summary.txt --call-graph fp -o cg.data -- "$WORKLOADS/aspace-ops" >/dev/null
perf script -i cg.data -F event,ip,sym 2>/dev/null >cg.script || fail "perf script failed"
deepest=$(awk '/page-faults:/ { if (n > max) max = n; n = 0; next }
	       /^[a-z ]*syscalls:/ { if (n > max) max = n; n = 0; next }
	       / recurse$/ { n++ } END { if (n > max) max = n; print max + 0 }' cg.script)
echo "deepest chain: $deepest recurse() frames"
[ "$deepest" -ge 100 ] || fail "no page-fault sample shows the recursion (deepest: $deepest frames)"
grep -A3 'sys_enter_mmap:' cg.script | grep 'mmap' >/dev/null || fail "syscall samples carry no call chain"
pass "call chains recorded on page faults ($deepest frames) and syscalls"
