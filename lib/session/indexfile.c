/*
 * Reading a recording's index (index.h): checking that it is whole and of
 * the recording as it is now, and answering from it. Every length and
 * offset it holds is checked against what remains before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/index.h"
#include "session/indexfmt.h"
#include "session/source.h"
#include "util/grow.h"

struct ms_index {
	const unsigned char *p;       /* the payload */
	size_t len;
	void *map;                    /* where ms_index_open mapped the file */
	size_t map_len;
	const struct ix_facts *f;
	const struct ms_stream_lost *lost;
	const struct ix_change *changes;
	const char *strs;
	const uint32_t *tids;
	uint32_t nr_tids, nr_procs;
	const unsigned char *procs;   /* the first ix_proc */
};

#define HASH_EDGE 65536
#define HASH_STEP 1048576
#define HASH_BLOCK 4096

static int hash_range(int fd, uint64_t off, size_t len, uint64_t *h, unsigned char *buf)
{
	ssize_t n = pread(fd, buf, len, (off_t)off);

	if (n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	*h = ix_hash(buf, len) ^ (*h * 0x9e3779b97f4a7c15ULL);
	return 0;
}

/* The recording's first and last 64 KiB (its header; the feature sections) and 4 KiB at each MiB. */
int ms_index_stamp_file(const char *path, struct ms_index_stamp *st)
{
	unsigned char *buf = malloc(HASH_EDGE);
	struct stat sb;
	uint64_t off, h = 0;
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &sb)) {
		err = -errno;
		goto out;
	}
	st->size = (uint64_t)sb.st_size;
	st->mtime_ns = (uint64_t)sb.st_mtim.tv_sec * 1000000000u + (uint64_t)sb.st_mtim.tv_nsec;
	err = hash_range(fd, 0, st->size < HASH_EDGE ? st->size : HASH_EDGE, &h, buf);
	for (off = HASH_STEP; !err && off + HASH_BLOCK <= st->size; off += HASH_STEP)
		err = hash_range(fd, off, HASH_BLOCK, &h, buf);
	if (!err && st->size > HASH_EDGE)
		err = hash_range(fd, st->size - HASH_EDGE, HASH_EDGE, &h, buf);
	st->hash = h;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

/* n bytes at *at, where they fit: their start, *at moved past them; NULL where not. */
static const void *take(const struct ms_index *ix, size_t *at, uint64_t n)
{
	const void *p;

	if (n > ix->len - *at)
		return NULL;
	p = ix->p + *at;
	*at += n;
	return p;
}

static int parse_body(struct ms_index *ix)
{
	const uint32_t *n;
	const void *pr;
	struct ix_proc h;
	size_t at = 0, i;

	if (!(ix->f = take(ix, &at, sizeof(*ix->f))) ||
	    ix->f->nr_lost > ix->len / sizeof(*ix->lost) || ix->f->nr_changes > ix->len / sizeof(*ix->changes) ||
	    !(ix->lost = take(ix, &at, ix->f->nr_lost * sizeof(*ix->lost))) ||
	    !(ix->changes = take(ix, &at, ix->f->nr_changes * sizeof(*ix->changes))) ||
	    !(ix->strs = take(ix, &at, ix->f->strs_len)) || !take(ix, &at, IX_PAD(ix->f->strs_len)) ||
	    !(n = take(ix, &at, 4)) ||
	    *n > ix->len / 4 || !(ix->tids = take(ix, &at, (uint64_t)*n * 4)))
		return -EBADMSG;
	ix->nr_tids = *n;
	if (ix->f->strs_len && ix->strs[ix->f->strs_len - 1])
		return -EBADMSG;
	for (i = 0; i < ix->f->nr_changes; i++)
		if (ix->changes[i].name >= ix->f->strs_len)
			return -EBADMSG;
	if (!(n = take(ix, &at, 4)))
		return -EBADMSG;
	ix->nr_procs = *n;
	ix->procs = ix->p + at;
	for (i = 0; i < ix->nr_procs; i++) {
		if (!(pr = take(ix, &at, sizeof(h))))
			return -EBADMSG;
		memcpy(&h, pr, sizeof(h));       /* the ops before it leave it unaligned */
		if (!take(ix, &at, h.len))
			return -EBADMSG;
	}
	return at == ix->len ? 0 : -EBADMSG;
}

int ms_index_parse(const void *p, size_t len, const struct ms_index_stamp *want, struct ms_index **out)
{
	struct ix_head h;
	struct ms_index *ix;
	int err;

	if (len < sizeof(h))
		return len >= 8 && !memcmp(p, IX_MAGIC, 8) ? -EBADMSG : -EPROTO;
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, IX_MAGIC, sizeof(h.magic)) || h.version != IX_VERSION)
		return -EPROTO;
	if (h.stamp.size != want->size || h.stamp.mtime_ns != want->mtime_ns || h.stamp.hash != want->hash)
		return -ESTALE;
	if (h.payload_len != len - sizeof(h) || ((uintptr_t)p & 7) ||
	    h.payload_hash != ix_hash((const unsigned char *)p + sizeof(h), h.payload_len))
		return -EBADMSG;
	if (!(ix = calloc(1, sizeof(*ix))))
		return -ENOMEM;
	ix->p = (const unsigned char *)p + sizeof(h);
	ix->len = h.payload_len;
	if ((err = parse_body(ix))) {
		free(ix);
		return err;
	}
	*out = ix;
	return 0;
}

int ms_index_open(const char *rec_path, const char *idx_path, struct ms_index **out)
{
	struct ms_index_stamp want;
	struct stat sb;
	void *map;
	int fd, err;

	/* The index first: where there is none, as mostly, the recording is not read for its stamp. */
	if ((fd = open(idx_path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	err = fstat(fd, &sb) ? -errno : !sb.st_size ? -EBADMSG : ms_index_stamp_file(rec_path, &want);
	if (err) {
		close(fd);
		return err;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	if ((err = ms_index_parse(map, (size_t)sb.st_size, &want, out))) {
		munmap(map, (size_t)sb.st_size);
		return err;
	}
	(*out)->map = map;
	(*out)->map_len = (size_t)sb.st_size;
	return 0;
}

void ms_index_free(struct ms_index *ix)
{
	if (!ix)
		return;
	if (ix->map)
		munmap(ix->map, ix->map_len);
	free(ix);
}

uint64_t ms_index_first_time(const struct ms_index *ix)
{
	return ix->f->first_time;
}

void ms_index_restore(const struct ms_index *ix, struct ms_session *s)
{
	session_restore(s, ix->f->first_time, &ix->f->st, ix->lost, ix->f->nr_lost);
}

/* --- a process's maps ----------------------------------------------------- */

struct list {
	struct ms_vma *v;
	size_t n, cap;
	struct ms_vma *tmp;
	size_t cap_tmp;
};

/* n VMAs at *at of the ops ops[0, len) into out. 0 or -EBADMSG. */
static int read_vmas(const unsigned char *ops, size_t len, size_t *at, uint32_t n, struct ms_vma *out)
{
	struct ix_vma w;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (len - *at < sizeof(w))
			return -EBADMSG;
		memcpy(&w, ops + *at, sizeof(w));
		*at += sizeof(w);
		if (w.name_len >= len - *at || ops[*at + w.name_len])
			return -EBADMSG;
		out[i] = (struct ms_vma){ .start = w.start, .end = w.end, .offset = w.offset, .ino = w.ino,
					  .prot = w.prot, .flags = w.flags, .maj = w.maj, .min = w.min,
					  .name = (const char *)ops + *at };
		*at += w.name_len + 1;
	}
	return 0;
}

/* Applies one FULL or DELTA op (its VMAs at *at) to l. 0, -EBADMSG or -ENOMEM. */
static int apply_op(struct list *l, const struct ix_op *op, const unsigned char *ops, size_t len, size_t *at)
{
	size_t n;

	if (op->n > len / sizeof(struct ix_vma))
		return -EBADMSG;
	if (op->type == IX_OP_FULL) {
		if (MS_GROW(l->v, op->n, l->cap, 64, SIZE_MAX, false))
			return -ENOMEM;
		l->n = op->n;
		return read_vmas(ops, len, at, op->n, l->v);
	}
	if (op->at > l->n || op->del > l->n - op->at)
		return -EBADMSG;
	n = l->n - op->del + op->n;
	if (MS_GROW(l->v, n, l->cap, 64, SIZE_MAX, false) || MS_GROW(l->tmp, op->n, l->cap_tmp, 16, SIZE_MAX, false))
		return -ENOMEM;
	if (read_vmas(ops, len, at, op->n, l->tmp))
		return -EBADMSG;
	if (l->n - op->at - op->del)
		memmove(l->v + op->at + op->n, l->v + op->at + op->del, (l->n - op->at - op->del) * sizeof(*l->v));
	if (op->n)
		memcpy(l->v + op->at, l->tmp, op->n * sizeof(*l->v));
	l->n = n;
	return 0;
}

/* Skips an op's VMAs. */
static int skip_vmas(const unsigned char *ops, size_t len, size_t *at, uint32_t n)
{
	struct ix_vma w;

	while (n--) {
		if (len - *at < sizeof(w))
			return -EBADMSG;
		memcpy(&w, ops + *at, sizeof(w));
		*at += sizeof(w);
		if (w.name_len >= len - *at)
			return -EBADMSG;
		*at += w.name_len + 1;
	}
	return 0;
}

/*
 * Where the list to print stops: the ops before offset *end (the first op
 * with key > at, or the first ending exit with last), and where the last
 * whole list before it starts (*full). Fills *out from the markers.
 */
static int find_ops(const unsigned char *ops, size_t len, uint64_t at, bool last, size_t *full, size_t *end,
		    struct ms_index_maps *out, uint64_t *exit_event)
{
	struct ix_op op;
	size_t pos = 0, here;

	*full = *end = SIZE_MAX;
	while (pos < len) {
		here = pos;
		if (len - pos < sizeof(op))
			return -EBADMSG;
		memcpy(&op, ops + pos, sizeof(op));
		pos += sizeof(op);
		if (!last && op.key > at)
			break;
		if (op.type == IX_OP_EXIT) {
			if (last) {
				*exit_event = op.event;
				*end = here;
				return 0;
			}
			out->exited = op.time;
		} else if (op.type == IX_OP_EXEC) {
			out->exited = 0;
		} else if (op.type == IX_OP_FULL || op.type == IX_OP_DELTA) {
			if (op.type == IX_OP_FULL)
				*full = here;
			if (skip_vmas(ops, len, &pos, op.n))
				return -EBADMSG;
		} else {
			return -EBADMSG;
		}
		*end = pos;
	}
	if (*end == SIZE_MAX)
		*end = 0;
	return 0;
}

static int build_list(struct list *l, const unsigned char *ops, size_t full, size_t end)
{
	struct ix_op op;
	size_t pos = full == SIZE_MAX ? 0 : full;    /* with no whole list, from an empty one */
	int err;

	while (pos < end) {
		memcpy(&op, ops + pos, sizeof(op));
		pos += sizeof(op);
		if ((op.type == IX_OP_FULL || op.type == IX_OP_DELTA) && (err = apply_op(l, &op, ops, end, &pos)))
			return err;
	}
	return 0;
}

/* Process pid's header (copied: it may lie unaligned) and ops; false where it has none. */
static bool find_proc(const struct ms_index *ix, uint32_t pid, struct ix_proc *h, const unsigned char **ops)
{
	const unsigned char *p = ix->procs;
	uint32_t i;

	for (i = 0; i < ix->nr_procs; i++) {
		memcpy(h, p, sizeof(*h));
		if (h->pid == pid) {
			*ops = p + sizeof(*h);
			return true;
		}
		p += sizeof(*h) + h->len;
	}
	return false;
}

int ms_index_maps(const struct ms_index *ix, uint32_t pid, uint64_t at, bool last, struct ms_index_maps *out,
		  void (*fn)(const struct ms_vma *v, void *ctx), void *ctx)
{
	const unsigned char *ops = NULL;
	struct ix_proc pr;
	struct list l = { 0 };
	uint64_t exit_event = UINT64_MAX;
	size_t full, end, i;
	int err;

	*out = (struct ms_index_maps){ 0 };
	for (i = 0; i < ix->nr_tids; i++)
		if (ix->tids[i] == pid)
			return 1;               /* a thread's id: which process it names is the replay's to find */
	if (!last && at < ix->f->stable_key)
		return 1;
	if (!find_proc(ix, pid, &pr, &ops))
		return 0;                   /* never seen */
	out->seen = pr.has_seen && (last || pr.seen <= at);
	if ((err = find_ops(ops, pr.len, at, last, &full, &end, out, &exit_event)))
		return err;
	if (last && exit_event != UINT64_MAX && exit_event < ix->f->stable_event)
		return 1;
	if (fn && !(err = build_list(&l, ops, full, end)))
		for (i = 0; i < l.n; i++)
			fn(&l.v[i], ctx);
	free(l.v);
	free(l.tmp);
	return err;
}

/* --- the changes ---------------------------------------------------------- */

int ms_index_changes(const struct ms_index *ix, uint64_t from, uint64_t to, long pid,
		     void (*fn)(const struct ms_change *c, void *ctx), void *ctx)
{
	size_t lo = 0, hi = ix->f->nr_changes, mid;
	const struct ix_change *w;
	struct ms_change c;

	if (ix->f->unsorted)
		return 1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ix->changes[mid].time_ns < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ix->f->nr_changes && ix->changes[lo].time_ns <= to; lo++) {
		w = &ix->changes[lo];
		if (pid >= 0 && w->pid != (uint32_t)pid)
			continue;
		c = (struct ms_change){ .op = (enum ms_aspace_op)w->op, .time_ns = w->time_ns, .pid = w->pid,
					.tid = w->tid, .start = w->start, .end = w->end, .new_start = w->new_start,
					.new_end = w->new_end, .child_pid = w->child_pid, .child_tid = w->child_tid,
					.name = ix->strs + w->name, .prot = w->prot, .advice = w->advice, .lock = w->lock };
		fn(&c, ctx);
	}
	return 0;
}
