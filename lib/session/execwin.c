/* Which processes are between an exec and the first sample of their own code. */
#include <errno.h>
#include <string.h>

#include "perfdata/format.h"
#include "session/execwin.h"

void ms_execwin_init(struct ms_execwin *w)
{
	ms_u32map_init(&w->pids);
}

void ms_execwin_release(struct ms_execwin *w)
{
	ms_u32map_release(&w->pids);
}

int ms_execwin_track(struct ms_execwin *w, const struct perf_event_header *h)
{
	const struct perf_record_comm *comm = (const void *)h;
	const struct perf_record_sample_head *s = (const void *)h;

	if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
	    perf_record_contains(comm, tid))
		return ms_u32map_put(&w->pids, comm->pid, w);
	if (h->type != PERF_RECORD_SAMPLE || !w->pids.len || !perf_record_contains(s, tid))
		return 0;
	if (s->ip >> 63)
		return 0;                    /* the kernel's code: still the exec's */
	ms_u32map_del(&w->pids, s->pid);
	return 0;
}

bool ms_execwin_open(const struct ms_execwin *w, uint32_t pid)
{
	return ms_u32map_get(&w->pids, pid) != NULL;
}

bool ms_execwin_any(const struct ms_execwin *w)
{
	return w->pids.len > 0;
}
