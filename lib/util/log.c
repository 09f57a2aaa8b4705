#include <stdarg.h>
#include <stdio.h>

#include "util/log.h"

static ms_log_fn log_fn;
static void *log_ctx;

MS_EXPORT void ms_log_set(ms_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

void ms_log(enum ms_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}
