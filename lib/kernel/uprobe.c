/*
 * Uprobes of our own at prefetch instructions (kernel/uprobe.h says why
 * each lives in a group of this process's and how they are removed).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/tracefs.h"
#include "kernel/uprobe.h"
#include "kernel/watchdog.h"
#include "util/log.h"

struct ms_uprobes {
	char dir[256];
	char group[64];
	size_t n;
	struct ms_watchdog wd;
};

/* Appends one line to dir/uprobe_events, never truncating it. 0 or a negative errno. */
static int append(const char *dir, const char *line)
{
	char path[320];

	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	return ms_kernel_write(path, line, O_APPEND);
}

static int teardown_cb(void *arg)
{
	const struct ms_uprobes *u = arg;

	return ms_uprobes_teardown(u->dir, u->group, 10000);
}

struct ms_uprobes *ms_uprobes_new(const char *dir)
{
	struct ms_uprobes *u = calloc(1, sizeof(*u));
	char path[320];
	int fd, err;

	if (!u)
		return NULL;
	snprintf(u->dir, sizeof(u->dir), "%s", dir);
	snprintf(u->group, sizeof(u->group), MS_UPROBE_GROUP_PREFIX "%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		err = -errno;
	else {
		close(fd);
		err = ms_watchdog_start(&u->wd, teardown_cb, u);
	}
	if (err) {
		free(u);
		errno = -err;
		return NULL;
	}
	return u;
}

const char *ms_uprobes_group(const struct ms_uprobes *u)
{
	return u->group;
}

size_t ms_uprobes_count(const struct ms_uprobes *u)
{
	return u->n;
}

pid_t ms_uprobes_watchdog(const struct ms_uprobes *u)
{
	return u->wd.pid;
}

/* A register as a fetch argument, or the immediate 0 where there is none. */
static void fetch_reg(const char *reg, char *out, size_t len)
{
	snprintf(out, len, reg[0] ? "%%%s" : "\\0", reg);
}

int ms_uprobe_line(const char *group, const char *name, const char *path, const struct ms_prefetch_site *s,
		   char *out, size_t len)
{
	char base[16], idx[16];
	const char *p;
	int n;

	for (p = path; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return -EINVAL;
	fetch_reg(s->base, base, sizeof(base));
	fetch_reg(s->index, idx, sizeof(idx));
	n = snprintf(out, len, "p:%s/%s %s:0x%" PRIx64 " base=%s:x64 idx=%s:x64 disp=\\%" PRId64 ":s64 "
		     "scale=\\%u:u8\n", group, name, path, s->offset, base, idx, s->disp, (unsigned)s->scale);
	return n > 0 && (size_t)n < len ? 0 : -EINVAL;
}

int ms_uprobes_add(struct ms_uprobes *u, const char *path, const struct ms_prefetch_site *s)
{
	char line[4400];
	int err;

	if ((err = ms_uprobe_line(u->group, MS_UPROBE_EVENT, path, s, line, sizeof(line))))
		return err;
	if ((err = append(u->dir, line)))
		return err;
	u->n++;
	return 0;
}

/*
 * The anchor's place: never called, by anyone. Its first instruction is
 * an instruction boundary in a file of ours, where a uprobe can sit
 * without ever trapping.
 */
static void __attribute__((noinline, used)) anchor(void)
{
	__asm__ volatile("");
}

/* The file and file offset of address a of this process, from /proc/self/maps. 0 or a negative errno. */
static int own_file_offset(uintptr_t a, char *path, size_t len, uint64_t *offset)
{
	char line[4400];
	unsigned long start, end, pgoff;
	int at = 0, err = -ENOENT;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &start, &end, &pgoff, &at) == 3 && at &&
		    a >= start && a < end && line[at] == '/') {
			line[at + strcspn(line + at, "\n")] = '\0';
			snprintf(path, len, "%s", line + at);
			*offset = a - start + pgoff;
			err = 0;
		}
	fclose(f);
	return err;
}

int ms_uprobes_anchor(struct ms_uprobes *u)
{
	struct ms_prefetch_site s = { .scale = 1 };
	char path[4096], line[4400];
	int err = own_file_offset((uintptr_t)anchor, path, sizeof(path), &s.offset);

	if (err || (err = ms_uprobe_line(u->group, MS_UPROBE_EVENT, path, &s, line, sizeof(line))))
		return err;
	return append(u->dir, line);
}

/* The events of group in dir/uprobe_events ("p:GROUP/NAME ..."), as "-:GROUP/NAME\n" lines. */
static char **ours(const char *dir, const char *group, size_t *n)
{
	char path[320], line[4400], *name, *end, **v = NULL, **nv;
	size_t glen = strlen(group);
	FILE *f;

	*n = 0;
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	if (!(f = fopen(path, "re")))
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if ((line[0] != 'p' && line[0] != 'r') || line[1] != ':' || strncmp(line + 2, group, glen) ||
		    line[2 + glen] != '/')
			continue;
		name = line + 2;
		end = name + strcspn(name, " \n");
		*end = '\0';
		if (!(nv = realloc(v, (*n + 1) * sizeof(*v))))
			break;
		v = nv;
		if (asprintf(&v[*n], "-:%s\n", name) < 0)
			break;
		(*n)++;
	}
	fclose(f);
	return v;
}

int ms_uprobes_teardown(const char *dir, const char *group, int wait_ms)
{
	struct timespec pause = { 0, 20 * 1000000L };
	size_t n, i, left;
	char **v = ours(dir, group, &n);
	int err = 0, waited = 0;

	do {
		for (i = 0, left = 0, err = 0; i < n; i++) {
			if (!v[i])
				continue;
			err = append(dir, v[i]);
			if (err == -EBUSY) {
				left++;
				continue;
			}
			free(v[i]);
			v[i] = NULL;
			if (err == -ENOENT)
				err = 0;             /* gone already */
		}
		if (left && waited < wait_ms) {
			nanosleep(&pause, NULL);
			waited += 20;
		}
	} while (left && waited < wait_ms);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return left ? -EBUSY : err;
}

int ms_uprobes_free(struct ms_uprobes *u)
{
	int err;

	if (!u)
		return 0;
	err = ms_watchdog_stop(&u->wd);
	if (err)
		ms_err("uprobes of group '%s' may be left in '%s/uprobe_events': remove them with "
		       "\"grep '^p:%s/' %s/uprobe_events | sed 's/^p/-/; s/ .*//' >> %s/uprobe_events\"",
		       u->group, u->dir, u->group, u->dir, u->dir);
	free(u);
	return err;
}
