#!/usr/bin/env bash
# Hugepage advice on a live workload: the dense 64 MiB region is advised
# with its exact span count, the sparse one is not, each with its reason;
# --apply then collapses the dense region and its AnonHugePages, read here
# from /proc/PID/smaps, must rise.
source "$(dirname "$0")/lib.sh"
need_recording
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo missing)
case "$thp" in *"[never]"*|missing) skip "transparent hugepages are off here ($thp)" ;; esac
cd "$TMP"

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
             and a["pages"] == 512 * o["spans"] and "dense" in a["reason"] and "MADV_HUGEPAGE" in a["action"]
    else:
        ok = not a["advised"] and "too sparse" in a["reason"] and a["pages"] == o["spans"]
    if not ok:
        print(f"FAIL: the {name} region's advice is wrong"); bad = 1
sys.exit(bad)
PY

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
pass "dense advised with its span count, sparse not; --apply raised AnonHugePages to $after kB"
