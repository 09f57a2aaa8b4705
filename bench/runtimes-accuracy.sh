#!/usr/bin/env bash
# The freeze oracle (bench/freeze-oracle.py) on the runtimes people profile:
# each is recorded from its start and attached to, frozen at N instants,
# and every process's /proc/PID/maps compared with mapscope maps. Prints
# one K/N line each; the table in docs/ACCURACY.md comes from here. Heavy
# (a JVM, chromium): a benchmark, not a test. Runtimes not installed are
# skipped with a line saying so. Every run is made twice: with the kernel's
# VMA tree writes (maple_tree:ma_write, the default where the kernel has
# them) and with --no-vma-tree (the model's rules alone).
#
# The second part, the syscall-stop check (tests/tools/syscall-stop),
# stops each program at the exit of every address-space syscall (and
# unlink, rename, exec, clone), every task stopped, and compares the
# caller's /proc/TID/maps then with mapscope maps at that instant: K/N over
# every such instant, not a few chosen ones. It runs node, python3, a JVM
# with THP, headless chromium, and the kernel's mm selftests where Debian's
# linux-source package is installed (built here from its tarball).
# usage: bench/runtimes-accuracy.sh [MAPSCOPE] [freeze|stops] [LABEL-REGEX]
# (both parts by default; with a regex, the syscall-stop runs whose label matches)
set -uo pipefail
M=$(realpath "${1:-build/mapscope}")
part=${2:-all}
only=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
tracer=$(dirname "$M")/tests/workloads/syscall-stop
check=$here/../tests/tools/syscall-stop-check.py
work=$(mktemp -d /tmp/runtimes.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
oracle() {
	timeout 300 python3 "$here/freeze-oracle.py" "$M" --quiet "$@" | tail -1
	timeout 300 python3 "$here/freeze-oracle.py" "$M" --quiet --record-opt=--no-vma-tree "$@" |
		tail -1 | sed 's/$/ (--no-vma-tree)/'
}
have() { command -v "$1" >/dev/null || { echo "$1: not installed, skipped"; return 1; }; }

# [EVERY=N] LABEL CMD...: the syscall-stop check's K/N, with the VMA tree's
# writes and without. The checker replays the recording once per snapshot:
# EVERY=N checks every Nth snapshot only (chromium takes over 10,000); with
# THIN=REGEX, every Nth of the calls it matches and every other one.
stops() {
	local label=$1 mode k every=${EVERY:-1} f=$work/ss
	shift
	[[ -n $only && ! $label =~ $only ]] && return
	for mode in tree no-tree; do
		k=()
		[ "$mode" = no-tree ] && k=(--no-vma-tree)
		rm -f "$f.data" "$f.snap"
		timeout 900 "$M" record "${k[@]}" -o "$f.data" -- "$tracer" -o "$f.snap" -- "$@" >"$f.out" 2>"$f.err"
		awk -v n="$every" -v thin="${THIN:-.*}" \
			'/^snapshot /{keep = $4 !~ ":(" thin ")$" || (i++ % n == 0)} keep' "$f.snap" >"$f.sample"
		echo "$label, syscall-stop${k:+ ${k[*]}}${EVERY:+, every ${every}th snapshot of $(grep -c '^snapshot ' "$f.snap")}:" \
			"$(timeout 1800 python3 "$check" --no-fail --max-diffs 0 "$M" "$f.sample" "$f.data" |
			   grep -E ' exact$|^by call' | tac | paste -sd ' ')"
	done
}

stop_runs() {
	[ -x "$tracer" ] || { echo "syscall-stop: no tracer at $tracer (build the tests), skipped"; return; }
	if have node; then
		stops "node (allocation loop, 3 s)" node -e \
			'let a=[];const t=setInterval(()=>{for(let i=0;i<1e5;i++)a.push({i:i,s:"x"+i});if(a.length>1e6)a=[];},10);setTimeout(()=>clearInterval(t),3000)'
	fi
	stops "python3 (allocation loop)" /usr/bin/python3 -c \
		'a=[]
for i in range(300):
    a.append(bytearray(100000))
    if len(a) > 300: a = []'
	if have java; then
		cat >Alloc3.java <<'J'
public class Alloc3 { public static void main(String[] a) throws Exception { java.util.List<byte[]> l = new java.util.ArrayList<>(); for (int i = 0; i < 600; i++) { l.add(new byte[100000]); if (l.size() > 2000) l.clear(); } } }
J
		stops "JVM, G1 with -XX:+UseTransparentHugePages" java -Xmx256m -XX:+UseTransparentHugePages Alloc3.java
	fi
	if have chromium; then
		EVERY=20 stops "headless chromium (--dump-dom of a page)" chromium --headless --no-sandbox --disable-gpu \
			--no-first-run --disable-background-networking --disable-component-update --disable-sync \
			--user-data-dir="$work/chromium-ss" --dump-dom 'data:text/html,<p>x</p>'
	fi
	mm_selftests
}

# The kernel's mm selftests, from Debian's linux-source-X.Y tarball where it
# is installed (or from MM_SELFTESTS, a tools/testing/selftests/mm built
# already). Those that fail to build (hugetlb, liburing) are skipped.
mm_selftests() {
	local tarball bin=${MM_SELFTESTS:-} t
	if [ -z "$bin" ]; then
		tarball=$(ls /usr/src/linux-source-*.tar.* 2>/dev/null | tail -1)
		[ -n "$tarball" ] || { echo "mm selftests: linux-source not installed (apt-get install linux-source), skipped"; return; }
		tar -xf "$tarball" -C "$work" --wildcards '*/tools/testing/selftests/*' '*/tools/include/*' \
			'*/include/uapi/*' '*/scripts/*' '*/usr/include/*' '*/mm/*.h' 2>/dev/null
		bin=$(ls -d "$work"/linux-source-*/tools/testing/selftests/mm 2>/dev/null | head -1)
		[ -n "$bin" ] && make -s -k -C "$bin" -j2 >mm-build.log 2>&1 ||
			echo "mm selftests: some did not build (see the log): those are skipped"
	fi
	# uffd-unit-tests makes about 190,000 snapshots, 99.7% of them at ioctls: the
	# checker replays the recording for each, so only every 500th ioctl's is checked. virtual_address_range
	# is left out: each of its ~260,000 mmaps would snapshot up to 262,144 lines.
	for t in ${MM_TESTS:-mseal_test uffd-unit-tests pagemap_ioctl mremap_test mremap_dontunmap mlock2-tests \
		 map_fixed_noreplace map_populate madv_populate cow mdwe_test droppable mkdirty soft-dirty \
		 on-fault-limit seal_elf ksm_functional_tests khugepaged ksm_tests memfd_secret \
		 gup_test gup_longterm split_huge_page_test protection_keys_64 \
		 pkey_sighandler_tests_64 hugepage-mmap hugepage-mremap hugepage-shm hugepage-vmemmap \
		 mrelease_test compaction_test}; do
		[ -x "$bin/$t" ] || { echo "mm selftest $t: not built, skipped"; continue; }
		case $t in
		uffd-unit-tests) (cd "$bin" && EVERY=${EVERY:-500} THIN=ioctl stops "mm selftest $t" "./$t") ;;
		*) (cd "$bin" && stops "mm selftest $t" "./$t") ;;
		esac
	done
}

if [ "$part" = stops ]; then
	stop_runs
	exit 0
fi

if have node; then
	loop='let a=[];setInterval(()=>{for(let i=0;i<1e5;i++)a.push({i:i,s:"x"+i});if(a.length>1e6)a=[];},10)'
	oracle --label "node (allocation loop)" -- node -e "$loop"
	oracle --label "node (allocation loop)" --attach -- node -e "$loop"
	workers='const {Worker}=require("worker_threads");for(let k=0;k<3;k++)new Worker(`let a=[];setInterval(()=>{for(let i=0;i<5e4;i++)a.push({i});if(a.length>5e5)a=[]},10)`,{eval:true});setInterval(()=>{},1000)'
	oracle --label "node (3 worker threads)" -- node -e "$workers"
fi
if have python3; then
	py='import time
a=[]
while True:
    a.append(bytearray(100000))
    if len(a) > 300: a = []
    time.sleep(0.001)'
	oracle --label "python3 (allocation loop)" -- python3 -c "$py"
	oracle --label "python3 (allocation loop)" --attach -- python3 -c "$py"
fi
if have java; then
	cat >Alloc.java <<'J'
public class Alloc { public static void main(String[] a) throws Exception { java.util.List<byte[]> l = new java.util.ArrayList<>(); while (true) { l.add(new byte[100000]); if (l.size() > 2000) l.clear(); Thread.sleep(1); } } }
J
	oracle --label "JVM, G1" --every 1 -- java -Xmx256m Alloc.java
	oracle --label "JVM, ZGC" --every 1 -- java -Xmx256m -XX:+UseZGC Alloc.java
	oracle --label "JVM, G1 with -XX:+UseTransparentHugePages" --every 1 -- java -Xmx256m -XX:+UseTransparentHugePages Alloc.java
fi
if have redis-server; then
	oracle --label "redis-server" --every 1 -- redis-server --port 6399 --save ""
	oracle --label "redis-server" --every 1 --attach -- redis-server --port 6398 --save ""
fi
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)
if [ -n "$pgbin" ] && id postgres >/dev/null 2>&1; then
	# A server and a client loop that starts a backend (a fork) per query.
	mkdir -p "$work/pg" && chown postgres "$work/pg" && chmod 755 "$work"
	runuser -u postgres -- "$pgbin/initdb" -D "$work/pg/data" >/dev/null
	load() {
		while sleep 0.05; do
			runuser -u postgres -- "$pgbin/psql" -h "$work/pg" -p "$1" -d postgres -qAtc \
				"select count(*) from generate_series(1, 200000) g, lateral (select repeat('x', 100)) r" \
				>/dev/null 2>&1
		done
	}
	load 5499 & loader=$!
	oracle --label "postgres (a backend per query)" --every 1 -- runuser -u postgres -- "$pgbin/postgres" \
		-D "$work/pg/data" -p 5499 -k "$work/pg" -c listen_addresses=
	kill $loader 2>/dev/null
else
	echo "postgres: not installed, skipped"
fi
if have chromium; then
	page='data:text/html,<script>setInterval(()=>{let a=[];for(let i=0;i<2e5;i++)a.push({i:i});},20)</script>'
	oracle --label "headless chromium (9 processes)" --snapshots 3 --every 1.5 -- chromium --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$work/chromium" "$page"
fi
[ "$part" = freeze ] || stop_runs
