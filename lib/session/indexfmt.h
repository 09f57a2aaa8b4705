/*
 * Internal to the index (index.h): its file's layout, shared by the
 * builder (index.c) and the reader (indexfile.c).
 *
 *   ix_head                 magic, version, the recording's stamp, the payload's length and hash
 *   ix_facts                first time, where the statistics stop changing, the final statistics
 *   ms_stream_lost[nr_lost]
 *   ix_change[nr_changes]   in stream order; names at .name in the strings
 *   char strs[strs_len]     NUL-terminated names, then zeros to a multiple of 8
 *   u32 n, u32 tids[n]      ids of threads that are not their process's
 *   u32 n, then n times:    ix_proc, then len bytes of ops:
 *     ix_op FULL  + n VMAs  its whole list from key on
 *     ix_op DELTA + n VMAs  from key on: del VMAs at at replaced by these n
 *     ix_op EXIT            its last thread exited (at event number .event)
 *     ix_op EXEC
 *   A VMA is an ix_vma followed by its name, name_len bytes and a NUL.
 */
#ifndef MS_SESSION_INDEXFMT_H
#define MS_SESSION_INDEXFMT_H

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "session/index.h"

#define IX_MAGIC "MSIDX\0\r\n"
/*
 * The index's version, with the byte order (a file of another machine
 * reads as foreign): its format's in the high 16 bits, the model's
 * revision in the low 16. An index answers as the model that made it
 * did, so the revision goes up with every change to the model's answers
 * (a VMA list, a change's fields), and an index made before reads as
 * another version: ignored, with a warning that says to remake it.
 *   1: the first
 *   2: a munmap refused at a sealed VMA splits the VMA at its start
 *   3: an mremap of old length 0 maps a shared mapping's pages again
 *   4: shmdt leaves what mremap moved or mapped again away from the attach
 *   5: mprotect's PROT_SEM and PROT_GROWSDOWN; a directory's rename moves
 *      deleted names; mremap moves several VMAs apart (6.17); execve's
 *      stack is not the caller's; a change over more than 64 regions
 *      settles them all; pieces alike joined at the VMA tree's writes
 *      (regions' perms); an unmap or a fixed move that another thread's
 *      map overtook; io_destroy's ring; [stack] names one VMA alone
 *   6: [heap] names the VMAs over the break's range
 *   7: a moved anonymous VMA merges where its page offsets run on
 *   8: [stack] and [heap] by place only after an exec seen (not at attach)
 *   9: where the stack began: the stack pointer at the execve's exit
 *  10: anon_vmas that MAP_POPULATE, MADV_POPULATE_WRITE and mprotect of a
 *      locked VMA make (the merges they forbid); MAP_LOCKED in a map's
 *      record is its lock, not a flag a merge compares
 *  11: prctl(PR_SET_MEMORY_MERGE); MADV_MERGEABLE passes over shared memory
 *  12: the main stack's pieces merge again; a [stack] record inside an
 *      mprotect is that call's
 *  13: a move to a place the kernel picked, overtaken, where the tree says
 *  14: pkey_mprotect is an mprotect
 *  15: a grown stack keeps its flags; merge-any asked twice changes
 *      nothing; MADV_POPULATE_WRITE's -EINVAL; MAP_LOCKED where asked
 *  16: brk populates under mlockall(MCL_FUTURE)
 *  17: anonymous memory's page offsets run on for every merge (a written
 *      VMA moved, then grown or protected up to a neighbour, stays apart)
 *  18: and for a first fault to take a neighbour's anon_vma
 *  19: MREMAP_DONTUNMAP unlocks the old VMA
 *  20: a fork's copy of a VMA under MADV_WIPEONFORK has no anon_vma
 *  21: a private map of /dev/zero moved unwritten takes its new offsets
 *  22: where the recording says a read fault takes a page of its own (no
 *      zero page: mapscope:sysctl mm.read_fault_zero_page 0), read faults,
 *      MADV_POPULATE_READ and a read-only populate make anon_vmas
 */
#define IX_FORMAT 0x0100u
#define IX_MODEL 0x0016u
#define IX_VERSION ((IX_FORMAT << 16) | IX_MODEL)

struct ix_head {
	char magic[8];
	uint32_t version, pad;
	struct ms_index_stamp stamp;
	uint64_t payload_len, payload_hash;
};

struct ix_facts {
	uint64_t first_time;
	uint64_t stable_key;          /* the statistics are final for instants from here on */
	uint64_t stable_event;        /* ... and for a stop at this event or a later one */
	struct ms_stream_stats st;
	uint32_t nr_lost, unsorted;   /* unsorted: the changes are not in time order */
	uint64_t nr_changes, strs_len;
};

struct ix_change {
	uint32_t op, pid, tid, child_pid, child_tid;
	int32_t prot, advice, lock;
	uint64_t time_ns, start, end, new_start, new_end;
	uint32_t name, pad;
};

struct ix_proc {
	uint32_t pid, has_seen;
	uint64_t seen;                /* the newest time the stream had reached when it first appeared */
	uint64_t len;                 /* bytes of ops */
};

enum { IX_OP_FULL = 1, IX_OP_DELTA, IX_OP_EXIT, IX_OP_EXEC };

struct ix_op {
	uint32_t type;
	uint32_t at, del, n;
	uint64_t key;                 /* the newest time the stream had reached at the event */
	uint64_t time, event;         /* EXIT: its time, and its event's number */
};

struct ix_vma {
	uint64_t start, end, offset, ino;
	uint32_t prot, flags, maj, min;
	uint32_t name_len, pad;
};

/* The zeros after n bytes that bring them to a multiple of 8. */
#define IX_PAD(n) ((8 - (n) % 8) % 8)

/* The statistics that warnings print; the index answers where they no longer change. */
struct ix_digest {
	uint64_t no_addr, zero_addr, kernel_addr, unknown_id, bad_samples, bad_records, unknown_records,
		 bad_names, lost, nr_lost_pids, out_of_order;
};

/*
 * A hash of p[0, len): four lanes of eight bytes a step (FNV-1a's constants
 * on words), independent so that they run side by side, folded at the end.
 */
static inline uint64_t ix_hash(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h[4] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL, 0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL };
	uint64_t w, r;
	size_t i = 0, k;

	for (; i + 32 <= len; i += 32)
		for (k = 0; k < 4; k++) {
			__builtin_memcpy(&w, b + i + 8 * k, 8);
			h[k] = (h[k] ^ w) * 0x100000001b3ULL;
			h[k] ^= h[k] >> 29;
		}
	r = h[0] ^ (h[1] * 0x9e3779b97f4a7c15ULL) ^ (h[2] * 0xff51afd7ed558ccdULL) ^ (h[3] * 0xc4ceb9fe1a85ec53ULL);
	for (; i < len; i++)
		r = (r ^ b[i]) * 0x100000001b3ULL;
	return r ^ len;
}

static inline int ix_write_all(int fd, const void *p, size_t len)
{
	const char *c = p;
	ssize_t n;

	while (len) {
		n = write(fd, c, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif
