/*
 * Synthetic recordings for the unit tests: one sampling event with a data
 * address (PEBS/IBS/SPE style: weight and data source too), its maps and
 * its samples, written with the library's own writer into a memfd.
 */
#ifndef TESTS_UNIT_SYNTH_H
#define TESTS_UNIT_SYNTH_H

#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include <mapscope/pdwriter.h>

#include "records.h"

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
	    PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)
#define ID 5
#define MS 1000000ULL
#define LOAD_TLB_MISS ((uint64_t)PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT | \
		       (uint64_t)(PERF_MEM_TLB_MISS | PERF_MEM_TLB_L1) << PERF_MEM_TLB_SHIFT)
#define PREFETCH ((uint64_t)PERF_MEM_OP_PFETCH << PERF_MEM_OP_SHIFT)
#define LOAD ((uint64_t)PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT)

struct sample {
	struct perf_event_header h;
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, id;
	uint32_t cpu, res;
	uint64_t period, weight, data_src;
};

static void put_map(struct ms_pdwriter *w, uint64_t t, uint64_t addr, uint64_t len, uint32_t prot,
		    const char *name, uint64_t ino)
{
	struct mmap2_rec m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, 7, 7, addr, len, 0,
			   ino ? 8 : 0, 0, ino, 0, prot, MAP_PRIVATE, "", 7, 7, t, ID, 0, 0, ID };

	snprintf(m.name, sizeof(m.name), "%s", name);
	assert_int_equal(ms_pdwriter_write(w, &m.h), 0);
}

static void put_sample(struct ms_pdwriter *w, uint64_t t, uint64_t ip, uint64_t addr, uint64_t src)
{
	struct sample s = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(s) }, ID, ip, 7, 7, t, addr,
			    ID, 0, 0, 1, 30, src };

	assert_int_equal(ms_pdwriter_write(w, &s.h), 0);
}

/*
 * A writer into a new memfd (*fd), for one event of sample type ST and id
 * ID: a hardware memory event, or with faults, the page-fault software
 * event; its data compressed at zstd level (0: plain).
 */
static struct ms_pdwriter *synth_writer_at(int *fd, bool faults, int level)
{
	static struct perf_event_attr a = { .size = sizeof(a), .sample_type = ST, .sample_id_all = 1,
					    .mmap2 = 1, .mmap_data = 1 };
	static uint64_t id = ID;
	static struct ms_pdwriter_evsel e = { &a, NULL, &id, 1 };
	static char *argv[] = { "synthetic" };
	struct ms_pdwriter_opts o = { &e, 1, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, level };

	a.type = faults ? PERF_TYPE_SOFTWARE : PERF_TYPE_RAW;
	a.config = faults ? PERF_COUNT_SW_PAGE_FAULTS : 0x1cd;
	a.precise_ip = faults ? 0 : 2;
	e.name = faults ? "page-faults" : "cpu/mem-loads/";
	*fd = memfd_create("synth", 0);
	assert_true(*fd >= 0);
	return ms_pdwriter_new(*fd, &o);
}

static struct ms_pdwriter *synth_writer_of(int *fd, bool faults)
{
	return synth_writer_at(fd, faults, 0);
}

static struct ms_pdwriter *synth_writer(int *fd)
{
	return synth_writer_of(fd, false);
}

/* "/proc/self/fd/N": the memfd as a path the reader opens. */
static const char *synth_path(int fd)
{
	static char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}

#endif
