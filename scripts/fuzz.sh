#!/usr/bin/env bash
# Runs each libFuzzer harness for SECONDS (default 60), as CI does, from
# the checked-in recordings and every earlier finding (tests/golden/bad).
# A finding fails the run: its input is left in the build folder, to be
# kept under tests/golden/bad/ as a regression input once fixed.
# usage: scripts/fuzz.sh BUILD-FOLDER [SECONDS]
set -euo pipefail
build=$1
secs=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/mapscope-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/reader" "$work/tracing" "$work/cli" "$work/jitfiles" "$work/namecache" "$src/tests/golden/bad"

# Seeds: the golden recordings; their tracing data alone for the format parser.
python3 - "$src/tests/golden/mapscope-ops.data" "$work/tracing/seed" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
h = struct.unpack_from("<13Q", d, 0)
off, feat = h[5] + h[6], h[9:13]
bits = [b for b in range(256) if feat[b // 64] >> (b % 64) & 1]
if bits and bits[0] == 1:          # TRACING_DATA is the lowest bit: the table's first entry
    o, s = struct.unpack_from("<QQ", d, off)
    open(sys.argv[2], "wb").write(d[o:o + s])
PY
printf '1,2,3' >"$work/cli/pids"
printf '+1.5' >"$work/cli/time"
# A perf map (first byte odd) and a jitdump of pid 7 with one load (even).
printf '\00118c4000 300 Builtin:X\n0x7f0000001000 0x40 JS:*f a.js:1:1\n' >"$work/jitfiles/perfmap"
python3 -c '
import struct, sys
rec = struct.pack("<IIQIIQQQQ", 0, 16 + 40 + 2, 5, 7, 7, 0x1000, 0x1000, 0x40, 1) + b"f\0"
sys.stdout.buffer.write(b"\2" + struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, 7, 1, 0) + rec)' \
	>"$work/jitfiles/jitdump"

status=0
# A file of kept answers: a header, 64 slots (one used), an answer.
python3 -c '
import struct, sys
slots = [b"\0" * 24] * 64
slots[1] = struct.pack("<QQII", 0x41, 0x44, 0, 6)
sys.stdout.buffer.write(b"MSNAMES1" + struct.pack("<QQQQQ", 0x1234, 0x5678, 64, 1, 6) + b"".join(slots) + b"site\0\0")' \
	>"$work/namecache/one"

for h in reader tracing cli jitfiles namecache; do
	seeds=("$work/$h" "$src/tests/golden/bad")
	[ $h = reader ] && seeds+=("$src/tests/golden")
	echo "fuzz: $h for $secs s"
	if ! (cd "$build/fuzz" && \
		./fuzz_$h -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		"${seeds[@]}" >"$work/$h.log" 2>&1); then
		tail -40 "$work/$h.log"
		echo "fuzz: $h found a failure; its input: $(ls "$build"/fuzz/crash-* "$build"/fuzz/leak-* \
			"$build"/fuzz/timeout-* "$build"/fuzz/oom-* 2>/dev/null | tr '\n' ' ')"
		status=1
	else
		grep -E 'stat::number_of_executed_units' "$work/$h.log" | sed "s/^/fuzz: $h: /"
	fi
done
exit $status
