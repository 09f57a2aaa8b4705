/*
 * File names as /proc shows them: " (deleted)" once an unlink took the
 * name, in every process; the new path after a rename (and every path
 * under a directory renamed), " (deleted)" for what a rename replaced,
 * swapped by RENAME_EXCHANGE; and the [anon:NAME] prctl gives anonymous
 * VMAs, which splits and merges them by name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <mapscope/aspace.h>

#include "aspace/internal.h"

#include "aspace_events.h"

static void map_file(struct ms_aspace *as, uint64_t s, uint64_t e, const char *name, uint64_t ino)
{
	struct ms_event m = ev(MS_EV_MAP);

	m.map.start = m.map.vma_start = s;
	m.map.end = m.map.vma_end = e;
	m.map.prot = PROT_READ;
	m.map.flags = MAP_SHARED;
	m.map.maj = 254;
	m.map.min = 0;
	m.map.ino = ino;
	m.map.name = name;
	m.map.via = MS_VIA_MMAP;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

static void unlink_file(struct ms_aspace *as, uint32_t maj, uint64_t ino)
{
	struct ms_event u = ev(MS_EV_UNLINK);

	u.file.maj = maj;
	u.file.min = 0;
	u.file.ino = ino;
	assert_int_equal(ms_aspace_apply(as, &u, NULL), 0);
}

static const char *proc_name_at(struct ms_aspace *as, uint32_t pid, uint64_t addr)
{
	const struct ms_region *r = ms_aspace_lookup(as, pid, addr);

	return r ? r->proc_name : NULL;
}

static void unlinked_is_deleted(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event f = ev(MS_EV_FORK);

	map_file(as, 16 * P, 18 * P, "/tmp/a", 7);
	map_file(as, 32 * P, 33 * P, "/tmp/b", 8);
	map_file(as, 40 * P, 41 * P, "/tmp/a", 7);   /* the same file again */
	f.fork.child_pid = f.fork.child_tid = PID + 1;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	unlink_file(as, 253, 7);                      /* another device: not this file */
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/tmp/a");
	unlink_file(as, 254, 7);
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/tmp/a (deleted)");
	assert_string_equal(proc_name_at(as, PID, 40 * P), "/tmp/a (deleted)");
	assert_string_equal(proc_name_at(as, PID + 1, 16 * P), "/tmp/a (deleted)");   /* the child's too */
	assert_string_equal(proc_name_at(as, PID, 32 * P), "/tmp/b");
	/* Reports keep the name it was mapped by; /proc's gets no second suffix. */
	assert_string_equal(ms_aspace_lookup(as, PID, 16 * P)->name, "/tmp/a");
	unlink_file(as, 254, 7);
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/tmp/a (deleted)");
	/* A fork after it copies the name as it is now. */
	f = ev(MS_EV_FORK);
	f.fork.child_pid = f.fork.child_tid = PID + 2;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	assert_string_equal(proc_name_at(as, PID + 2, 16 * P), "/tmp/a (deleted)");
	/* A new map of another file that took the inode number later is named as mapped. */
	unmap(as, 16 * P, 18 * P);
	map_file(as, 16 * P, 18 * P, "/tmp/c", 7);
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/tmp/c");
	ms_aspace_free(as);
}

/*
 * Unlinks of files no region was made of skip the regions; a file mapped
 * after such unlinks, or after thousands of others, is still found.
 */
static void unlinks_between_maps(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	char name[32];
	uint64_t i;

	(void)state;
	for (i = 0; i < 3000; i++) {
		unlink_file(as, 254, 100000 + i);        /* never mapped */
		snprintf(name, sizeof(name), "/tmp/f%llu", (unsigned long long)i);
		map_file(as, (64 + 2 * i) * P, (65 + 2 * i) * P, name, 1000 + i);
	}
	unlink_file(as, 254, 1000 + 2999);            /* the last mapped: made after every earlier unlink */
	unlink_file(as, 254, 1000);                   /* the first */
	assert_string_equal(proc_name_at(as, PID, (64 + 2 * 2999) * P), "/tmp/f2999 (deleted)");
	assert_string_equal(proc_name_at(as, PID, 64 * P), "/tmp/f0 (deleted)");
	assert_string_equal(proc_name_at(as, PID, 66 * P), "/tmp/f1");
	ms_aspace_free(as);
}

static void rename_file(struct ms_aspace *as, const char *from, const char *to, bool exchange,
			const uint64_t (*files)[2], uint32_t nr)
{
	struct ms_event r = ev(MS_EV_RENAME);

	r.rename.old_path = from;
	r.rename.new_path = to;
	r.rename.exchange = exchange;
	r.rename.files = files;
	r.rename.nr_files = nr;
	assert_int_equal(ms_aspace_apply(as, &r, NULL), 0);
}

static void renamed_is_new_path(void **state)
{
	static const uint64_t a_and_dir[2][2] = { { 254 << 20, 7 }, { 254 << 20, 100 } };
	static const uint64_t other[1][2] = { { 254 << 20, 99 } };
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event f = ev(MS_EV_FORK);

	(void)state;
	map_file(as, 16 * P, 18 * P, "/tmp/a", 7);
	map_file(as, 32 * P, 33 * P, "/tmp/b", 8);
	map_file(as, 40 * P, 41 * P, "/tmp/d/e", 9);
	f.fork.child_pid = f.fork.child_tid = PID + 1;
	assert_int_equal(ms_aspace_apply(as, &f, NULL), 0);
	rename_file(as, "/tmp/a", "/tmp/c", false, other, 1);      /* another file's ctime: not a's */
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/tmp/a");
	rename_file(as, "/tmp/a", "/tmp/c", false, a_and_dir, 2);
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/tmp/c");
	assert_string_equal(proc_name_at(as, PID + 1, 16 * P), "/tmp/c");   /* the child's too */
	assert_string_equal(ms_aspace_lookup(as, PID, 16 * P)->name, "/tmp/a");   /* reports keep it */
	rename_file(as, "/tmp/b", "/tmp/c", false, NULL, 0);       /* over c: c's file is deleted */
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/tmp/c (deleted)");
	assert_string_equal(proc_name_at(as, PID, 32 * P), "/tmp/c");
	map_file(as, 48 * P, 49 * P, "/tmp/x", 10);
	rename_file(as, "/tmp/c", "/tmp/x", true, NULL, 0);        /* exchanged */
	assert_string_equal(proc_name_at(as, PID, 32 * P), "/tmp/x");
	assert_string_equal(proc_name_at(as, PID, 48 * P), "/tmp/c");
	rename_file(as, "/tmp/d", "/var/dd", false, NULL, 0);      /* a directory: the paths under it */
	assert_string_equal(proc_name_at(as, PID, 40 * P), "/var/dd/e");
	rename_file(as, "/var/d", "/var/f", false, NULL, 0);       /* a prefix that is not a directory of it */
	assert_string_equal(proc_name_at(as, PID, 40 * P), "/var/dd/e");
	ms_aspace_free(as);
}

/*
 * Renames of paths no region was named under skip the regions (a filter
 * of the names and the directories above them); what they must change is
 * still found: a region made after thousands of them, a name a rename
 * gave (and the directory above it), the name a rename replaces.
 */
static void renames_between_maps(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	char name[32], from[32], to[32];
	uint64_t i;

	(void)state;
	for (i = 0; i < 3000; i++) {
		snprintf(from, sizeof(from), "/never/x%llu", (unsigned long long)i);
		snprintf(to, sizeof(to), "/never/y%llu", (unsigned long long)i);
		rename_file(as, from, to, false, NULL, 0);   /* no region bears either */
		snprintf(name, sizeof(name), "/tmp/f%llu", (unsigned long long)i);
		map_file(as, (64 + 2 * i) * P, (65 + 2 * i) * P, name, 1000 + i);
	}
	rename_file(as, "/tmp/f2999", "/srv/g", false, NULL, 0);    /* made after every rename before */
	assert_string_equal(proc_name_at(as, PID, (64 + 2 * 2999) * P), "/srv/g");
	rename_file(as, "/srv", "/opt", false, NULL, 0);            /* the directory of a name a rename gave */
	assert_string_equal(proc_name_at(as, PID, (64 + 2 * 2999) * P), "/opt/g");
	rename_file(as, "/opt/g", "/opt/h", false, NULL, 0);        /* that name, renamed again */
	assert_string_equal(proc_name_at(as, PID, (64 + 2 * 2999) * P), "/opt/h");
	rename_file(as, "/tmp/new", "/tmp/f1", false, NULL, 0);     /* over a mapped file: it is deleted */
	assert_string_equal(proc_name_at(as, PID, 66 * P), "/tmp/f1 (deleted)");
	rename_file(as, "/tmp/f1 (deleted)", "/tmp/z", false, NULL, 0);   /* a deleted name is never renamed */
	assert_string_equal(proc_name_at(as, PID, 66 * P), "/tmp/f1 (deleted)");
	rename_file(as, "/tmp", "/var/tmp", false, NULL, 0);        /* a directory of one part */
	assert_string_equal(proc_name_at(as, PID, 64 * P), "/var/tmp/f0");
	assert_string_equal(proc_name_at(as, PID, 68 * P), "/var/tmp/f2");
	assert_string_equal(ms_aspace_lookup(as, PID, 64 * P)->name, "/tmp/f0");   /* reports keep it */
	ms_aspace_free(as);
}

/*
 * A file unlinked, or renamed over, keeps its directory: renamed, the
 * directory moves its " (deleted)" name too. A rename of the path it had
 * (a new file there) does not.
 */
static void deleted_move_with_their_directory(void **state)
{
	struct ms_aspace *as = ms_aspace_new();

	(void)state;
	map_file(as, 16 * P, 17 * P, "/srv/d1/gone", 7);
	map_file(as, 32 * P, 33 * P, "/srv/d1/over", 8);
	unlink_file(as, 254, 7);
	rename_file(as, "/srv/d1/new", "/srv/d1/over", false, NULL, 0);
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/srv/d1/gone (deleted)");
	assert_string_equal(proc_name_at(as, PID, 32 * P), "/srv/d1/over (deleted)");
	rename_file(as, "/srv/d1/over", "/srv/d1/x", false, NULL, 0);   /* the new file's name */
	assert_string_equal(proc_name_at(as, PID, 32 * P), "/srv/d1/over (deleted)");
	rename_file(as, "/srv/d1", "/srv/d2", false, NULL, 0);
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/srv/d2/gone (deleted)");
	assert_string_equal(proc_name_at(as, PID, 32 * P), "/srv/d2/over (deleted)");
	rename_file(as, "/srv", "/opt", false, NULL, 0);                 /* and a directory above */
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/opt/d2/gone (deleted)");
	ms_aspace_free(as);
}

/*
 * A path once mapped, renamed over again and again: the filter lets those
 * renames through until it is made again from the regions alive, which
 * keeps every key a later rename needs: a deleted name's directories, a
 * name a region bore before, a region made after.
 */
static void filter_made_again(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	char name[32];
	uint64_t i;

	(void)state;
	map_file(as, 16 * P, 17 * P, "/srv/k/f", 7);
	map_file(as, 18 * P, 19 * P, "/srv/q/x", 8);
	for (i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "/tmp/f%llu", (unsigned long long)i);
		map_file(as, (64 + 2 * i) * P, (65 + 2 * i) * P, name, 1000 + i);
	}
	for (i = 0; i < 200; i++)                        /* f deleted by the first, the rest find nothing */
		rename_file(as, i & 1 ? "/srv/k/f" : "/srv/k/t", i & 1 ? "/srv/k/t" : "/srv/k/f", false, NULL, 0);
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/srv/k/f (deleted)");
	rename_file(as, "/srv/k", "/srv/m", false, NULL, 0);
	assert_string_equal(proc_name_at(as, PID, 16 * P), "/srv/m/f (deleted)");
	rename_file(as, "/srv/q/x", "/srv/q/y", false, NULL, 0);
	assert_string_equal(proc_name_at(as, PID, 18 * P), "/srv/q/y");
	map_file(as, 20 * P, 21 * P, "/srv/m/g", 9);
	rename_file(as, "/srv/m/g", "/srv/m/h", false, NULL, 0);
	assert_string_equal(proc_name_at(as, PID, 20 * P), "/srv/m/h");
	rename_file(as, "/tmp", "/var/tmp", false, NULL, 0);
	assert_string_equal(proc_name_at(as, PID, (64 + 2 * 2999) * P), "/var/tmp/f2999");
	ms_aspace_free(as);
}

/* The six segments of segments_named_alike() under top (libx's five, liby's one) and libz's name. */
static void segments_under(struct ms_aspace *as, const char *top, const char *z)
{
	char x[64], y[64];
	uint64_t i;

	snprintf(x, sizeof(x), "%s/lib/libx.so", top);
	snprintf(y, sizeof(y), "%s/share/liby.so", top);
	for (i = 0; i < 6; i++)
		assert_string_equal(proc_name_at(as, PID, (16 + 2 * i) * P), i == 4 ? y : x);
	assert_string_equal(proc_name_at(as, PID, 28 * P), z);
}

/*
 * A binary's segments, one after another and named alike, go into the
 * filter once (add_regions_keys() compares each name with the one
 * before); every one of them is still renamed, before the filter is made
 * again and after. Made again from the regions alive, a name after an
 * unmapped region that bore it is compared with the one alive before
 * (/var/libz.so, after a dead /var/libz.so, after libx), not the dead one.
 */
static void segments_named_alike(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct ms_event u = ev(MS_EV_UNMAP);
	uint64_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		map_file(as, (16 + 2 * i) * P, (17 + 2 * i) * P, "/usr/lib/libx.so", 7);
	map_file(as, 24 * P, 25 * P, "/usr/share/liby.so", 8);
	map_file(as, 26 * P, 27 * P, "/usr/lib/libx.so", 7);
	map_file(as, 40 * P, 41 * P, "/var/libz.so", 9);
	map_file(as, 28 * P, 29 * P, "/var/libz.so", 9);
	u.unmap.start = 40 * P;
	u.unmap.end = 41 * P;
	assert_int_equal(ms_aspace_apply(as, &u, NULL), 0);
	rename_file(as, "/usr/share", "/opt/share", false, NULL, 0);
	rename_file(as, "/usr/lib", "/opt/lib", false, NULL, 0);
	segments_under(as, "/opt", "/var/libz.so");
	for (i = 0; i < 12000; i++)                /* a name once borne: let through, finds nothing, till made again */
		rename_file(as, "/usr/lib/libx.so", "/usr/lib/libv.so", false, NULL, 0);
	assert_true(as->path_walks_wasted < 12000 * as->nr);
	rename_file(as, "/opt/share", "/srv/share", false, NULL, 0);
	rename_file(as, "/var/libz.so", "/var/libu.so", false, NULL, 0);
	rename_file(as, "/opt/lib", "/srv/lib", false, NULL, 0);
	segments_under(as, "/srv", "/var/libu.so");
	ms_aspace_free(as);
}

static void anon_name(struct ms_aspace *as, uint64_t s, uint64_t e, const char *name)
{
	struct ms_event m = ev(MS_EV_VMA_ATTR);

	m.vma_attr.start = s;
	m.vma_attr.end = e;
	m.vma_attr.what = MS_VMA_ANON_NAME;
	m.vma_attr.name = name;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

struct named { int n; uint64_t s[8]; char name[8][64]; };

static void note_named(const struct ms_vma *v, void *ctx)
{
	struct named *o = ctx;

	if (o->n < 8) {
		o->s[o->n] = v->start;
		snprintf(o->name[o->n++], 64, "%s", v->name);
	}
}

static struct named named_of(struct ms_aspace *as)
{
	struct named o = { 0 };

	assert_int_equal(ms_aspace_for_each_vma(as, PID, note_named, &o), 0);
	return o;
}

static void anon_names_split_and_merge(void **state)
{
	struct ms_aspace *as = ms_aspace_new();
	struct named v;

	(void)state;
	map(as, 16 * P, 24 * P, "//anon");
	map_file(as, 24 * P, 26 * P, "/tmp/f", 7);
	anon_name(as, 18 * P, 20 * P, "one");
	v = named_of(as);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.name[1], "[anon:one]");
	assert_string_equal(v.name[2], "");
	anon_name(as, 20 * P, 22 * P, "one");          /* the same name next to it: merged */
	assert_int_equal(named_of(as).n, 4);
	anon_name(as, 16 * P, 26 * P, "two");          /* stops at the file (-EBADF), all before named */
	v = named_of(as);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.name[0], "[anon:two]");
	assert_string_equal(v.name[1], "/tmp/f");
	anon_name(as, 18 * P, 20 * P, NULL);           /* the name removed: a split */
	v = named_of(as);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.name[1], "");
	ms_aspace_free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unlinked_is_deleted),
		cmocka_unit_test(unlinks_between_maps),
		cmocka_unit_test(renamed_is_new_path),
		cmocka_unit_test(renames_between_maps),
		cmocka_unit_test(deleted_move_with_their_directory),
		cmocka_unit_test(filter_made_again),
		cmocka_unit_test(segments_named_alike),
		cmocka_unit_test(anon_names_split_and_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
