/*
 * Internal: hardware data-address events under the names users know,
 * resolved to a perf_event_attr through the PMUs' sysfs files
 * (/sys/bus/event_source/devices/PMU/{type,events/,format/}), as perf
 * resolves them:
 *
 *   mem-loads, mem-stores         the core PMU's alias (mem-loads with ldlat=30), precise
 *   dTLB-load-misses, ...         a generic cache event (PERF_TYPE_HW_CACHE), precise
 *   cpu/mem-loads,ldlat=30/P      PMU/TERMS/MODIFIERS: an alias or format terms
 *   ibs_op//, arm_spe//           AMD IBS, Arm SPE (arm_spe names the first arm_spe_N)
 *
 * Modifiers: p (each raises precise_ip), P (precise_ip 2), u, k. Terms:
 * the PMU's format names, config, config1, config2, and period.
 *
 * The root is MS_PMU_SYSFS, or the environment's MAPSCOPE_PMU_SYSFS (a
 * debug variable: the tests point it at a fake tree).
 */
#ifndef MS_KERNEL_HWEVENT_H
#define MS_KERNEL_HWEVENT_H

#include <stddef.h>
#include <linux/perf_event.h>

#define MS_PMU_SYSFS "/sys/bus/event_source/devices"

/* The PMU root in use: MAPSCOPE_PMU_SYSFS where set, else MS_PMU_SYSFS. */
const char *ms_pmu_root(void);

/*
 * Fills a's type, config, config1, config2, precise_ip, exclusions and
 * sample period (0: the caller's default) for spec, and why it failed into
 * why[len] otherwise. 0, -ENODEV where the machine has no PMU that can
 * take it (no core PMU for a generic or core event, no IBS, no SPE),
 * -ENOENT where the PMU has no such event or term, -EINVAL where spec does
 * not parse.
 */
int ms_hwevent_resolve(const char *root, const char *spec, struct perf_event_attr *a, char *why, size_t len);

#endif
