#include <inttypes.h>
#include <stdio.h>

#include "output/format.h"
#include "output/json.h"
#include "print-change.h"
#include "output/text.h"

void print_change_header(FILE *f)
{
	fprintf(f, "%20s %7s %7s %-10s %-33s %-8s %s\n", "time_ns", "pid", "tid", "op", "start-end",
		"prot", "name");
}

/* "key": what(c) where the change has that field, null where not. */
static void json_what(struct ms_json *w, const char *key, bool present, const struct ms_change *c)
{
	char buf[16];

	ms_json_key_str(w, key, present ? ms_format_change_what(c, buf) : NULL);
}

/* One object on a line of its own: JSON Lines. */
static void json_change(FILE *f, const struct ms_change *c)
{
	struct ms_json w;

	ms_json_init(&w, f, 0);
	ms_json_object_begin(&w);
	ms_json_key_u64(&w, "time_ns", c->time_ns);
	ms_json_key_u64(&w, "pid", c->pid);
	ms_json_key_u64(&w, "tid", c->tid);
	ms_json_key_str(&w, "op", ms_aspace_op_name(c->op));
	ms_json_key_addr_or_null(&w, "start", c->start, c->start || c->end);
	ms_json_key_addr_or_null(&w, "end", c->end, c->end != 0);
	ms_json_key_addr_or_null(&w, "new_start", c->new_start, c->new_start || c->new_end);
	ms_json_key_addr_or_null(&w, "new_end", c->new_end, c->new_end != 0);
	/* ms_format_change_what() says the one of protection, advice and lock state the change has. */
	json_what(&w, "prot", c->prot >= 0, c);
	json_what(&w, "advice", c->advice >= 0, c);
	json_what(&w, "lock", c->lock >= 0, c);
	ms_json_key_str(&w, "name", c->name);
	if (c->op == MS_OP_FORK) {
		ms_json_key_u64(&w, "child_pid", c->child_pid);
		ms_json_key_u64(&w, "child_tid", c->child_tid);
	}
	ms_json_object_end(&w);
	fputc('\n', f);
}

void print_change(FILE *f, const struct ms_change *c, bool json)
{
	bool range = c->start || c->end;
	char buf[16];

	if (json) {
		json_change(f, c);
		return;
	}
	fprintf(f, "%20" PRIu64 " %7u %7u %-10s ", c->time_ns, c->pid, c->tid, ms_aspace_op_name(c->op));
	if (range)
		fprintf(f, "%016" PRIx64 "-%016" PRIx64, c->start, c->end);
	else
		fprintf(f, "%33s", "");
	if (c->new_start)
		fprintf(f, " -> %016" PRIx64 "-%016" PRIx64, c->new_start, c->new_end);
	fprintf(f, " %-8s %s\n", ms_format_change_what(c, buf), MS_TEXT(c->name));
}
