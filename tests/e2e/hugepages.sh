#!/usr/bin/env bash
# Hugepage advice on a live workload: the dense 64 MiB region is advised
# with its exact span count, the sparse one is not, each with its reason;
# a recording of 1 fault in 16 (-c 16) of the same workload gives the same
# advice, said to be an estimate; --apply then collapses the dense region
# and its AnonHugePages, read here from /proc/PID/smaps, must rise; applied
# again, it says the range is on hugepages already.
source "$(dirname "$0")/lib.sh"
need_recording
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo missing)
case "$thp" in *"[never]"*|missing) skip "transparent hugepages are off here ($thp)" ;; esac
cd "$TMP"

# The advice of 1 fault in 16, kept to compare: the same workload, recorded first and let go.
record_triggered "$WORKLOADS/huge" huge16.txt h16.data -c 16
kill -USR2 $wl
"$MAPSCOPE" hugepages -i h16.data --format json >advice16.json || fail "hugepages (-c 16) failed"

record_triggered "$WORKLOADS/huge" huge.txt h.data

"$MAPSCOPE" hugepages -i h.data --format json >advice.json || fail "hugepages failed"
"$MAPSCOPE" hugepages -i h.data >advice.txt || fail "hugepages (text) failed"
python3 - huge.txt advice.json <<'PY' || fail "wrong advice"
import json, sys
import perfscript
ops = {o["name"]: o for o in perfscript.parse_workload(open(sys.argv[1]).read()) if o["op"] == "region"}
adv = json.load(open(sys.argv[2]))["advice"]
bad = 0
for name, o in ops.items():
    a = next((a for a in adv if int(a["region"]["start"], 16) <= o["start"] and o["end"] <= int(a["region"]["end"], 16)), None)
    if a is None:
        print(f"FAIL: no advice entry for the {name} region"); bad = 1; continue
    print(f"{name}: advised={a['advised']} spans={a['spans']} pages={a['pages']} faults={a['faults']} reason: {a['reason']}")
    if name == "dense":
        ok = a["advised"] and a["spans"] == o["spans"] and int(a["start"], 16) == o["start"] and int(a["end"], 16) == o["end"] \
             and a["pages"] == 512 * o["spans"] and "dense" in a["reason"] and "MADV_HUGEPAGE" in a["action"] \
             and f"now: mapscope hugepages --apply -p {a['pid']}" in a["action"]
    else:
        ok = not a["advised"] and "too sparse" in a["reason"] and a["pages"] == o["spans"]
    if not ok:
        print(f"FAIL: the {name} region's advice is wrong"); bad = 1
sys.exit(bad)
PY

python3 - huge16.txt advice16.json advice.json huge.txt <<'PY' || fail "-c 16 and a full recording advise differently"
import json, sys
import perfscript
def advice(wl, js):
    ops = {o["name"]: o for o in perfscript.parse_workload(open(wl).read()) if o["op"] == "region"}
    adv = json.load(open(js))["advice"]
    return {n: next(a for a in adv if int(a["region"]["start"], 16) <= o["start"] and o["end"] <= int(a["region"]["end"], 16))
            for n, o in ops.items()}
c16, full = advice(sys.argv[1], sys.argv[2]), advice(sys.argv[4], sys.argv[3])
bad = 0
for name in ("dense", "sparse"):
    a, b = c16[name], full[name]
    print(f"{name}: -c 16: advised={a['advised']} spans={a['spans']} pages={a['pages']} estimated={a['estimated']} "
          f"reason: {a['reason']}")
    same = a["advised"] == b["advised"] and a["spans"] == b["spans"] and \
           a["reason"].split(":")[0] == b["reason"].split(":")[0]
    if not same or not a["estimated"] or a["sample_period"] != 16 or "1 in 16 faults" not in a["reason"] \
       or b["estimated"] or b["sample_period"] != 1:
        print(f"FAIL: {name}: full recording: advised={b['advised']} spans={b['spans']} reason: {b['reason']}"); bad = 1
# 1 in 16 of 16384 faults, each standing for 16 pages: the dense region's pages, within a span's sampling noise.
if abs(c16["dense"]["pages"] - 16384) > 512:
    print(f"FAIL: -c 16 estimates {c16['dense']['pages']} pages of the dense region, not about 16384"); bad = 1
sys.exit(bad)
PY
pass "1 fault in 16 advises as every fault does, and says it is an estimate"

dense_start=$(sed -n 's/^region name=dense start=0x\([0-9a-f]*\).*/\1/p' huge.txt)
smaps_huge() {  # AnonHugePages (kB) of the VMA holding the dense region
	python3 -c '
import sys
want, hit = int(sys.argv[1], 16), False
for line in open(sys.argv[2]):
    head = line.split()[0]
    if "-" in head and ":" not in head:
        s, e = (int(x, 16) for x in head.split("-"))
        hit = s <= want < e
    elif hit and line.startswith("AnonHugePages:"):
        print(line.split()[1]); break
' "$dense_start" "/proc/$wl/smaps"
}
before=$(smaps_huge)
# Without ptrace access to the process, --apply and --dry-run say so and promise nothing.
if command -v setpriv >/dev/null; then
	chmod 755 "$TMP" && chmod 644 h.data
	for dry in --dry-run ""; do
		status=0
		# shellcheck disable=SC2086
		setpriv --reuid=65534 --regid=65534 --clear-groups "$MAPSCOPE" hugepages -i h.data --apply -p $wl $dry \
			>np.txt 2>&1 || status=$?
		[ $status -eq 1 ] || fail "--apply $dry without access exited $status: $(cat np.txt)"
		grep -q 'needs ptrace access' np.txt || fail "--apply $dry without access does not say why: $(cat np.txt)"
		! grep -qE 'would collapse|AnonHugePages -1' np.txt || fail "--apply $dry without access promised: $(cat np.txt)"
	done
	pass "without ptrace access, --apply and --dry-run say what is needed"
fi
"$MAPSCOPE" hugepages -i h.data --apply -p $wl --dry-run >dry.txt || fail "--dry-run failed: $(cat dry.txt)"
grep -q 'would collapse' dry.txt || fail "--dry-run did not list the range: $(cat dry.txt)"
[ "$(smaps_huge)" = "$before" ] || fail "--dry-run changed AnonHugePages"
# MADV_COLLAPSE may answer EAGAIN ("try again") on a busy machine: up to three tries.
for try in 1 2 3; do
	status=0
	"$MAPSCOPE" hugepages -i h.data --apply -p $wl >apply.txt 2>&1 || status=$?
	cat apply.txt
	[ $status -eq 0 ] && break
	grep -q 'try again' apply.txt || fail "--apply failed: $(cat apply.txt)"
	sleep 0.5
done
[ $status -eq 0 ] || fail "--apply failed three times: $(cat apply.txt)"
after=$(smaps_huge)
echo "AnonHugePages of the dense region, from smaps: $before kB -> $after kB"
[ "$after" -gt "$before" ] || fail "AnonHugePages did not rise"
# Again: the kernel collapses a huge span "successfully" and changes nothing; say so.
"$MAPSCOPE" hugepages -i h.data --apply -p $wl >again.txt 2>&1 || fail "--apply again failed: $(cat again.txt)"
cat again.txt
grep -q 'already on hugepages' again.txt || fail "--apply again does not say the range is huge already"
pass "dense advised with its span count, sparse not; --apply raised AnonHugePages to $after kB"
