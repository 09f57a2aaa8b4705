#!/usr/bin/env bash
# Profile-guided hugepages, end to end: record the payoff workload with
# its creating call chains (the mappings' allocation stacks, which record
# copies by default), save the advice (keyed by code, never by address),
# then run the workload again under `mapscope run --hugepages`
# and read /proc/PID/smaps of the new process while it waits: its hot and
# cold regions (dense: advised) are on hugepages, its sparse one (not
# advised) is not. The same workload run plainly has none (THP in madvise
# mode), --hugepages-all puts the sparse one on them too, and a statically
# linked copy and a raw mmap system call are out of the shim's reach.
#
# The advice is right only where every first touch was recorded: records
# lost take pages from the dense regions, and make_cold was then not
# advised. So the ring holds the whole run whenever record drains it: 1024
# pages a CPU (4 MiB) for about 27,000 samples of 56 bytes. (--call-graph
# dwarf, which copies 8 KiB of stack with each fault and which nothing here
# needs, lost 12,883 records of a loaded machine's run.) A recording that
# still lost some is skipped, with what it lost. Regions that live under
# 10 ms are never advised: the random reads keep the cold region, made
# last, alive some 35 ms after it is made on a quiet machine (25 ms with
# 100,000 reads, where dwarf's copies had slowed every fault).
source "$(dirname "$0")/lib.sh"
need_recording
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo missing)
case "$thp" in *"[madvise]"*) ;; *) skip "transparent hugepages are not in madvise mode here ($thp)" ;; esac
cd "$TMP"
args=(--hot 64 --sparse 64 --cold 32 --reads 1000000 --buffers 2)

ms_record rec.txt -m 1024 -o p.data -- "$WORKLOADS/payoff" "${args[@]}" >first.txt
all_recorded rec.txt
"$MAPSCOPE" hugepages -i p.data --save advice.json >advice.txt 2>save.txt || fail "--save failed: $(cat save.txt)"
grep -q 'saved to .advice.json.' save.txt || fail "--save did not say what it saved: $(cat save.txt)"
python3 - first.txt advice.json <<'PY' || fail "the saved advice is wrong: $(cat advice.json)"
import json, re, sys
regions = {m[0]: int(m[1], 16) for m in re.findall(r"region name=(\w+) start=0x([0-9a-f]+)", open(sys.argv[1]).read())}
adv = json.load(open(sys.argv[2]))
assert adv["format"] == "mapscope-hugepage-advice" and adv["version"] == 1
sites = {(r["site"] or "").split(" ")[0] for r in adv["rules"]}   # "make_hot (payoff.c:59) <- ..."
assert {"make_hot", "make_cold"} <= sites, sites
assert "make_sparse" not in sites, sites
for r in adv["rules"]:
    assert r["kind"] in ("anon", "heap", "shm") and 0 < r["size_class"] < 64 and r["frames"], r
    for f in r["frames"]:
        # An address in a binary, never one of the run's regions.
        assert int(f["vaddr"], 16) < 1 << 32 and len(f["build_id"]) == 40, f
print("rules:", sorted(s or "-" for s in sites))
# The shim's own work, apart from glibc's tunable: the rules without the heap's,
# and a file with the heap's alone, whose run must set the tunable.
json.dump(dict(adv, rules=[r for r in adv["rules"] if r["kind"] != "heap"]), open("shim.json", "w"))
frame = adv["rules"][0]["frames"]
json.dump(dict(adv, rules=[{"kind": "heap", "size_class": 20, "frames": frame}]), open("heap.json", "w"))
PY
pass "--save keys the advised regions by their code: make_hot and make_cold, not make_sparse"

# A recording without call chains keys nothing, and says why.
"$MAPSCOPE" hugepages -i "$SRC_DIR/tests/golden/mapscope-ops.data" --save none.json >/dev/null 2>none.txt ||
	fail "--save of a recording without chains failed: $(cat none.txt)"
grep -q 'for 0 advised regions' none.txt || grep -q 'had no call chain to key it by: record with mapscope record (it copies each mapping call.s stack, unless --no-alloc-stacks) or --call-graph dwarf' none.txt ||
	fail "--save did not say that the advised regions had no chain: $(cat none.txt)"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["rules"] == []' none.json || fail "rules without chains"
pass "--save of a recording without call chains: no rules, and the reason"

# run_wl OUT CMD...: starts CMD (payoff --wait) with stdin held open; sets wl to its pid once it is done.
run_wl() {
	local out=$1
	shift
	rm -f hold && mkfifo hold
	"$@" <hold >"$out" 2>"$out.err" &
	exec 3>hold
	wait_for '^done pid=' "$out" 30 || fail "$* did not finish its work: $(cat "$out" "$out.err")"
	wl=$(sed -n 's/^done pid=//p' "$out")
}
# huge_kb OUT NAME: AnonHugePages (kB) of the VMAs holding region NAME of the workload that wrote OUT.
huge_kb() {
	python3 - "$1" "$2" "/proc/$wl/smaps" <<'PY'
import re, sys
m = re.search(r"region name=%s start=0x([0-9a-f]+) end=0x([0-9a-f]+)" % sys.argv[2], open(sys.argv[1]).read())
lo, hi = int(m[1], 16), int(m[2], 16)
hit, total = False, 0
for line in open(sys.argv[3]):
    head = line.split()[0]
    if "-" in head and ":" not in head:
        s, e = (int(x, 16) for x in head.split("-"))
        hit = s < hi and lo < e
    elif hit and line.startswith("AnonHugePages:"):
        total += int(line.split()[1])
print(total)
PY
}
finish_wl() { exec 3>&-; wait "$wl" 2>/dev/null || true; }

run_wl guided.txt "$MAPSCOPE" run --hugepages shim.json -- "$WORKLOADS/payoff" "${args[@]}" --wait
hot=$(huge_kb guided.txt hot) cold=$(huge_kb guided.txt cold) sparse=$(huge_kb guided.txt sparse)
finish_wl
echo "guided: AnonHugePages hot=$hot kB cold=$cold kB sparse=$sparse kB"
[ "$hot" -gt 0 ] && [ "$cold" -gt 0 ] || fail "the advised regions are not on hugepages under run --hugepages"
[ "$sparse" -eq 0 ] || fail "the sparse region (not advised) got hugepages: $sparse kB"
pass "run --hugepages: AnonHugePages in the advised regions only"

run_wl heap.txt "$MAPSCOPE" run --hugepages heap.json -- "$WORKLOADS/payoff" "${args[@]}" --wait
tr '\0' '\n' <"/proc/$wl/environ" | grep -x 'GLIBC_TUNABLES=glibc.malloc.hugetlb=1' >/dev/null ||
	fail "advice for the heap did not set glibc's tunable in the child"
finish_wl

run_wl plain.txt "$WORKLOADS/payoff" "${args[@]}" --wait
hot=$(huge_kb plain.txt hot)
finish_wl
[ "$hot" -eq 0 ] || fail "the hot region got hugepages with no advice ($hot kB): THP is not in madvise mode"

run_wl all.txt "$MAPSCOPE" run --hugepages-all -- "$WORKLOADS/payoff" "${args[@]}" --wait
sparse=$(huge_kb all.txt sparse)
finish_wl
[ "$sparse" -gt 0 ] || fail "--hugepages-all left the sparse region on 4 KiB pages"
pass "without advice no hugepages; with --hugepages-all the sparse region too ($sparse kB)"

# A blind spot: a mapping made by the system call itself, not mmap(3), is not seen.
run_wl raw.txt "$MAPSCOPE" run --hugepages-all -- "$WORKLOADS/payoff" "${args[@]}" --wait --raw
sparse=$(huge_kb raw.txt sparse) hot=$(huge_kb raw.txt hot)
finish_wl
[ "$sparse" -eq 0 ] && [ "$hot" -gt 0 ] || fail "a raw mmap system call: sparse $sparse kB, hot $hot kB"
pass "a raw mmap system call is out of reach, as mapscope-run(1) says"

if [ -x "$WORKLOADS/payoff-static" ]; then
	run_wl static.txt "$MAPSCOPE" run --hugepages shim.json -- "$WORKLOADS/payoff-static" "${args[@]}" --wait
	hot=$(huge_kb static.txt hot)
	! grep -q mapscope-hugepages "/proc/$wl/maps" || fail "the shim is mapped into a static program?"
	finish_wl
	grep -q 'statically linked' static.txt.err || fail "run did not warn that the program is static: $(cat static.txt.err)"
	[ "$hot" -eq 0 ] || fail "a static program got hugepages through the shim? ($hot kB)"
	pass "a statically linked program: out of reach, and said so"
fi

# A program whose malloc is another shared allocator (jemalloc, as
# redis-server links it) frees with that allocator: the shim's malloc must
# hand out its memory, not glibc's, or the program crashes at its first
# free. The hot region (jemalloc maps it) is still advised, through mmap.
jemalloc=$(ldconfig -p 2>/dev/null | sed -n 's/.*libjemalloc\.so\.2 .*=> //p' | head -1)
if ldd "$MAPSCOPE" | grep libasan >/dev/null; then
	echo "note: the foreign-allocator case is not checked in a sanitizer build (ASan must come first in LD_PRELOAD's place); the plain build checks it"
elif [ -n "$jemalloc" ]; then
	run_wl je.txt env LD_PRELOAD="$jemalloc" "$MAPSCOPE" run --hugepages-all -- "$WORKLOADS/payoff" "${args[@]}" --wait
	hot=$(huge_kb je.txt hot)
	grep -q libjemalloc "/proc/$wl/maps" || fail "jemalloc is not loaded in the workload"
	finish_wl
	grep -q '^memory rss_kb=' je.txt || fail "the workload died under jemalloc and the shim: $(cat je.txt.err)"
	[ "$hot" -gt 0 ] || fail "jemalloc's mapping of the hot region was not advised ($hot kB)"
	pass "a program with another shared allocator (jemalloc): runs, and its mappings are advised"
else
	echo "note: libjemalloc.so.2 is not installed: the foreign-allocator case is not checked"
fi

# What run says when it cannot: each with its exit status and its subject.
expect_status 127 "$MAPSCOPE" run --hugepages shim.json -- no-such-command-here 2>err.txt
grep -q "cannot run 'no-such-command-here'" err.txt || fail "a missing command is not named: $(cat err.txt)"
echo '{"rules": 1}' >bad.json
expect_status 1 "$MAPSCOPE" run --hugepages bad.json -- true 2>err.txt
grep -q "cannot read 'bad.json': not a hugepage advice file" err.txt || fail "a bad file is not refused: $(cat err.txt)"
expect_status 2 "$MAPSCOPE" run -- true 2>err.txt
expect_status 3 "$MAPSCOPE" run --hugepages shim.json -- sh -c 'exit 3'
pass "run: a missing command (127), a bad advice file (1), bad usage (2); the command's own status"
