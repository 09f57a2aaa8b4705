/*
 * ms_unmapped: accesses to memory that was not mapped (or not accessible)
 * at that instant: use after munmap, guard-page hits, wild pointers, bad
 * prefetches (with hardware load samples). Each is classified and grouped
 * by the code that made it. It has no options.
 *
 * Results are borrowed, as from every analysis of the library: what it
 * hands out belongs to the analysis and stays valid until the next call
 * that makes them again or ms_unmapped_free(); the caller frees none of
 * it. Regions they point to belong to the address-space model (the
 * session's).
 */
#ifndef MAPSCOPE_UNMAPPED_H
#define MAPSCOPE_UNMAPPED_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/session.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ms_unmapped_class {
	MS_UNMAPPED_NEVER,        /* no mapping ever held it */
	MS_UNMAPPED_FREED,        /* a mapping held it and was unmapped (munmap, mremap, brk, shmdt) */
	MS_UNMAPPED_GUARD,        /* a PROT_NONE page: a guard, a thread stack's guard */
	MS_UNMAPPED_BEYOND_HEAP,  /* just past the heap's end */
	MS_UNMAPPED_BELOW_STACK,  /* below the main stack, where it did not grow */
	MS_UNMAPPED_NULL,         /* below vm.mmap_min_addr (as recorded, else MS_UNMAPPED_NULL_LIMIT): a NULL pointer's access */
	/*
	 * In a recording that lost records, of whichever process (a LOST
	 * record does not tell whose were dropped): the map that held it may
	 * be among them, so none of the classes above can be told.
	 */
	MS_UNMAPPED_UNCERTAIN,
	/*
	 * Prefetches only: within MS_UNMAPPED_PAST_END_NEAR past the end of
	 * the mapping below it (nearest), where nothing was mapped: a loop
	 * prefetching ahead of its data past the data's end.
	 */
	MS_UNMAPPED_PAST_END,
};

/* How far past a mapping's end a prefetch still counts as past that end (MS_UNMAPPED_PAST_END). */
#define MS_UNMAPPED_PAST_END_NEAR (1ULL << 20)

/*
 * Where the null pages end: vm.mmap_min_addr, which no mapping may go
 * below. mapscope record writes the recording machine's value into the
 * recording (ms_session_sysctl()); where a recording lacks it (perf's own
 * files), this, the kernel's usual default (x86 and arm64: 64 KiB).
 */
#define MS_UNMAPPED_NULL_LIMIT 0x10000ULL

/* What the access was, from the sample's data source (hardware memory samples). */
enum ms_access_kind {
	MS_ACCESS_FAULT,          /* a page fault: no more is known */
	MS_ACCESS_LOAD, MS_ACCESS_STORE, MS_ACCESS_PREFETCH, MS_ACCESS_EXEC,
};

struct ms_unmapped_access {
	enum ms_unmapped_class cls;
	enum ms_access_kind kind; /* a prefetch to unmapped memory is a bad prefetch */
	uint32_t pid, tid;        /* of the first access */
	uint64_t ip;              /* the code that made them */
	uint64_t address;         /* the first address */
	uint64_t count, first_ns, last_ns;
	/* MS_UNMAPPED_FREED: the release that took the address away (the latest before the first access). */
	uint64_t freed_ns;
	enum ms_aspace_op freed_op;
	const char *freed_call;       /* the syscall: munmap, mremap, brk, shmdt */
	uint32_t freed_tid;
	const uint64_t *freed_chain;  /* its call chain, or NULL */
	uint32_t freed_chain_len;
	/*
	 * Prefetches only (MS_ACCESS_PREFETCH), at the first access: the
	 * mapping nearest to the address when it was made (for
	 * MS_UNMAPPED_PAST_END the one it is past the end of), and how many
	 * bytes lie between them; near_name NULL where the process had none.
	 */
	const char *near_name;
	uint64_t near_start, near_end, near_distance;
};

/* Every prefetch of one instruction in one process: how many there were, and how many were bad. */
struct ms_unmapped_prefetch_site {
	uint32_t pid;
	uint64_t ip;
	uint64_t prefetches;          /* every one the recording has: uprobe hits, hardware samples */
	uint64_t bad;                 /* of them, to memory not mapped or PROT_NONE */
};

struct ms_unmapped;

/* NULL with errno set. */
struct ms_unmapped *ms_unmapped_new(void);

/*
 * Accesses to unmapped memory as an analysis of a session (ctx: u): the
 * changes that release memory are remembered, so that a later access can
 * say what freed its address.
 */
extern const struct ms_analysis ms_unmapped_analysis;

/*
 * The accesses, grouped by (class, code address), most frequent first.
 * Borrowed: *out, its call names and chains stay valid until the next
 * ms_unmapped_results() or ms_unmapped_free(). 0, or the error that
 * stopped the counting (-ENOMEM).
 */
int ms_unmapped_results(struct ms_unmapped *u, const struct ms_unmapped_access **out, size_t *n);

/*
 * The prefetch instructions (record --prefetches, hardware prefetch
 * samples), most bad prefetches first: the share of each site's that was
 * wasted. Borrowed, as ms_unmapped_results(). 0 or -ENOMEM.
 */
int ms_unmapped_prefetch_sites(struct ms_unmapped *u, const struct ms_unmapped_prefetch_site **out, size_t *n);

const char *ms_unmapped_class_name(enum ms_unmapped_class c);
const char *ms_access_kind_name(enum ms_access_kind k);

/* Accepts NULL. */
void ms_unmapped_free(struct ms_unmapped *u);

#ifdef __cplusplus
}
#endif
#endif
