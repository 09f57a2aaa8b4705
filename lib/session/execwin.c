/* Which processes are between an exec and the first sample of their own code. */
#include <string.h>

#include "session/execwin.h"

static uint32_t in_exec[64];
static size_t nr_in_exec;

void exec_window_track(const struct perf_event_header *h)
{
	uint64_t ip;
	uint32_t pid;
	size_t i;

	if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) && h->size >= 16) {
		memcpy(&pid, h + 1, 4);
		if (!exec_window_open(pid) && nr_in_exec < sizeof(in_exec) / sizeof(in_exec[0]))
			in_exec[nr_in_exec++] = pid;
	} else if (h->type == PERF_RECORD_SAMPLE && h->size >= 32 && nr_in_exec) {
		memcpy(&ip, (const char *)h + 16, 8);    /* IDENTIFIER, IP, then TID */
		if (ip >> 63)
			return;                          /* the kernel's code: still the exec's */
		memcpy(&pid, (const char *)h + 24, 4);
		for (i = 0; i < nr_in_exec; i++)
			if (in_exec[i] == pid)
				in_exec[i] = in_exec[--nr_in_exec];
	}
}

bool exec_window_open(uint32_t pid)
{
	size_t i;

	for (i = 0; i < nr_in_exec; i++)
		if (in_exec[i] == pid)
			return true;
	return false;
}

bool exec_window_any(void)
{
	return nr_in_exec > 0;
}

void exec_window_reset(void)
{
	nr_in_exec = 0;
}
