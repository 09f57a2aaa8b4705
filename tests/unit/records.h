/*
 * perf.data records as the unit tests write them by hand: an MMAP2 and a
 * FORK with sample_id_all's trailer for sample type TID | TIME | ID | CPU |
 * IDENTIFIER (and what else lies in the sample body only).
 */
#ifndef TESTS_UNIT_RECORDS_H
#define TESTS_UNIT_RECORDS_H

#include <stdint.h>
#include <linux/perf_event.h>

struct mmap2_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, gen;
	uint32_t prot, flags;
	char name[8];
	/* sample_id: TID, TIME, ID, CPU, IDENTIFIER */
	uint32_t spid, stid;
	uint64_t time, id;
	uint32_t cpu, res;
	uint64_t identifier;
};

/* PERF_RECORD_COMM (PERF_RECORD_MISC_COMM_EXEC in h.misc for an exec): pid, tid, comm, then the trailer. */
struct comm_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[8];
	uint32_t spid, stid;
	uint64_t time, id;
	uint32_t cpu, res;
	uint64_t identifier;
};

/* PERF_RECORD_FORK: pid, ppid, tid, ptid, time, then the trailer. */
struct fork_rec {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
	uint32_t spid, stid;
	uint64_t stime, id;
	uint32_t cpu, res;
	uint64_t identifier;
};

#endif
