#!/usr/bin/env bash
# Bad input gets a clear message and the documented exit status: 2 for
# usage, 1 for runtime errors; nothing starts and no file is touched.
source "$(dirname "$0")/lib.sh"
cd "$TMP"

check() {  # check WANT_STATUS PATTERN CMD...
	local want=$1 pattern=$2 got=0
	shift 2
	"$@" >out.txt 2>err.txt || got=$?
	[ $got -eq "$want" ] || fail "'$*' exited $got, expected $want: $(cat err.txt)"
	grep -qE -- "$pattern" err.txt || fail "'$*' said '$(cat err.txt)', expected /$pattern/"
	echo "ok: $* -> $got: $(head -1 err.txt)"
}

check 2 "unknown option '--bogus'" "$MAPSCOPE" record --bogus -- true
check 2 "'frobnicate' is not a mapscope command" "$MAPSCOPE" frobnicate
check 2 "invalid ring buffer size '3'" "$MAPSCOPE" record -m 3 -- true
check 2 "invalid sample period '0'" "$MAPSCOPE" record -c 0 -- true
check 2 "invalid PID list '12x'" "$MAPSCOPE" record -p 12x
check 2 "nothing to record" "$MAPSCOPE" record
check 2 "either a command or -p" "$MAPSCOPE" record -p 1 -- true
check 2 "unsupported call-graph mode 'lbr'" "$MAPSCOPE" record --call-graph lbr -- true
check 2 "invalid PID list '1,,2'" "$MAPSCOPE" record -p 1,,2
check 2 "invalid PID list '1,'" "$MAPSCOPE" record -p 1,
check 2 "-c sets the fault sampling period, and --no-samples" "$MAPSCOPE" record --no-samples -c 5 -- true
check 2 "invalid time window '10,5': it ends before it starts" "$MAPSCOPE" report --time 10,5
check 2 "invalid time window '\+3,\+1': it ends before it starts" "$MAPSCOPE" report --time +3,+1
# A missing value is named as such, in every command that takes one.
for c in "report -i" "timeline -i" "maps -i" "unmapped -i" "hugepages -i" "record -o" "watch -p"; do
	# shellcheck disable=SC2086
	check 2 "option '${c#* }' needs a value" "$MAPSCOPE" $c
done
# Inputs that are not files say why.
check 1 "cannot read '$TMP': Is a directory" "$MAPSCOPE" report -i "$TMP"
check 1 "cannot read '/proc/self/mem'" "$MAPSCOPE" report -i /proc/self/mem
# A file that is not a recording is said so once, by every report format,
# however often report looks at the file.
printf 'not a recording\n' >notperf.data
for fmt in text json csv html; do
	check 1 "corrupt perf.data at byte offset 0" "$MAPSCOPE" report -i notperf.data --format $fmt
	[ "$(grep -c 'corrupt perf.data' err.txt)" -eq 1 ] || fail "report --format $fmt said it $(grep -c 'corrupt perf.data' err.txt) times: $(cat err.txt)"
done
# A file-mode recording through a pipe or a FIFO is not damaged: it is said what it is, and what to do.
ops="$SRC_DIR/tests/golden/mapscope-ops.data"
check 1 "standard input is a file-mode recording.*-i FILE.*record -o -" \
	bash -c "cat '$ops' | '$MAPSCOPE' report -i -"
! grep -q corrupt err.txt || fail "a file-mode recording on a pipe was called corrupt: $(cat err.txt)"
mkfifo ops.fifo
cat "$ops" >ops.fifo &
check 1 "'ops.fifo' is a file-mode recording, which cannot be read from a pipe or FIFO" "$MAPSCOPE" timeline -i ops.fifo
wait

pid=4000000
while [ -e /proc/$pid ]; do pid=$((pid + 1)); done
check 1 "cannot attach to process $pid: No such process" "$MAPSCOPE" record -p $pid
check 1 "cannot execute '/nonexistent/prog': No such file or directory" \
	"$MAPSCOPE" record -o x.data -- /nonexistent/prog
[ ! -e x.data ] || fail "a file was created for a command that cannot run"

need_recording
check 1 "cannot create '$TMP/no/such/dir/x.data': No such file or directory" \
	"$MAPSCOPE" record -o "$TMP/no/such/dir/x.data" -- sh -c "touch $TMP/ran"
[ ! -e "$TMP/ran" ] || fail "the command ran although the output could not be created"

# An existing file becomes FILE.old; a symlink at FILE is moved, never followed.
echo precious >target
ln -s target link.data
"$MAPSCOPE" record -o link.data -- true 2>/dev/null || fail "record over a symlink failed"
[ "$(cat target)" = precious ] || fail "the symlink's target was written"
[ -L link.data.old ] && [ -f link.data ] && [ ! -L link.data ] || fail "the symlink was not moved to link.data.old"
"$MAPSCOPE" record -o link.data -- true 2>/dev/null
[ -f link.data.old ] && [ ! -L link.data.old ] || fail "the older recording did not become link.data.old"
pass "existing files become FILE.old; symlinks are not followed"

# A FIFO or a device at FILE is refused, left as it is (renamed to FILE.old, a regular file took its
# place: as root, record -o /dev/null moved /dev/null itself).
mkfifo rec.fifo
check 1 "cannot write 'rec.fifo': it is not a regular file, and a recording's file is written out of order .for a pipe or a device: -o - writes pipe mode to stdout" \
	"$MAPSCOPE" record -o rec.fifo -- true
[ -p rec.fifo ] && [ ! -e rec.fifo.old ] || fail "record -o FIFO moved or replaced the FIFO"
ln -s rec.fifo fifo-link                      # a link to one, as /dev/stdout is: the link stays too
check 1 "cannot write 'fifo-link': it is not a regular file" "$MAPSCOPE" record -o fifo-link -- true
[ -L fifo-link ] && [ ! -e fifo-link.old ] || fail "record -o a link to a FIFO moved the link"
if mknod null-dev c 1 3 2>/dev/null; then
	check 1 "cannot write 'null-dev': it is not a regular file" \
		"$MAPSCOPE" record -o null-dev -- true
	[ -c null-dev ] && [ ! -e null-dev.old ] || fail "record -o a device moved or replaced it"
fi
pass "a FIFO or a device at FILE is refused and left alone"

# Without privileges the message names the fix that works here (mapscope setup), never a sysctl alone.
command -v setpriv >/dev/null || skip "setpriv is missing (util-linux)"
chmod 777 "$TMP"
# watch names the command it was asked to watch, not a pid the user never saw.
check 1 "cannot open the events that watch 'true'" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$MAPSCOPE" watch -- true
grep -q "mapscope setup --group" err.txt || fail "watch without privileges does not name the fix: $(cat err.txt)"
if grep -q "perf_event_paranoid=-1" err.txt; then
	fail "watch's hint names a sysctl that would not help: $(cat err.txt)"
fi
pass "without privileges, watch names 'mapscope setup', the fix that works here"
