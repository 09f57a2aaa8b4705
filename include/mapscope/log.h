/* libmapscope never prints: it reports through a callback the caller installs. */
#ifndef MAPSCOPE_LOG_H
#define MAPSCOPE_LOG_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ms_log_level {
	MS_LOG_ERROR,
	MS_LOG_WARN,
	MS_LOG_INFO,
	MS_LOG_DEBUG,
};

/* msg is valid only during the call; it has no trailing newline. */
typedef void (*ms_log_fn)(enum ms_log_level level, const char *msg, void *ctx);

/* Installs fn for the whole process (NULL silences the library). */
void ms_log_set(ms_log_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
