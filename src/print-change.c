#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>

#include "output/json.h"
#include "print-change.h"

void print_change_header(FILE *f)
{
	fprintf(f, "%20s %7s %7s %-10s %-33s %-8s %s\n", "time_ns", "pid", "tid", "op", "start-end",
		"prot", "name");
}

/* "rw-" for a protection; for madvise, the advice; for lock, the state; "" where none applies. */
const char *change_what(const struct ms_change *c, char buf[16])
{
	const char *a;

	if (c->lock >= 0)
		return !c->lock ? "unlocked" : c->lock & MS_LOCK_ONFAULT ? "onfault" : "locked";

	if (c->prot >= 0) {
		buf[0] = c->prot & PROT_READ ? 'r' : '-';
		buf[1] = c->prot & PROT_WRITE ? 'w' : '-';
		buf[2] = c->prot & PROT_EXEC ? 'x' : '-';
		buf[3] = '\0';
		return buf;
	}
	if (c->advice < 0)
		return "";
	a = ms_event_advice_name((uint32_t)c->advice);
	if (!a) {
		snprintf(buf, 16, "advice-%d", c->advice);
		return buf;
	}
	return a;
}

static void addr_or_null(FILE *f, uint64_t a, bool present)
{
	if (present)
		ms_json_addr(f, a);
	else
		fputs("null", f);
}

/* ', "key": what(c)' where the change has that field, null where not. */
static void json_what(FILE *f, const char *key, bool present, const struct ms_change *c)
{
	char buf[16];

	fprintf(f, ", \"%s\": ", key);
	if (present)
		ms_json_str(f, change_what(c, buf));
	else
		fputs("null", f);
}

void print_change(FILE *f, const struct ms_change *c, bool json)
{
	bool range = c->start || c->end;
	char buf[16];

	if (json) {
		fprintf(f, "{\"time_ns\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"op\": \"%s\", \"start\": ",
			c->time_ns, c->pid, c->tid, ms_aspace_op_name(c->op));
		addr_or_null(f, c->start, range);
		fputs(", \"end\": ", f);
		addr_or_null(f, c->end, c->end != 0);
		fputs(", \"new_start\": ", f);
		addr_or_null(f, c->new_start, c->new_start || c->new_end);
		fputs(", \"new_end\": ", f);
		addr_or_null(f, c->new_end, c->new_end != 0);
		/* change_what() says the one of protection, advice and lock state the change has. */
		json_what(f, "prot", c->prot >= 0, c);
		json_what(f, "advice", c->advice >= 0, c);
		json_what(f, "lock", c->lock >= 0, c);
		fputs(", \"name\": ", f);
		ms_json_str(f, c->name);
		if (c->op == MS_OP_FORK)
			fprintf(f, ", \"child_pid\": %u, \"child_tid\": %u", c->child_pid, c->child_tid);
		fputs("}\n", f);
		return;
	}
	fprintf(f, "%20" PRIu64 " %7u %7u %-10s ", c->time_ns, c->pid, c->tid, ms_aspace_op_name(c->op));
	if (range)
		fprintf(f, "%016" PRIx64 "-%016" PRIx64, c->start, c->end);
	else
		fprintf(f, "%33s", "");
	if (c->new_start)
		fprintf(f, " -> %016" PRIx64 "-%016" PRIx64, c->new_start, c->new_end);
	fprintf(f, " %-8s %s\n", change_what(c, buf), c->name);
}
