/*
 * Building a recording's index (index.h): an analysis that, along one full
 * replay, keeps each process's VMA list as it changes, the changes, and
 * the statistics' last change; then the bytes of the index file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mapscope/aspace.h>

#include "session/index.h"
#include "session/indexfmt.h"
#include "session/source.h"
#include "util/grow.h"
#include "util/strpool.h"
#include "util/u32map.h"

struct xvma {
	uint64_t start, end, offset, ino;
	uint32_t prot, flags, maj, min;
	const char *name;             /* interned: equal names are equal pointers */
};

struct xproc {
	uint32_t pid;
	bool has_seen, shared, dirty, listed;
	uint64_t seen;
	struct xvma *v;               /* its list as last written */
	size_t n, cap;
	size_t since_full;            /* VMAs written in deltas since the last whole list */
	struct ms_buf ops;
};

struct ms_indexer {
	struct ms_u32map procs;       /* pid -> struct xproc */
	struct ms_u32map threads;     /* tids that are not their process's id */
	struct ms_strpool names;
	struct ms_buf changes, strs;  /* struct ix_change each; their names */
	size_t nr_changes;
	bool unsorted;
	uint64_t last_change_time;
	struct xvma *tmp;
	size_t ntmp, cap_tmp;
	const struct xproc *cur;      /* whose list gather() takes, and while `same`, matches to its last */
	bool same;
	/* Along the replay. */
	uint64_t key;                 /* the newest time the stream has reached */
	uint64_t events;
	bool all_dirty, any_dirty;
	struct ix_digest digest;
	/* The facts. */
	uint64_t first_time, stable_key, stable_event;
	struct ms_stream_stats st;
	struct ms_stream_lost *lost;
	size_t nr_lost;
	int err;
};

struct ms_indexer *ms_indexer_new(void)
{
	struct ms_indexer *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	ms_u32map_init(&x->procs);
	ms_u32map_init(&x->threads);
	ms_buf_init(&x->changes);
	ms_buf_init(&x->strs);
	return x;
}

void ms_indexer_free(struct ms_indexer *x)
{
	struct xproc *p;
	size_t pos = 0;
	uint32_t pid;

	if (!x)
		return;
	while ((p = ms_u32map_next(&x->procs, &pos, &pid))) {
		free(p->v);
		ms_buf_release(&p->ops);
		free(p);
	}
	ms_u32map_release(&x->procs);
	ms_u32map_release(&x->threads);
	ms_strpool_release(&x->names);
	ms_buf_release(&x->changes);
	ms_buf_release(&x->strs);
	free(x->tmp);
	free(x->lost);
	free(x);
}

static struct xproc *xproc_get(struct ms_indexer *x, uint32_t pid)
{
	struct xproc *p = ms_u32map_get(&x->procs, pid);

	if (p)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	ms_buf_init(&p->ops);
	if (ms_u32map_put(&x->procs, pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static void put_vmas(struct ms_buf *b, const struct xvma *v, size_t n)
{
	struct ix_vma w;
	size_t i, len;

	for (i = 0; i < n; i++) {
		len = strlen(v[i].name);
		if (len > 4095)
			len = 4095;
		w = (struct ix_vma){ .start = v[i].start, .end = v[i].end, .offset = v[i].offset, .ino = v[i].ino,
				     .prot = v[i].prot, .flags = v[i].flags, .maj = v[i].maj, .min = v[i].min,
				     .name_len = (uint32_t)len };
		ms_buf_append(b, &w, sizeof(w));
		ms_buf_append(b, v[i].name, len);
		ms_buf_zero(b, 1);
	}
}

static bool xvma_eq(const struct xvma *a, const struct xvma *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset && a->ino == b->ino &&
	       a->prot == b->prot && a->flags == b->flags && a->maj == b->maj && a->min == b->min &&
	       a->name == b->name;
}

/* Process p's list is v[0, n) from key on: a delta against the one before, or the whole list. */
static int note_list(struct ms_indexer *x, struct xproc *p, uint64_t key, const struct xvma *v, size_t n)
{
	size_t pre = 0, suf = 0, nins;
	struct ix_op op = { .key = key };

	while (pre < n && pre < p->n && xvma_eq(&v[pre], &p->v[pre]))
		pre++;
	while (suf < n - pre && suf < p->n - pre && xvma_eq(&v[n - 1 - suf], &p->v[p->n - 1 - suf]))
		suf++;
	if (pre == n && pre == p->n && p->listed)
		return 0;                   /* unchanged */
	nins = n - pre - suf;
	if (!p->listed || p->since_full + nins > n + 16) {
		p->listed = true;
		op.type = IX_OP_FULL;
		op.n = (uint32_t)n;
		p->since_full = 0;
		pre = suf = 0;
		nins = n;
	} else {
		op.type = IX_OP_DELTA;
		op.at = (uint32_t)pre;
		op.del = (uint32_t)(p->n - pre - suf);
		op.n = (uint32_t)nins;
		p->since_full += nins + 1;
	}
	ms_buf_append(&p->ops, &op, sizeof(op));
	put_vmas(&p->ops, v + pre, nins);
	if (MS_GROW(p->v, n, p->cap, 16, SIZE_MAX, false))
		return -ENOMEM;
	if (n)
		memcpy(p->v, v, n * sizeof(*v));
	p->n = n;
	return ms_buf_error(&p->ops);
}

int ms_indexer_listing(struct ms_indexer *x, uint32_t pid, uint64_t key, const struct ms_vma *v, size_t n)
{
	struct xproc *p = xproc_get(x, pid);
	size_t i;

	if (!p || MS_GROW(x->tmp, n, x->cap_tmp, 64, SIZE_MAX, false))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		x->tmp[i] = (struct xvma){ v[i].start, v[i].end, v[i].offset, v[i].ino, v[i].prot, v[i].flags,
					   v[i].maj, v[i].min, ms_strpool_intern(&x->names, v[i].name) };
		if (!x->tmp[i].name)
			return -ENOMEM;
	}
	return note_list(x, p, key, x->tmp, n);
}

static int put_marker(struct ms_indexer *x, uint32_t pid, const struct ix_op *op)
{
	struct xproc *p = xproc_get(x, pid);

	if (!p)
		return -ENOMEM;
	ms_buf_append(&p->ops, op, sizeof(*op));
	return ms_buf_error(&p->ops);
}

int ms_indexer_exit(struct ms_indexer *x, uint32_t pid, uint64_t key, uint64_t time, uint64_t event)
{
	return put_marker(x, pid, &(struct ix_op){ .type = IX_OP_EXIT, .key = key, .time = time, .event = event });
}

int ms_indexer_exec(struct ms_indexer *x, uint32_t pid, uint64_t key)
{
	return put_marker(x, pid, &(struct ix_op){ .type = IX_OP_EXEC, .key = key });
}

int ms_indexer_seen(struct ms_indexer *x, uint32_t pid, uint64_t key)
{
	struct xproc *p = xproc_get(x, pid);

	if (!p)
		return -ENOMEM;
	if (!p->has_seen) {
		p->has_seen = true;
		p->seen = key;
	}
	return 0;
}

int ms_indexer_thread(struct ms_indexer *x, uint32_t tid)
{
	return ms_u32map_get(&x->threads, tid) ? 0 : ms_u32map_put(&x->threads, tid, (void *)1);
}

int ms_indexer_change(struct ms_indexer *x, const struct ms_change *c)
{
	struct ix_change w = {
		.op = (uint32_t)c->op, .pid = c->pid, .tid = c->tid, .child_pid = c->child_pid,
		.child_tid = c->child_tid, .prot = c->prot, .advice = c->advice, .lock = c->lock,
		.time_ns = c->time_ns, .start = c->start, .end = c->end, .new_start = c->new_start,
		.new_end = c->new_end, .name = (uint32_t)x->strs.len,
	};

	if (x->nr_changes && c->time_ns < x->last_change_time)
		x->unsorted = true;
	x->last_change_time = c->time_ns;
	ms_buf_append(&x->changes, &w, sizeof(w));
	ms_buf_cstr(&x->strs, c->name ? c->name : "");
	x->nr_changes++;
	return ms_buf_error(&x->changes) ? -ENOMEM : ms_buf_error(&x->strs);
}

void ms_indexer_facts(struct ms_indexer *x, uint64_t first_time, uint64_t stable_key, uint64_t stable_event,
		      const struct ms_stream_stats *st, const struct ms_stream_lost *lost, size_t nr_lost)
{
	x->first_time = first_time;
	x->stable_key = stable_key;
	x->stable_event = stable_event;
	x->st = *st;
	free(x->lost);
	x->lost = nr_lost ? malloc(nr_lost * sizeof(*lost)) : NULL;
	x->nr_lost = x->lost ? nr_lost : 0;
	if (x->lost)
		memcpy(x->lost, lost, nr_lost * sizeof(*lost));
}

/* --- along a replay ------------------------------------------------------- */

/* The first x->ntmp VMAs of the list are x->cur's as last written: copied into x->tmp. */
static void keep_prefix(struct ms_indexer *x)
{
	if (!x->ntmp)
		return;
	if (MS_GROW(x->tmp, x->ntmp, x->cap_tmp, 64, SIZE_MAX, false))
		x->err = -ENOMEM;
	else
		memcpy(x->tmp, x->cur->v, x->ntmp * sizeof(*x->tmp));
}

static bool vma_same(const struct ms_vma *v, const struct xvma *w)
{
	return v->start == w->start && v->end == w->end && v->offset == w->offset && v->ino == w->ino &&
	       v->prot == w->prot && v->flags == w->flags && v->maj == w->maj && v->min == w->min &&
	       !strcmp(v->name, w->name);
}

/*
 * One VMA of x->cur's list as the model has it now. Most walks find the
 * list as last written (an event marks a process whose list may change,
 * most do not): those are compared as they come, and copied (names
 * interned) only from the first difference on.
 */
static void gather(const struct ms_vma *v, void *ctx)
{
	struct ms_indexer *x = ctx;

	if (x->same) {
		if (x->ntmp < x->cur->n && vma_same(v, &x->cur->v[x->ntmp])) {
			x->ntmp++;
			return;
		}
		x->same = false;
		keep_prefix(x);
	}
	if (x->err || MS_GROW(x->tmp, x->ntmp + 1, x->cap_tmp, 64, SIZE_MAX, false)) {
		x->err = -ENOMEM;
		return;
	}
	x->tmp[x->ntmp] = (struct xvma){ v->start, v->end, v->offset, v->ino, v->prot, v->flags, v->maj, v->min,
					 ms_strpool_intern(&x->names, v->name) };
	if (!x->tmp[x->ntmp++].name)
		x->err = -ENOMEM;
}

/* The lists of the processes the events since the last call may have changed, as the model has them now. */
static int flush_dirty(struct ms_indexer *x, struct ms_session *s)
{
	struct xproc *p;
	size_t pos = 0;
	uint32_t pid;

	if (!x->any_dirty)
		return 0;
	while ((p = ms_u32map_next(&x->procs, &pos, &pid))) {
		if (!p->dirty && !x->all_dirty)
			continue;
		p->dirty = false;
		x->ntmp = 0;
		x->cur = p;
		x->same = p->listed;
		ms_aspace_for_each_vma(ms_session_aspace(s), pid, gather, x);
		if (x->same && x->ntmp == p->n)
			continue;                  /* unchanged */
		if (x->same)
			keep_prefix(x);            /* the list before, cut short */
		if (x->err || (x->err = note_list(x, p, x->key, x->tmp, x->ntmp)))
			return x->err;
	}
	x->any_dirty = x->all_dirty = false;
	return 0;
}

/*
 * Process pid's list may change at this event, and with it those of the
 * processes that share its address space (before the event: a vfork
 * child's exec or exit changes the list of neither, so marking both costs
 * a walk, not an answer). Not every process: chromium's launcher, which
 * vforks, would have all 140 lists walked at each of its events.
 */
static int mark_dirty(struct ms_indexer *x, const struct ms_aspace *as, uint32_t pid)
{
	struct xproc *p = xproc_get(x, pid), *q;
	size_t pos = 0;
	uint32_t other;

	if (!p)
		return -ENOMEM;
	p->dirty = x->any_dirty = true;
	if (p->shared)
		while ((q = ms_u32map_next(&x->procs, &pos, &other)))
			if (q->shared && !q->dirty && ms_aspace_shares(as, pid, other))
				q->dirty = true;
	return 0;
}

/* The statistics the warnings print, as they stand at this event. */
static void take_digest(struct ms_session *s, struct ix_digest *d)
{
	struct ms_stream_stats st;

	ms_stream_stats(session_stream(s), &st);
	*d = (struct ix_digest){ .no_addr = !st.samples && !st.zero_addr && !st.kernel_addr,
				 .zero_addr = st.zero_addr, .kernel_addr = st.kernel_addr, .unknown_id = st.unknown_id,
				 .bad_samples = st.bad_samples, .bad_records = st.bad_records,
				 .unknown_records = st.unknown_records, .bad_names = st.bad_names, .lost = st.lost,
				 .nr_lost_pids = st.nr_lost_pids, .out_of_order = st.out_of_order };
}

static void note_digest(struct ms_indexer *x, struct ms_session *s)
{
	struct ix_digest d;

	take_digest(s, &d);
	if (memcmp(&d, &x->digest, sizeof(d))) {
		x->digest = d;
		x->stable_key = x->key;           /* the newest time before this event */
		x->stable_event = x->events;
	}
}

static int note_ids(struct ms_indexer *x, const struct ms_event *ev)
{
	int err = 0;

	if (ev->kind == MS_EV_FORK) {
		if (ev->fork.child_tid != ev->fork.child_pid)
			err = ms_indexer_thread(x, ev->fork.child_tid);
		if (!err)
			err = ms_indexer_seen(x, ev->fork.child_pid, x->key);
	} else if (ev->pid && ev->tid != ev->pid) {
		err = ms_indexer_thread(x, ev->tid);
	}
	return err ? err : ms_indexer_seen(x, ev->pid, x->key);
}

static int note_change(struct ms_indexer *x, struct ms_session *s, const struct ms_event *ev)
{
	struct xproc *p, *c;
	int err = 0;

	if (ev->kind == MS_EV_EXIT && ms_aspace_exit_ends(ms_session_aspace(s), ev))
		err = ms_indexer_exit(x, ev->pid, x->key, ev->time, x->events);
	else if (ev->kind == MS_EV_EXEC)
		err = ms_indexer_exec(x, ev->pid, x->key);
	if (err)
		return err;
	switch (ev->kind) {
	case MS_EV_SAMPLE: case MS_EV_LOST: case MS_EV_COMM: case MS_EV_THREAD_SP: case MS_EV_ACCESS:
		return 0;
	case MS_EV_UNLINK: case MS_EV_RENAME:
		x->all_dirty = x->any_dirty = true;    /* names of any process's maps */
		return 0;
	case MS_EV_FORK:
		if (ev->fork.share_vm) {
			if (!(p = xproc_get(x, ev->pid)) || !(c = xproc_get(x, ev->fork.child_pid)))
				return -ENOMEM;
			p->shared = c->shared = true;
		}
		if ((err = mark_dirty(x, ms_session_aspace(s), ev->fork.child_pid)))
			return err;
		break;
	default:
		break;
	}
	return mark_dirty(x, ms_session_aspace(s), ev->pid);
}

static int ix_event(void *ctx, struct ms_session *s, const struct ms_event *ev)
{
	struct ms_indexer *x = ctx;
	int err;

	if ((err = flush_dirty(x, s)))
		return err;
	note_digest(x, s);
	if (ev->time > x->key)
		x->key = ev->time;
	if ((err = note_ids(x, ev)) || (err = note_change(x, s, ev)))
		return err;
	x->events++;
	return 0;
}

static int ix_change(void *ctx, struct ms_session *s, const struct ms_event *ev, const struct ms_change *c)
{
	(void)s;
	(void)ev;
	return ms_indexer_change(ctx, c);
}

static void ix_finish(void *ctx, struct ms_session *s)
{
	struct ms_indexer *x = ctx;
	struct ms_stream_lost *lost;
	struct ms_stream_stats st;
	size_t n;

	if (!x->err)
		x->err = flush_dirty(x, s);
	note_digest(x, s);                /* what the end adds: for a replay that ran to it */
	ms_stream_stats(session_stream(s), &st);
	lost = ms_stream_lost_copy(session_stream(s), &n);
	ms_indexer_facts(x, ms_session_first_time(s), x->stable_key, x->stable_event, &st, lost, n);
	free(lost);
}

const struct ms_analysis ms_indexer_analysis = {
	.name = "index", .event = ix_event, .change = ix_change, .finish = ix_finish,
	.flags = MS_ANALYSIS_SEES_SAMPLES,
};

/* --- the file ------------------------------------------------------------- */

static int put_procs(const struct ms_indexer *x, struct ms_buf *b)
{
	const struct xproc *p;
	struct ix_proc h;
	size_t pos = 0;
	uint32_t pid;

	ms_buf_u32(b, (uint32_t)x->procs.len);
	while ((p = ms_u32map_next(&x->procs, &pos, &pid))) {
		h = (struct ix_proc){ .pid = pid, .has_seen = p->has_seen, .seen = p->seen, .len = p->ops.len };
		ms_buf_append(b, &h, sizeof(h));
		ms_buf_append(b, p->ops.data, p->ops.len);
		if (ms_buf_error(&p->ops))
			return -ENOMEM;
	}
	return 0;
}

static void put_threads(const struct ms_indexer *x, struct ms_buf *b)
{
	size_t pos = 0;
	uint32_t tid;

	ms_buf_u32(b, (uint32_t)x->threads.len);
	while (ms_u32map_next(&x->threads, &pos, &tid))
		ms_buf_u32(b, tid);             /* unsorted: the reader looks them up once */
}

int ms_indexer_serialize(const struct ms_indexer *x, const struct ms_index_stamp *st, struct ms_buf *out)
{
	struct ix_head h = { .version = IX_VERSION, .stamp = *st };
	struct ix_facts f = { .first_time = x->first_time, .stable_key = x->stable_key,
			      .stable_event = x->stable_event, .st = x->st, .nr_lost = (uint32_t)x->nr_lost,
			      .unsorted = x->unsorted, .nr_changes = x->nr_changes, .strs_len = x->strs.len };
	size_t at = out->len;
	int err;

	memcpy(h.magic, IX_MAGIC, sizeof(h.magic));
	ms_buf_append(out, &h, sizeof(h));
	ms_buf_append(out, &f, sizeof(f));
	if (x->nr_lost)
		ms_buf_append(out, x->lost, x->nr_lost * sizeof(*x->lost));
	ms_buf_append(out, x->changes.data, x->changes.len);
	ms_buf_append(out, x->strs.data, x->strs.len);
	ms_buf_zero(out, IX_PAD(x->strs.len));
	put_threads(x, out);
	if ((err = put_procs(x, out)) || (err = ms_buf_error(out)) || x->err)
		return err ? err : x->err;
	h.payload_len = out->len - at - sizeof(h);
	h.payload_hash = ix_hash(out->data + at + sizeof(h), h.payload_len);
	memcpy(out->data + at, &h, sizeof(h));
	return 0;
}

int ms_indexer_write(const struct ms_indexer *x, const char *rec_path, const char *idx_path)
{
	struct ms_index_stamp st;
	struct ms_buf b;
	char tmp[4096];
	int fd, err;

	if ((err = ms_index_stamp_file(rec_path, &st)))
		return err;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp%d", idx_path, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	ms_buf_init(&b);
	if ((err = ms_indexer_serialize(x, &st, &b)))
		goto out;
	/* O_EXCL | O_NOFOLLOW: a name planted beside the recording (a link in a shared folder) is refused, never followed. */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
		err = -errno;
		goto out;
	}
	err = ix_write_all(fd, b.data, b.len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, idx_path))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	ms_buf_release(&b);
	return err;
}
