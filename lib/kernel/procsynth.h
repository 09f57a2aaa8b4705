/*
 * Internal: records that describe what existed before we attached, built
 * from /proc in the same layout the kernel uses, so readers need not tell
 * them apart.
 */
#ifndef MS_KERNEL_PROCSYNTH_H
#define MS_KERNEL_PROCSYNTH_H

#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"

struct ms_maps_entry {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	uint32_t prot;           /* PROT_* */
	uint32_t flags;          /* MAP_SHARED or MAP_PRIVATE */
	char name[4096];         /* "" for anonymous memory */
};

/* The sample_id_all trailer every record carries: TID, TIME, ID, CPU, IDENTIFIER. */
struct ms_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint32_t cpu, res;
	uint64_t identifier;
};

/* Parses one line of /proc/PID/maps. 0 or -EINVAL. */
int ms_maps_parse_line(const char *line, struct ms_maps_entry *e);

/* Appends an MMAP2 record for e (anonymous memory is named "//anon", as the kernel does). */
void ms_synth_mmap2(struct ms_buf *out, const struct ms_maps_entry *e,
		    const struct ms_sample_id *sid);

/* Appends a COMM record. */
void ms_synth_comm(struct ms_buf *out, const char *comm, const struct ms_sample_id *sid);

#endif
