/*
 * Driving the address-space model by hand in the unit tests: events made
 * here, applied one at a time, and what a listener heard. Every test of
 * lib/aspace (test_pieces.c, test_vmarules.c, test_apply.c, test_charge.c,
 * test_stacks.c, test_aspace.c) includes it after cmocka.h.
 */
#ifndef TESTS_UNIT_ASPACE_EVENTS_H
#define TESTS_UNIT_ASPACE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <mapscope/aspace.h>

#define P 4096ULL
#define PID 100
#define RW (PROT_READ | PROT_WRITE)

static uint64_t now __attribute__((unused)) = 1000;

static inline struct ms_event ev(enum ms_event_kind k)
{
	struct ms_event e;

	memset(&e, 0, sizeof(e));
	e.kind = k;
	e.time = now++;
	e.pid = e.tid = PID;
	return e;
}

/* A new map [s, e) that the kernel merged into the VMA [vs, ve) (the MMAP2 record says so). */
static inline void map_vma(struct ms_aspace *as, uint64_t s, uint64_t e, uint64_t vs, uint64_t ve, const char *name)
{
	struct ms_event m = ev(MS_EV_MAP);

	m.map.start = s;
	m.map.end = e;
	m.map.vma_start = vs;
	m.map.vma_end = ve;
	m.map.prot = RW;
	m.map.flags = MAP_PRIVATE;
	m.map.name = name;
	m.map.via = MS_VIA_MMAP;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

static inline void map(struct ms_aspace *as, uint64_t s, uint64_t e, const char *name)
{
	map_vma(as, s, e, s, e, name);
}

static inline void unmap(struct ms_aspace *as, uint64_t s, uint64_t e)
{
	struct ms_event u = ev(MS_EV_UNMAP);

	u.unmap.start = s;
	u.unmap.end = e;
	assert_int_equal(ms_aspace_apply(as, &u, NULL), 0);
}

static inline void remap(struct ms_aspace *as, uint64_t os, uint64_t oe, uint64_t ns, uint64_t ne)
{
	struct ms_event r = ev(MS_EV_REMAP);

	r.remap.old_start = os;
	r.remap.old_end = oe;
	r.remap.new_start = ns;
	r.remap.new_end = ne;
	assert_int_equal(ms_aspace_apply(as, &r, NULL), 0);
}

static inline void protect(struct ms_aspace *as, uint64_t s, uint64_t e, uint32_t prot)
{
	struct ms_event p = ev(MS_EV_PROTECT);

	p.protect.start = s;
	p.protect.end = e;
	p.protect.prot = prot;
	assert_int_equal(ms_aspace_apply(as, &p, NULL), 0);
}

static inline int region_at(struct ms_aspace *as, uint32_t pid, uint64_t addr)
{
	const struct ms_region *r = ms_aspace_lookup(as, pid, addr);

	return r ? (int)r->id : -1;
}

struct vmas { uint64_t s[16], e[16]; uint32_t prot[16]; int n; };

static inline void collect(const struct ms_vma *v, void *ctx)
{
	struct vmas *out = ctx;

	out->s[out->n] = v->start;
	out->e[out->n] = v->end;
	out->prot[out->n++] = v->prot;
}

static inline struct vmas vmas_of(struct ms_aspace *as, uint32_t pid)
{
	struct vmas v = { .n = 0 };

	assert_int_equal(ms_aspace_for_each_vma(as, pid, collect, &v), 0);
	return v;
}

static inline void advise(struct ms_aspace *as, uint64_t s, uint64_t e, uint32_t advice)
{
	struct ms_event m = ev(MS_EV_MADVISE);

	m.madvise.start = s;
	m.madvise.end = e;
	m.madvise.advice = advice;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

static inline void brk(struct ms_aspace *as, uint64_t old, uint64_t new, uint64_t vs, uint64_t ve)
{
	struct ms_event b = ev(MS_EV_BRK);

	b.brk.old_brk = old;
	b.brk.new_brk = new;
	b.brk.vma_start = vs;
	b.brk.vma_end = ve;
	assert_int_equal(ms_aspace_apply(as, &b, NULL), 0);
}

static int charged[8] __attribute__((unused)), nr_charged __attribute__((unused));

static inline void on_charge(void *ctx, const struct ms_event *s, const struct ms_region *r)
{
	charged[nr_charged++] = r ? (int)r->id : -1;
}

static inline void sample(struct ms_aspace *as, uint64_t addr)
{
	struct ms_event s = ev(MS_EV_SAMPLE);

	s.sample.addr = addr;
	s.sample.has_addr = true;
	assert_int_equal(ms_aspace_apply(as, &s, NULL), 0);
}

static inline void lock(struct ms_aspace *as, uint64_t s, uint64_t e, uint32_t lock, bool all, int32_t def)
{
	struct ms_event m = ev(MS_EV_MLOCK);

	m.mlock.start = s;
	m.mlock.end = e;
	m.mlock.lock = lock;
	m.mlock.all = all;
	m.mlock.def = def;
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

/* mseal, mbind or set_mempolicy_home_node over [s, e): what sets value. */
static inline void vma_attr(struct ms_aspace *as, uint64_t s, uint64_t e, enum ms_vma_attr what, uint32_t value)
{
	struct ms_event m = ev(MS_EV_VMA_ATTR);

	m.vma_attr = (typeof(m.vma_attr)){ .start = s, .end = e, .what = what, .value = value };
	assert_int_equal(ms_aspace_apply(as, &m, NULL), 0);
}

/*
 * Eight pages with the second half DONTDUMP: two VMAs, one flag apart, so
 * that a fault in one gives it an anon_vma of its own (the other's is not
 * compatible). Which halves are faulted is `faults` (bit 0: the first).
 */
static inline struct ms_aspace *halves(uint64_t at, int faults)
{
	struct ms_aspace *as = ms_aspace_new();

	map(as, at, at + 8 * P, "//anon");
	advise(as, at + 4 * P, at + 8 * P, MADV_DONTDUMP);
	if (faults & 1)
		sample(as, at + P);
	if (faults & 2)
		sample(as, at + 5 * P);
	return as;
}

/* What a listener heard: (time, region id or -1), in order. */
struct heard { uint64_t time[8192]; int id[8192]; int n, runs; };

static inline void heard_one(void *ctx, const struct ms_event *s, const struct ms_region *r)
{
	struct heard *h = ctx;

	assert_true(h->n < 8192);
	h->time[h->n] = s->time;
	h->id[h->n++] = r ? (int)r->id : -1;
}

static inline void heard_run(void *ctx, const struct ms_samples *run, const struct ms_region *r)
{
	struct heard *h = ctx;
	struct ms_event tmp;
	size_t i;

	h->runs++;
	assert_non_null(r);
	for (i = 0; i < run->n; i++)
		heard_one(ctx, ms_samples_event(run, i, &tmp), r);
}

static inline struct ms_event map_ev(uint32_t pid, uint64_t s, uint64_t e, const char *name)
{
	struct ms_event m = ev(MS_EV_MAP);

	m.pid = m.tid = pid;
	m.map.start = m.map.vma_start = s;
	m.map.end = m.map.vma_end = e;
	m.map.prot = RW;
	m.map.flags = MAP_PRIVATE;
	m.map.name = name;
	m.map.via = !strcmp(name, "[stack]") ? MS_VIA_KERNEL : MS_VIA_MMAP;
	return m;
}

static inline struct ms_event sample_ev(uint32_t pid, uint32_t tid, uint64_t addr)
{
	struct ms_event e = ev(MS_EV_SAMPLE);

	e.pid = pid;
	e.tid = tid;
	e.sample.addr = addr;
	e.sample.has_addr = true;
	return e;
}

#endif
