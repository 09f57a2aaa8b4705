/*
 * mapscope run --hugepages FILE -- CMD: profile-guided hugepages. It reads
 * the rules `hugepages --save` wrote, and becomes CMD with the shim
 * mapscope-hugepages.so preloaded, so that each new mapping that matches a
 * rule is advised (MADV_HUGEPAGE) as it is made; where a rule is for glibc
 * malloc's heap, GLIBC_TUNABLES=glibc.malloc.hugetlb=1 too. It execs: CMD
 * keeps our PID, and its exit status is ours.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advice-file.h"
#include "cli.h"
#include "commands.h"
#include "launch.h"
#include "parse-options.h"

#define SHIM "mapscope-hugepages.so"

static const struct cli_usage usage = {
	.cmd = "run",
	.column = 24,
	.head =
"usage: mapscope run --hugepages FILE [-v] -- CMD [ARGS...]\n"
"       mapscope run --hugepages-all [-v] -- CMD [ARGS...]\n"
"\n"
"Runs CMD with hugepage advice from an earlier recording applied as its\n"
"memory is made: each new mapping whose creating call chain, kind and size\n"
"class match a rule of FILE (written by mapscope hugepages --save) is\n"
"advised with madvise(MADV_HUGEPAGE) on its 2 MiB-aligned inside. A shim\n"
"preloaded into CMD (LD_PRELOAD) does it, in mmap and in malloc and its\n"
"kin. Where a rule is for glibc malloc's heap, CMD also gets\n"
"GLIBC_TUNABLES=glibc.malloc.hugetlb=1. Blind spots: statically linked\n"
"programs and set-user-ID ones (no LD_PRELOAD), raw mmap system calls,\n"
"mappings glibc makes for itself (thread stacks), and allocators linked\n"
"into the program (keyed at their callers only if the rule saw the same).\n"
"\n",
	.tail =
"\n"
"EXIT STATUS\n"
"  CMD's own, once it runs; 1 where the advice cannot be read or the shim\n"
"  not found, 2 bad usage, 126 CMD cannot be run, 127 CMD not found.\n"
"\n"
"EXAMPLES\n"
"  mapscope record --call-graph dwarf -o run1.data -- ./server\n"
"  mapscope hugepages -i run1.data --save advice.json\n"
"  mapscope run --hugepages advice.json -- ./server\n",
};

struct run_opts {
	const char *advice;
	bool all;
	int verbose;
	char **cmd;
};

/* The shim beside the binary, or in ../lib/mapscope where installed. 0, or -ENOENT. */
static int find_shim(char *path, size_t len)
{
	static const char *const where[] = { "/" SHIM, "/../lib/mapscope/" SHIM };
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t i;

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')))
		*slash = '\0';
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		if ((size_t)snprintf(path, len, "%s%s", exe, where[i]) < len && !access(path, R_OK))
			return 0;
	}
	return -ENOENT;
}

/* Whether the ELF file at path has no program interpreter: statically linked, out of LD_PRELOAD's reach. */
static bool is_static(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool interp = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(ph)) {
		close(fd);
		return false;                /* a script, or not an ELF we read: its interpreter decides */
	}
	for (i = 0; i < eh.e_phnum && !interp; i++)
		interp = pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) == sizeof(ph) &&
			 ph.p_type == PT_INTERP;
	close(fd);
	return !interp;
}

/* Warns where transparent hugepages are off: advice would change nothing. */
static void check_thp(void)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");

	if (f && fgets(mode, sizeof(mode), f) && strstr(mode, "[never]")) {
		fprintf(stderr, "mapscope: transparent hugepages are off here ('never'): MADV_HUGEPAGE changes "
			"nothing\n");
		cli_hint("echo madvise >/sys/kernel/mm/transparent_hugepage/enabled (as root)");
	}
	if (f)
		fclose(f);
}

/* Appends value to the list in environment variable name (sep between), or sets it. 0 or -ENOMEM. */
static int env_append(const char *name, const char *value, char sep, bool first)
{
	const char *old = getenv(name);
	char *v;
	int ret;

	if (!old || !*old)
		return setenv(name, value, 1) ? -errno : 0;
	if (asprintf(&v, "%s%c%s", first ? value : old, sep, first ? old : value) < 0)
		return -ENOMEM;
	ret = setenv(name, v, 1) ? -errno : 0;
	free(v);
	return ret;
}

static int parse_args(int argc, char **argv, struct run_opts *o)
{
	int n;
	const struct cli_option options[] = {
		OPT_STRING(0, "hugepages", &o->advice, "FILE", "the advice to apply, from mapscope hugepages --save"),
		OPT_BOOL(0, "hugepages-all", &o->all, "advise every private anonymous mapping and all of\n"
			 "malloc's memory instead (glibc's tunable too): the\n"
			 "upper bound to measure advice against"),
		OPT_COUNT('v', "verbose", &o->verbose, "say which rules are applied"),
		OPT_END(),
	};

	if ((n = parse_options(argc, argv, options, &usage, PARSE_OPT_STOP_AT_NON_OPTION)) < 0)
		return parse_options_failed(n);
	if (n < argc)
		o->cmd = argv + n;
	if (!o->cmd)
		return cli_usage_error("run", "nothing to run: give a command after '--'");
	if (!o->advice == !o->all)
		return cli_usage_error("run", "give one of --hugepages FILE and --hugepages-all");
	return 0;
}

/* The environment CMD gets: the shim, its rules, glibc's tunable. 0, or EXIT_RUNTIME after the message. */
static int prepare(const struct run_opts *o, const struct ms_advice *adv)
{
	char shim[PATH_MAX], *rules;
	size_t i;
	int err;

	if ((err = find_shim(shim, sizeof(shim)))) {
		cli_error("cannot find '" SHIM "' beside the mapscope binary: %s", strerror(-err));
		cli_hint("install mapscope whole (make install), or run it from its build directory");
		return EXIT_RUNTIME;
	}
	rules = adv ? ms_advice_encode(adv) : strdup("all");
	if (!rules || setenv("MAPSCOPE_HUGEPAGES", rules, 1) || env_append("LD_PRELOAD", shim, ':', true) ||
	    ((!adv || ms_advice_wants_malloc_hugetlb(adv)) &&
	     env_append("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", ':', false))) {
		cli_error("cannot set the environment for '%s': %s", o->cmd[0], strerror(ENOMEM));
		free(rules);
		return EXIT_RUNTIME;
	}
	free(rules);
	for (i = 0; o->verbose && adv && i < ms_advice_nr_rules(adv); i++)
		fprintf(stderr, "mapscope: rule %zu: memory made by %s\n", i + 1,
			ms_advice_rule_site(adv, i) ? ms_advice_rule_site(adv, i) : "(unnamed code)");
	if (o->verbose && getenv("GLIBC_TUNABLES"))
		fprintf(stderr, "mapscope: GLIBC_TUNABLES=%s\n", getenv("GLIBC_TUNABLES"));
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	struct ms_advice *adv = NULL;
	char path[PATH_MAX];
	int ret, err;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if ((err = launch_resolve_command(o.cmd[0], path, sizeof(path)))) {
		cli_error("cannot run '%s': %s", o.cmd[0], strerror(-err));
		return err == -ENOENT ? 127 : 126;
	}
	if (o.advice && !(adv = advice_file_load(o.advice)))
		return EXIT_RUNTIME;
	if (adv && !ms_advice_nr_rules(adv))
		fprintf(stderr, "mapscope: '%s' advises nothing: '%s' runs as it would alone\n", o.advice, o.cmd[0]);
	check_thp();
	if (is_static(path))
		fprintf(stderr, "mapscope: '%s' is statically linked: the shim cannot reach it, and only "
			"glibc's own tunable (GLIBC_TUNABLES) applies\n", o.cmd[0]);
	if ((ret = prepare(&o, adv))) {
		ms_advice_free(adv);
		return ret;
	}
	ms_advice_free(adv);
	execv(path, o.cmd);
	err = errno;
	cli_error("cannot run '%s': %s", o.cmd[0], strerror(err));
	return err == ENOENT ? 127 : 126;
}
