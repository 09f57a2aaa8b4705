/*
 * Binaries' files opened ahead (preopen.h). One thread inserts (the one
 * ahead), another takes: a lock around the table, never around an open.
 * Entries stay once taken, so that a path is opened ahead once.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libelf.h>

#include <mapscope/event.h>

#include "symbols/internal.h"
#include "symbols/preopen.h"
#include "util/grow.h"
#include "util/hash.h"

/*
 * Bounds: the paths a recording may name are any number, and each
 * descriptor held waits for the caller to reach its map (the thread ahead
 * runs a bounded way ahead, so few are held at once).
 */
#define MAX_PATHS 4096
#define MAX_HELD 128

/*
 * An entry's fd where its path was not opened (MAX_HELD held, or an error
 * the taker's own open might not meet), or was let go: the taker opens
 * the file, and it is never opened ahead again.
 */
#define NOT_OPENED INT_MIN

struct opened {
	char *path;
	bool taken;
	struct ms_preopened f;       /* f.fd NOT_OPENED: left for the taker */
	unsigned char *head;         /* MS_ELF_HEAD bytes; NULL once taken, or where nothing was opened */
};

struct ms_preopen {
	pthread_mutex_t lock;
	struct opened *v;
	size_t n, cap;
	uint32_t *slot;              /* v by path: open addressing, index + 1, 0 empty */
	size_t nslot;                /* a power of two, at least twice n */
	size_t held;                 /* descriptors opened and not taken */
};

struct ms_preopen *ms_preopen_new(void)
{
	struct ms_preopen *po = calloc(1, sizeof(*po));

	if (po)
		pthread_mutex_init(&po->lock, NULL);
	return po;
}

/* The slot of path: where it is, or the empty one it would go to. Under the lock. */
static size_t slot_of(const struct ms_preopen *po, const char *path)
{
	size_t k = ms_hash64(ms_hash_str(path), po->nslot);

	while (po->slot[k] && strcmp(po->v[po->slot[k] - 1].path, path))
		k = (k + 1) & (po->nslot - 1);
	return k;
}

/* Room for one entry more, the slots kept under half full. false on no memory. Under the lock. */
static bool room(struct ms_preopen *po)
{
	size_t n = po->nslot ? po->nslot : 64, i;
	uint32_t *old = po->slot;

	if (MS_ALLOC_GROW(po->v, po->n + 1, po->cap))
		return false;
	if ((po->n + 1) * 2 <= po->nslot)
		return true;
	while ((po->n + 1) * 2 > n)
		n *= 2;
	if (!(po->slot = calloc(n, sizeof(*po->slot)))) {
		po->slot = old;
		return false;
	}
	free(old);
	po->nslot = n;
	for (i = 0; i < po->n; i++)
		po->slot[slot_of(po, po->v[i].path)] = (uint32_t)i + 1;
	return true;
}

/*
 * What to do with path: 0 nothing (seen, or past MAX_PATHS), 1 open it, 2
 * keep it unopened (MAX_HELD held here, or the binaries hold all they may).
 */
static int wanted(struct ms_preopen *po, const char *path)
{
	int want = 0;

	pthread_mutex_lock(&po->lock);
	if (po->n < MAX_PATHS && (!po->nslot || !po->slot[slot_of(po, path)]))
		want = po->held < MAX_HELD && ms_bin_held_room() ? 1 : 2;
	pthread_mutex_unlock(&po->lock);
	return want;
}

/* Whether an open's error would be the taker's too: not one of running out of descriptors or memory. */
static bool lasting(int err)
{
	return err == ENOENT || err == ENOEXEC || err == EPERM || err == EACCES || err == ENOTDIR ||
	       err == ELOOP || err == ENAMETOOLONG;
}

/* o's file opened at path as the taker would open it, its ELF made; o->f.fd NOT_OPENED where the taker must try. */
static void open_ahead(struct opened *o, const char *path)
{
	o->f.fd = NOT_OPENED;
	if (!(o->head = malloc(MS_ELF_HEAD)))
		return;
	o->f.fd = ms_elf_open_head(path, o->head, MS_ELF_HEAD, &o->f.len);
	if (o->f.fd >= 0) {
		o->f.elf = ms_bin_elf_ahead(o->f.fd, &o->f.written);
		return;
	}
	free(o->head);                       /* what the taker needs is the error alone */
	o->head = NULL;
	if (!lasting(-o->f.fd))
		o->f.fd = NOT_OPENED;
}

/* Ends what o holds: its ELF, its descriptor, its head. */
static void let_go(struct opened *o)
{
	if (o->f.fd >= 0) {
		elf_end(o->f.elf);
		close(o->f.fd);
	}
	o->f.fd = NOT_OPENED;
	free(o->head);
	o->head = NULL;
}

void ms_preopen_map(void *ctx, const struct ms_event *ev)
{
	struct ms_preopen *po = ctx;
	struct opened o = { .f.fd = NOT_OPENED };
	char path[4096];
	int want;

	if (ev->kind != MS_EV_MAP || !ms_bin_map_path(&ev->map, path, sizeof(path)) || !(want = wanted(po, path)))
		return;
	if (!(o.path = strdup(path)))
		return;
	if (want == 1)
		open_ahead(&o, path);
	pthread_mutex_lock(&po->lock);       /* only this thread inserts: path is not there yet */
	if (room(po)) {
		po->v[po->n] = o;
		po->slot[slot_of(po, path)] = (uint32_t)++po->n;
		po->held += o.f.fd >= 0;
		o.path = NULL;
	}
	pthread_mutex_unlock(&po->lock);
	if (o.path) {                        /* no room: as if never opened */
		let_go(&o);
		free(o.path);
	}
}

void ms_preopen_drain(struct ms_preopen *po)
{
	size_t i;

	pthread_mutex_lock(&po->lock);
	for (i = 0; i < po->n; i++)
		if (!po->v[i].taken)
			let_go(&po->v[i]);
	po->held = 0;
	pthread_mutex_unlock(&po->lock);
}

void ms_preopen_free(struct ms_preopen *po)
{
	size_t i;

	if (!po)
		return;
	ms_preopen_drain(po);                /* what was never taken; the rest is the takers' */
	for (i = 0; i < po->n; i++)
		free(po->v[i].path);
	free(po->v);
	free(po->slot);
	pthread_mutex_destroy(&po->lock);
	free(po);
}

bool ms_preopen_take(struct ms_preopen *po, const char *path, unsigned char *head, struct ms_preopened *out)
{
	struct opened *o = NULL;
	uint32_t i;

	pthread_mutex_lock(&po->lock);
	if (po->nslot && (i = po->slot[slot_of(po, path)]) && !po->v[i - 1].taken &&
	    po->v[i - 1].f.fd != NOT_OPENED) {
		o = &po->v[i - 1];
		o->taken = true;
		po->held -= o->f.fd >= 0;
		*out = o->f;
		if (!o->head)
			out->len = 0;
		if (out->len)
			memcpy(head, o->head, out->len);
		free(o->head);
		o->head = NULL;
	}
	pthread_mutex_unlock(&po->lock);
	return o != NULL;
}
