/* Internal: the header features that describe this machine, as perf writes them. */
#ifndef MS_PERFDATA_HOSTINFO_H
#define MS_PERFDATA_HOSTINFO_H

#include "util/buf.h"

/*
 * Fills f[HEADER_HOSTNAME], f[HEADER_OSRELEASE], f[HEADER_ARCH],
 * f[HEADER_NRCPUS], f[HEADER_TOTAL_MEM], f[HEADER_CPUDESC],
 * f[HEADER_CPUID], f[HEADER_CPU_TOPOLOGY], f[HEADER_NUMA_TOPOLOGY],
 * f[HEADER_PMU_MAPPINGS], f[HEADER_CACHE] and f[HEADER_MEM_TOPOLOGY] (f
 * indexed by feature bit), and the empty sections perf writes; leaves
 * empty what this machine does not show.
 */
void ms_hostinfo_features(struct ms_buf *f);

/*
 * Fills f[HEADER_CLOCKID] (clockid's resolution in ns) and
 * f[HEADER_CLOCK_DATA] (version 1, clockid, then CLOCK_REALTIME and
 * clockid read now, in ns), which let perf put wall-clock times on the
 * records' timestamps.
 */
void ms_hostinfo_clock(struct ms_buf *f, int clockid);

#endif
