# Sourced by every end-to-end test. Exit 77 means "skipped", with the reason.
set -euo pipefail

: "${MAPSCOPE:?run under ctest, or set MAPSCOPE to the mapscope binary}"
: "${WORKLOADS:?set WORKLOADS to the built tests/workloads folder}"
: "${E2E_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"

# The checkers' shared parsers (perfscript.py) import alike from a file or a heredoc.
export PYTHONPATH="$E2E_DIR${PYTHONPATH:+:$PYTHONPATH}"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }

# /dev/null must stay the device: a test run as root that puts a regular file in its place
# (-o renamed over it did) makes every later ">/dev/null" a write, and cat's time in bench/ a copy.
null_intact() { [ -c /dev/null ] || { echo "FAIL: /dev/null is a $(stat -c %F /dev/null), not the device$1"; exit 1; }; }
null_intact ": a test before this one replaced it"

TMP=$(mktemp -d /tmp/mapscope-e2e.XXXXXX)
trap 'rm -rf "$TMP"; null_intact ": this test replaced it"' EXIT

# For tests that bound a command's peak memory: under ASan, freed blocks wait in a
# quarantine and would count as the command's (none here), and redzones make every
# block larger, so bounds are half as large again there. Sets slack to 2, or 3 under
# ASan: a bound B is B * slack / 2.
memory_bounds() {
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
	slack=2
	grep -a -m1 __asan_init "$MAPSCOPE" >/dev/null 2>&1 && slack=3
	return 0
}

# Recording needs root (or CAP_PERFMON) and tracefs; perf is the peer.
need_recording() {
	[ "$(id -u)" -eq 0 ] || skip "recording needs root here (tracepoints, tracefs)"
	command -v perf >/dev/null || skip "perf is not installed (Debian package linux-perf)"
}

# ms_record ERR ARGS...: mapscope record ARGS, its summary (stderr) in ERR; fails with it if record does.
ms_record() {
	local err=$1
	shift
	"$MAPSCOPE" record "$@" 2>"$err" || fail "record $* exited $?: $(cat "$err")"
}

# wait_for PATTERN FILE [SECONDS]: until a line of FILE matches PATTERN (5 s at most); 1 if none did.
wait_for() {
	local _
	for _ in $(seq $((${3:-5} * 20))); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# start_spinner OUT: starts the spinner workload (it prints "ready", then maps
# and unmaps until killed) with its output in OUT, killed at exit; sets spinner to its pid.
start_spinner() {
	"$WORKLOADS/spinner" >"$1" &
	spinner=$!
	trap 'kill $spinner 2>/dev/null || true; rm -rf "$TMP"; null_intact ": this test replaced it"' EXIT
	wait_for '^ready' "$1" || fail "the spinner did not start: $(cat "$1")"
}

# perf script in the fixed layout perfscript.py parses.
perf_script() {
	perf script -i "$1" --show-mmap-events --show-task-events \
		-F sw:pid,tid,time,event,addr,ip -F trace:pid,tid,time,event,trace 2>"$TMP/perf-script.err"
}

# The sample count from mapscope's summary line in file $1: every sample record, syscalls included.
summary_samples() {
	sed -n 's/^mapscope: \([0-9]*\) samples (.*/\1/p' "$1"
}

# Of them, the samples with a data address (page faults).
summary_data_samples() {
	sed -n 's/^mapscope: [0-9]* samples (\([0-9]*\) data addresses.*/\1/p' "$1"
}

# all_recorded ERR...: for a test whose figures need every record, from rings
# that hold the whole run: skips, saying what was lost, where a recording
# whose summary (record's stderr) is in ERR still lost records.
all_recorded() {
	local err lost
	for err; do
		lost=$(sed -n 's/^mapscope: [0-9]* samples .*, \([0-9]*\) records lost, .*/\1/p' "$err")
		[ -n "$lost" ] || fail "record's summary does not say how many records it lost: $(cat "$err")"
		[ "$lost" = 0 ] || skip "a recording lost $lost records with rings that hold the whole run: $(cat "$err")"
	done
}

# expect_status WANT CMD...: runs CMD, fails unless it exits WANT.
expect_status() {
	local want=$1 got=0
	shift
	"$@" || got=$?
	[ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want"
}

# record_triggered WORKLOAD OUT DATA [RECORD-OPTION...]: starts WORKLOAD (it
# prints "ready", does its work on SIGUSR1, prints "touched", and exits on
# SIGUSR2) with its output in OUT, records it with -p into DATA around that
# work, and leaves it running (sent SIGUSR2 at exit). Sets wl to its pid.
record_triggered() {
	local out=$2 data=$3 rec
	"$1" >"$out" &
	wl=$!
	trap 'kill -USR2 $wl 2>/dev/null || true; rm -rf "$TMP"; null_intact ": this test replaced it"' EXIT
	wait_for '^ready' "$out" || true
	"$MAPSCOPE" record -p $wl -o "$data" "${@:4}" 2>rec.txt &
	rec=$!
	wait_for 'recording 1 process' rec.txt 10 || fail "record never said it was recording: $(cat rec.txt)"
	kill -USR1 $wl
	wait_for '^touched' "$out" 10 || fail "the workload did not do its work: $(cat "$out")"
	kill -INT $rec
	wait $rec || fail "record exited $?: $(cat rec.txt)"
}
