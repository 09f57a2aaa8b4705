#include <inttypes.h>

#include "output/json.h"
#include "print-change.h"

const char *change_op_name(enum ms_aspace_op op)
{
	static const char *const n[] = {
		[MS_OP_NONE] = "none", [MS_OP_MAP] = "map", [MS_OP_UNMAP] = "unmap",
		[MS_OP_REMAP] = "remap", [MS_OP_PROTECT] = "protect", [MS_OP_BRK] = "brk",
		[MS_OP_STACK_GROW] = "stack-grow", [MS_OP_MADVISE] = "madvise",
		[MS_OP_FORK] = "fork", [MS_OP_EXEC] = "exec", [MS_OP_EXIT] = "exit",
	};
	return n[op];
}

void print_change_header(FILE *f)
{
	fprintf(f, "%20s %7s %7s %-10s %-33s %s\n", "time_ns", "pid", "tid", "op", "start-end", "name");
}

static void addr_or_null(FILE *f, uint64_t a, bool present)
{
	if (present)
		ms_json_addr(f, a);
	else
		fputs("null", f);
}

void print_change(FILE *f, const struct ms_change *c, bool json)
{
	bool range = c->start || c->end;

	if (json) {
		fprintf(f, "{\"time_ns\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"op\": \"%s\", \"start\": ",
			c->time_ns, c->pid, c->tid, change_op_name(c->op));
		addr_or_null(f, c->start, range);
		fputs(", \"end\": ", f);
		addr_or_null(f, c->end, c->end != 0);
		fputs(", \"new_start\": ", f);
		addr_or_null(f, c->new_start, c->new_start || c->new_end);
		fputs(", \"new_end\": ", f);
		addr_or_null(f, c->new_end, c->new_end != 0);
		fputs(", \"name\": ", f);
		ms_json_str(f, c->name);
		if (c->op == MS_OP_FORK)
			fprintf(f, ", \"child_pid\": %u, \"child_tid\": %u", c->child_pid, c->child_tid);
		fputs("}\n", f);
		return;
	}
	fprintf(f, "%20" PRIu64 " %7u %7u %-10s ", c->time_ns, c->pid, c->tid, change_op_name(c->op));
	if (range)
		fprintf(f, "%016" PRIx64 "-%016" PRIx64, c->start, c->end);
	else
		fprintf(f, "%33s", "");
	if (c->new_start)
		fprintf(f, " -> %016" PRIx64 "-%016" PRIx64, c->new_start, c->new_end);
	fprintf(f, " %s\n", c->name);
}
