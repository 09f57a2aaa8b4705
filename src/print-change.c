#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output/format.h"
#include "output/json.h"
#include "print-change.h"
#include "output/text.h"

void print_change_header(FILE *f, bool abs)
{
	fprintf(f, "%*s %7s %7s %-10s %-29s %-8s %s\n", abs ? 20 : 11, abs ? "time_ns" : "time", "pid", "tid", "op",
		"start-end", "prot", "name");
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

/* s at at, padded with spaces to w columns: before it (printf's "%*s") or, with after, behind it ("%-*s"). */
static char *put_padded(char *at, const char *s, size_t w, bool after)
{
	size_t n = strlen(s), pad = n < w ? w - n : 0;

	if (!after) {
		memset(at, ' ', pad);
		at += pad;
	}
	memcpy(at, s, n);
	at += n;
	if (after) {
		memset(at, ' ', pad);
		at += pad;
	}
	return at;
}

/* " %7u": v in decimal, right-aligned in 7 columns, after a space. */
static char *put_u32(char *at, uint32_t v)
{
	char tmp[12];

	*ms_format_dec(tmp, v) = '\0';
	*at++ = ' ';
	return put_padded(at, tmp, 7, false);
}

/*
 * A line of the table, put together by hand and written once: a timeline
 * prints one per change, and four printf calls were a fifth of its CPU.
 * The bytes are those of "%*s %7u %7u %-10s %-29s[ -> %s] %-8s %s\n".
 */
void print_change(FILE *f, const struct ms_change *c, bool json, uint64_t t0, bool abs)
{
	char buf[16], range[40], t[32], line[256], *at;
	const char *what;

	if (json) {
		json_change(f, c);
		return;
	}
	at = put_padded(line, cli_time_text(t, c->time_ns, t0, abs), abs ? 20 : 11, false);
	at = put_u32(put_u32(at, c->pid), c->tid);
	*at++ = ' ';
	at = put_padded(at, ms_aspace_op_name(c->op), 10, true);
	*at++ = ' ';
	/* A brk's range runs from the old break to the new one: low to high, and a shrink says so. */
	if (c->start && !c->end)
		snprintf(range, sizeof(range), "0x%" PRIx64, c->start);     /* shmdt: the start only */
	else if (c->start || c->end)
		ms_format_range(c->start, c->end, range);
	else
		range[0] = '\0';
	at = put_padded(at, range, 29, true);
	if (c->new_start) {
		ms_format_range(c->new_start, c->new_end, range);
		at = put_padded(at, " -> ", 0, true);
		at = put_padded(at, range, 0, true);
	}
	what = ms_format_change_word(c, buf);
	*at++ = ' ';
	at = put_padded(at, what, 8, true);
	*at++ = ' ';
	fwrite(line, 1, (size_t)(at - line), f);
	fputs(MS_TEXT(c->name), f);
	fputc('\n', f);
}
