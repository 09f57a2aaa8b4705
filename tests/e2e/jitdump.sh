#!/usr/bin/env bash
# A jitdump, named by time: the jitcode workload loads jit_first at an
# address, then jit_second at the same address, then moves jit_second,
# running each over fresh pages. Each name must hold exactly the page
# faults its code made (the workload prints them), as perf inject --jit
# and perf report count them on the same file.
source "$(dirname "$0")/lib.sh"
need_recording
[ "$(uname -m)" = x86_64 ] || skip "the jitcode workload writes x86-64 code"
cd "$TMP"
"$MAPSCOPE" record -o jit.data -- "$WORKLOADS/jitcode" >jit.out 2>jit.rec || fail "record failed: $(cat jit.rec)"
ls jit-*.dump >/dev/null 2>&1 || fail "the workload wrote no jitdump: $(cat jit.out)"
"$MAPSCOPE" report -i jit.data --sort symbol --format json >ours.json 2>ours.err || fail "report failed: $(cat ours.err)"
! grep jitdump ours.err >/dev/null || fail "a warning about the jitdump: $(cat ours.err)"
# perf 6.1's inject --jit passes compressed records through unread (perf
# record -z's own too): it is given the same records, plain.
/usr/bin/python3 "$E2E_DIR/perfzstd.py" plain jit.data jit-plain.data || fail "cannot open jit.data's compressed records"
perf inject --jit -i jit-plain.data -o injected.data >/dev/null 2>&1 || fail "perf inject --jit failed on our file"
perf report -i injected.data --stdio --sort sym -F sample,sym >perf.txt 2>/dev/null || fail "perf report failed"

/usr/bin/python3 - jit.out ours.json perf.txt <<'PY' || fail "JIT code misnamed"
import json, sys
import perfscript
truth = {}
for line in open(sys.argv[1]):
    if line.startswith("code "):
        _, name, pages = line.split()
        truth[name] = truth.get(name, 0) + int(pages)
rows = {r["symbol"]: r for r in json.load(open(sys.argv[2]))["regions"]}
perf = perfscript.report_samples_by_symbol(open(sys.argv[3]).read())
bad = 0
for name, pages in truth.items():
    got = rows.get(name, {}).get("samples")
    ok = got == pages == perf.get(name)
    print(("ok: " if ok else "FAIL: ") + f"{name}: {got} samples, the workload made {pages}, perf {perf.get(name)}")
    bad |= not ok
if not bad and rows["jit_first"]["last_ns"] >= rows["jit_second"]["first_ns"]:
    print("FAIL: jit_first's samples are not all before jit_second's")
    bad = 1
sys.exit(bad)
PY
pass "jitdump: code at a reused and a moved address named by the time of each sample, as perf inject --jit names it"
