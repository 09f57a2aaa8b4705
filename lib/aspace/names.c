/*
 * File names as /proc shows them when it is read: show_map_vma prints
 * d_path of the mapped file, which ends in " (deleted)" once the name the
 * file was mapped by is gone (unlink, or a rename over it), and is the new
 * path after a rename. The kernel writes no record of that; the stream
 * tells which file (device and inode, as MMAP2 has them) lost a name or
 * was renamed inside such a call. And the names prctl gives anonymous
 * VMAs ([anon:NAME]), which /proc shows in place of none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aspace/internal.h"
#include "util/grow.h"
#include "util/hash.h"

#define DELETED " (deleted)"

static bool deleted(const char *name)
{
	size_t n = strlen(name), k = sizeof(DELETED) - 1;

	return n >= k && !strcmp(name + n - k, DELETED);
}

/*
 * A filter of the /proc names of regions and of every directory above
 * each ("/a", "/a/b" and "/a/b/c" for "/a/b/c"), 1 Mi bits: a rename
 * whose paths no region was ever named under costs no walk over them all,
 * which a program that renames files into place again and again (an
 * editor, a database, a package manager) made quadratic: 20,000 renames
 * among 20,000 regions took the timeline a second. A name a rename gives
 * is added as it is given; one marked deleted keeps the directories it
 * had, which are in (only a directory's rename moves it).
 */
#define PATH_KEY_BITS (sizeof(((struct ms_aspace *)0)->path_keys) * 8)

static void set_path_bit(struct ms_aspace *as, uint64_t hash)
{
	size_t bit = ms_hash64(hash, PATH_KEY_BITS);

	as->path_keys[bit / 64] |= 1ULL << (bit % 64);
}

/* name, and each directory above it, into the filter: ms_hash_str() of each, made as it goes. */
static void add_path_keys(struct ms_aspace *as, const char *name)
{
	uint64_t h = MS_HASH_STR_EMPTY;
	size_t i;

	if (name[0] != '/')
		return;
	for (i = 0; name[i]; i++) {
		if (name[i] == '/' && i)
			set_path_bit(as, h);
		h = ms_hash_str_more(h, (unsigned char)name[i]);
	}
	set_path_bit(as, h);
}

/*
 * The keys of regions [from, to), alive or all: a name like the one
 * before it (a binary's segments, one after another, in each of
 * chromium's 170 processes) is in already, and a compare of it costs
 * less than its hash, a byte at a time.
 */
static void add_regions_keys(struct ms_aspace *as, size_t from, size_t to, bool alive_only)
{
	const char *last = NULL, *name;
	size_t i;

	for (i = from; i < to; i++) {
		if (alive_only && !as->regions[i]->alive)
			continue;
		name = as->regions[i]->proc_name;
		if (!last || strcmp(name, last))
			add_path_keys(as, name);
		last = name;
	}
}

/*
 * The filter made again from the regions alive now, where renames let
 * through by it found nothing to rename for 4 walks of them all: its keys
 * are never taken out as regions end or are deleted, and a path once
 * mapped (a file renamed over again and again) would let every rename of
 * it through.
 */
static void path_keys_again(struct ms_aspace *as)
{
	memset(as->path_keys, 0, sizeof(as->path_keys));
	add_regions_keys(as, 0, as->nr, true);
	as->path_keys_upto = as->nr;
	as->path_walks_wasted = 0;
}

/* Whether a region may bear the /proc name path, or one under it. */
static bool maybe_named(struct ms_aspace *as, const char *path)
{
	size_t bit;

	add_regions_keys(as, as->path_keys_upto, as->nr, false);
	as->path_keys_upto = as->nr;
	bit = ms_hash64(ms_hash_str(path), PATH_KEY_BITS);
	return as->path_keys[bit / 64] >> (bit % 64) & 1;
}

/* r's /proc name gets the suffix; its own name (which reports show) stays. */
static void mark_deleted(struct ms_region *r)
{
	size_t n = strlen(r->proc_name);
	char *name = malloc(n + sizeof(DELETED));

	if (!name)
		return;
	memcpy(name, r->proc_name, n);
	memcpy(name + n, DELETED, sizeof(DELETED));
	if (r->name != r->proc_name)
		ms_region_name_free(r->proc_name);
	r->proc_name = name;
}

/*
 * Every live region of the file, in every process: the name is the
 * file's, not the caller's. A file with other links loses only one name
 * here, which the record does not tell apart: it is named deleted too.
 */
/* A bit of the filter for a file: its inode and device mixed (murmur3's finaliser), 64 Ki bits. */
static uint32_t file_bit(uint64_t ino, uint32_t maj, uint32_t min)
{
	uint64_t k = ino ^ ((uint64_t)maj << 44) ^ ((uint64_t)min << 24);

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)(k & 0xffff);
}

/*
 * Whether a region may ever have been made of the file. Regions are only
 * added (ids are their order), so the filter takes in those made since
 * the last call; a file none was made of costs no walk over them all,
 * which chromium's many unlinks of files it never mapped made quadratic.
 */
static bool maybe_mapped(struct ms_aspace *as, const struct ms_event *ev)
{
	const struct ms_region *r;
	uint32_t bit;

	for (; as->file_ids_upto < as->nr; as->file_ids_upto++) {
		r = as->regions[as->file_ids_upto];
		bit = file_bit(r->ino, r->maj, r->min);
		as->file_ids[bit / 64] |= 1ULL << (bit % 64);
	}
	bit = file_bit(ev->file.ino, ev->file.maj, ev->file.min);
	return as->file_ids[bit / 64] >> (bit % 64) & 1;
}

void ms_names_unlink(struct ms_aspace *as, const struct ms_event *ev)
{
	struct ms_region *r;
	size_t i;

	if (!ev->file.ino || !maybe_mapped(as, ev))
		return;
	for (i = 0; i < as->nr; i++) {
		r = as->regions[i];
		if (r->alive && r->ino == ev->file.ino && r->maj == ev->file.maj && r->min == ev->file.min &&
		    r->proc_name[0] == '/' && !deleted(r->proc_name))
			mark_deleted(r);
	}
}

/* r's /proc name is name now (a copy); its own name (which reports show) stays. */
static void set_proc_name(struct ms_aspace *as, struct ms_region *r, const char *name)
{
	char *n = strdup(name);

	if (!n)
		return;
	if (r->name != r->proc_name)
		ms_region_name_free(r->proc_name);
	r->proc_name = n;
	add_path_keys(as, n);
}

/* Whether the rename set the ctime of r's file (none recorded: the paths alone decide). */
static bool renamed_file(const struct ms_region *r, const struct ms_event *ev)
{
	uint64_t dev = (uint64_t)r->maj << 20 | r->min;
	uint32_t i;

	for (i = 0; i < ev->rename.nr_files; i++)
		if (ev->rename.files[i][0] == dev && ev->rename.files[i][1] == r->ino)
			return true;
	return !ev->rename.nr_files;
}

/*
 * d_path follows the dentry the file was mapped by: the old path is the
 * new one now, and so is every path under it (a directory renamed). What
 * bore the new path was replaced, so it is " (deleted)", unless the two
 * were exchanged (RENAME_EXCHANGE). Every live region of the file, in
 * every process.
 */
void ms_names_rename(struct ms_aspace *as, const struct ms_event *ev)
{
	const char *from = ev->rename.old_path, *to = ev->rename.new_path;
	size_t nf = from ? strlen(from) : 0, i;
	struct ms_region *r;
	char buf[8192];
	bool gone, renamed = false;

	if (!from || !to || from[0] != '/' || to[0] != '/' || !strcmp(from, to) ||
	    (!maybe_named(as, from) && !maybe_named(as, to)))
		return;
	for (i = 0; i < as->nr; i++) {
		r = as->regions[i];
		/*
		 * Every case below starts with from or is to: that first (its second
		 * byte, then the calls), the suffix's strlen only then.
		 */
		if (!r->alive || r->proc_name[0] != '/' ||
		    (nf > 1 && r->proc_name[1] != from[1] && r->proc_name[1] != to[1]) ||
		    (strncmp(r->proc_name, from, nf) && strcmp(r->proc_name, to)))
			continue;
		/*
		 * A file deleted (unlinked, or renamed over) has no name to lose or
		 * take, but keeps its directory: renamed, the directory takes it
		 * along, and d_path prints it under the new path, " (deleted)" still.
		 */
		gone = deleted(r->proc_name);
		if (!gone && !strcmp(r->proc_name, from) && renamed_file(r, ev))
			set_proc_name(as, r, to);
		else if (!gone && !strcmp(r->proc_name, to) && renamed_file(r, ev))
			ev->rename.exchange ? set_proc_name(as, r, from) : mark_deleted(r);
		else if (!strncmp(r->proc_name, from, nf) && r->proc_name[nf] == '/' &&
			 snprintf(buf, sizeof(buf), "%s%s", to, r->proc_name + nf) < (int)sizeof(buf))
			set_proc_name(as, r, buf);
		else
			continue;
		renamed = true;
	}
	if (!renamed && (as->path_walks_wasted += as->nr) > 4 * as->nr + 65536)
		path_keys_again(as);
}

int64_t ms_names_anon_id(struct ms_aspace *as, const char *name)
{
	char *copy;
	size_t i;

	if (!name)
		return 0;
	for (i = 0; i < as->nr_anon_names; i++)
		if (!strcmp(as->anon_names[i], name))
			return (int64_t)i + 1;
	if (MS_GROW(as->anon_names, as->nr_anon_names + 1, as->cap_anon_names, 8, UINT32_MAX - 1, false) ||
	    !(copy = strdup(name)))
		return -ENOMEM;
	as->anon_names[as->nr_anon_names++] = copy;
	return (int64_t)as->nr_anon_names;
}

/*
 * show_map_vma: a file's VMA shows its path, but anonymous shared memory
 * with a name shows [anon_shmem:NAME]; [heap] and [stack] keep theirs;
 * other anonymous memory with a name shows [anon:NAME].
 */
const char *ms_names_vma(const struct ms_aspace *as, const struct piece *pc, char *buf, size_t len)
{
	const struct ms_region *r = as->regions[pc->region];
	const char *name = pc->name && pc->name <= as->nr_anon_names ? as->anon_names[pc->name - 1] : NULL;

	if (!name || (r->proc_name[0] && strncmp(r->proc_name, "/dev/zero", 9)))
		return r->proc_name;
	snprintf(buf, len, "[%s:%s]", r->proc_name[0] ? "anon_shmem" : "anon", name);
	return buf;
}

void ms_names_release(struct ms_aspace *as)
{
	size_t i;

	for (i = 0; i < as->nr_anon_names; i++)
		free(as->anon_names[i]);
	free(as->anon_names);
	as->anon_names = NULL;
	as->nr_anon_names = as->cap_anon_names = 0;
}
