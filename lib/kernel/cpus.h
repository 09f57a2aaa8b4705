/* Internal: the CPUs online, one ring buffer each (kernel/live.c). */
#ifndef MS_KERNEL_CPUS_H
#define MS_KERNEL_CPUS_H

/* Parses a CPU list such as "0-3,6": the count, cpus filled up to max; -EINVAL where it does not parse. */
int ms_cpus_parse(const char *s, int *cpus, int max);

/* The CPUs online (/sys/devices/system/cpu/online) into cpus, up to max: their count, or a negative errno. */
int ms_cpus_online(int *cpus, int max);

#endif
