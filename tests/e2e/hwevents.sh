#!/usr/bin/env bash
# record -e EVENT: hardware data-address events by the names users know.
# This machine has no hardware PMU: each name fails before anything starts,
# with one message that says so and names --referenced, and no file is
# written. A fake PMU tree (MAPSCOPE_PMU_SYSFS) resolves the name; the
# kernel then refuses the event, and the hint names --referenced too. The
# live recording is hwevents-live.sh.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
pmus=/sys/bus/event_source/devices
has_pmu() { ls -d $pmus/cpu $pmus/cpu_core $pmus/armv* $pmus/ibs_op $pmus/arm_spe_* >/dev/null 2>&1; }

if ! has_pmu; then
	for e in mem-loads mem-stores dTLB-load-misses 'cpu/mem-loads,ldlat=30/P' ibs_op// arm_spe//; do
		expect_status 1 "$MAPSCOPE" record -e "$e" -o e.data -- true 2>err.txt
		[ "$(wc -l <err.txt)" -eq 1 ] || fail "$e: more than one line: $(cat err.txt)"
		grep -q "^mapscope: cannot record event '$e': this machine has no .*PMU.*use --referenced" err.txt ||
			fail "$e: the message does not say there is no PMU, or does not name --referenced: $(cat err.txt)"
		[ ! -e e.data ] || fail "$e: a file was written"
	done
	pass "no hardware PMU: every event name fails at once, saying so and naming --referenced"

	mkdir -p pmu/cpu/events pmu/cpu/format
	echo 4 >pmu/cpu/type
	echo "event=0xcd,umask=0x1,ldlat=3" >pmu/cpu/events/mem-loads
	echo config:0-7 >pmu/cpu/format/event
	echo config:8-15 >pmu/cpu/format/umask
	echo config1:0-15 >pmu/cpu/format/ldlat
	MAPSCOPE_PMU_SYSFS=$TMP/pmu expect_status 1 "$MAPSCOPE" record -e mem-loads -o f.data -- true 2>err.txt
	grep -q "cannot open event 'mem-loads'" err.txt || fail "the refused event is not named: $(cat err.txt)"
	grep -q "^hint: .*use --referenced" err.txt || fail "the hint does not name --referenced: $(cat err.txt)"
	pass "an event the kernel refuses: said, with --referenced"
fi
expect_status 2 "$MAPSCOPE" record -e 'cpu/mem-loads' -o e.data -- true 2>err.txt
grep -q "invalid event 'cpu/mem-loads'" err.txt || fail "a malformed event is not a usage error: $(cat err.txt)"

pass "a malformed event name is a usage error"
