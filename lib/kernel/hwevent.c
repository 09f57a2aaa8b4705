/*
 * Hardware data-address events by name (kernel/hwevent.h): the PMU's type
 * from sysfs, an alias from its events/ folder expanded into terms, and
 * each term placed in config, config1 or config2 by its format/ file
 * ("config1:0-15"), as perf does.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/hwevent.h"
#include "kernel/tracefs.h"

const char *ms_pmu_root(void)
{
	const char *env = getenv("MAPSCOPE_PMU_SYSFS");

	return env && *env ? env : MS_PMU_SYSFS;
}

static int say(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return err;
}

/* root/pmu/rel's text, its trailing newline cut. 0 or a negative errno. */
static int read_text(const char *root, const char *pmu, const char *rel, char *out, size_t len)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s/%s", root, pmu, rel);
	return ms_kernel_read_line(path, out, len);
}

/* The machine's core PMU (cpu, cpu_core, armv8_pmuv3_0, ...) into pmu, or false where it has none. */
static bool core_pmu(const char *root, char *pmu, size_t len)
{
	DIR *d = opendir(root);
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d))) {
		found = !strcmp(e->d_name, "cpu") || !strncmp(e->d_name, "cpu_core", 8) ||
			!strncmp(e->d_name, "armv", 4);
		if (found)
			snprintf(pmu, len, "%s", e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/* name's PMU folder: itself, or for arm_spe the first arm_spe_N. False where there is none. */
static bool find_pmu(const char *root, const char *name, char *pmu, size_t len)
{
	char type[32];
	struct dirent *e;
	bool found = false;
	DIR *d;

	if (!read_text(root, name, "type", type, sizeof(type))) {
		snprintf(pmu, len, "%s", name);
		return true;
	}
	if (strcmp(name, "arm_spe") || !(d = opendir(root)))
		return false;
	while (!found && (e = readdir(d)))
		if ((found = !strncmp(e->d_name, "arm_spe_", 8)))
			snprintf(pmu, len, "%s", e->d_name);
	closedir(d);
	return found;
}

/* Places value into *field's bits lo..hi. */
static void put_bits(__u64 *field, unsigned lo, unsigned hi, uint64_t value)
{
	uint64_t mask = hi - lo >= 63 ? ~0ULL : ((1ULL << (hi - lo + 1)) - 1);

	*field = (*field & ~(mask << lo)) | ((value & mask) << lo);
}

/*
 * A format ("config1:0-15", "config:0-7,32-35", "config:21"): value's bits
 * spread over its ranges, low bits first. 0 or -EINVAL.
 */
static int apply_format(const char *fmt, uint64_t value, struct perf_event_attr *a)
{
	const char *p = strchr(fmt, ':');
	__u64 *field;
	unsigned lo, hi;
	int used;

	if (!p)
		return -EINVAL;
	if (!strncmp(fmt, "config1:", 8))
		field = &a->config1;
	else if (!strncmp(fmt, "config2:", 8))
		field = &a->config2;
	else if (!strncmp(fmt, "config:", 7))
		field = &a->config;
	else
		return -EINVAL;
	for (p++; *p; p += *p == ',') {
		if (sscanf(p, "%u%n", &lo, &used) != 1)
			return -EINVAL;
		p += used;
		hi = lo;
		if (*p == '-' && sscanf(p + 1, "%u%n", &hi, &used) == 1)
			p += 1 + used;
		if (hi < lo || hi > 63)
			return -EINVAL;
		put_bits(field, lo, hi, value);
		value = hi - lo >= 63 ? 0 : value >> (hi - lo + 1);
	}
	return 0;
}

static int apply_terms(const char *root, const char *pmu, char *terms, struct perf_event_attr *a, int depth,
		       char *why, size_t len);

/* One term of pmu's: name=value, a flag (name: 1), or one of its event aliases. */
static int apply_term(const char *root, const char *pmu, char *term, struct perf_event_attr *a, int depth,
		      char *why, size_t len)
{
	char *eq = strchr(term, '='), *end, rel[300], text[512];
	uint64_t value = 1;

	if (eq) {
		*eq = '\0';
		value = strtoull(eq + 1, &end, 0);
		if (end == eq + 1 || *end)
			return say(why, len, -EINVAL, "the value of '%s' is not a number: '%s'", term, eq + 1);
	}
	if (!strcmp(term, "config") || !strcmp(term, "config1") || !strcmp(term, "config2")) {
		*(term[6] == '1' ? &a->config1 : term[6] == '2' ? &a->config2 : &a->config) = value;
		return 0;
	}
	if (!strcmp(term, "period")) {
		a->sample_period = value;
		return 0;
	}
	snprintf(rel, sizeof(rel), "format/%s", term);
	if (!read_text(root, pmu, rel, text, sizeof(text)))
		return apply_format(text, value, a) ?
		       say(why, len, -EINVAL, "PMU '%s' has a format for '%s' that does not parse: '%s'", pmu, term, text) : 0;
	snprintf(rel, sizeof(rel), "events/%s", term);
	if (!eq && depth == 0 && !read_text(root, pmu, rel, text, sizeof(text)))
		return apply_terms(root, pmu, text, a, depth + 1, why, len);
	return say(why, len, -ENOENT, "PMU '%s' has no event or term '%s' (see %s/%s/events and format)",
		   pmu, term, root, pmu);
}

/* Comma-separated terms, in place. */
static int apply_terms(const char *root, const char *pmu, char *terms, struct perf_event_attr *a, int depth,
		       char *why, size_t len)
{
	char *term, *save = NULL;
	int err;

	for (term = strtok_r(terms, ",", &save); term; term = strtok_r(NULL, ",", &save))
		if (*term && (err = apply_term(root, pmu, term, a, depth, why, len)))
			return err;
	return 0;
}

static int apply_modifiers(const char *mods, struct perf_event_attr *a, char *why, size_t len)
{
	for (; *mods; mods++) {
		if (*mods == 'p' && a->precise_ip < 3)
			a->precise_ip++;
		else if (*mods == 'P')
			a->precise_ip = 2;
		else if (*mods == 'u')
			a->exclude_kernel = 1;
		else if (*mods == 'k')
			a->exclude_user = 1;
		else
			return say(why, len, -EINVAL, "unknown event modifier '%c' (known: p, P, u, k)", *mods);
	}
	return 0;
}

/* PMU/TERMS/MODIFIERS. */
static int resolve_pmu_event(const char *root, const char *spec, struct perf_event_attr *a, char *why, size_t len)
{
	char buf[256], pmu[300], type[32], *terms, *mods;

	snprintf(buf, sizeof(buf), "%s", spec);
	terms = strchr(buf, '/');
	*terms++ = '\0';
	mods = strrchr(terms, '/');
	if (!mods)
		return say(why, len, -EINVAL, "'%s' has no closing '/': write PMU/TERMS/, such as cpu/mem-loads/P", spec);
	*mods++ = '\0';
	if (!find_pmu(root, buf, pmu, sizeof(pmu)))
		return say(why, len, -ENODEV, "this machine has no PMU '%s' (nothing in %s/%s)", buf, root, buf);
	if (read_text(root, pmu, "type", type, sizeof(type)))
		return say(why, len, -ENODEV, "cannot read the type of PMU '%s'", pmu);
	a->type = (uint32_t)strtoul(type, NULL, 10);
	return apply_terms(root, pmu, terms, a, 0, why, len) ?: apply_modifiers(mods, a, why, len);
}

/* dTLB-load-misses and its kin: PERF_TYPE_HW_CACHE. False where name is not one. */
static bool generic_cache_event(const char *name, struct perf_event_attr *a)
{
	static const struct { const char *name; uint64_t cache, op, result; } names[] = {
		{ "dTLB-load-misses", PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "dTLB-store-misses", PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "dTLB-loads", PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "L1-dcache-load-misses", PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "LLC-load-misses", PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i].name)) {
			a->type = PERF_TYPE_HW_CACHE;
			a->config = names[i].cache | names[i].op << 8 | names[i].result << 16;
			a->precise_ip = 2;      /* a data address needs the precise sample */
			return true;
		}
	return false;
}

int ms_hwevent_resolve(const char *root, const char *spec, struct perf_event_attr *a, char *why, size_t len)
{
	char pmu[256], full[300];
	int err;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	why[0] = '\0';
	if (!*spec || strlen(spec) >= 200)
		return say(why, len, -EINVAL, "an event name is 1 to 199 characters");
	if (strchr(spec, '/'))
		return resolve_pmu_event(root, spec, a, why, len);
	if (!core_pmu(root, pmu, sizeof(pmu)))
		return say(why, len, -ENODEV, "this machine has no hardware PMU (no cpu, cpu_core or armv* "
			   "in %s: a virtual machine without a virtual PMU?)", root);
	if (generic_cache_event(spec, a))
		return 0;
	/* An alias of the core PMU's; perf's mem-loads takes loads of 30 cycles and more. */
	snprintf(full, sizeof(full), "%s/%s%s/P", pmu, spec, !strcmp(spec, "mem-loads") ? ",ldlat=30" : "");
	err = resolve_pmu_event(root, full, a, why, len);
	if (err == -ENOENT && !strcmp(spec, "mem-loads")) {        /* no ldlat (not Intel): without it */
		snprintf(full, sizeof(full), "%s/%s/P", pmu, spec);
		memset(a, 0, sizeof(*a));
		a->size = sizeof(*a);
		err = resolve_pmu_event(root, full, a, why, len);
	}
	return err;
}
