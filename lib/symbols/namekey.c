/*
 * The keys of the namer's answers (namekey.h). A key is two lanes of
 * 64-bit mixing over words, each word tagged by what it is, lengths
 * before bytes: no two different inputs are fed alike.
 *
 * A binary's key names every file that could change what the namer
 * reads for it, by what stat says of it or that it is not there: the
 * binary, and the separate debug files the search (symbols.c,
 * debuginfo.c) and libdw would open. A file added, removed or replaced at
 * any of those places makes another key, so that a name kept on disk is
 * never one the files would not give now.
 */
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "symbols/internal.h"
#include "symbols/namekey.h"

#define PLACE_MAX 4200

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

static inline uint64_t rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

/*
 * Two lanes, each a chain of its own mixing: a key of 128 bits. A word
 * is scrambled off the chain (murmur3's body, each lane its own
 * constants), so a lane's chain is an xor, a rotate and a multiply-add a
 * word: the namer keys every address of thousands of chains. The lanes
 * mix each other only in ms_namekey_done(), the final mixing.
 */
void ms_namekey_word(struct ms_namekey *k, uint64_t w)
{
	k->a = rotl(k->a ^ rotl(w * 0x87c37b91114253d5ULL, 31) * 0x4cf5ad432745937fULL, 27) * 5 + 0x52dce729;
	k->b = rotl(k->b ^ rotl(w * 0x4cf5ad432745937fULL, 33) * 0x87c37b91114253d5ULL, 31) * 5 + 0x38495ab5;
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
	ms_namekey_word(k, s != NULL);
	if (s)
		ms_namekey_bytes(k, s, strlen(s));
}

struct ms_namekey ms_namekey_done(const struct ms_namekey *k)
{
	struct ms_namekey d = { fmix(k->a ^ k->b), fmix(k->b + 0x9e3779b97f4a7c15ULL) };

	if (!d.a && !d.b)
		d.a = 1;                 /* 0, 0 marks an empty slot */
	return d;
}

/* --- the code that names ------------------------------------------------------------ */

struct code_id {
	uintptr_t at;
	struct ms_namekey *k;
	bool found;
};

/* The build-id note of the object that holds s->at, from its program headers in memory. */
static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct code_id *s = arg;
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
		for (end = p + info->dlpi_phdr[i].p_memsz; p + sizeof(*nh) <= end;) {
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

bool ms_namekey_code(struct ms_namekey *k)
{
	const uintptr_t code[] = { (uintptr_t)ms_namekey_code, (uintptr_t)dwfl_begin, (uintptr_t)elf_begin,
				   (uintptr_t)dwarf_getscopes };
	struct code_id s = { .k = k };
	size_t i;

	for (i = 0; i < sizeof(code) / sizeof(code[0]); i++) {
		s.at = code[i];
		s.found = false;
		dl_iterate_phdr(find_object, &s);
		if (!s.found)
			return false;
	}
	return true;
}

/* --- a binary's files ----------------------------------------------------------------- */

static void st_words(struct ms_namekey *k, const struct stat *st)
{
	ms_namekey_word(k, 1);
	ms_namekey_word(k, (uint64_t)st->st_dev);
	ms_namekey_word(k, (uint64_t)st->st_ino);
	ms_namekey_word(k, (uint64_t)st->st_size);
	ms_namekey_word(k, (uint64_t)st->st_mtim.tv_sec);
	ms_namekey_word(k, (uint64_t)st->st_mtim.tv_nsec);
	ms_namekey_word(k, (uint64_t)st->st_ctim.tv_sec);
	ms_namekey_word(k, (uint64_t)st->st_ctim.tv_nsec);
}

/* What stat says of path (or that nothing is there), as words of k: whether something is. */
static bool stat_words(struct ms_namekey *k, const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		ms_namekey_word(k, 0);
		return false;
	}
	st_words(k, &st);
	return true;
}

/* Section name's bytes of elf, as they lie in the file; NULL where it has none. */
static const char *section(Elf *elf, const char *name, size_t *len)
{
	Elf_Scn *scn = NULL;
	const char *n;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t str;

	if (elf_getshdrstrndx(elf, &str))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && (n = elf_strptr(elf, str, sh.sh_name)) &&
		    !strcmp(n, name) && (d = elf_rawdata(scn, NULL)) && d->d_buf) {
			*len = d->d_size;
			return d->d_buf;
		}
	return NULL;
}

/*
 * The dwz file that elf's .gnu_debugaltlink names (as libdw looks for it:
 * by its path, relative to the folder of the file at path, and by its
 * build-id), as words of k.
 */
static void alt_words(struct ms_namekey *k, Elf *elf, const char *path)
{
	const char *slash = strrchr(path, '/'), *link;
	size_t len = 0, n;
	char at[PLACE_MAX];

	if (!(link = section(elf, ".gnu_debugaltlink", &len)) || !(n = strnlen(link, len)) || n == len) {
		ms_namekey_word(k, 0);
		return;
	}
	ms_namekey_bytes(k, link, len);
	if (link[0] == '/')
		snprintf(at, sizeof(at), "%.*s", (int)n, link);
	else
		snprintf(at, sizeof(at), "%.*s/%.*s", slash ? (int)(slash - path) : 0, path, (int)n, link);
	stat_words(k, at);
	if (ms_debug_build_id_path(at, sizeof(at), (const unsigned char *)link + n + 1, len - n - 1))
		stat_words(k, at);
}

/* elf's dwz file as words of k (where elf could not be read, that), then elf and fd let go. */
static void alt_words_end(struct ms_namekey *k, Elf *elf, int fd, const char *path)
{
	if (elf) {
		alt_words(k, elf, path);
		elf_end(elf);
	} else {
		ms_namekey_word(k, 2);
	}
	if (fd >= 0)
		close(fd);
}

/* The file at path where it is there, as words of k: its identity and its dwz file's. */
static bool debug_words(struct ms_namekey *k, const char *path)
{
	int fd;

	if (!stat_words(k, path))
		return false;
	fd = ms_elf_open(path);
	alt_words_end(k, fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL, fd, path);
	return true;
}

/* The places a .gnu_debuglink of name link sends the search to (debuginfo.c), as words of k. */
static void debuglink_words(struct ms_namekey *k, const char *path, const char *link, uint32_t crc)
{
	char at[PLACE_MAX];
	int i;

	ms_namekey_str(k, link);
	ms_namekey_word(k, crc);
	for (i = 0; ms_debuglink_place(path, link, i, at, sizeof(at)); i++)
		debug_words(k, at);
}

/*
 * The binary's own links, .gnu_debuglink and .gnu_debugaltlink, as words
 * of k: read from image where given, else from the file.
 */
static void link_words(struct ms_namekey *k, const char *path, const void *image, size_t image_size)
{
	int fd = image ? -1 : ms_elf_open(path);
	Elf *elf = image ? elf_memory((char *)image, image_size) : fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	GElf_Word crc = 0;
	const char *link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;

	if (link && *link && !strchr(link, '/'))
		debuglink_words(k, path, link, crc);
	else
		ms_namekey_word(k, 0);
	alt_words_end(k, elf, fd, path);
}

bool ms_namekey_bin(struct ms_namekey *out, const char *path, int state, const unsigned char *id, size_t id_len,
		    const struct stat *file, const void *image, size_t image_size)
{
	unsigned char own[64];
	char at[PLACE_MAX];
	struct ms_namekey k;
	int got;

	if (strlen(path) + 64 >= sizeof(at))
		return false;
	ms_namekey_init(&k, 0x62696e);
	ms_namekey_str(&k, path);
	ms_namekey_word(&k, (uint64_t)(int64_t)state);
	ms_namekey_bytes(&k, id, id_len);
	/* The file as read (stripping keeps a build-id and takes the symbols); without the recording's build-id, its own. */
	if (file)
		st_words(&k, file);
	else
		stat_words(&k, path);
	if (!id_len && (got = ms_elf_build_id(path, own, sizeof(own))) > 0) {
		id = own;
		id_len = (size_t)got;
	}
	/* By build-id, then its decompressed copy (the same bytes: it decides only where the original is gone). */
	if (ms_debug_build_id_path(at, sizeof(at), id, id_len) && !debug_words(&k, at) &&
	    ms_debugcache_copy_path(at, sizeof(at), id, id_len, false))
		debug_words(&k, at);
	link_words(&k, path, image, image_size);
	snprintf(at, sizeof(at), "%s.dwp", path);     /* split DWARF's package, beside the binary */
	stat_words(&k, at);
	*out = ms_namekey_done(&k);
	return true;
}
