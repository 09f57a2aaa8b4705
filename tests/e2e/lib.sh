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
