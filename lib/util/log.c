#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/log.h"

static ms_log_fn log_fn;
static void *log_ctx;
static __thread struct ms_logq *deferred;    /* where this thread's messages wait, or NULL */

MS_EXPORT void ms_log_set(ms_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

/* Kept for later, in order; a message there is no memory for is lost, as one the callback drops. */
static void keep(struct ms_logq *q, enum ms_log_level level, const char *msg)
{
	char *copy = strdup(msg);

	if (!copy || MS_GROW(q->v, q->n + 1, q->cap, 4, SIZE_MAX, false)) {
		free(copy);
		return;
	}
	q->v[q->n].level = level;
	q->v[q->n++].msg = copy;
}

void ms_log(enum ms_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_fn && !deferred)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (deferred)
		keep(deferred, level, msg);
	else
		log_fn(level, msg, log_ctx);
}

void ms_log_defer(struct ms_logq *q)
{
	deferred = q;
}

struct ms_logq *ms_log_deferred(void)
{
	return deferred;
}

void ms_logq_flush(struct ms_logq *q)
{
	size_t i;

	for (i = 0; i < q->n; i++) {
		if (deferred && deferred != q)
			keep(deferred, q->v[i].level, q->v[i].msg);
		else if (log_fn)
			log_fn(q->v[i].level, q->v[i].msg, log_ctx);
		free(q->v[i].msg);
	}
	q->n = 0;
}

void ms_logq_release(struct ms_logq *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		free(q->v[i].msg);
	free(q->v);
	q->v = NULL;
	q->n = q->cap = 0;
}
