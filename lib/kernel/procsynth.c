/*
 * /proc, read for the live source: a process's threads, found by walking
 * its task directory until a pass finds no new one, and the records of
 * what it held before we came (procsynth.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "kernel/procsynth.h"
#include "kernel/tracefs.h"
#include "util/log.h"

static int parse_hex(const char **p, char stop, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(*p, &end, 16);
	if (errno || end == *p || *end != stop)
		return -EINVAL;
	*p = end + 1;
	return 0;
}

int ms_maps_parse_line(const char *line, struct ms_maps_entry *e)
{
	const char *p = line;
	uint64_t maj, min;
	char *end;
	size_t n;

	memset(e, 0, sizeof(*e));
	if (parse_hex(&p, '-', &e->start) || parse_hex(&p, ' ', &e->end) || e->end <= e->start)
		return -EINVAL;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	e->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	e->flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 5;
	if (parse_hex(&p, ' ', &e->pgoff) || parse_hex(&p, ':', &maj) || parse_hex(&p, ' ', &min))
		return -EINVAL;
	e->maj = (uint32_t)maj;
	e->min = (uint32_t)min;
	errno = 0;
	e->ino = strtoull(p, &end, 10);
	if (errno || end == p)
		return -EINVAL;
	p = end;
	while (*p == ' ')
		p++;
	n = strcspn(p, "\n");
	if (n >= sizeof(e->name))
		return -EINVAL;
	memcpy(e->name, p, n);
	e->name[n] = '\0';
	return 0;
}

static void append_name_and_id(struct ms_buf *out, size_t start, const char *name,
			       const struct ms_sample_id *sid)
{
	struct perf_event_header *h;
	uint64_t t = sid->sample_type ? sid->sample_type : PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
								  PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

	ms_buf_cstr(out, name);
	ms_buf_align(out, 8);
	if (t & PERF_SAMPLE_TID) {
		ms_buf_u32(out, sid->pid);
		ms_buf_u32(out, sid->tid);
	}
	if (t & PERF_SAMPLE_TIME)
		ms_buf_u64(out, sid->time);
	if (t & PERF_SAMPLE_ID)
		ms_buf_u64(out, sid->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		ms_buf_u64(out, sid->id);
	if (t & PERF_SAMPLE_CPU) {
		ms_buf_u32(out, sid->cpu);
		ms_buf_u32(out, sid->res);
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		ms_buf_u64(out, sid->identifier);
	if (ms_buf_error(out))
		return;
	h = (struct perf_event_header *)(out->data + start);
	h->size = (uint16_t)(out->len - start);
}

void ms_synth_mmap2(struct ms_buf *out, const struct ms_maps_entry *e,
		    const struct ms_sample_id *sid)
{
	struct perf_event_header h = {
		.type = PERF_RECORD_MMAP2,
		.misc = PERF_RECORD_MISC_USER |
			((e->prot & PROT_EXEC) ? 0 : PERF_RECORD_MISC_MMAP_DATA),
	};
	size_t start = out->len;

	ms_buf_append(out, &h, sizeof(h));
	ms_buf_u32(out, sid->pid);
	ms_buf_u32(out, sid->pid);           /* made by the process, as perf writes it; the trailer says by whom */
	ms_buf_u64(out, e->start);
	ms_buf_u64(out, e->end - e->start);
	ms_buf_u64(out, e->pgoff);
	ms_buf_u32(out, e->maj);
	ms_buf_u32(out, e->min);
	ms_buf_u64(out, e->ino);
	ms_buf_u64(out, 0);                  /* ino_generation: not in /proc */
	ms_buf_u32(out, e->prot);
	ms_buf_u32(out, e->flags);
	append_name_and_id(out, start, e->name[0] ? e->name : "//anon", sid);
}

void ms_synth_comm(struct ms_buf *out, const char *comm, const struct ms_sample_id *sid)
{
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_USER };
	size_t start = out->len;

	ms_buf_append(out, &h, sizeof(h));
	ms_buf_u32(out, sid->pid);
	ms_buf_u32(out, sid->tid);
	append_name_and_id(out, start, comm, sid);
}

void ms_tidset_init(struct ms_tidset *t)
{
	ms_u32map_init(&t->tids);
}

void ms_tidset_release(struct ms_tidset *t)
{
	ms_u32map_release(&t->tids);
}

bool ms_tidset_has(const struct ms_tidset *t, pid_t tid)
{
	return ms_u32map_get(&t->tids, (uint32_t)tid) != NULL;
}

/* The threads of one pass, read whole before any is handed out: fn may take long, and make threads. */
static int read_tasks(const char *root, pid_t tgid, struct ms_buf *out)
{
	char path[4096];
	struct dirent *d;
	pid_t tid;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/task", root, (int)tgid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	out->len = 0;
	while ((d = readdir(dir))) {
		tid = (pid_t)atoi(d->d_name);
		if (tid > 0)
			ms_buf_append(out, &tid, sizeof(tid));
	}
	closedir(dir);
	return ms_buf_error(out);
}

/* One pass: fn for each thread of pass not in seen. The count of new threads, or a negative errno. */
static long hand_out(const struct ms_buf *pass, struct ms_tidset *seen, ms_task_fn fn, void *ctx)
{
	size_t i, n = pass->len / sizeof(pid_t);
	long added = 0;
	pid_t tid;
	int err;

	for (i = 0; i < n; i++) {
		memcpy(&tid, pass->data + i * sizeof(tid), sizeof(tid));
		if (ms_tidset_has(seen, tid))
			continue;
		err = fn(tid, ctx);
		if (err && err != -ESRCH)
			return err;
		if ((err = ms_u32map_put(&seen->tids, (uint32_t)tid, seen)))
			return err;
		added++;
	}
	return added;
}

int ms_proc_walk_tasks(const char *root, pid_t tgid, struct ms_tidset *seen, ms_task_fn fn, void *ctx)
{
	struct ms_buf pass;
	long added = 1;
	int i, err = 0;

	ms_buf_init(&pass);
	for (i = 0; i < MS_PROC_WALK_PASSES && added > 0 && !err; i++) {
		if (!(err = read_tasks(root, tgid, &pass)) && (added = hand_out(&pass, seen, fn, ctx)) < 0)
			err = (int)added;
	}
	ms_buf_release(&pass);
	return err;
}

struct attach {
	struct ms_live *live;
	int err;                     /* the last error of the events, not of /proc */
};

static int add_task(pid_t tid, void *arg)
{
	struct attach *a = arg;

	return a->err = ms_live_add_task(a->live, tid);
}

int ms_proc_attach(struct ms_live *l, pid_t tgid, struct ms_tidset *seen)
{
	struct attach a = { .live = l };
	int err = ms_proc_walk_tasks("/proc", tgid, seen, add_task, &a);

	/* The task directory gone, in whichever pass: the process has exited. */
	return err == -ENOENT && a.err != err ? -ESRCH : err;
}

static int emit(struct ms_buf *b, ms_live_fn fn, void *ctx)
{
	int err = ms_buf_error(b);

	if (!err && b->len)
		err = fn((const struct perf_event_header *)b->data, ctx);
	b->len = 0;
	return err;
}

struct comm_walk {
	const char *root;
	struct ms_sample_id sid;
	struct ms_buf *b;
	ms_task_fn each;
	void *each_ctx;
	ms_live_fn fn;
	void *ctx;
};

/* A COMM for one thread, then what each says of it; a thread gone meanwhile has none, and is no error. */
static int synth_comm(pid_t tid, void *arg)
{
	struct comm_walk *w = arg;
	char path[4200], comm[64];
	int err;

	snprintf(path, sizeof(path), "%s/%u/task/%d/comm", w->root, w->sid.pid, (int)tid);
	if (ms_kernel_read_line(path, comm, sizeof(comm)) || !comm[0])
		return 0;
	w->sid.tid = (uint32_t)tid;
	ms_synth_comm(w->b, comm, &w->sid);
	if ((err = emit(w->b, w->fn, w->ctx)))
		return err;
	return w->each ? w->each(tid, w->each_ctx) : 0;
}

static int synth_maps(const char *path, const struct ms_sample_id *sid, struct ms_buf *b,
		      ms_live_fn fn, void *ctx)
{
	struct ms_maps_entry *e = malloc(sizeof(*e));
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	if (!e)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		err = -errno;
	while (f && !err && getline(&line, &cap, f) > 0) {
		if (ms_maps_parse_line(line, e)) {
			ms_warn("skipping a line of '%s' that does not parse: %s", path, line);
			continue;
		}
		ms_synth_mmap2(b, e, sid);
		err = emit(b, fn, ctx);
	}
	if (f)
		fclose(f);
	free(line);
	free(e);
	return err;
}

int ms_proc_synthesize(const char *root, pid_t tgid, const struct ms_sample_id *sid, ms_task_fn each,
		       void *each_ctx, ms_live_fn fn, void *ctx)
{
	struct comm_walk w = { .root = root, .sid = *sid, .each = each, .each_ctx = each_ctx, .fn = fn, .ctx = ctx };
	struct ms_tidset seen;
	char path[4200];
	struct ms_buf b;
	int err;

	ms_buf_init(&b);
	ms_tidset_init(&seen);
	w.b = &b;
	w.sid.pid = (uint32_t)tgid;
	err = ms_proc_walk_tasks(root, tgid, &seen, synth_comm, &w);
	if (!err) {
		/*
		 * Made by no thread we follow (tid 0, the idle task's): a thread of
		 * the process may be inside a mapping call at this instant, and a
		 * map in its name would be taken for that call's own.
		 */
		w.sid.tid = 0;
		snprintf(path, sizeof(path), "%s/%d/task/%d/maps", root, (int)tgid, (int)tgid);
		err = synth_maps(path, &w.sid, &b, fn, ctx);
	}
	ms_tidset_release(&seen);
	ms_buf_release(&b);
	return err;
}
