/* Internal: how library code reports through the caller's log callback. */
#ifndef MS_UTIL_LOG_H
#define MS_UTIL_LOG_H

#include <mapscope/log.h>

#define MS_EXPORT __attribute__((visibility("default")))

void ms_log(enum ms_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define ms_err(...)   ms_log(MS_LOG_ERROR, __VA_ARGS__)
#define ms_warn(...)  ms_log(MS_LOG_WARN, __VA_ARGS__)
#define ms_debug(...) ms_log(MS_LOG_DEBUG, __VA_ARGS__)

#endif
