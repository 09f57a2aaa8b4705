#!/usr/bin/env bash
# Scale: a recording of one process with 500,000 mappings, each touched
# once (made by perfdata-craft.py), is read whole, and the counts are
# exact: 500,000 regions of one sample each. Memory stays bounded (under
# 1 GiB; bench/many-maps measures time and memory against the targets).
# Not timed. SCALE_MAPS=N sets the number of mappings.
source "$(dirname "$0")/lib.sh"
n=${SCALE_MAPS:-500000}
cd "$TMP"
command -v /usr/bin/time >/dev/null || skip "no /usr/bin/time to measure memory with"
python3 "$E2E_DIR/perfdata-craft.py" many-maps "$SRC_DIR/tests/golden/mapscope-ops.data" many.data "$n" ||
	fail "cannot make the recording"
/usr/bin/time -f '%M' -o rss.txt "$MAPSCOPE" report -i many.data --format json >r.json 2>err.txt ||
	fail "report of $n mappings exited $?: $(tail -3 err.txt)"
python3 - r.json "$n" <<'PY' || fail "the counts of $n mappings are wrong"
import json, sys
d, n = json.load(open(sys.argv[1])), int(sys.argv[2])
regions = [r for r in d["regions"] if r["samples"]]
ones = sum(r["samples"] == 1 and r["pages"] == 1 for r in regions)
print(f"{len(regions)} regions with samples, {ones} with one sample on one page, {d['samples']} samples")
sys.exit(not (len(regions) == n and ones == n and d["samples"] == n))
PY
kb=$(tail -1 rss.txt)
[ "$kb" -lt 1048576 ] || fail "report of $n mappings took $((kb / 1024)) MiB"
pass "$n mappings: every region and sample counted, in $((kb / 1024)) MiB"
