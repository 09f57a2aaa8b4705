#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay.h"

int replay_open(struct replay *rp, const char *path)
{
	rp->path = path;
	rp->reader = ms_pdreader_open(path);
	if (!rp->reader) {
		if (errno == ENOENT && !strcmp(path, "mapscope.data"))
			cli_hint("record one first: mapscope record -- CMD, or name a file with -i FILE");
		return EXIT_RUNTIME;
	}
	rp->stream = ms_stream_new(rp->reader);
	rp->as = rp->stream ? ms_aspace_new() : NULL;
	if (!rp->as) {
		cli_error("cannot read '%s': %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	return 0;
}

static int __attribute__((noinline)) apply_change(struct replay *rp, const struct ms_event *ev)
{
	struct ms_change c;
	int err = ms_aspace_apply_change(rp->as, ev, &c);

	return err > 0 ? rp->change(rp, ev, &c) : err;
}

static int on_event(const struct ms_event *ev, void *ctx)
{
	struct replay *rp = ctx;
	enum ms_aspace_op op;
	int err;

	if (!rp->first_time && ev->time)
		rp->first_time = ev->time;      /* perf's synthesised records carry time 0 */
	if (rp->pre && (err = rp->pre(rp, ev)))
		return err;
	if (rp->change)
		return apply_change(rp, ev);
	if ((err = ms_aspace_apply(rp->as, ev, &op)))
		return err;
	return rp->post && op != MS_OP_NONE ? rp->post(rp, ev, op) : 0;
}

/* With no hook to see samples, a sample goes straight to the model once the start is known. */
static int on_event_plain(const struct ms_event *ev, void *ctx)
{
	struct replay *rp = ctx;

	if (ev->kind == MS_EV_SAMPLE && rp->first_time)
		return ms_aspace_apply(rp->as, ev, NULL);
	return on_event(ev, ctx);
}

/* Runs of samples, where no hook wants to see them one by one. */
static int on_samples(const struct ms_event *evs, size_t n, void *ctx)
{
	struct replay *rp = ctx;
	size_t i;

	for (i = 0; !rp->first_time && i < n; i++)
		rp->first_time = evs[i].time;
	return ms_aspace_apply_run(rp->as, evs, n);
}

int replay_run(struct replay *rp)
{
	/* Samples the hooks need not see one by one go to the model in runs. */
	bool plain = (!rp->pre || rp->pre_skips_samples) && !rp->change;
	int err;

	if (plain && ms_stream_set_samples_fn(rp->stream, on_samples)) {
		cli_error("cannot read '%s': %s", rp->path, strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	err = ms_stream_run(rp->stream, plain ? on_event_plain : on_event, rp);

	if (err == 1)                  /* a hook had what it needed */
		return 0;
	ms_aspace_finish(rp->as);
	if (err == -EBADMSG) {
		rp->corrupt = true;
		return 0;
	}
	if (err) {
		cli_error("cannot read '%s': %s", rp->path, strerror(err < 0 ? -err : EIO));
		return EXIT_RUNTIME;
	}
	return 0;
}

void replay_warnings(struct replay *rp)
{
	struct ms_stream_stats st;

	ms_stream_stats(rp->stream, &st);
	if (rp->corrupt)
		fprintf(stderr, "mapscope: warning: '%s' is corrupt or truncated: what follows covers "
			"the records before the bad one only\n", rp->path);
	if (!ms_stream_has_syscalls(rp->stream) && rp->corrupt)
		fprintf(stderr, "mapscope: warning: the tracepoint descriptions stored at the end of '%s' "
			"are lost, so its unmaps cannot be read: a later map replaces an earlier one where "
			"they overlap, and attribution is uncertain\n", rp->path);
	else if (!ms_stream_has_syscalls(rp->stream))
		fprintf(stderr, "mapscope: warning: '%s' has no unmap records (perf record?): a later "
			"map replaces an earlier one where they overlap, so attribution is uncertain\n",
			rp->path);
	if (st.lost)
		fprintf(stderr, "mapscope: warning: the recording lost %llu records\n",
			(unsigned long long)st.lost);
	if (st.out_of_order)
		fprintf(stderr, "mapscope: warning: %llu records came out of time order\n",
			(unsigned long long)st.out_of_order);
}

void replay_close(struct replay *rp)
{
	ms_aspace_free(rp->as);
	ms_stream_free(rp->stream);
	ms_pdreader_free(rp->reader);
}

int parse_time(const char *s, uint64_t *ns, bool *relative)
{
	char *end;
	double sec;
	uint64_t v;

	*relative = false;
	if (!strcmp(s, "end")) {
		*ns = UINT64_MAX;
		return 0;
	}
	if (s[0] == '+') {
		errno = 0;
		sec = strtod(s + 1, &end);
		if (errno || end == s + 1 || *end || !(sec >= 0) || sec > 1e9)
			return -EINVAL;
		*ns = (uint64_t)llround(sec * 1e9);
		*relative = true;
		return 0;
	}
	if (cli_parse_u64(s, 0, UINT64_MAX, &v))
		return -EINVAL;
	*ns = v;
	return 0;
}
