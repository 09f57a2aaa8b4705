/*
 * File names as /proc shows them when it is read: show_map_vma prints
 * d_path of the mapped file, which ends in " (deleted)" once the name the
 * file was mapped by is gone (unlink, or a rename over it). The kernel
 * writes no record of that; the stream tells which file (device and
 * inode, as MMAP2 has them) lost a name inside such a call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aspace/internal.h"

#define DELETED " (deleted)"

static bool deleted(const char *name)
{
	size_t n = strlen(name), k = sizeof(DELETED) - 1;

	return n >= k && !strcmp(name + n - k, DELETED);
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
		free((char *)r->proc_name);
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
