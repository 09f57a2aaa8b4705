/*
 * Synthetic recordings of what this machine cannot record: damon:damon_aggregated
 * samples (a kdamond of ours), and hardware memory samples with ADDR, WEIGHT and
 * DATA_SRC as Intel PEBS, AMD IBS and Arm SPE write them. Written with
 * libmapscope's perf.data writer, with the tracing data perf needs to print the
 * tracepoint; the ground truth goes to a FILE for the tests.
 *
 * Events: 0 side-band (MMAP2, COMM), 1 damon:damon_aggregated, 2 the hardware event.
 */
#ifndef TESTS_TOOLS_SYNTH_REC_H
#define TESTS_TOOLS_SYNTH_REC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <mapscope/pdwriter.h>

#include "kernel/refsample.h"
#include "kernel/sysctl.h"
#include "kernel/tracefs.h"
#include "util/buf.h"

#define SR_PID 4242u
#define SR_PID2 4343u
#define SR_MS 1000000ULL
#define SR_HOT 0x10000000ULL
#define SR_COLD 0x20000000ULL
#define SR_SIZE (16ULL << 20)
#define SR_UNMAPPED 0x30000000ULL
#define SR_DAMON_TP_ID 767
#define SR_INTERVALS 10

enum { SR_ID_SIDE = 11, SR_ID_DAMON = 12, SR_ID_HW = 13 };

#define SR_BODY (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)

struct sr_trailer {
	uint32_t pid, tid;
	uint64_t time, identifier;
};

struct sr_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, gen;
	uint32_t prot, flags;
	char name[16];
	struct sr_trailer t;
};

struct sr_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[16];
	struct sr_trailer t;
};

/* damon_aggregated's raw data, as the format below lays it out (52 bytes: 4 + 52 keeps 8-byte alignment). */
struct sr_damon_raw {
	uint16_t common_type;
	uint8_t flags, preempt;
	int32_t common_pid;
	uint64_t target_id;
	uint32_t nr_regions, pad;
	uint64_t start, end;
	uint32_t nr_accesses, age;
	uint32_t tail;
} __attribute__((packed));

struct sr_damon {
	struct perf_event_header h;
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr;
	uint32_t raw_size;
	unsigned char raw[sizeof(struct sr_damon_raw)];
};

struct sr_hw {
	struct perf_event_header h;
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, weight, data_src;
};

static const char sr_damon_format[] =
	"name: damon_aggregated\n"
	"ID: 767\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned long target_id;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_regions;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long start;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long end;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int nr_accesses;\toffset:40;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int age;\toffset:44;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"target_id=%lu nr_regions=%u %lu-%lu: %u %u\", REC->target_id, REC->nr_regions, "
	"REC->start, REC->end, REC->nr_accesses, REC->age\n";

static const char sr_header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char sr_header_event[] =
	"# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

static inline int sr_put_file(const char *dir, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	if (!(f = fopen(path, "w")))
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

/* The TRACING_DATA blob for damon:damon_aggregated, through a tracefs tree of its own. 0 or -errno. */
static inline int sr_tracing_data(struct ms_buf *out)
{
	char dir[] = "/tmp/ms-synth-XXXXXX", cmd[64];
	const char *names[] = { "damon/damon_aggregated" };
	int err;

	if (!mkdtemp(dir))
		return -errno;
	err = sr_put_file(dir, "events/header_page", sr_header_page);
	if (!err)
		err = sr_put_file(dir, "events/header_event", sr_header_event);
	if (!err)
		err = sr_put_file(dir, "events/damon/damon_aggregated/format", sr_damon_format);
	if (!err)
		err = ms_tracefs_tracing_data(dir, names, 1, out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
		/* a temporary tree left behind harms nothing */
	}
	return err;
}

/* The hardware event of each style: PEBS (cpu/mem-loads,ldlat=30/P), IBS (ibs_op//), SPE (arm_spe_0//). */
enum sr_style { SR_PEBS, SR_IBS, SR_SPE };

/* The hardware event's sampling period: each sample stands for this many events. */
static uint64_t sr_hw_period = 10007;

static inline void sr_hw_attr(enum sr_style st, struct perf_event_attr *a, const char **name)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_type = SR_BODY | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
	a->sample_id_all = 1;
	a->sample_period = sr_hw_period;
	if (st == SR_PEBS) {
		a->type = PERF_TYPE_RAW, a->config = 0x1cd, a->config1 = 30, a->precise_ip = 3;
		*name = "cpu/mem-loads,ldlat=30/P";
	} else if (st == SR_IBS) {
		a->type = 11, a->config = 0;
		*name = "ibs_op//";
	} else {
		a->type = 12, a->config = 0x100000001ULL;
		*name = "arm_spe_0//";
	}
}

struct sr {
	struct ms_pdwriter *w;
	struct ms_buf td;
	struct perf_event_attr a[3];
};

static inline struct ms_pdwriter *sr_open(struct sr *s, int fd, enum sr_style st, uint64_t sample_us, uint64_t aggr_us)
{
	static uint64_t ids[3] = { SR_ID_SIDE, SR_ID_DAMON, SR_ID_HW };
	static char *argv[] = { "ms-synth" };
	struct ms_pdwriter_evsel e[3];
	struct ms_pdwriter_opts o = { e, 3, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	const char *hw_name;
	int i;

	memset(s, 0, sizeof(*s));
	ms_buf_init(&s->td);
	if (sr_tracing_data(&s->td))
		return NULL;
	for (i = 0; i < 2; i++) {
		s->a[i].size = sizeof(s->a[i]);
		s->a[i].sample_type = SR_BODY;
		s->a[i].sample_id_all = 1;
		s->a[i].sample_period = 1;
	}
	s->a[0].type = PERF_TYPE_SOFTWARE, s->a[0].config = PERF_COUNT_SW_DUMMY;
	s->a[0].mmap = s->a[0].mmap2 = s->a[0].mmap_data = s->a[0].comm = s->a[0].task = 1;
	s->a[1].type = PERF_TYPE_TRACEPOINT, s->a[1].config = SR_DAMON_TP_ID;
	s->a[1].sample_type |= PERF_SAMPLE_RAW;
	s->a[1].config1 = sample_us, s->a[1].config2 = aggr_us;
	sr_hw_attr(st, &s->a[2], &hw_name);
	for (i = 0; i < 3; i++)
		e[i] = (struct ms_pdwriter_evsel){ &s->a[i], i == 0 ? "dummy:u" : i == 1 ?
						   "damon:damon_aggregated" : hw_name, &ids[i], 1 };
	o.tracing_data = s->td.data;
	o.tracing_data_len = s->td.len;
	s->w = ms_pdwriter_new(fd, &o);
	return s->w;
}

static inline int sr_close(struct sr *s)
{
	int err = ms_pdwriter_close(s->w);

	ms_pdwriter_free(s->w);
	ms_buf_release(&s->td);
	return err;
}

static inline int sr_comm(struct sr *s, uint64_t t, uint32_t pid, const char *comm)
{
	struct sr_comm c = { { PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(c) }, pid, pid, "",
			     { pid, pid, t, SR_ID_SIDE } };

	snprintf(c.comm, sizeof(c.comm), "%s", comm);
	return ms_pdwriter_write(s->w, &c.h);
}

static inline int sr_map(struct sr *s, uint64_t t, uint32_t pid, uint64_t addr, uint64_t len, uint32_t prot,
		  const char *name)
{
	struct sr_mmap2 m = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(m) }, pid, pid, addr, len, 0,
			      0, 0, 0, 0, prot, MAP_PRIVATE, "", { pid, pid, t, SR_ID_SIDE } };

	snprintf(m.name, sizeof(m.name), "%s", name);
	return ms_pdwriter_write(s->w, &m.h);
}

/* One DAMON region's aggregate, written as mapscope record writes it: as its target's (pid). */
static inline int sr_damon(struct sr *s, uint64_t t, uint32_t pid, uint64_t target, uint64_t start, uint64_t end,
		    uint32_t nr_accesses, uint32_t age)
{
	struct sr_damon_raw raw = { SR_DAMON_TP_ID, 0, 0, 99, target, 2, 0, start, end, nr_accesses, age, 0 };
	struct sr_damon d = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, sizeof(d) }, SR_ID_DAMON, 0, pid, pid,
			      t, 0, sizeof(d.raw), { 0 } };

	memcpy(d.raw, &raw, sizeof(raw));
	return ms_pdwriter_write(s->w, &d.h);
}

static inline int sr_hw(struct sr *s, uint64_t t, uint64_t ip, uint64_t addr, uint64_t weight, uint64_t data_src)
{
	struct sr_hw h = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(h) }, SR_ID_HW, ip, SR_PID, SR_PID,
			   t, addr, weight, data_src };

	return ms_pdwriter_write(s->w, &h.h);
}

#define SR_DS(op, lvl, snoop, lck, tlb) \
	((uint64_t)(op) << PERF_MEM_OP_SHIFT | (uint64_t)(lvl) << PERF_MEM_LVL_SHIFT | \
	 (uint64_t)(snoop) << PERF_MEM_SNOOP_SHIFT | (uint64_t)(lck) << PERF_MEM_LOCK_SHIFT | \
	 (uint64_t)(tlb) << PERF_MEM_TLB_SHIFT)
#define SR_LVLNUM(n) ((uint64_t)(n) << PERF_MEM_LVLNUM_SHIFT)

/*
 * Data sources as each style writes them: PEBS sets the level bits
 * (mem_lvl), IBS and SPE the level number (mem_lvl_num) with NA bits.
 */
static inline uint64_t sr_src(enum sr_style st, int kind)
{
	bool num = st != SR_PEBS;
	uint64_t ld = PERF_MEM_OP_LOAD, tlb_hit = PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1;
	uint64_t tlb_miss = PERF_MEM_TLB_MISS | PERF_MEM_TLB_L2 | PERF_MEM_TLB_WK;

	switch (kind) {
	case 0:   /* an L1 hit */
		return num ? SR_DS(ld, PERF_MEM_LVL_HIT, PERF_MEM_SNOOP_NA, 0, tlb_hit) | SR_LVLNUM(PERF_MEM_LVLNUM_L1) :
			     SR_DS(ld, PERF_MEM_LVL_L1 | PERF_MEM_LVL_HIT, PERF_MEM_SNOOP_NONE, 0, tlb_hit);
	case 1:   /* DRAM, after a dTLB miss */
		return num ? SR_DS(ld, PERF_MEM_LVL_HIT, PERF_MEM_SNOOP_NA, 0, tlb_miss) | SR_LVLNUM(PERF_MEM_LVLNUM_RAM) :
			     SR_DS(ld, PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT, PERF_MEM_SNOOP_MISS, 0, tlb_miss);
	case 2:   /* an L3 hit */
		return num ? SR_DS(ld, PERF_MEM_LVL_HIT, PERF_MEM_SNOOP_NA, 0, tlb_hit) | SR_LVLNUM(PERF_MEM_LVLNUM_L3) :
			     SR_DS(ld, PERF_MEM_LVL_L3 | PERF_MEM_LVL_HIT, PERF_MEM_SNOOP_HIT, 0, tlb_hit);
	case 3:   /* a store */
		return SR_DS(PERF_MEM_OP_STORE, PERF_MEM_LVL_L1 | PERF_MEM_LVL_HIT, PERF_MEM_SNOOP_NA, 0, tlb_hit);
	default:  /* a software prefetch */
		return SR_DS(PERF_MEM_OP_PFETCH, PERF_MEM_LVL_NA, PERF_MEM_SNOOP_NA, 0, PERF_MEM_TLB_NA);
	}
}

/*
 * The DAMON recording: process SR_PID with a hot and a cold region of
 * SR_SIZE, and SR_PID2 (target 1) with one region; SR_INTERVALS
 * aggregations of aggr_us each. The hot region is found accessed at every
 * check, the cold one never.
 */
static inline int sr_write_damon(int fd, FILE *truth)
{
	uint64_t max = 20, t;
	struct sr s;
	int err, i;

	if (!sr_open(&s, fd, SR_PEBS, 5000, 100000))
		return -errno ? -errno : -EIO;
	err = sr_comm(&s, 1 * SR_MS, SR_PID, "synth");
	err = err ?: sr_map(&s, 2 * SR_MS, SR_PID, SR_HOT, SR_SIZE, PROT_READ | PROT_WRITE, "//anon");
	err = err ?: sr_map(&s, 2 * SR_MS, SR_PID, SR_COLD, SR_SIZE, PROT_READ | PROT_WRITE, "//anon");
	err = err ?: sr_comm(&s, 3 * SR_MS, SR_PID2, "synth2");
	err = err ?: sr_map(&s, 3 * SR_MS, SR_PID2, SR_HOT, SR_SIZE, PROT_READ | PROT_WRITE, "//anon");
	for (i = 1; i <= SR_INTERVALS && !err; i++) {
		t = 10 * SR_MS + (uint64_t)i * 100 * SR_MS;
		err = sr_damon(&s, t, SR_PID, 0, SR_HOT, SR_HOT + SR_SIZE, (uint32_t)max, (uint32_t)i);
		err = err ?: sr_damon(&s, t, SR_PID, 0, SR_COLD, SR_COLD + SR_SIZE, 0, (uint32_t)i);
		err = err ?: sr_damon(&s, t, SR_PID2, 1, SR_HOT, SR_HOT + SR_SIZE / 2, 5, 1);
	}
	if (truth)
		fprintf(truth, "pid %u hot 0x%llx-0x%llx nr_accesses %llu of %llu, cold 0x%llx-0x%llx nr_accesses 0; "
			"pid %u 0x%llx-0x%llx nr_accesses 5; intervals %d of 100 ms\n", SR_PID,
			SR_HOT, SR_HOT + SR_SIZE, (unsigned long long)max, (unsigned long long)max, SR_COLD,
			SR_COLD + SR_SIZE, SR_PID2, SR_HOT, SR_HOT + SR_SIZE / 2, SR_INTERVALS);
	return err ?: sr_close(&s);
}

/*
 * The hardware recording: code at 0x400000, SR_HOT mapped: 100 L1 hits
 * (weight 4), 50 DRAM loads after dTLB misses (weight 300) in its first
 * 2 MiB, 20 L3 hits (weight 40), 10 stores; a software prefetch and a load
 * to SR_UNMAPPED, which nothing maps (the bad prefetch).
 */
static inline int sr_write_hw(int fd, enum sr_style st, FILE *truth)
{
	static const struct { int kind, n; uint64_t weight, ip; } rows[] = {
		{ 0, 100, 4, 0x400010 }, { 1, 50, 300, 0x400020 }, { 2, 20, 40, 0x400030 }, { 3, 10, 0, 0x400040 },
	};
	uint64_t t = 10 * SR_MS;
	struct sr s;
	int err, i, k;

	if (!sr_open(&s, fd, st, 0, 0))
		return -errno ? -errno : -EIO;
	err = sr_comm(&s, 1 * SR_MS, SR_PID, "synth");
	err = err ?: sr_map(&s, 2 * SR_MS, SR_PID, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/synth");
	err = err ?: sr_map(&s, 2 * SR_MS, SR_PID, SR_HOT, SR_SIZE, PROT_READ | PROT_WRITE, "//anon");
	for (k = 0; k < 4; k++)
		for (i = 0; i < rows[k].n && !err; i++)
			err = sr_hw(&s, t++, rows[k].ip, SR_HOT + (uint64_t)i * 4096 * (rows[k].kind == 1 ? 8 : 1),
				    rows[k].weight, sr_src(st, rows[k].kind));
	err = err ?: sr_hw(&s, t++, 0x400100, SR_UNMAPPED, 0, sr_src(st, 4));
	err = err ?: sr_hw(&s, t++, 0x400200, SR_UNMAPPED + 0x1000, 200, sr_src(st, 1));
	if (truth)
		fprintf(truth, "pid %u region 0x%llx: samples 180 (l1 100, ram 50, l3 20, store 10), "
			"tlb_misses 50, weight 100*4+50*300+20*40 = 16200; unmapped 2 (prefetch 1, load 1)\n",
			SR_PID, SR_HOT);
	return err ?: sr_close(&s);
}

/*
 * Hardware prefetch samples (a software prefetch's data source, as PEBS
 * load latency and SPE mark it) into every class: code at 0x400000,
 * SR_HOT mapped, a PROT_NONE page at SR_COLD. The prefetch at 0x400300
 * runs 6 times in SR_HOT and 3 times past its end; the one at 0x400310
 * twice into the guard page; 0x400320 once into the NULL page; 0x400330
 * once at SR_UNMAPPED, never mapped, far above the guard page.
 */
static inline int sr_write_hw_prefetch(int fd, enum sr_style st, FILE *truth)
{
	uint64_t t = 10 * SR_MS, pf = sr_src(st, 4);
	struct sr s;
	int err, i;

	if (!sr_open(&s, fd, st, 0, 0))
		return -errno ? -errno : -EIO;
	err = sr_comm(&s, 1 * SR_MS, SR_PID, "synth");
	err = err ?: sr_map(&s, 2 * SR_MS, SR_PID, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/synth");
	err = err ?: sr_map(&s, 2 * SR_MS, SR_PID, SR_HOT, SR_SIZE, PROT_READ | PROT_WRITE, "//anon");
	err = err ?: sr_map(&s, 2 * SR_MS, SR_PID, SR_COLD, 0x1000, PROT_NONE, "//anon");
	for (i = 0; i < 6 && !err; i++)
		err = sr_hw(&s, t++, 0x400300, SR_HOT + (uint64_t)i * 64, 0, pf);
	for (i = 0; i < 3 && !err; i++)
		err = sr_hw(&s, t++, 0x400300, SR_HOT + SR_SIZE + (uint64_t)i * 64, 0, pf);
	for (i = 0; i < 2 && !err; i++)
		err = sr_hw(&s, t++, 0x400310, SR_COLD + (uint64_t)i * 64, 0, pf);
	err = err ?: sr_hw(&s, t++, 0x400320, 0x100, 0, pf);
	err = err ?: sr_hw(&s, t++, 0x400330, SR_UNMAPPED, 0, pf);
	if (truth)
		fprintf(truth, "pid %u prefetches: 0x400300 9 of which past-end 3 (after 0x%llx), 0x400310 guard 2, "
			"0x400320 null-page 1, 0x400330 never-mapped 1 (%llu above 0x%llx)\n", SR_PID,
			SR_HOT + SR_SIZE, SR_UNMAPPED - SR_COLD - 0x1000, SR_COLD + 0x1000);
	return err ?: sr_close(&s);
}

/*
 * Loads in the first pages, as PEBS writes them: at 0x100 by the code at
 * 0x400010 twice, at 0x2000 by the code at 0x400020 three times. The
 * recording machine's vm.mmap_min_addr, min_addr, comes first as mapscope
 * record writes it (mapscope:sysctl); UINT64_MAX: the file has none, as
 * perf's own.
 */
static inline int sr_write_nullpage(int fd, uint64_t min_addr, FILE *truth)
{
	static uint64_t ids[3] = { SR_ID_SIDE, SR_ID_HW, MS_SYSCTL_ID };
	static char *argv[] = { "ms-synth" };
	const uint16_t tp = 0xffff;
	struct ms_pdwriter_evsel e[3];
	struct ms_pdwriter_opts o = { e, min_addr == UINT64_MAX ? 2 : 3, NULL, 0, 1, argv, CLOCK_MONOTONIC, false, 0 };
	uint64_t rec[MS_SYSCTL_RECORD_MAX / 8], t = 10 * SR_MS, pid = SR_PID, load = sr_src(SR_PEBS, 0);
	struct ms_buf base, fmt;
	const char *hw_name;
	struct sr s;
	size_t n;
	int err, i;

	memset(&s, 0, sizeof(s));
	ms_buf_init(&base);
	ms_buf_init(&fmt);
	ms_buf_init(&s.td);
	s.a[0] = (struct perf_event_attr){ .size = sizeof(s.a[0]), .type = PERF_TYPE_SOFTWARE,
					   .config = PERF_COUNT_SW_DUMMY, .sample_type = SR_BODY, .sample_period = 1,
					   .sample_id_all = 1, .mmap = 1, .mmap2 = 1, .mmap_data = 1, .comm = 1,
					   .task = 1 };
	sr_hw_attr(SR_PEBS, &s.a[1], &hw_name);
	ms_referenced_attr(tp, &s.a[2]);
	e[0] = (struct ms_pdwriter_evsel){ &s.a[0], "dummy:u", &ids[0], 1 };
	e[1] = (struct ms_pdwriter_evsel){ &s.a[1], hw_name, &ids[1], 1 };
	e[2] = (struct ms_pdwriter_evsel){ &s.a[2], MS_SYSCTL_NAME, &ids[2], 1 };
	ms_sysctl_format(tp, &fmt);
	err = sr_tracing_data(&base);
	err = err ?: ms_tracefs_add_system(base.data, base.len, "mapscope", fmt.data, fmt.len, &s.td);
	ms_buf_release(&base);
	ms_buf_release(&fmt);
	o.tracing_data = s.td.data;
	o.tracing_data_len = s.td.len;
	if (err || !(s.w = ms_pdwriter_new(fd, &o))) {
		ms_buf_release(&s.td);
		return err ?: (-errno ? -errno : -EIO);
	}
	if (min_addr != UINT64_MAX) {
		n = ms_sysctl_encode(tp, SR_PID2, 1 * SR_MS, "vm.mmap_min_addr", min_addr, rec, sizeof(rec));
		err = n ? ms_pdwriter_write(s.w, (const struct perf_event_header *)rec) : -EINVAL;
	}
	err = err ?: sr_comm(&s, 1 * SR_MS, SR_PID, "synth");
	err = err ?: sr_map(&s, 2 * SR_MS, SR_PID, 0x400000, 0x1000, PROT_READ | PROT_EXEC, "/bin/synth");
	for (i = 0; i < 2 && !err; i++)
		err = sr_hw(&s, t++, 0x400010, 0x100, 0, load);
	for (i = 0; i < 3 && !err; i++)
		err = sr_hw(&s, t++, 0x400020, 0x2000, 0, load);
	if (truth)
		fprintf(truth, "pid %llu loads: 0x100 2 by 0x400010, 0x2000 3 by 0x400020; vm.mmap_min_addr %s\n",
			(unsigned long long)pid, min_addr == UINT64_MAX ? "not written" : "written");
	return err ?: sr_close(&s);
}

#endif
