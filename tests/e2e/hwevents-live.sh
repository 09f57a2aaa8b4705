#!/usr/bin/env bash
# record -e EVENT, live: where the machine has a PMU that samples data
# addresses (PEBS, IBS, SPE), its samples are recorded and the report
# decodes their data sources into its memory columns.
source "$(dirname "$0")/lib.sh"
need_recording
cd "$TMP"
pmus=/sys/bus/event_source/devices
has_pmu || skip "live hardware events: this machine has no hardware PMU (no cpu, cpu_core, armv*, ibs_op or arm_spe in $pmus)"
event=mem-loads
[ -d $pmus/ibs_op ] && event=ibs_op//
ls -d $pmus/arm_spe_* >/dev/null 2>&1 && event=arm_spe//
ms_record rec.txt -e $event -o live.data -- "$WORKLOADS/fault-loop"
"$MAPSCOPE" report -i live.data >report.txt 2>/dev/null || fail "report of a -e recording failed"
grep -q "tlb-miss level" report.txt || fail "no memory columns in the report of a -e recording"
pass "live $event: recorded, and the report has its memory columns"
