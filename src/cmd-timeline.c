/* mapscope timeline: every address-space change, in time order. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "output/json.h"
#include "replay.h"

static const char usage_text[] =
"usage: mapscope timeline [-i FILE] [--pid PID] [--format text|json]\n"
"\n"
"Lists every address-space change of the recording in time order: map,\n"
"unmap, remap, protect, brk, stack-grow, madvise, fork, exec, exit. Each\n"
"has its time, pid, tid, range, the new range where it moved, and the name\n"
"of the region concerned.\n"
"\n"
"  -i, --input FILE   the recording (default mapscope.data; '-': stdin)\n"
"      --pid PID      only this process's changes\n"
"      --format FMT   text (default) or json (one object per line, fields\n"
"                     time_ns, pid, tid, op, start, end, new_start, new_end,\n"
"                     name)\n"
"  -h, --help         show this help\n"
"\n"
"EXAMPLES\n"
"  mapscope timeline\n"
"  mapscope timeline --pid 1234 --format json | jq 'select(.op == \"unmap\")'\n";

struct tl {
	long pid;
	bool json;
	char name[4096];             /* the region's name before the change */
};

static const char *op_name(enum ms_aspace_op op)
{
	static const char *const n[] = {
		[MS_OP_MAP] = "map", [MS_OP_UNMAP] = "unmap", [MS_OP_REMAP] = "remap",
		[MS_OP_PROTECT] = "protect", [MS_OP_BRK] = "brk", [MS_OP_STACK_GROW] = "stack-grow",
		[MS_OP_MADVISE] = "madvise", [MS_OP_FORK] = "fork", [MS_OP_EXEC] = "exec",
		[MS_OP_EXIT] = "exit",
	};
	return n[op];
}

/* The range a change concerns, before it applies. */
static void range_of(const struct ms_event *ev, uint64_t *s, uint64_t *e, uint64_t *ns, uint64_t *ne)
{
	*s = *e = *ns = *ne = 0;
	switch (ev->kind) {
	case MS_EV_MAP: *s = ev->map.start; *e = ev->map.end; break;
	case MS_EV_UNMAP: *s = ev->unmap.start; *e = ev->unmap.end; break;
	case MS_EV_SHMDT: *s = ev->shmdt.addr; break;
	case MS_EV_REMAP:
		*s = ev->remap.old_start; *e = ev->remap.old_end;
		*ns = ev->remap.new_start; *ne = ev->remap.new_end;
		break;
	case MS_EV_PROTECT: *s = ev->protect.start; *e = ev->protect.end; break;
	case MS_EV_BRK:
		*s = ev->brk.old_brk; *e = ev->brk.new_brk;
		break;
	case MS_EV_MADVISE: *s = ev->madvise.start; *e = ev->madvise.end; break;
	default: break;
	}
}

static int before(struct replay *rp, const struct ms_event *ev)
{
	struct tl *t = rp->ctx;
	const struct ms_region *r;
	uint64_t s, e, ns, ne;

	range_of(ev, &s, &e, &ns, &ne);
	r = s ? ms_aspace_lookup(rp->as, ev->pid, s) : NULL;
	snprintf(t->name, sizeof(t->name), "%s", r ? r->name : "");
	return 0;
}

static int after(struct replay *rp, const struct ms_event *ev, enum ms_aspace_op op)
{
	struct tl *t = rp->ctx;
	const struct ms_region *r;
	uint64_t s, e, ns, ne;
	char name[4096];

	if (op == MS_OP_NONE || (t->pid >= 0 && ev->pid != (uint32_t)t->pid))
		return 0;
	range_of(ev, &s, &e, &ns, &ne);
	if (ev->kind == MS_EV_SHMDT)
		e = 0;
	if (op == MS_OP_STACK_GROW || op == MS_OP_BRK) {
		r = ms_aspace_lookup(rp->as, ev->pid, op == MS_OP_BRK ? s - 1 : e - 1);
		if (op == MS_OP_STACK_GROW) {
			if (r) {
				s = r->start;
				e = r->end;
			}
		}
	}
	if (op == MS_OP_MAP) {
		r = ms_aspace_lookup(rp->as, ev->pid, s);
		snprintf(name, sizeof(name), "%s", r ? r->name : ev->map.name);
	} else if (op == MS_OP_FORK)
		snprintf(name, sizeof(name), "child %u/%u", ev->fork.child_pid, ev->fork.child_tid);
	else if (op == MS_OP_EXEC || op == MS_OP_EXIT)
		snprintf(name, sizeof(name), "%s", ev->kind == MS_EV_EXEC ? ev->comm.comm : "");
	else if (op == MS_OP_BRK || op == MS_OP_STACK_GROW)
		snprintf(name, sizeof(name), "%s", op == MS_OP_BRK ? "[heap]" : "[stack]");
	else
		snprintf(name, sizeof(name), "%s", t->name);
	if (t->json) {
		printf("{\"time_ns\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"op\": \"%s\", \"start\": ",
		       ev->time, ev->pid, ev->tid, op_name(op));
		s || e ? ms_json_addr(stdout, s) : (void)fputs("null", stdout);
		fputs(", \"end\": ", stdout);
		e ? ms_json_addr(stdout, e) : (void)fputs("null", stdout);
		fputs(", \"new_start\": ", stdout);
		ns ? ms_json_addr(stdout, ns) : (void)fputs("null", stdout);
		fputs(", \"new_end\": ", stdout);
		ne ? ms_json_addr(stdout, ne) : (void)fputs("null", stdout);
		fputs(", \"name\": ", stdout);
		ms_json_str(stdout, name);
		if (op == MS_OP_FORK)
			printf(", \"child_pid\": %u, \"child_tid\": %u", ev->fork.child_pid, ev->fork.child_tid);
		fputs("}\n", stdout);
		return 0;
	}
	printf("%20" PRIu64 " %7u %7u %-10s ", ev->time, ev->pid, ev->tid, op_name(op));
	if (s || e)
		printf("%016" PRIx64 "-%016" PRIx64, s, e);
	else
		printf("%33s", "");
	if (ns)
		printf(" -> %016" PRIx64 "-%016" PRIx64, ns, ne);
	printf(" %s\n", name);
	return 0;
}

int cmd_timeline(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'P' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tl t = { .pid = -1 };
	struct replay rp = { 0 };
	const char *input = "mapscope.data";
	uint64_t v;
	int c, ret, fmt;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'P':
			if (cli_parse_u64(optarg, 1, 4194304, &v))
				return cli_usage_error("timeline", "invalid PID '%s'", optarg);
			t.pid = (long)v;
			break;
		case 'F':
			if ((ret = parse_format("timeline", optarg, &fmt, false)))
				return ret;
			t.json = fmt == 1;
			break;
		case 'h': fputs(usage_text, stdout); return 0;
		case ':': return cli_usage_error("timeline", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("timeline", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("timeline", "unexpected argument '%s'", argv[optind]);
	cli_log_init(0);
	if ((ret = replay_open(&rp, input)))
		goto out;
	rp.ctx = &t;
	rp.pre = before;
	rp.post = after;
	if (!t.json)
		printf("%20s %7s %7s %-10s %-33s %s\n", "time_ns", "pid", "tid", "op", "start-end", "name");
	if ((ret = replay_run(&rp)))
		goto out;
	replay_warnings(&rp);
	ret = rp.corrupt ? EXIT_RUNTIME : 0;
out:
	replay_close(&rp);
	return ret;
}
