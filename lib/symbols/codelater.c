/*
 * Code addresses named later (codelater.h). A pprof profile names the
 * code of every (region, process, address) it keeps, with the functions
 * inlined there and their lines: on chromium's page load a ninth of the
 * caller's time, spent reading DWARF while a second CPU waited. Named
 * where they are seen, they are named as the process's binaries are then;
 * pinned (pin.c), they are named later as they would have been then, and
 * the namer's thread (namer.c) can name them meanwhile with symbols of
 * its own. An address that cannot be pinned (code a JIT may name, a
 * binary whose reading would warn), or where there is no namer, is named
 * at once and its frames kept. The caller takes the frames in the order
 * it added the addresses, so that what it makes of them (ids, a string
 * table) comes in the order it did when it named each as it came.
 *
 * An address whose naming depends on the same things as one added
 * before (ms_pin_key(): the binary holding it and the address in it) is
 * the entry that one is: a job and a copy of the frames for each of the
 * page load's 16,000 pinned rows held 7 MB more than naming them at once.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/codelater.h"
#include "symbols/internal.h"
#include "util/grow.h"
#include "util/hash.h"

#define KEY_MAX 3                /* ms_pin_key()'s words for one address */

struct later {
	struct ms_name_job *job;     /* named on the namer's thread, not asked for yet; or NULL */
	struct ms_pin pin;           /* pinned: the job's pin */
	uint64_t key[KEY_MAX];       /* pinned: what its naming depends on (ms_pin_key()) */
	int key_len;                 /* 0 where not pinned */
	struct ms_frames_copy *now;  /* named when added; NULL where pinned */
	const struct ms_frame *f;    /* asked for: the answer, and where its strings are held */
	const char *dso;
	int nr;
	bool asked;
	uint64_t ip;
	uint32_t pid;
};

void ms_code_later_init(struct ms_code_later *c, struct ms_symbols *syms, struct ms_namer *namer)
{
	*c = (struct ms_code_later){ .syms = syms, .namer = namer };
}

static uint64_t key_hash(const uint64_t *key, int n)
{
	uint64_t h = (uint64_t)n;
	int i;

	for (i = 0; i < n; i++)
		h = (h ^ key[i]) * 0x9e3779b97f4a7c15ULL;
	return h;
}

/* The entry whose naming depends on key[0, n), where there is one: its index + 1, or 0, with *slot where it goes. */
static size_t find(const struct ms_code_later *c, const uint64_t *key, int n, size_t *slot)
{
	const struct later *l;
	size_t i;

	for (i = ms_hash64(key_hash(key, n), c->nslot); c->slot[i]; i = (i + 1) & (c->nslot - 1)) {
		l = &c->v[c->slot[i] - 1];
		if (l->key_len == n && !memcmp(l->key, key, (size_t)n * sizeof(*key)))
			return c->slot[i];
	}
	*slot = i;
	return 0;
}

/* Room for one more pinned entry in the table. 0 or -ENOMEM. */
static int slot_room(struct ms_code_later *c)
{
	size_t n = c->nslot ? 2 * c->nslot : 1024, i, k;
	uint32_t *t;

	if ((c->nr_pinned + 1) * 2 <= c->nslot)
		return 0;
	if (!(t = calloc(n, sizeof(*t))))
		return -ENOMEM;
	for (k = 0; k < c->n; k++) {
		if (!c->v[k].key_len)
			continue;
		for (i = ms_hash64(key_hash(c->v[k].key, c->v[k].key_len), n); t[i]; i = (i + 1) & (n - 1))
			;
		t[i] = (uint32_t)k + 1;
	}
	free(c->slot);
	c->slot = t;
	c->nslot = n;
	return 0;
}

int64_t ms_code_later_add(struct ms_code_later *c, uint32_t pid, uint64_t ip, int max)
{
	struct ms_frame f[NAMER_MAX_FRAMES];
	uint64_t key[KEY_MAX];
	struct ms_pin pin;
	struct later *l;
	const char *dso;
	size_t at, i;
	int n, k;

	if (max < 1 || max > NAMER_MAX_FRAMES)
		return -EINVAL;
	if (c->n >= UINT32_MAX - 1 || MS_GROW(c->v, c->n + 1, c->cap, 256, SIZE_MAX, false) || slot_room(c))
		return -ENOMEM;
	l = &c->v[c->n];
	*l = (struct later){ .ip = ip, .pid = pid };
	if (c->namer && !ms_symbols_pin(c->syms, pid, &ip, 1, &pin) &&
	    (k = ms_pin_key(c->syms, pid, &ip, 1, key, KEY_MAX)) > 0) {
		if ((i = find(c, key, k, &at)))
			return (int64_t)i - 1;
		if ((l->job = ms_namer_submit_frames(c->namer, c->syms, &pin, pid, ip, max))) {
			l->pin = pin;
			memcpy(l->key, key, (size_t)k * sizeof(*key));
			l->key_len = k;
			c->slot[at] = (uint32_t)c->n + 1;
			c->nr_pinned++;
			return (int64_t)c->n++;
		}
	}
	n = ms_symbols_frames_dso(c->syms, pid, ip, f, max, &dso);
	if (!(l->now = ms_frames_copy(f, n, dso)))
		return -ENOMEM;
	return (int64_t)c->n++;
}

int ms_code_later_frames(struct ms_code_later *c, size_t i, struct ms_frame *out, int max, const char **dso)
{
	struct later *l = &c->v[i];
	int n;

	if (!l->asked) {
		l->asked = true;
		if (l->now) {
			l->f = l->now->f;
			l->nr = l->now->n;
			l->dso = l->now->dso;
		} else if (!ms_namer_wait_frames(c->namer, l->job, &l->f, &l->nr, &l->dso)) {
			/* Named here, through the pin, and kept as if named when added. */
			n = ms_symbols_frames_pinned(c->syms, &l->pin, l->pid, l->ip, out, max, dso);
			if (!(l->now = ms_frames_copy(out, n, *dso)))
				return n;    /* this answer stands; asked again, it is named again */
			l->f = l->now->f;
			l->nr = l->now->n;
			l->dso = l->now->dso;
		}
		l->job = NULL;
	}
	n = l->nr < max ? l->nr : max;
	if (n > 0)
		memcpy(out, l->f, (size_t)n * sizeof(*out));
	*dso = l->dso;
	return n;
}

void ms_code_later_release(struct ms_code_later *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].now);
	free(c->v);
	free(c->slot);
	*c = (struct ms_code_later){ .syms = c->syms, .namer = c->namer };
}
