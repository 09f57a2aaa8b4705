#!/usr/bin/env bash
# unmapped's null pages end at the recording machine's vm.mmap_min_addr,
# which record writes into the recording (mapscope:sysctl): synthetic
# recordings (ms-synth) of loads at 0x100 and 0x2000 say 4096, 65536 or
# nothing, and 0x2000 is a NULL pointer's only below 65536; a recording
# without the setting takes 64 KiB and says so. A real recording carries
# this machine's value, perf script prints it, and perf report and perf
# inject read the file.
source "$(dirname "$0")/lib.sh"
cd "$TMP"
synth="$WORKLOADS/ms-synth"

# classes FILE: "class:address:count" of each access, sorted, then the limit and whether it was recorded.
classes() {
	"$MAPSCOPE" unmapped -i "$1" --format json >classes.json 2>/dev/null || fail "unmapped -i $1 failed"
	python3 - classes.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted("%s:%s:%d" % (a["class"], a["address"], a["count"]) for a in d["accesses"])),
      d.get("null_page_limit"), d.get("null_page_limit_recorded"))
PY
}
"$synth" nullpage-4096 low.data >low.truth || fail "ms-synth nullpage-4096 failed"
"$synth" nullpage-65536 high.data >high.truth || fail "ms-synth nullpage-65536 failed"
"$synth" nullpage none.data >none.truth || fail "ms-synth nullpage failed"
grep -q "0x100 2 by 0x400010, 0x2000 3 by 0x400020" low.truth || fail "the ground truth changed: $(cat low.truth)"
got=$(classes low.data)
[ "$got" = "never-mapped:0x2000:3 null-page:0x100:2 4096 True" ] ||
	fail "vm.mmap_min_addr 4096: 0x2000 is above the null pages, 0x100 below; got: $got"
got=$(classes high.data)
[ "$got" = "null-page:0x100:2 null-page:0x2000:3 65536 True" ] ||
	fail "vm.mmap_min_addr 65536: both below it; got: $got"
got=$(classes none.data)
[ "$got" = "null-page:0x100:2 null-page:0x2000:3 65536 False" ] ||
	fail "no vm.mmap_min_addr: 64 KiB, said to be the default; got: $got"
"$MAPSCOPE" unmapped -i low.data | grep "^# null-page: below 0x1000, the recording machine's vm.mmap_min_addr$" \
	>/dev/null || fail "the text does not say the recorded limit: $("$MAPSCOPE" unmapped -i low.data)"
"$MAPSCOPE" unmapped -i none.data | grep "^# null-page: below 0x10000, the usual vm.mmap_min_addr: the recording" \
	>/dev/null || fail "the text does not say the limit is a default: $("$MAPSCOPE" unmapped -i none.data)"
perf script -i low.data 2>/dev/null | grep "mapscope:sysctl: vm.mmap_min_addr=4096$" >/dev/null ||
	fail "perf script does not print the setting: $(perf script -i low.data 2>&1 | head -3)"
pass "a load at 0x2000 is never-mapped under vm.mmap_min_addr 4096, null-page under 65536 and without it (said)"

need_recording
[ -r /proc/sys/vm/mmap_min_addr ] || skip "no /proc/sys/vm/mmap_min_addr"
min=$(cat /proc/sys/vm/mmap_min_addr)
ms_record rec.txt -o null.data -- "$WORKLOADS/nullpage" >/dev/null
perf script -i null.data >script.txt 2>script.err || fail "perf script failed: $(cat script.err)"
grep "mapscope:sysctl: vm.mmap_min_addr=$min$" script.txt >/dev/null ||
	fail "perf script shows no vm.mmap_min_addr=$min: $(grep sysctl script.txt)"
perf report -i null.data --stdio >report.txt 2>report.err || fail "perf report failed: $(cat report.err)"
perf inject -i null.data -o inj.data 2>inj.err || fail "perf inject failed: $(cat inj.err)"
got=$(classes inj.data)
[ "${got##* }" = True ] && [ "$(echo "$got" | cut -d' ' -f3)" = "$min" ] ||
	fail "after perf inject the recorded limit is gone: $got"
pass "record writes vm.mmap_min_addr=$min; perf script prints it, perf report and perf inject read the file"
