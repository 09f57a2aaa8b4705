#!/usr/bin/env bash
# Recording and watching as an ordinary user (nobody), in each mode this
# machine allows, with `mapscope setup` done and undone by the test itself:
#   no setup    tracefs unreadable: doctor says so and names the fix; record
#               falls back to what perf can do (one line), and its file has no
#               unmap (the blind spot), so report marks attribution uncertain;
#               the watch API, refused kernel events, falls back to
#               userfaultfd + interposition (the regcache test passes and
#               sees a raw munmap of a tracked range), and forced to
#               interposition alone shows its blind spots
#   setup       user mode: doctor exits 0; record sees the syscalls; its page
#               faults exclude the kernel, so the 64 pages read() filled in
#               kernel mode get no sample where root's recording has 64 (the
#               blind spot), and report says so; watch and the watch API
#               (the regcache test) see every unmap
#   undo        tracefs is back as it was
source "$(dirname "$0")/lib.sh"
need_recording
command -v runuser >/dev/null || skip "runuser is not installed (util-linux)"
id nobody >/dev/null 2>&1 || skip "no user 'nobody' to record as"
group=$(id -gn nobody)
state=/run/mapscope/setup
[ -e "$state" ] && skip "mapscope setup is in force here ($state): this test sets up and undoes tracefs itself"
tracefs=$(findmnt -n -o TARGET -t tracefs | head -1)
[ -n "$tracefs" ] || skip "tracefs is not mounted"
before=$(stat -c '%g %a' "$tracefs")
[ "$before" = "0 700" ] || skip "tracefs at $tracefs is not mode 0700 group root (it is '$before'): users may read it already"
build=$(dirname "$MAPSCOPE")
chmod 755 "$TMP"
mkdir -m 777 "$TMP/u"
trap '[ -e "$state" ] && "$MAPSCOPE" setup --undo >/dev/null; rm -rf "$TMP"' EXIT
as() { runuser -u nobody -- "$@"; }
cd "$TMP/u"

# samples_in JSON LO HI: the samples report charged to regions starting in [LO, HI).
samples_in() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); lo, hi = int(sys.argv[2], 16), int(sys.argv[3], 16)
print(sum(r["samples"] for r in d["regions"] if lo <= int(r["start"], 16) < hi))' "$@"
}

# Root's recording of the workload: the truth for both ranges.
"$MAPSCOPE" record -o root.data -- "$WORKLOADS/kernel-faults" "$TMP/u" >root.out 2>root.err || fail "record as root: $(cat root.err)"
"$MAPSCOPE" report -i root.data --format json >root.json
read -r _ klo khi <<<"$(grep '^kernel' root.out)"
[ "$(samples_in root.json "$klo" "$khi")" -eq 64 ] || fail "root's recording has $(samples_in root.json "$klo" "$khi") samples in the pages read() filled, not 64"

# 1. No setup: perf's fallback.
rc=0; as "$MAPSCOPE" doctor >doctor.txt || rc=$?
[ "$rc" -eq 1 ] || fail "doctor as nobody without setup exited $rc, not 1: $(cat doctor.txt)"
grep -q '^  no    tracefs .*not readable' doctor.txt && grep -q 'fix: as root: mapscope setup --group' doctor.txt ||
	fail "doctor does not name tracefs and its fix: $(cat doctor.txt)"
grep -q '^record and watch: perf mode' doctor.txt || fail "doctor does not name perf mode: $(tail -1 doctor.txt)"
as "$MAPSCOPE" record -o perf.data -- /bin/ls / >/dev/null 2>perf.err || fail "record as nobody without setup failed: $(cat perf.err)"
[ "$(grep -c warning perf.err)" -eq 1 ] && grep -q 'warning: tracefs .* not readable .*perf record -d' perf.err ||
	fail "record's fallback is not said in one line: $(cat perf.err)"
"$MAPSCOPE" timeline -i perf.data >perf.timeline 2>/dev/null
grep -q ' unmap ' perf.timeline && fail "an unmap in a recording made without the syscalls"
"$MAPSCOPE" report -i perf.data >perf.txt 2>/dev/null
grep -q '^# samples:.*attribution uncertain' perf.txt || fail "report does not mark a recording without unmaps uncertain"
as "$MAPSCOPE" watch -- /bin/true >/dev/null 2>watch.err && fail "watch without tracefs succeeded: it would miss every unmap"
grep -q "setup" watch.err || fail "watch's error does not name the fix: $(cat watch.err)"
pass "no setup: doctor names tracefs and 'mapscope setup'; record falls back to perf's events in one line, no unmaps, uncertain; watch refuses"

# The watch API without kernel events: the regcache test in the self modes.
as "$build/tests/regcache-test" >rc-fallback.txt 2>&1 || fail "the regcache test as nobody without setup: $(grep FAIL rc-fallback.txt | head -3; tail -1 rc-fallback.txt)"
grep -q '^mode: uffd' rc-fallback.txt || grep -q '^mode: interpose' rc-fallback.txt ||
	fail "the watch API without setup is not in a self mode: $(head -1 rc-fallback.txt)"
as env MAPSCOPE_WATCH=interpose "$build/tests/regcache-test" >rc-interpose.txt 2>&1 ||
	fail "the regcache test as nobody, interposition: $(grep FAIL rc-interpose.txt | head -3; tail -1 rc-interpose.txt)"
grep -q '^mode: interpose' rc-interpose.txt && grep -q '^blind spot: syscall(SYS_munmap)' rc-interpose.txt ||
	fail "interposition as nobody does not show its blind spot: $(head -3 rc-interpose.txt)"
pass "no setup: the watch API falls back to $(sed -n 's/^mode: //p' rc-fallback.txt) mode ($(tail -1 rc-fallback.txt)); interposition alone passes and misses the raw munmap, as watch.h says"

# 2. Setup: user mode.
"$MAPSCOPE" setup --group "$group" >setup.txt || fail "setup failed: $(cat setup.txt)"
grep -q "tracefs at $tracefs: group root -> $group, mode 0700 -> 0750" setup.txt || fail "setup does not say what it changed: $(cat setup.txt)"
[ "$(stat -c '%G %a' "$tracefs")" = "$group 750" ] || fail "tracefs after setup: $(stat -c '%G %a' "$tracefs")"
as "$MAPSCOPE" doctor >doctor.txt || fail "doctor as nobody after setup exited $?: $(cat doctor.txt)"
grep -q '^record and watch: user mode' doctor.txt || fail "doctor does not name user mode: $(tail -1 doctor.txt)"
as "$MAPSCOPE" record -o user.data -- "$WORKLOADS/kernel-faults" "$TMP/u" >user.out 2>user.err || fail "record as nobody: $(cat user.err)"
grep -q 'warning: uid [0-9]* without CAP_PERFMON .*user mode' user.err || fail "record does not say it runs in user mode: $(cat user.err)"
"$MAPSCOPE" report -i user.data --format json >user.json
read -r _ klo khi <<<"$(grep '^kernel' user.out)"
read -r _ ulo uhi <<<"$(grep '^user' user.out)"
[ "$(samples_in user.json "$klo" "$khi")" -eq 0 ] || fail "user mode charged $(samples_in user.json "$klo" "$khi") kernel-mode faults"
[ "$(samples_in user.json "$ulo" "$uhi")" -eq 64 ] || fail "user mode has $(samples_in user.json "$ulo" "$uhi") of the 64 user-mode faults"
python3 -c 'import json, sys; sys.exit(not json.load(open(sys.argv[1])).get("user_mode_faults"))' user.json ||
	fail "report --format json has no user_mode_faults"
"$MAPSCOPE" report -i user.data >user.txt
grep -q '^# page faults of user mode only' user.txt || fail "report's header does not say the faults are user mode's"
"$MAPSCOPE" timeline -i user.data >user.timeline
grep -q " unmap *${klo}-${khi} " user.timeline || fail "the workload's munmap of $klo-$khi is not in the user-mode recording: $(grep ' unmap ' user.timeline | head -3)"
as "$MAPSCOPE" watch -- "$WORKLOADS/kernel-faults" "$TMP/u" >watch.txt 2>watch.err || fail "watch as nobody: $(cat watch.err)"
read -r _ klo khi <<<"$(grep '^kernel' watch.txt)"
grep -q " unmap *${klo}-${khi} " watch.txt || fail "watch as nobody did not print the munmap of $klo-$khi: $(grep unmap watch.txt | head -3)"
as "$build/tests/regcache-test" >regcache.txt 2>&1 || fail "the regcache test as nobody: $(grep FAIL regcache.txt | head -3; tail -1 regcache.txt)"
grep -q '^mode: kernel' regcache.txt || fail "the watch API after setup is not in kernel mode: $(head -1 regcache.txt)"
pass "setup: user mode; record sees the syscalls and 64 of 64 user-mode faults, none of the 64 taken in kernel mode, and says so; watch and the watch API see the unmaps ($(tail -1 regcache.txt))"

# 3. Undo.
"$MAPSCOPE" setup --undo >undo.txt || fail "setup --undo failed: $(cat undo.txt)"
[ "$(stat -c '%g %a' "$tracefs")" = "$before" ] || fail "tracefs after undo: $(stat -c '%g %a' "$tracefs"), before: $before"
[ ! -e "$state" ] || fail "setup --undo left $state"
rc=0; as "$MAPSCOPE" doctor >/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "doctor as nobody after undo exited $rc"
pass "setup --undo: tracefs is back as it was ($before)"
