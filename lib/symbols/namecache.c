/*
 * The namer's answers on disk (namecache.h). One file for each config:
 * a header, a table of slots by key (open addressing, a power of two of
 * them, at most half full), then the answers' bytes. It is read where it
 * is mapped; answers put in a run go to memory, and are written out with
 * the old ones into a new file that is renamed over the old.
 *
 * The file is trusted no more than a recording: every slot's answer must
 * lie inside the file, and a file that is not whole, not a regular file
 * of this user's, writable by others, or past the size a save writes, is
 * taken for none.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/namecache.h"
#include "util/buf.h"
#include "util/cachedir.h"
#include "util/grow.h"

#define MAGIC "MSNAMES1"
#define MAX_FILE (16u << 20)      /* a file, whole: past it, a save keeps the run's answers alone */
#define MAX_ANSWER (1u << 20)
#define STALE_TMP (3600)          /* seconds after which a save's file left by a killed run goes */

struct head {
	char magic[8];
	uint64_t config_a, config_b;
	uint64_t nslots;             /* a power of two */
	uint64_t nused;
	uint64_t heap_len;           /* the answers' bytes, after the slots */
};

struct slot {
	uint64_t a, b;               /* the key; both 0: empty */
	uint32_t off, len;           /* the answer, in the heap */
};

struct ms_namecache {
	struct ms_namekey config;
	char path[4200];
	/* The file as read, mapped (NULL: none). */
	const unsigned char *map;
	size_t map_len;
	const struct slot *slots;
	uint64_t nslots;
	const unsigned char *heap;
	uint64_t heap_len;
	/* Put in this run. */
	struct slot *fresh;
	size_t nfresh, cap_fresh;
	struct ms_buf bytes;
};

/* --- the file read ---------------------------------------------------------------------- */

/* Whether the mapped file is whole and of this config: its slots and answers inside it. */
static bool take_file(struct ms_namecache *c, const unsigned char *map, size_t len)
{
	struct head h;
	uint64_t room;

	if (len < sizeof(h))
		return false;
	memcpy(&h, map, sizeof(h));
	if (memcmp(h.magic, MAGIC, 8) || h.config_a != c->config.a || h.config_b != c->config.b ||
	    !h.nslots || (h.nslots & (h.nslots - 1)) || h.nslots > (len - sizeof(h)) / sizeof(struct slot))
		return false;
	room = len - sizeof(h) - h.nslots * sizeof(struct slot);
	if (h.heap_len != room || h.nused >= h.nslots)
		return false;
	c->map = map;
	c->map_len = len;
	c->slots = (const struct slot *)(map + sizeof(h));
	c->nslots = h.nslots;
	c->heap = map + sizeof(h) + h.nslots * sizeof(struct slot);
	c->heap_len = h.heap_len;
	return true;
}

static void read_file(struct ms_namecache *c)
{
	int fd = open(c->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	void *map;

	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    st.st_size > 0 && (uint64_t)st.st_size <= MAX_FILE &&
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED &&
	    !take_file(c, map, (size_t)st.st_size))
		munmap(map, (size_t)st.st_size);
	close(fd);
}

struct ms_namecache *ms_namecache_open(const struct ms_namekey *config)
{
	struct ms_namecache *c;
	char dir[4096];

	if (!ms_cachedir_path("MAPSCOPE_NAME_CACHE", "names", dir, sizeof(dir)) || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->config = *config;
	snprintf(c->path, sizeof(c->path), "%s/%016llx%016llx.names", dir, (unsigned long long)config->a,
		 (unsigned long long)config->b);
	ms_buf_init(&c->bytes);
	if (ms_cachedir_own(dir))        /* made only when there is something to save */
		read_file(c);
	return c;
}

static const struct slot *find(const struct slot *slots, uint64_t nslots, const struct ms_namekey *key)
{
	uint64_t i = key->a & (nslots - 1), n;

	for (n = 0; n < nslots && (slots[i].a || slots[i].b); n++, i = (i + 1) & (nslots - 1))
		if (slots[i].a == key->a && slots[i].b == key->b)
			return &slots[i];
	return NULL;
}

const void *ms_namecache_get(const struct ms_namecache *c, const struct ms_namekey *key, size_t *len)
{
	const struct slot *s = c && c->map ? find(c->slots, c->nslots, key) : NULL;

	if (!s || s->off > c->heap_len || s->len > c->heap_len - s->off)
		return NULL;
	*len = s->len;
	return c->heap + s->off;
}

/* The bytes of a file of n answers of len bytes in all: header, slots (at most half full), answers. */
static uint64_t file_size(uint64_t n, uint64_t len, uint64_t *nslots)
{
	uint64_t k = 64;

	while (k < 2 * n + 2)
		k *= 2;
	*nslots = k;
	return sizeof(struct head) + k * sizeof(struct slot) + len;
}

int ms_namecache_put(struct ms_namecache *c, const struct ms_namekey *key, const void *answer, size_t len)
{
	uint64_t nslots;

	if (len > MAX_ANSWER)
		return -E2BIG;
	if (file_size(c->nfresh + 1, c->bytes.len + len, &nslots) > MAX_FILE)
		return -ENOSPC;          /* the run's answers alone would not fit a file */
	if (MS_ALLOC_GROW(c->fresh, c->nfresh + 1, c->cap_fresh))
		return -ENOMEM;
	c->fresh[c->nfresh] = (struct slot){ key->a, key->b, (uint32_t)c->bytes.len, (uint32_t)len };
	ms_buf_append(&c->bytes, answer, len);
	if (ms_buf_error(&c->bytes))
		return -ENOMEM;
	c->nfresh++;
	return 0;
}

/* --- the file written ------------------------------------------------------------------- */

/* Puts (s, its bytes at from) in the table being made, where its key is not there yet. */
static void place(struct slot *slots, uint64_t nslots, struct ms_buf *heap, const struct slot *s,
		  const unsigned char *from, uint64_t *nused)
{
	const struct ms_namekey key = { s->a, s->b };
	uint64_t i = s->a & (nslots - 1);

	if (find(slots, nslots, &key))
		return;
	while (slots[i].a || slots[i].b)
		i = (i + 1) & (nslots - 1);
	slots[i] = (struct slot){ s->a, s->b, (uint32_t)heap->len, s->len };
	ms_buf_append(heap, from + s->off, s->len);
	++*nused;
}

/* Whether the old file's slot s is one to keep: its answer inside the file. */
static bool old_whole(const struct ms_namecache *c, const struct slot *s)
{
	return (s->a || s->b) && s->off <= c->heap_len && s->len <= c->heap_len - s->off;
}

/*
 * The new file's bytes into out: header, slots, answers. The run's own
 * first, so that an answer named again replaces one kept; then the old
 * ones, where all fit one file, else none of them. 0 or -ENOMEM.
 */
static int make_file(const struct ms_namecache *c, struct ms_buf *out)
{
	uint64_t n = c->nfresh, len = c->bytes.len, nslots, nused = 0, i;
	struct head h = { .config_a = c->config.a, .config_b = c->config.b };
	struct ms_buf heap;
	struct slot *slots;
	bool keep_old;
	int err;

	for (i = 0; c->map && i < c->nslots; i++)
		if (old_whole(c, &c->slots[i])) {
			n++;
			len += c->slots[i].len;
		}
	keep_old = c->map && file_size(n, len, &nslots) <= MAX_FILE;
	if (!keep_old)
		file_size(c->nfresh, c->bytes.len, &nslots);
	if (!(slots = calloc(nslots, sizeof(*slots))))
		return -ENOMEM;
	ms_buf_init(&heap);
	for (i = 0; i < c->nfresh; i++)
		place(slots, nslots, &heap, &c->fresh[i], c->bytes.data, &nused);
	for (i = 0; keep_old && i < c->nslots; i++)
		if (old_whole(c, &c->slots[i]))
			place(slots, nslots, &heap, &c->slots[i], c->heap, &nused);
	memcpy(h.magic, MAGIC, 8);
	h.nslots = nslots;
	h.nused = nused;
	h.heap_len = heap.len;
	ms_buf_append(out, &h, sizeof(h));
	ms_buf_append(out, slots, nslots * sizeof(*slots));
	ms_buf_append(out, heap.data, heap.len);
	err = ms_buf_error(&heap) || ms_buf_error(out) ? -ENOMEM : 0;
	free(slots);
	ms_buf_release(&heap);
	return err;
}

/* Removes the files saves left in dir more than an hour ago: a run killed between writing one and renaming it. */
static void sweep(const char *dir)
{
	char at[4400];
	struct dirent *e;
	struct stat st;
	size_t n;
	DIR *d = opendir(dir);
	time_t now = time(NULL);

	while (d && (e = readdir(d))) {
		n = strlen(e->d_name);
		if (n > 4 && !strcmp(e->d_name + n - 4, ".tmp") &&
		    snprintf(at, sizeof(at), "%s/%s", dir, e->d_name) < (int)sizeof(at) && !lstat(at, &st) &&
		    S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_mtime + STALE_TMP < now)
			unlink(at);
	}
	if (d)
		closedir(d);
}

/* out's bytes to a file of their own in the cache's folder, renamed over the cache's file. 0 or -errno. */
static int write_file(const struct ms_namecache *c, const struct ms_buf *out)
{
	char tmp[4300], dir[4300], *slash;
	size_t done = 0;
	ssize_t w;
	int fd, err = 0;

	snprintf(dir, sizeof(dir), "%s", c->path);
	if ((slash = strrchr(dir, '/')))
		*slash = '\0';
	if (!slash || !ms_cachedir_make(dir))
		return -EACCES;
	sweep(dir);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX.tmp", c->path);
	if ((fd = mkostemps(tmp, 4, O_CLOEXEC)) < 0)
		return -errno;
	for (; !err && done < out->len; done += (size_t)w)
		if ((w = write(fd, out->data + done, out->len - done)) <= 0)
			err = w < 0 ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, c->path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int ms_namecache_save(struct ms_namecache *c)
{
	struct ms_buf out;
	int err;

	if (!c || !c->nfresh)
		return 0;
	ms_buf_init(&out);
	if (!(err = make_file(c, &out)) && !(err = write_file(c, &out))) {
		c->nfresh = 0;           /* saved: a second save writes nothing, and put's bound counts anew */
		c->bytes.len = 0;
	}
	ms_buf_release(&out);
	return err;
}

void ms_namecache_free(struct ms_namecache *c)
{
	if (!c)
		return;
	if (c->map)
		munmap((void *)c->map, c->map_len);
	free(c->fresh);
	ms_buf_release(&c->bytes);
	free(c);
}
