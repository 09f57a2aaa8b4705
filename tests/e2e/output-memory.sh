#!/usr/bin/env bash
# The outputs that draw every region (the HTML page, the SVG heatmap, the
# pprof profile) keep what the output needs, not a copy of the input: on
# a recording of N mappings, each touched once (perfdata-craft.py), each
# command's peak memory over the model's alone (heatmap --pid of a process
# the recording lacks) stays under a bound in bytes a mapping, and each
# output holds all N. At 100,000 mappings: the page 248 bytes a mapping
# over the model (540 when the bands were 80 bytes, the changes 80 and
# the report kept past its rows), the image 75 (98; 45 before the model's
# regions were made in blocks: the model alone shrank 7 MB more than the
# image's whole peak, 41 -> 32 MB, did), the profile 72-78 (80-82 with
# rows of 64 bytes that kept their region's pointer; 74 before the blocks;
# 87 when the packed samples waited whole for gzip). What the page holds is
# now mostly the report's rows and the hugepage advice of every region
# (lib/analysis/report.c, hugepages.c). Not timed. OUTPUT_MAPS=N sets the
# number of mappings; MAPSCOPE_MEMORY_FILES names real recordings to hold
# to 64 MiB too (below).
source "$(dirname "$0")/lib.sh"
n=${OUTPUT_MAPS:-100000}
cd "$TMP"
command -v /usr/bin/time >/dev/null || skip "no /usr/bin/time to measure memory with"
memory_bounds
/usr/bin/python3 "$E2E_DIR/perfdata-craft.py" many-maps "$SRC_DIR/tests/golden/mapscope-ops.data" many.data "$n" ||
	fail "cannot make the recording"
# The names kept from other runs (the cache's file for this build and these options, filled by every test
# before this one, up to 16 MiB) are mapped and read where looked up: its pages would count in the peak.
# The crafted recording's commands run with a name cache of their own, empty.
names_set=${MAPSCOPE_NAME_CACHE+set} names_saved=${MAPSCOPE_NAME_CACHE-}
export MAPSCOPE_NAME_CACHE="$TMP/names"
/usr/bin/time -f '%M' -o model.txt "$MAPSCOPE" heatmap -i many.data --pid 1 >/dev/null 2>&1 || true   # no samples: exits 1

# own NAME BYTES_A_MAPPING KB_FILE: the command's peak memory over the model's, within its bound.
own() {
	local over=$(( $(tail -1 "$3") - $(tail -1 model.txt) ))
	local most=$(($2 * slack / 2))
	[ "$over" -lt $((n * most / 1024)) ] ||
		fail "$1 of $n mappings took $((over / 1024)) MiB over the model's, $((over * 1024 / n)) bytes a mapping (at most $most)"
	echo "$1: $((over * 1024 / n)) bytes a mapping over the model's"
}

/usr/bin/time -f '%M' -o html.txt "$MAPSCOPE" report -i many.data --format html -o p.html 2>err.txt ||
	fail "report --format html of $n mappings exited $?: $(tail -3 err.txt)"
[ "$(grep -c '^{"id":' p.html)" -eq "$n" ] || fail "the page of $n mappings has $(grep -c '^{"id":' p.html) regions"
own "report --format html" 300 html.txt

/usr/bin/time -f '%M' -o svg.txt "$MAPSCOPE" heatmap -i many.data --format svg -o p.svg 2>err.txt ||
	fail "heatmap --format svg of $n mappings exited $?: $(tail -3 err.txt)"
[ "$(grep -c '<g class="band"' p.svg)" -eq "$n" ] || fail "the image of $n mappings drew $(grep -c '<g class="band"' p.svg) bands"
own "heatmap --format svg" 90 svg.txt

/usr/bin/time -f '%M' -o pprof.txt "$MAPSCOPE" report -i many.data --format pprof -o p.pb.gz 2>err.txt ||
	fail "report --format pprof of $n mappings exited $?: $(tail -3 err.txt)"
# The profile, gzipped in batches as its samples were packed, decodes whole: n samples of one each.
/usr/bin/python3 - p.pb.gz "$n" <<'PY' || fail "the profile of $n mappings is not n samples of one each"
import gzip, sys

def varint(b, i):
    v = s = 0
    while True:
        v |= (b[i] & 0x7f) << s
        s += 7
        i += 1
        if b[i - 1] < 0x80:
            return v, i

def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        if key & 7 == 0:
            v, i = varint(b, i)
            yield key >> 3, v
        elif key & 7 == 2:
            ln, i = varint(b, i)
            yield key >> 3, b[i:i + ln]
            i += ln
        else:
            raise ValueError("wire type %d" % (key & 7))

data, n = gzip.open(sys.argv[1]).read(), int(sys.argv[2])
samples = [s for f, s in fields(data) if f == 2]
firsts = [varint(v, 0)[0] for s in samples for f, v in fields(s) if f == 2]   # value: packed, samples first
print(f"{len(samples)} samples, {sum(firsts)} counted")
sys.exit(not (len(samples) == n and sum(firsts) == n))
PY
own "report --format pprof" 90 pprof.txt

# Real recordings named in MAPSCOPE_MEMORY_FILES (colon-separated): the profile and the page of each within
# 64 MiB. Only where named, and only for recordings made on this machine: their peak is mostly the symbol
# layer's, over the binaries they name as installed here, and a third of it the pages of those files libelf
# maps, which count 64 KiB to 1 MiB for each page touched as the page cache holds them (a decompressed debug
# file just written, in large folios: 220 KiB a touch). The chromium recording of ~120 binaries: ~55 MiB here.
IFS=: read -r -a named <<<"${MAPSCOPE_MEMORY_FILES:-}"
if [ -n "$names_set" ]; then export MAPSCOPE_NAME_CACHE="$names_saved"; else unset MAPSCOPE_NAME_CACHE; fi
for f in "${named[@]}"; do
	for fmt in pprof html; do
		/usr/bin/time -f '%M' -o real.txt "$MAPSCOPE" report -i "$f" --format "$fmt" -o real.out 2>err.txt ||
			fail "report --format $fmt of $f exited $?: $(tail -3 err.txt)"
		[ "$(tail -1 real.txt)" -lt $((64 * 1024 * slack / 2)) ] ||
			fail "report --format $fmt of $f peaked at $(tail -1 real.txt) KiB (at most $((64 * 1024 * slack / 2)))"
		echo "$f: report --format $fmt peaked at $(tail -1 real.txt) KiB"
	done
done
pass "$n mappings: html, svg and pprof each hold every region, within their bounds a mapping${named[*]:+; ${#named[@]} named recordings within 64 MiB}"
