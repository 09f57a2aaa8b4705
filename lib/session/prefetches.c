/*
 * record --prefetches during a recording (session/prefetches.h): the
 * binaries as they are mapped, the hot phase and the windows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kernel/live.h"
#include "kernel/tracefs.h"
#include "kernel/uprobe.h"
#include "perfdata/format.h"
#include "session/prefetches.h"
#include "symbols/prefetch.h"
#include "util/grow.h"
#include "util/log.h"

struct pf_bin {
	char *path;
	int err;
	size_t found, probed, unsupported;
	bool mapped;
	uint64_t bias;               /* runtime address - file offset, in the first process that mapped it */
	struct ms_prefetch_sites wait;   /* hot=N: the sites still without a uprobe */
	uint64_t *samples;           /* hot=N: IP samples in each waiting site's function */
};

struct ms_prefetches {
	struct ms_record_opts o;
	struct ms_live *live;
	struct ms_uprobes *u;
	size_t evsel;                /* our event's index in live */
	struct pf_bin *bins;
	size_t nr_bins, cap_bins;
	size_t probed;               /* over every binary */
	uint64_t start_ns;           /* of the first tick: the hot phase's and the windows' start */
	bool armed;
	bool stopped;                /* the recording's events are disabled: no window opens again */
};

/* Whether site s is one the options ask for: in prefetch_func, where given. */
static bool wanted(const struct ms_prefetches *p, const struct ms_prefetch_site *s)
{
	return !p->o.prefetch_func || (s->func && !strcmp(s->func, p->o.prefetch_func));
}

/* A uprobe at site s of b, unless max= is reached. 0 or a negative errno. */
static int place(struct ms_prefetches *p, struct pf_bin *b, const struct ms_prefetch_site *s)
{
	int err;

	if (p->o.prefetch_max && p->probed >= p->o.prefetch_max)
		return 0;
	if ((err = ms_uprobes_add(p->u, b->path, s)))
		return err;
	b->probed++;
	p->probed++;
	return 0;
}

/* Keeps site s of b for the hot phase. 0 or -ENOMEM. */
static int keep(struct pf_bin *b, const struct ms_prefetch_site *s)
{
	struct ms_prefetch_sites *w = &b->wait;

	if (MS_ALLOC_GROW(w->v, w->n + 1, w->cap))
		return -ENOMEM;
	w->v[w->n] = *s;
	if (s->func && !(w->v[w->n].func = strdup(s->func)))
		return -ENOMEM;
	w->n++;
	return 0;
}

/* Scans binary b and probes (or, with hot=N, keeps) each wanted site. 0 or a negative errno. */
static int scan(struct ms_prefetches *p, struct pf_bin *b)
{
	struct ms_prefetch_sites sites = { 0 };
	size_t k;
	int err = ms_prefetch_scan_file(b->path, &sites);

	b->unsupported = sites.unsupported;
	for (k = 0; !err && k < sites.n; k++) {
		if (!wanted(p, &sites.v[k]))
			continue;
		b->found++;
		err = p->o.prefetch_hot ? keep(b, &sites.v[k]) : place(p, b, &sites.v[k]);
	}
	ms_prefetch_sites_release(&sites);
	if (!err && p->o.prefetch_hot && b->wait.n && !(b->samples = calloc(b->wait.n, sizeof(uint64_t))))
		err = -ENOMEM;
	return b->err = err;
}

static struct pf_bin *add_bin(struct ms_prefetches *p, const char *path)
{
	struct pf_bin *b;

	if (MS_ALLOC_GROW(p->bins, p->nr_bins + 1, p->cap_bins))
		return NULL;
	b = &p->bins[p->nr_bins];
	*b = (struct pf_bin){ .path = strdup(path) };
	if (!b->path)
		return NULL;
	p->nr_bins++;
	return b;
}

static struct pf_bin *find_bin(struct ms_prefetches *p, const char *path)
{
	size_t i;

	for (i = 0; i < p->nr_bins; i++)
		if (!strcmp(p->bins[i].path, path))
			return &p->bins[i];
	return NULL;
}

/* The uprobes, their anchor and every named binary's; then the event. 0 or a negative errno. */
static int setup(struct ms_prefetches *p)
{
	char tp[96];
	const char *tps[1] = { tp };
	struct pf_bin *b;
	size_t i;
	int err;

	if (!(p->u = ms_uprobes_new(ms_tracefs_dir() ?: "/sys/kernel/tracing")))
		return -errno;
	if ((err = ms_uprobes_anchor(p->u))) {
		ms_err("cannot place the anchor of our uprobe event: %s", strerror(-err));
		return err;
	}
	for (i = 0; i < p->o.nr_prefetch_paths; i++) {
		if (!(b = add_bin(p, p->o.prefetch_paths[i])))
			return -ENOMEM;
		if ((err = scan(p, b))) {
			ms_err("cannot place uprobes at the prefetches of '%s': %s", b->path, strerror(-err));
			return err;
		}
	}
	snprintf(tp, sizeof(tp), "%s/%s", ms_uprobes_group(p->u), MS_UPROBE_EVENT);
	if ((err = ms_live_add_tracepoints(p->live, tps, 1)))
		ms_err("cannot open the event of our uprobes: %s", strerror(-err));
	p->evsel = ms_live_nr_evsels(p->live) - 1;
	p->armed = true;
	return err;
}

struct ms_prefetches *ms_prefetches_new(const struct ms_record_opts *o, struct ms_live *live)
{
	struct ms_prefetches *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return NULL;
	p->o = *o;
	p->live = live;
	if ((err = setup(p))) {
		ms_prefetches_free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

/* An MMAP2 of an executable file: its path, or NULL (anonymous code, a JIT's, has no file to probe). */
static const char *exec_file(const struct perf_event_header *h)
{
	const struct perf_record_mmap2 *m = (const void *)h;
	size_t rest = perf_record_rest(m, filename);

	if (h->type != PERF_RECORD_MMAP2 || rest < 2 || !(m->prot & PROT_EXEC) || m->filename[0] != '/' ||
	    m->filename[1] == '/' || strnlen(m->filename, rest) == rest)     /* "//anon": no file */
		return NULL;
	return m->filename;
}

/* A binary mapped: scanned and probed the first time, where the options follow every binary. */
static void mapped(struct ms_prefetches *p, const struct perf_event_header *h)
{
	const struct perf_record_mmap2 *m = (const void *)h;
	const char *path = exec_file(h);
	struct pf_bin *b;

	if (!path || strstr(path, " (deleted)"))
		return;
	if (!(b = find_bin(p, path))) {
		if (!p->o.prefetch_follow || !(b = add_bin(p, path)))
			return;
		if (scan(p, b))
			ms_warn("cannot place uprobes at the prefetches of '%s', mapped by process %u: %s",
				path, m->pid, strerror(-b->err));
		else if (b->found)
			ms_log(MS_LOG_INFO, "%zu prefetch instruction%s in '%s', mapped by process %u: %zu with a uprobe", b->found,
				b->found == 1 ? "" : "s", path, m->pid, b->probed);
	}
	if (!b->mapped) {
		b->mapped = true;
		b->bias = m->start - m->pgoff;
	}
}

/* hot=N: a sample's IP, counted for the waiting site whose function holds it. */
static void count_ip(struct ms_prefetches *p, const struct perf_event_header *h)
{
	const struct perf_record_sample_head *s = (const void *)h;
	const struct ms_prefetch_site *w;
	struct pf_bin *b;
	uint64_t f;
	size_t i, k;

	if (h->type != PERF_RECORD_SAMPLE || !perf_record_contains(s, ip))
		return;
	for (i = 0; i < p->nr_bins; i++)
		for (b = &p->bins[i], k = 0; b->mapped && k < b->wait.n; k++) {
			w = &b->wait.v[k];
			f = w->func_vaddr + (w->offset - w->vaddr) + b->bias;   /* the function's runtime address */
			if (w->func_size && s->ip >= f && s->ip - f < w->func_size)
				b->samples[k]++;
		}
}

void ms_prefetches_record(struct ms_prefetches *p, const struct perf_event_header *h)
{
	if (!p)
		return;
	if (h->type == PERF_RECORD_MMAP2)
		mapped(p, h);
	else if (p->o.prefetch_hot && p->probed < p->o.prefetch_hot)
		count_ip(p, h);
}

/* hot=N: the waiting site with the most samples (at least one), or false. */
static bool hottest(const struct ms_prefetches *p, size_t *bi, size_t *k)
{
	uint64_t best = 0;
	size_t i, j;

	for (i = 0; i < p->nr_bins; i++)
		for (j = 0; j < p->bins[i].wait.n; j++)
			if (p->bins[i].samples[j] > best) {
				best = p->bins[i].samples[j];
				*bi = i;
				*k = j;
			}
	return best > 0;
}

/* After the hot phase: uprobes at the hottest sites seen so far, up to hot=N in all. */
static void place_hottest(struct ms_prefetches *p)
{
	struct pf_bin *b;
	size_t i, k;
	int err;

	while (p->probed < p->o.prefetch_hot && hottest(p, &i, &k)) {
		b = &p->bins[i];
		b->samples[k] = 0;
		if ((err = place(p, b, &b->wait.v[k]))) {
			ms_warn("cannot place a uprobe at a prefetch of '%s': %s", b->path, strerror(-err));
			b->err = err;
		} else
			ms_log(MS_LOG_INFO, "a uprobe at the prefetch of %s in '%s' (hot=%u)", b->wait.v[k].func ?: "?", b->path,
				p->o.prefetch_hot);
	}
}

/* Whether the windows have the event enabled at now_ns. */
static bool in_window(const struct ms_prefetches *p, uint64_t now_ns)
{
	uint64_t every = (uint64_t)p->o.prefetch_every_ms * 1000000ULL;

	return !every || (now_ns - p->start_ns) % every < (uint64_t)p->o.prefetch_window_ms * 1000000ULL;
}

int ms_prefetches_tick(struct ms_prefetches *p, uint64_t now_ns)
{
	bool on;
	int err;

	if (!p || p->stopped)
		return 0;
	if (!p->start_ns)
		p->start_ns = now_ns;
	if (p->o.prefetch_hot && now_ns - p->start_ns >= MS_PREFETCHES_HOT_MS * 1000000ULL)
		place_hottest(p);
	on = in_window(p, now_ns);
	if (on == p->armed)
		return 0;
	if ((err = ms_live_evsel_enable(p->live, p->evsel, on)))
		return err;
	p->armed = on;
	return 0;
}

void ms_prefetches_stop(struct ms_prefetches *p)
{
	if (p)
		p->stopped = true;
}

/* The ms from now_ns to ns, at least 1. */
static int ms_until(uint64_t now_ns, uint64_t ns)
{
	return ns <= now_ns ? 1 : (int)((ns - now_ns) / 1000000ULL) + 1;
}

int ms_prefetches_wait_ms(const struct ms_prefetches *p, uint64_t now_ns, int max_ms)
{
	uint64_t every, in, next;
	int w = max_ms;

	if (!p || p->stopped || !p->start_ns)
		return p && !p->stopped ? 1 : max_ms;
	if (p->o.prefetch_hot && p->probed < p->o.prefetch_hot) {
		next = p->start_ns + MS_PREFETCHES_HOT_MS * 1000000ULL;
		w = ms_until(now_ns, next > now_ns ? next : now_ns + 50000000ULL);
	}
	if ((every = (uint64_t)p->o.prefetch_every_ms * 1000000ULL)) {
		in = (now_ns - p->start_ns) % every;
		next = in < (uint64_t)p->o.prefetch_window_ms * 1000000ULL ?
		       (uint64_t)p->o.prefetch_window_ms * 1000000ULL - in : every - in;
		if (ms_until(0, next) < w)
			w = ms_until(0, next);
	}
	return w < max_ms ? w : max_ms;
}

int ms_prefetches_binary(const struct ms_prefetches *p, size_t i, const char **path, size_t *found,
			 size_t *probed, size_t *unsupported)
{
	if (!p || i >= p->nr_bins)
		return -ERANGE;
	*path = p->bins[i].path;
	*found = p->bins[i].found;
	*probed = p->bins[i].probed;
	*unsupported = p->bins[i].unsupported;
	return p->bins[i].err;
}

void ms_prefetches_free(struct ms_prefetches *p)
{
	size_t i;

	if (!p)
		return;
	ms_uprobes_free(p->u);
	for (i = 0; i < p->nr_bins; i++) {
		free(p->bins[i].path);
		ms_prefetch_sites_release(&p->bins[i].wait);
		free(p->bins[i].samples);
	}
	free(p->bins);
	free(p);
}
