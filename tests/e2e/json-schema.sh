#!/usr/bin/env bash
# docs/json-schema.md against real output: every command's --format json on
# the golden recordings and on a recording of badaccess (freed, guard and
# never-mapped accesses, with call chains) and the advice file hugepages
# --save writes, checked field by field, both
# ways, by check-json-schema.py. Every output must also decode as strict UTF-8.
source "$(dirname "$0")/lib.sh"
need_recording
golden="$SRC_DIR/tests/golden"
cd "$TMP"

"$MAPSCOPE" record --call-graph fp -o bad.data -- "$WORKLOADS/badaccess" >/dev/null 2>&1 || fail "record failed"
# Ongoing access (record --referenced): the report's access fields.
"$MAPSCOPE" record --referenced=20 -o ref.data -- "$WORKLOADS/hotcold" 0.3 >/dev/null 2>&1 || fail "record --referenced failed"
# Page faults of user mode only (perf's page-faults:u, as an ordinary user records): user_mode_faults.
perf record -q -d -e page-faults:u -o user.data -- "$WORKLOADS/badaccess" >/dev/null 2>&1 || fail "perf record -e page-faults:u failed"
# Bad prefetches from uprobes (record --prefetches): unmapped's nearest mappings and prefetch sites.
"$MAPSCOPE" record --prefetches -o pf.data -- "$WORKLOADS/prefetch" freed >/dev/null 2>&1 ||
	fail "record --prefetches failed"
# Hardware memory samples (PEBS style), which this machine cannot take: the report's memory fields.
"$WORKLOADS/ms-synth" pebs hw.data >/dev/null || fail "ms-synth failed"
# Loads in the null pages, with the recording machine's vm.mmap_min_addr: unmapped's null_page_limit.
"$WORKLOADS/ms-synth" nullpage-4096 null.data >/dev/null || fail "ms-synth nullpage failed"
runs=()
n=0
# json LABEL ARGS...: runs mapscope ARGS into a file checked as LABEL.
json() {
	local label=$1
	shift
	n=$((n + 1))
	"$MAPSCOPE" "$@" >"out$n.json" 2>/dev/null || fail "mapscope $* exited $?"
	runs+=("$label=out$n.json")
}
# A record the kernel lost: every output carries its "losses".
python3 "$E2E_DIR/perfdata-craft.py" lost "$golden/mapscope-ops.data" lost.data 10 || fail "cannot craft a file with losses"
for f in "$golden/mapscope-ops.data" "$golden/perf-ops.data" bad.data lost.data ref.data hw.data user.data pf.data null.data; do
	json report report -i "$f" --format json --children 3
	json report-grouped report -i "$f" --format json --sort region,symbol
	json report-grouped report -i "$f" --format json --sort dso,daddr-symbol,alloc
	json timeline timeline -i "$f" --format json
	json hugepages hugepages -i "$f" --format json
	json hugepages hugepages -i "$f" --format json --budget 2M
	json unmapped unmapped -i "$f" --format json
done
# The advice file of hugepages --save, from a recording with the creating call chains: the
# mappings' allocation stacks, copied by default. (--call-graph dwarf copied 8 KiB of stack with
# each of its 4,100 faults too, and lost 350 to 2,808 records of each run on a loaded machine: its
# rules hung on the losses, and on dwarf's slowing the program past the 10 ms a region must live
# to be advised.) The ring holds the whole run; one that lost records anyway is said. The random
# reads keep the regions alive: about 50 ms here, none advised with 1,000 reads (4-9 ms).
"$MAPSCOPE" record -m 1024 -o pay.data -- "$WORKLOADS/payoff" --hot 8 --sparse 8 --cold 8 --reads 10000000 \
	--buffers 0 >/dev/null 2>pay.err || fail "record of payoff failed: $(cat pay.err)"
grep ', 0 records lost' pay.err >/dev/null || echo "note: the recording of payoff lost records: $(cat pay.err)"
"$MAPSCOPE" hugepages -i pay.data --save advice.json >/dev/null 2>&1 || fail "hugepages --save failed"
runs+=("advice=advice.json")
# And from the file with lost records: the advice file's "losses".
"$MAPSCOPE" hugepages -i lost.data --save advice-lost.json >/dev/null 2>&1 || fail "hugepages --save of lost.data failed"
runs+=("advice=advice-lost.json")
python3 "$E2E_DIR/check-json-schema.py" "$SRC_DIR/docs/json-schema.md" "${runs[@]}" ||
	fail "the JSON output and docs/json-schema.md differ"
pass "every field documented, every documented field seen, in ${#runs[@]} outputs"
