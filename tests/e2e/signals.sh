#!/usr/bin/env bash
# However a recording ends (SIGINT or SIGTERM to mapscope, the command
# killed by a signal, the command failing), the file is complete, the exit
# status says the recording worked, and the command's own status is told.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"

valid() {  # the file is complete: perf reads it and sees the command's exec
	perf_script "$1" >"$1.script" || fail "$2: perf script failed: $(cat "$TMP/perf-script.err")"
	grep -q "PERF_RECORD_COMM exec: $3" "$1.script" || fail "$2: no COMM exec of '$3' in the file"
}

for sig in INT TERM; do
	"$MAPSCOPE" record -o $sig.data -- sleep 30 2>$sig.txt &
	rec=$!
	for _ in $(seq 100); do [ -s $sig.data ] && break; sleep 0.05; done
	sleep 0.3
	kill -$sig $rec
	status=0; wait $rec || status=$?
	cat $sig.txt
	[ $status -eq 0 ] || fail "SIG$sig: record exited $status"
	grep -q "'sleep' was killed by signal 15" $sig.txt || fail "SIG$sig: the command's end is not reported"
	grep -q "stopped by signal" $sig.txt || fail "SIG$sig: the summary does not say it was stopped"
	valid $sig.data "SIG$sig" sleep
	pass "SIG$sig to mapscope: complete file, command ended and reported"
done

status=0
"$MAPSCOPE" record -o segv.data -- sh -c 'kill -SEGV $$' 2>segv.txt || status=$?
cat segv.txt
[ $status -eq 0 ] || fail "command killed by SIGSEGV: record exited $status"
grep -q "'sh' was killed by signal 11" segv.txt || fail "the command's signal is not reported"
valid segv.data "SIGSEGV" sh
pass "command killed by a signal: complete file, signal reported"

status=0
"$MAPSCOPE" record -o three.data -- sh -c 'exit 3' 2>three.txt || status=$?
[ $status -eq 0 ] || fail "command exiting 3: record exited $status"
grep -q "'sh' exited with status 3" three.txt || fail "the command's exit status is not reported: $(cat three.txt)"
pass "command exit status 3 reported, recording status 0"
