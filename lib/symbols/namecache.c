/*
 * The namer's answers on disk (namecache.h). One file for each config:
 * a header, a table of slots by key (open addressing, a power of two of
 * them, at most half full), then the answers' bytes. It is read where it
 * is mapped; answers put in a run go to memory, and are written out with
 * the old ones into a new file that is renamed over the old.
 *
 * The file is trusted no more than a recording: every slot's answer must
 * lie inside the file, and a file that is not whole, not a regular file
 * of this user's, or writable by others, is taken for none.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "symbols/internal.h"
#include "symbols/namecache.h"
#include "util/buf.h"
#include "util/grow.h"

#define MAGIC "MSNAMES1"
#define MAX_FILE (16u << 20)      /* past this, a save keeps the run's answers alone */
#define MAX_ANSWER (1u << 20)

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

/* --- keys --------------------------------------------------------------------------------- */

static uint64_t fmix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

void ms_namekey_init(struct ms_namekey *k, uint64_t seed)
{
	k->a = fmix(seed ^ 0x9e3779b97f4a7c15ULL);
	k->b = fmix(~seed * 0xbf58476d1ce4e5b9ULL);
}

/* Two lanes, each a chain of its own mixing: a key of 128 bits. */
void ms_namekey_word(struct ms_namekey *k, uint64_t w)
{
	k->a = fmix(k->a ^ (w * 0x87c37b91114253d5ULL)) + 0x52dce729;
	k->b = fmix((k->b + w) * 0x4cf5ad432745937fULL ^ (k->b >> 29)) + 0x38495ab5;
}

void ms_namekey_bytes(struct ms_namekey *k, const void *p, size_t len)
{
	const unsigned char *c = p;
	uint64_t w;
	size_t i;

	ms_namekey_word(k, len);
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, c + i, 8);
		ms_namekey_word(k, w);
	}
	if (i < len) {
		w = 0;
		memcpy(&w, c + i, len - i);
		ms_namekey_word(k, w);
	}
}

void ms_namekey_str(struct ms_namekey *k, const char *s)
{
	ms_namekey_bytes(k, s, s ? strlen(s) + 1 : 0);
}

struct ms_namekey ms_namekey_done(const struct ms_namekey *k)
{
	struct ms_namekey d = { fmix(k->a ^ k->b), fmix(k->b + 0x9e3779b97f4a7c15ULL) };

	if (!d.a && !d.b)
		d.a = 1;                 /* 0, 0 marks an empty slot */
	return d;
}

struct self_id {
	uintptr_t at;
	struct ms_namekey *k;
	bool found;
};

/* The build-id note of the object that holds s->at, from its program headers in memory. */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_id *s = arg;
	const ElfW(Nhdr) *nh;
	const char *p, *end;
	bool holds = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum && !holds; i++)
		holds = info->dlpi_phdr[i].p_type == PT_LOAD && s->at >= info->dlpi_addr + info->dlpi_phdr[i].p_vaddr &&
			s->at < info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz;
	for (i = 0; holds && i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		for (end = p + info->dlpi_phdr[i].p_memsz; p + sizeof(*nh) <= end; ) {
			nh = (const ElfW(Nhdr) *)p;
			p += sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(nh + 1, "GNU", 4) &&
			    p + nh->n_descsz <= end && nh->n_descsz) {
				ms_namekey_bytes(s->k, p, nh->n_descsz);
				s->found = true;
				return 1;
			}
			p += (nh->n_descsz + 3) & ~3u;
		}
	}
	return holds;
}

bool ms_namecache_self_id(struct ms_namekey *k)
{
	struct self_id s = { (uintptr_t)ms_namecache_self_id, k, false };

	dl_iterate_phdr(find_self, &s);
	return s.found;
}

/* --- a binary's key ------------------------------------------------------------------- */

/* What stat says of path (or that there is nothing there), as words of k: whether it is there. */
static bool stat_words(struct ms_namekey *k, const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		ms_namekey_word(k, 0);
		return false;
	}
	ms_namekey_word(k, 1);
	ms_namekey_word(k, (uint64_t)st.st_dev);
	ms_namekey_word(k, (uint64_t)st.st_ino);
	ms_namekey_word(k, (uint64_t)st.st_size);
	ms_namekey_word(k, (uint64_t)st.st_mtim.tv_sec);
	ms_namekey_word(k, (uint64_t)st.st_mtim.tv_nsec);
	ms_namekey_word(k, (uint64_t)st.st_ctim.tv_sec);
	ms_namekey_word(k, (uint64_t)st.st_ctim.tv_nsec);
	return true;
}

/* The places a .gnu_debuglink of name link sends the search to (debuginfo.c), as words of k. */
static void debuglink_words(struct ms_namekey *k, const char *path, const char *link)
{
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) : 0;
	char at[4200];

	ms_namekey_str(k, link);
	snprintf(at, sizeof(at), "%.*s/%s", dir, path, link);
	stat_words(k, at);
	snprintf(at, sizeof(at), "%.*s/.debug/%s", dir, path, link);
	stat_words(k, at);
	snprintf(at, sizeof(at), "/usr/lib/debug%.*s/%s", dir, path, link);
	stat_words(k, at);
}

/* The binary's .gnu_debuglink name, as words of k: from image where the caller mapped it, else the file. */
static void link_words(struct ms_namekey *k, const char *path, const void *image, size_t image_size)
{
	int fd = image ? -1 : ms_elf_open(path);
	Elf *elf = image ? elf_memory((char *)image, image_size) : fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	GElf_Word crc = 0;
	const char *link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;

	if (link && *link && !strchr(link, '/')) {
		debuglink_words(k, path, link);
		ms_namekey_word(k, crc);
	} else
		ms_namekey_word(k, 0);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

bool ms_namecache_bin_key(struct ms_namekey *out, const char *path, int state, const unsigned char *id, size_t id_len,
			  const void *image, size_t image_size)
{
	unsigned char own[64];
	char at[4200];
	struct ms_namekey k;
	size_t i, n;
	int got;

	ms_namekey_init(&k, 0x62696e);
	ms_namekey_str(&k, path);
	ms_namekey_word(&k, (uint64_t)(int64_t)state);
	ms_namekey_bytes(&k, id, id_len);
	/*
	 * The file as it is now, build-id or not: stripping keeps a build-id
	 * and takes the symbols with it. Without the recording's, the file's.
	 */
	stat_words(&k, path);
	if (!id_len) {
		got = ms_elf_build_id(path, own, sizeof(own));
		id = own;
		id_len = got > 0 ? (size_t)got : 0;
	}
	/*
	 * The separate debug files the search would read: by build-id, then
	 * its decompressed copy (the same bytes: only where the original is
	 * gone does the copy decide; a first run makes it), by debuglink.
	 */
	if (id_len && id_len <= 64) {
		n = (size_t)snprintf(at, sizeof(at), "/usr/lib/debug/.build-id/%02x/", id[0]);
		for (i = 1; i < id_len; i++, n += 2)
			snprintf(at + n, 3, "%02x", id[i]);
		snprintf(at + n, 7, ".debug");
		if (!stat_words(&k, at) && ms_debugcache_copy_path(at, sizeof(at), id, id_len, false))
			stat_words(&k, at);
	}
	link_words(&k, path, image, image_size);
	*out = ms_namekey_done(&k);
	return true;
}

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
	    st.st_size > 0 && (uint64_t)st.st_size <= MAX_FILE * 2ULL &&
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED &&
	    !take_file(c, map, (size_t)st.st_size))
		munmap(map, (size_t)st.st_size);
	close(fd);
}

struct ms_namecache *ms_namecache_open(const struct ms_namekey *config)
{
	struct ms_namecache *c;
	char dir[4096];

	if (!ms_user_cache_dir("MAPSCOPE_NAME_CACHE", "names", dir, sizeof(dir)) || !ms_own_dir(dir) ||
	    !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->config = *config;
	snprintf(c->path, sizeof(c->path), "%s/%016llx%016llx.names", dir, (unsigned long long)config->a,
		 (unsigned long long)config->b);
	ms_buf_init(&c->bytes);
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

int ms_namecache_put(struct ms_namecache *c, const struct ms_namekey *key, const void *answer, size_t len)
{
	if (len > MAX_ANSWER)
		return -E2BIG;
	if (c->bytes.len + len > MAX_FILE || MS_ALLOC_GROW(c->fresh, c->nfresh + 1, c->cap_fresh))
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

/* The new file's bytes into out: header, slots, answers. 0 or -ENOMEM. */
static int make_file(const struct ms_namecache *c, struct ms_buf *out)
{
	bool keep_old = c->map && c->heap_len + c->bytes.len <= MAX_FILE;
	uint64_t n = c->nfresh, nslots = 64, nused = 0, i;
	struct head h = { .config_a = c->config.a, .config_b = c->config.b };
	struct ms_buf heap;
	struct slot *slots;

	for (i = 0; keep_old && i < c->nslots; i++)
		n += old_whole(c, &c->slots[i]);
	while (nslots < 2 * n + 2)
		nslots *= 2;
	if (!(slots = calloc(nslots, sizeof(*slots))))
		return -ENOMEM;
	ms_buf_init(&heap);
	for (i = 0; keep_old && i < c->nslots; i++)
		if (old_whole(c, &c->slots[i]))
			place(slots, nslots, &heap, &c->slots[i], c->heap, &nused);
	for (i = 0; i < c->nfresh; i++)
		place(slots, nslots, &heap, &c->fresh[i], c->bytes.data, &nused);
	memcpy(h.magic, MAGIC, 8);
	h.nslots = nslots;
	h.nused = nused;
	h.heap_len = heap.len;
	ms_buf_append(out, &h, sizeof(h));
	ms_buf_append(out, slots, nslots * sizeof(*slots));
	ms_buf_append(out, heap.data, heap.len);
	free(slots);
	ms_buf_release(&heap);
	return ms_buf_error(&heap) || ms_buf_error(out) ? -ENOMEM : 0;
}

int ms_namecache_save(struct ms_namecache *c)
{
	char tmp[4300];
	struct ms_buf out;
	size_t done = 0;
	ssize_t w;
	int fd, err;

	if (!c || !c->nfresh)
		return 0;
	ms_buf_init(&out);
	if ((err = make_file(c, &out))) {
		ms_buf_release(&out);
		return err;
	}
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", c->path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = fd < 0 ? -errno : 0;
	for (; !err && done < out.len; done += (size_t)w)
		if ((w = write(fd, out.data + done, out.len - done)) <= 0)
			err = w < 0 ? -errno : -EIO;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, c->path))
		err = -errno;
	if (err && fd >= 0)
		unlink(tmp);
	if (!err)
		c->nfresh = 0;           /* saved: a second save writes nothing */
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
