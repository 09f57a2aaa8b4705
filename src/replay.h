/*
 * The shared pipeline of the commands that read a recording: the file
 * source, the stream and the model. Each command adds hooks around the
 * model's apply.
 */
#ifndef MS_REPLAY_H
#define MS_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/pdreader.h>
#include <mapscope/stream.h>

struct replay {
	struct ms_pdreader *reader;
	struct ms_stream *stream;
	struct ms_aspace *as;
	const char *path;
	/* Before the model sees ev; non-zero stops the replay (1: stop quietly). */
	int (*pre)(struct replay *rp, const struct ms_event *ev);
	/* pre has nothing to do for samples once first_time is known: they may go to the model in runs. */
	bool pre_skips_samples;
	/* After the model changed (op says how; not called for MS_OP_NONE). */
	int (*post)(struct replay *rp, const struct ms_event *ev, enum ms_aspace_op op);
	/* Instead of post: each change, described. */
	int (*change)(struct replay *rp, const struct ms_event *ev, const struct ms_change *c);
	void *ctx;
	uint64_t first_time;       /* of the first event, 0 before it */
	bool corrupt;              /* the data ended in a corrupt record */
};

/* Opens path and prepares the pipeline; prints the error and returns EXIT_RUNTIME on failure. */
int replay_open(struct replay *rp, const char *path);

/* Runs to the end (or until a hook stops it). 0, or EXIT_RUNTIME with the error printed. */
int replay_run(struct replay *rp);

/* Prints the warnings a reader of the output must see (uncertain attribution, lost records, corruption). */
void replay_warnings(struct replay *rp);

void replay_close(struct replay *rp);

/* "N at address 0 (...), M at kernel addresses": the samples not charged, and why; "" where none. */
void replay_set_aside(const struct ms_stream_stats *st, char *out, size_t len);

/* Every sample record of the file, of any event. */
static inline uint64_t replay_file_samples(const struct ms_stream_stats *st)
{
	return st->samples + st->other_samples + st->zero_addr + st->kernel_addr + st->unknown_id +
	       st->bad_samples;
}

/*
 * Parses a time: integer nanoseconds on the recording's clock, "+SECONDS"
 * from the start (*relative set, the offset in ns returned), or "end".
 * 0 or -EINVAL.
 */
int parse_time(const char *s, uint64_t *ns, bool *relative);

#endif
