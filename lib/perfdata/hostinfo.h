/* Internal: the header features that describe this machine, as perf writes them. */
#ifndef MS_PERFDATA_HOSTINFO_H
#define MS_PERFDATA_HOSTINFO_H

#include "util/buf.h"

/*
 * Fills f[HEADER_CPUDESC], f[HEADER_CPUID], f[HEADER_CPU_TOPOLOGY],
 * f[HEADER_NUMA_TOPOLOGY], f[HEADER_PMU_MAPPINGS], f[HEADER_CACHE] and
 * f[HEADER_MEM_TOPOLOGY] (f indexed by feature bit) for nr_cpus CPUs;
 * leaves empty what this machine does not show.
 */
void ms_hostinfo_features(struct ms_buf *f, int nr_cpus);

#endif
