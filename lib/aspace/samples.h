/*
 * Internal: runs of samples (struct ms_samples) inside the library: the
 * model's entry for the stream's runs, and the loop helpers that give the
 * analyses one sample at a time.
 */
#ifndef MS_ASPACE_SAMPLES_H
#define MS_ASPACE_SAMPLES_H

#include <stddef.h>

#include <mapscope/event.h>

struct ms_aspace;

/*
 * ms_aspace_apply_run() for a run of samples, all of one event's fixed
 * layout as the stream hands them: each with a stack pointer or each
 * without, as the first (a run over the recording's bytes has none). The
 * quick path then tests only the address and the process.
 */
int ms_aspace_apply_samples(struct ms_aspace *as, const struct ms_samples *run);

/*
 * Whether on the recording's machine a read fault on private anonymous
 * memory takes a page of its own, and so an anon_vma, where Linux maps
 * the shared zero page (do_anonymous_page): the recording says so
 * (MS_FACT_READ_ZERO_PAGE, kernel/sysctl.h); the model takes the zero
 * page until told. The session tells it.
 */
void ms_aspace_set_read_fault_page(struct ms_aspace *as, bool on);

/* Writes into ev the fields of run's sample i that differ between samples. */
static inline void ms_samples_fill(const struct ms_samples *run, size_t i, struct ms_event *ev)
{
	const unsigned char *p = run->base + i * run->stride;
	uint32_t w[2];

	memcpy(&ev->sample.addr, p + run->addr, 8);
	memcpy(&ev->sample.ip, p + run->ip, 8);
	memcpy(&ev->time, p + run->time, 8);
	memcpy(w, p + run->pid, 8);
	ev->pid = w[0];
	ev->tid = w[1];
	if (run->cpu >= 0)
		memcpy(&ev->cpu, p + run->cpu, 4);
	if (run->data_src >= 0)
		memcpy(&ev->sample.data_src, p + run->data_src, 8);
	if (run->period >= 0)
		memcpy(&ev->sample.period, p + run->period, 8);
	if (__builtin_expect(run->weight >= 0, 0)) {
		memcpy(&ev->sample.weight, p + run->weight, 8);
		if (run->weight_struct)
			ev->sample.weight &= 0xffffffffu;
	}
}

/*
 * For a loop over a run, sample by sample, cheaper than ms_samples_event():
 * &run->evs[i], or ev with sample i's own fields written, where ev already
 * holds *run->proto (set once before the loop: samples_begin()).
 */
static inline void samples_begin(const struct ms_samples *run, struct ms_event *ev)
{
	if (!run->evs)
		*ev = *run->proto;
}

static inline const struct ms_event *samples_at(const struct ms_samples *run, size_t i, struct ms_event *ev)
{
	if (run->evs)
		return &run->evs[i];
	ms_samples_fill(run, i, ev);
	return ev;
}

#endif
