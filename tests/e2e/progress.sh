#!/usr/bin/env bash
# Long work shows where it is, on a terminal only: record's live counts once
# a second (cleared before the summary), and the reading progress of report
# and heatmap on a file over 100 MiB. Through a pipe, neither.
source "$(dirname "$0")/lib.sh"
need_recording
command -v script >/dev/null || skip "script is not installed (Debian package bsdutils)"
cd "$TMP"

# A recording of over 100 MiB (not compressed: 13 MiB compressed), made on
# a pseudo-terminal: live counts as it goes.
script -qec "$MAPSCOPE record --no-compress -o big.data -- $WORKLOADS/fault-loop 512 16" /dev/null >rec.tty 2>&1 ||
	fail "record on a terminal failed: $(tail -c 300 rec.tty)"
[ "$(stat -c %s big.data)" -gt $((100 << 20)) ] || fail "the recording is only $(stat -c %s big.data) bytes"
grep -qa $'\rmapscope: [0-9]* samples ([0-9]* data addresses), [0-9.]* MiB, [0-9]* records lost' rec.tty ||
	fail "no live counts on a terminal: $(head -c 300 rec.tty | od -c | head -5)"
tr '\r' '\n' <rec.tty | grep '^.\[Kmapscope: [0-9]* samples .* written to' >/dev/null ||
	fail "the live counts' line is not cleared before the summary"
ms_record rec.pipe -o small.data -- "$WORKLOADS/fault-loop" 64 1 >/dev/null
grep -q $'\r' rec.pipe && fail "live counts through a pipe"

for cmd in "report --children 0" "heatmap"; do
	script -qec "$MAPSCOPE $cmd -i big.data >/dev/null" /dev/null >prog.tty 2>&1 || fail "$cmd on a terminal failed"
	grep -qa $'\rmapscope: reading .big.data.: *[0-9]*% ([0-9]* of [0-9]* MiB)' prog.tty ||
		fail "$cmd: no progress on a terminal: $(head -c 200 prog.tty | od -c | head -4)"
	"$MAPSCOPE" $cmd -i big.data 2>prog.pipe >/dev/null || fail "$cmd failed"
	grep -q 'reading' prog.pipe && fail "$cmd: progress through a pipe"
done
pass "live counts and progress on a terminal, nothing of them through a pipe"
