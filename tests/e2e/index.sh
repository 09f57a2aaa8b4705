#!/usr/bin/env bash
# mapscope index: `maps --at T` and `timeline` answer from FILE.msidx exactly
# as a replay of the recording does (forks, exec, munmap, mremap, threads),
# other commands do not change with it there, and an index that is cut
# short, has a byte flipped, or is older than its recording is ignored with
# one warning line and the replay's answer.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

ms_record summary.txt -o mo.data -- "$WORKLOADS/maps-oracle" >mo.txt
"$MAPSCOPE" index -i mo.data 2>index.err || fail "index exited $?: $(cat index.err)"
[ -s mo.data.msidx ] || fail "no mo.data.msidx after mapscope index"
[ ! -s index.err ] || fail "index said: $(cat index.err)"
pass "indexed"

# Both answers and exit statuses, stdout then stderr.
both() {
	"$MAPSCOPE" "$@" >a.out 2>a.err; echo "rc $?" >>a.out
	"$MAPSCOPE" "$@" --no-index >b.out 2>b.err; echo "rc $?" >>b.out
	cmp -s a.out b.out && cmp -s a.err b.err
}

"$MAPSCOPE" timeline --no-index --abs -i mo.data >tl.txt || fail "timeline exited $?"
# The instants: each change's time, a nanosecond before and after, up to 40 of them spread out.
awk 'NR > 1 { print $1 }' tl.txt | while read -r t; do echo $((t - 1)); echo "$t"; echo $((t + 1)); done | sort -un >times.all
step=$(( $(wc -l <times.all) / 40 + 1 ))
awk -v s="$step" 'NR % s == 1' times.all >times
pids=$(awk 'NR > 1 { print $2 }' tl.txt | sort -u)
thread=$(awk 'NR > 1 && $2 != $3 { print $3; exit }' tl.txt)
[ -n "$thread" ] || fail "the workload made no thread"
[ "$(echo "$pids" | wc -w)" -ge 2 ] || fail "the workload made no second process"
n=0
for p in $pids $thread; do
	for t in $(cat times) +0.001 end last; do
		both maps -i mo.data --pid "$p" --at "$t" || fail "maps --pid $p --at $t differs with the index: $(diff a.out b.out | head -5)"
		n=$((n + 1))
	done
done
pass "maps --at: $n answers the same with the index"

both timeline -i mo.data || fail "timeline differs with the index"
both timeline -i mo.data --format json --abs || fail "timeline --format json differs with the index"
first=$(head -1 times); last=$(tail -1 times)
mid=$(( (first + last) / 2 ))
for w in "$first,$mid" "$mid,$last" "$mid,$mid" "+0,+0.0005" ",$mid" "$mid,"; do
	for p in "" $pids; do
		both timeline -i mo.data --time "$w" ${p:+--pid $p} || fail "timeline --time $w ${p:+--pid $p} differs: $(diff a.out b.out | head -5)"
	done
done
grep -c . a.out >/dev/null
pass "timeline (whole, json, windows, per process) the same with the index"

# The index answers: a window of the timeline is printed without the replay (no progress, same text).
"$MAPSCOPE" timeline -i mo.data --time "$mid,$last" >w.txt
awk -v a="$mid" -v b="$last" 'NR == 1 || ($1 >= a && $1 <= b)' tl.txt >w.want
"$MAPSCOPE" timeline -i mo.data --abs --time "$mid,$last" >w.abs
cmp -s w.abs w.want || fail "timeline --time $mid,$last is not the changes of that window: $(diff w.abs w.want | head)"
pass "timeline --time holds the window's changes, ends included"

# Every other command: the same output with the index there and without.
for cmd in "report" "report --format json" "hugepages" "unmapped" "heatmap"; do
	$MAPSCOPE $cmd -i mo.data >with.out 2>with.err; echo "rc $?" >>with.out
	mv mo.data.msidx keep.msidx
	$MAPSCOPE $cmd -i mo.data >without.out 2>without.err; echo "rc $?" >>without.out
	mv keep.msidx mo.data.msidx
	cmp -s with.out without.out && cmp -s with.err without.err || fail "'$cmd' changes with the index there"
done
pass "other commands unchanged by the index"

# Damage: each is ignored with one warning, and the answer is the replay's.
p=$(echo "$pids" | head -1)
cp mo.data.msidx good.msidx
damaged() {  # what, then the check's name
	"$MAPSCOPE" maps -i mo.data --pid "$p" --at "$mid" >d.out 2>d.err; echo "rc $?" >>d.out
	"$MAPSCOPE" maps -i mo.data --pid "$p" --at "$mid" --no-index >n.out 2>n.err; echo "rc $?" >>n.out
	cmp -s d.out n.out || fail "$1: the answer differs from the replay's"
	[ "$(grep -c "warning: ignoring the index" d.err)" = 1 ] || fail "$1: no warning, or more than one: $(cat d.err)"
	grep "$2" d.err >/dev/null || fail "$1: the warning does not say '$2': $(cat d.err)"
	[ "$(($(wc -l <d.err) - $(wc -l <n.err)))" = 1 ] || fail "$1: more than one line added to stderr"
	"$MAPSCOPE" timeline -i mo.data --time "$mid,$last" >d.out 2>d.err
	"$MAPSCOPE" timeline -i mo.data --time "$mid,$last" --no-index >n.out
	cmp -s d.out n.out || fail "$1: timeline differs from the replay's"
	grep "warning: ignoring the index" d.err >/dev/null || fail "$1: timeline gave no warning"
	cp good.msidx mo.data.msidx
	pass "$1: ignored with a warning"
}
head -c $(( $(stat -c %s good.msidx) / 2 )) good.msidx >mo.data.msidx
damaged "an index cut short" "damaged"
cp good.msidx mo.data.msidx
size=$(stat -c %s good.msidx)
printf '\xa5' | dd of=mo.data.msidx bs=1 seek=$((size * 2 / 3)) conv=notrunc status=none
damaged "a byte flipped" "damaged"
head -c 64 /dev/urandom >mo.data.msidx
damaged "a foreign file" "no mapscope index"
cp mo.data mo2.data && cp mo2.data mo.data          # the same bytes, written again: newer than its index
damaged "a recording rewritten after indexing" "stale"
ms_record summary2.txt -o mo.data -- "$WORKLOADS/maps-oracle" >/dev/null
"$MAPSCOPE" maps -i mo.data --pid "$p" --at end >/dev/null 2>d.err || true
grep "stale" d.err >/dev/null || fail "an index of another recording at the same path is not stale: $(cat d.err)"
pass "an index of an earlier recording at the same path is stale"
