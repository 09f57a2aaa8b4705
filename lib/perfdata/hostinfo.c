/*
 * The header features that describe the machine, laid out as perf 6.1
 * writes them (tools/perf/util/header.c): HOSTNAME, OSRELEASE, ARCH,
 * NRCPUS, TOTAL_MEM, CLOCKID, CLOCK_DATA, CPUDESC, CPUID, CPU_TOPOLOGY,
 * NUMA_TOPOLOGY, PMU_MAPPINGS, CACHE and MEM_TOPOLOGY, and empty
 * BPF_PROG_INFO, BPF_BTF and PMU_CAPS. perf's tools expect
 * them: perf data convert --to-json dereferences the CPU description and
 * id without checking. Everything comes from uname(), sysinfo(), the
 * clocks, /proc and /sys; what cannot be read is left out, feature by
 * feature, as perf does.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perfdata/format.h"
#include "perfdata/hostinfo.h"

/* The first line of path, without its newline, into buf. 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	char *nl;

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return 0;
}

static long read_long(const char *path, int base, long dflt)
{
	char buf[64], *end;
	long v;

	if (read_line(path, buf, sizeof(buf)))
		return dflt;
	v = strtol(buf, &end, base);
	return end == buf ? dflt : v;
}

/* The value of the first "key<spaces>: value" line of /proc/cpuinfo. */
static int cpuinfo(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512], *colon, *v;
	size_t k = strlen(key);
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, k) || (line[k] != ' ' && line[k] != '\t' && line[k] != ':'))
			continue;
		colon = strchr(line, ':');
		if (!colon)
			continue;
		for (v = colon + 1; *v == ' '; v++)
			;
		v[strcspn(v, "\n")] = 0;
		snprintf(out, len, "%s", v);
		ret = 0;
	}
	fclose(f);
	return ret;
}

static void cpu_desc(struct ms_buf *b)
{
	char v[256];

	if (!cpuinfo("model name", v, sizeof(v)) || !cpuinfo("cpu model", v, sizeof(v)))
		ms_buf_perf_string(b, v);
}

/* x86: vendor,family,model,stepping; arm64: MIDR_EL1 in hex, as perf's get_cpuid writes them. */
static void cpu_id(struct ms_buf *b)
{
	char vendor[64], fam[16], model[16], step[16], id[128];
	long midr;

	if (!cpuinfo("vendor_id", vendor, sizeof(vendor)) && !cpuinfo("cpu family", fam, sizeof(fam)) &&
	    !cpuinfo("model", model, sizeof(model)) && !cpuinfo("stepping", step, sizeof(step))) {
		snprintf(id, sizeof(id), "%s,%s,%s,%s", vendor, fam, model, step);
		ms_buf_perf_string(b, id);
		return;
	}
	midr = read_long("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", 16, -1);
	if (midr >= 0) {
		snprintf(id, sizeof(id), "0x%016lx", (unsigned long)midr);
		ms_buf_perf_string(b, id);
	}
}

/* Appends s to the set of n strings (each at most 256 bytes) unless it is there. */
static void add_unique(char (*set)[256], uint32_t *n, const char *s)
{
	uint32_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(set[i], s))
			return;
	snprintf(set[(*n)++], 256, "%s", s);
}

static void put_strings(struct ms_buf *b, char (*set)[256], uint32_t n)
{
	uint32_t i;

	ms_buf_u32(b, n);
	for (i = 0; i < n; i++)
		ms_buf_perf_string(b, set[i]);
}

/*
 * Sibling lists of cores, threads and (x86) dies, then each CPU's core,
 * socket and die id; -1 for a CPU that is offline.
 */
static void cpu_topology(struct ms_buf *b, int nr_cpus)
{
	char (*cores)[256] = calloc((size_t)nr_cpus, 256), (*threads)[256] = calloc((size_t)nr_cpus, 256);
	char (*dies)[256] = calloc((size_t)nr_cpus, 256);
	char path[128], line[256];
	uint32_t nc = 0, nt = 0, nd = 0;
	bool has_dies;
	int cpu;

	if (!cores || !threads || !dies)
		goto out;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_siblings_list", cpu);
		if (!read_line(path, line, sizeof(line)))
			add_unique(cores, &nc, line);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
		if (!read_line(path, line, sizeof(line)))
			add_unique(threads, &nt, line);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/die_cpus_list", cpu);
		if (!read_line(path, line, sizeof(line)))
			add_unique(dies, &nd, line);
	}
	if (!nc || !nt)
		goto out;
	put_strings(b, cores, nc);
	put_strings(b, threads, nt);
#define TOPO(cpu, file) \
	(snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/" file, cpu), \
	 (uint32_t)read_long(path, 10, -1))
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		ms_buf_u32(b, TOPO(cpu, "core_id"));
		ms_buf_u32(b, TOPO(cpu, "physical_package_id"));
	}
#if defined(__x86_64__) || defined(__i386__)
	has_dies = nd > 0;                   /* perf writes dies on x86 only */
#else
	has_dies = false;
#endif
	if (has_dies) {
		put_strings(b, dies, nd);
		for (cpu = 0; cpu < nr_cpus; cpu++)
			ms_buf_u32(b, TOPO(cpu, "die_id"));
	}
#undef TOPO
out:
	free(cores);
	free(threads);
	free(dies);
}

/* Parses "0-3,5" into bits of set (up to nbits). */
static void parse_list(const char *s, unsigned char *set, int nbits)
{
	char *end;
	long a, z;

	while (*s) {
		a = strtol(s, &end, 10);
		if (end == s)
			return;
		z = a;
		if (*end == '-')
			z = strtol(end + 1, &end, 10);
		for (; a <= z && a < nbits; a++)
			if (a >= 0)
				set[a / 8] |= (unsigned char)(1 << (a % 8));
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s)
			return;
	}
}

#define MAX_NODES 1024

/* The online NUMA nodes, as a bitmap; their number. */
static int online_nodes(unsigned char *set)
{
	char line[256];
	int i, n = 0;

	memset(set, 0, MAX_NODES / 8);
	if (read_line("/sys/devices/system/node/online", line, sizeof(line)))
		return 0;
	parse_list(line, set, MAX_NODES);
	for (i = 0; i < MAX_NODES; i++)
		n += set[i / 8] >> (i % 8) & 1;
	return n;
}

/* A "Node N MemTotal:   123 kB" line of a node's meminfo, in kB. */
static uint64_t node_mem(int node, const char *key)
{
	char path[128], line[256];
	unsigned long long v = 0;
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, key)) && sscanf(p + strlen(key), " %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void numa_topology(struct ms_buf *b)
{
	unsigned char set[MAX_NODES / 8];
	char path[128], cpus[256];
	int node, n = online_nodes(set);

	if (!n)
		return;
	ms_buf_u32(b, (uint32_t)n);
	for (node = 0; node < MAX_NODES; node++) {
		if (!(set[node / 8] >> (node % 8) & 1))
			continue;
		ms_buf_u32(b, (uint32_t)node);
		ms_buf_u64(b, node_mem(node, "MemTotal:"));
		ms_buf_u64(b, node_mem(node, "MemFree:"));
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
		if (read_line(path, cpus, sizeof(cpus)))
			cpus[0] = 0;
		ms_buf_perf_string(b, cpus);
	}
}

/* Each PMU's type and name, from /sys/bus/event_source/devices. */
static void pmu_mappings(struct ms_buf *b)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *e;
	char path[512];
	size_t start = b->len;
	uint32_t n = 0;
	long type;

	if (!d)
		return;
	ms_buf_u32(b, 0);                    /* the count, filled in below */
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", e->d_name);
		if ((type = read_long(path, 10, -1)) < 0)
			continue;
		ms_buf_u32(b, (uint32_t)type);
		ms_buf_perf_string(b, e->d_name);
		n++;
	}
	closedir(d);
	if (!n || ms_buf_error(b))
		b->len = start;
	else
		memcpy(b->data + start, &n, 4);
}

struct cache {
	uint32_t level, line, sets, ways;
	char type[32], size[32], map[128];
};

/* The caches of every CPU, each once (level, type and the CPUs that share it). */
static void caches(struct ms_buf *b, int nr_cpus)
{
	struct cache *c = calloc((size_t)nr_cpus * 8 + 1, sizeof(*c)), one;
	char dir[128], path[192];
	uint32_t n = 0, i;
	int cpu, idx;

	if (!c)
		return;
	for (cpu = 0; cpu < nr_cpus; cpu++)
		for (idx = 0; idx < 8; idx++) {
			snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu%d/cache/index%d", cpu, idx);
			memset(&one, 0, sizeof(one));
#define NUM(f) (snprintf(path, sizeof(path), "%s/" f, dir), (uint32_t)read_long(path, 10, 0))
#define STR(f, dst) (snprintf(path, sizeof(path), "%s/" f, dir), read_line(path, dst, sizeof(dst)))
			if (!(one.level = NUM("level")))
				break;           /* no such index: this CPU's caches are done */
			one.line = NUM("coherency_line_size");
			one.sets = NUM("number_of_sets");
			one.ways = NUM("ways_of_associativity");
			if (STR("type", one.type) || STR("size", one.size) || STR("shared_cpu_list", one.map))
				continue;
#undef NUM
#undef STR
			for (i = 0; i < n; i++)
				if (c[i].level == one.level && !strcmp(c[i].type, one.type) &&
				    !strcmp(c[i].map, one.map))
					break;
			if (i == n && n < (uint32_t)nr_cpus * 8)
				c[n++] = one;
		}
	for (i = 1; i < n; i++) {             /* by level, in the order found within one, as perf lists them */
		uint32_t j = i;

		one = c[i];
		for (; j > 0 && c[j - 1].level > one.level; j--)
			c[j] = c[j - 1];
		c[j] = one;
	}
	if (n) {
		ms_buf_u32(b, 1);                /* version */
		ms_buf_u32(b, n);
		for (i = 0; i < n; i++) {
			ms_buf_u32(b, c[i].level);
			ms_buf_u32(b, c[i].line);
			ms_buf_u32(b, c[i].sets);
			ms_buf_u32(b, c[i].ways);
			ms_buf_perf_string(b, c[i].type);
			ms_buf_perf_string(b, c[i].size);
			ms_buf_perf_string(b, c[i].map);
		}
	}
	free(c);
}

/*
 * Memory blocks per node: version, block size, then per node its number,
 * the count of block indexes and a bitmap of the blocks it holds.
 */
static void mem_topology(struct ms_buf *b)
{
	unsigned char set[MAX_NODES / 8];
	char path[128];
	uint64_t *bits, nbits, bs = (uint64_t)read_long("/sys/devices/system/memory/block_size_bytes", 16, 0);
	struct dirent *e;
	int node, n = online_nodes(set);
	long idx, max;
	DIR *d;

	if (!n || !bs)
		return;
	ms_buf_u64(b, 1);                    /* version */
	ms_buf_u64(b, bs);
	ms_buf_u64(b, (uint64_t)n);
	for (node = 0; node < MAX_NODES; node++) {
		if (!(set[node / 8] >> (node % 8) & 1))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
		max = -1;
		bits = NULL;
		for (int pass = 0; pass < 2; pass++) {   /* the largest index, then the bits */
			if (!(d = opendir(path)))
				break;
			while ((e = readdir(d)))
				if (sscanf(e->d_name, "memory%ld", &idx) == 1 && idx >= 0) {
					if (!pass && idx > max)
						max = idx;
					else if (pass && bits && idx <= max)
						bits[idx / 64] |= 1ULL << (idx % 64);
				}
			closedir(d);
			if (!pass && max >= 0 && !(bits = calloc((size_t)max / 64 + 1, 8)))
				break;
		}
		nbits = (uint64_t)(max + 1);
		ms_buf_u64(b, (uint64_t)node);
		ms_buf_u64(b, nbits);
		ms_buf_u64(b, nbits);
		if (bits)
			ms_buf_append(b, bits, (size_t)((nbits + 63) / 64) * 8);
		else
			ms_buf_zero(b, (size_t)((nbits + 63) / 64) * 8);
		free(bits);
	}
}

void ms_hostinfo_features(struct ms_buf *f)
{
	int nr_cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	struct utsname u;
	struct sysinfo si;

	if (!uname(&u)) {
		ms_buf_perf_string(&f[HEADER_HOSTNAME], u.nodename);
		ms_buf_perf_string(&f[HEADER_OSRELEASE], u.release);
		ms_buf_perf_string(&f[HEADER_ARCH], u.machine);
	}
	ms_buf_u32(&f[HEADER_NRCPUS], (uint32_t)nr_cpus);
	ms_buf_u32(&f[HEADER_NRCPUS], (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
	if (!sysinfo(&si))
		ms_buf_u64(&f[HEADER_TOTAL_MEM], (uint64_t)si.totalram * si.mem_unit / 1024);
	cpu_desc(&f[HEADER_CPUDESC]);
	cpu_id(&f[HEADER_CPUID]);
	cpu_topology(&f[HEADER_CPU_TOPOLOGY], nr_cpus);
	numa_topology(&f[HEADER_NUMA_TOPOLOGY]);
	pmu_mappings(&f[HEADER_PMU_MAPPINGS]);
	caches(&f[HEADER_CACHE], nr_cpus);
	mem_topology(&f[HEADER_MEM_TOPOLOGY]);
	/*
	 * perf 6.1 writes these on every recording: BPF programs and BTF loaded
	 * during it, and PMU capabilities. mapscope records none: a count of 0.
	 */
	ms_buf_u32(&f[HEADER_BPF_PROG_INFO], 0);
	ms_buf_u32(&f[HEADER_BPF_BTF], 0);
	ms_buf_u32(&f[HEADER_PMU_CAPS], 0);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void ms_hostinfo_clock(struct ms_buf *f, int clockid)
{
	struct timespec res;

	clock_getres(clockid, &res);
	ms_buf_u64(&f[HEADER_CLOCKID], (uint64_t)res.tv_sec * 1000000000ULL + (uint64_t)res.tv_nsec);
	ms_buf_u32(&f[HEADER_CLOCK_DATA], 1);                /* version */
	ms_buf_u32(&f[HEADER_CLOCK_DATA], (uint32_t)clockid);
	ms_buf_u64(&f[HEADER_CLOCK_DATA], clock_ns(CLOCK_REALTIME));
	ms_buf_u64(&f[HEADER_CLOCK_DATA], clock_ns(clockid));
}
