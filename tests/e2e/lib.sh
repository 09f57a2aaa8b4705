# Sourced by every end-to-end test. Exit 77 means "skipped", with the reason.
set -euo pipefail

: "${MAPSCOPE:?run under ctest, or set MAPSCOPE to the mapscope binary}"
: "${WORKLOADS:?set WORKLOADS to the built tests/workloads folder}"
: "${E2E_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"

TMP=$(mktemp -d /tmp/mapscope-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }

# Recording needs root (or CAP_PERFMON) and tracefs; perf is the peer.
need_recording() {
	[ "$(id -u)" -eq 0 ] || skip "recording needs root here (tracepoints, tracefs)"
	command -v perf >/dev/null || skip "perf is not installed (Debian package linux-perf)"
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

# expect_status WANT CMD...: runs CMD, fails unless it exits WANT.
expect_status() {
	local want=$1 got=0
	shift
	"$@" || got=$?
	[ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want"
}

# record_triggered WORKLOAD OUT DATA: starts WORKLOAD (it prints "ready", does
# its work on SIGUSR1, prints "touched", and exits on SIGUSR2) with its
# output in OUT, records it with -p into DATA around that work, and leaves
# it running (sent SIGUSR2 at exit). Sets wl to its pid.
record_triggered() {
	local out=$2 data=$3 rec
	"$1" >"$out" &
	wl=$!
	trap 'kill -USR2 $wl 2>/dev/null || true; rm -rf "$TMP"' EXIT
	for _ in $(seq 100); do grep -q '^ready' "$out" && break; sleep 0.05; done
	"$MAPSCOPE" record -p $wl -o "$data" 2>rec.txt &
	rec=$!
	for _ in $(seq 200); do grep -q 'recording 1 process' rec.txt && break; sleep 0.05; done
	grep -q 'recording 1 process' rec.txt || fail "record never said it was recording: $(cat rec.txt)"
	kill -USR1 $wl
	for _ in $(seq 200); do grep -q '^touched' "$out" && break; sleep 0.05; done
	grep -q '^touched' "$out" || fail "the workload did not do its work: $(cat "$out")"
	kill -INT $rec
	wait $rec || fail "record exited $?: $(cat rec.txt)"
}
