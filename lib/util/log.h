/* Internal: how library code reports through the caller's log callback. */
#ifndef MS_UTIL_LOG_H
#define MS_UTIL_LOG_H

#include <stddef.h>

#include <mapscope/log.h>

#define MS_EXPORT __attribute__((visibility("default")))

void ms_log(enum ms_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Messages made on one thread for another to hand on where it reaches
 * that point: a reader working ahead (perfdata/decompress.c) keeps its
 * messages with the data they came after, so that the log reads as if
 * nothing had worked ahead.
 */
struct ms_logq {
	struct { enum ms_log_level level; char *msg; } *v;
	size_t n, cap;
};

/* From now on, this thread's messages go to q, not the callback; NULL ends that. */
void ms_log_defer(struct ms_logq *q);
/* Where this thread's messages go now: a queue, or NULL (the callback). */
struct ms_logq *ms_log_deferred(void);
/*
 * Hands q's messages on, in the order they came, as if the calling thread
 * logged them now (to its own queue, where it defers), and empties q.
 */
void ms_logq_flush(struct ms_logq *q);
/* Drops what q holds. */
void ms_logq_release(struct ms_logq *q);

#define ms_err(...)   ms_log(MS_LOG_ERROR, __VA_ARGS__)
#define ms_warn(...)  ms_log(MS_LOG_WARN, __VA_ARGS__)
#define ms_debug(...) ms_log(MS_LOG_DEBUG, __VA_ARGS__)

#endif
