/*
 * Internal: call chains named later, as they would have been named when
 * pinned (pin.c), for allocation sites that may never be printed.
 */
#ifndef MS_SYMBOLS_PIN_H
#define MS_SYMBOLS_PIN_H

#include <stddef.h>
#include <stdint.h>

#include <mapscope/symbols.h>

struct proc_bins;

/* What naming a chain later needs: its process's instance list as of the pin. */
struct ms_pin {
	struct proc_bins *p;
	uint32_t epoch, n;
};

/*
 * Pins chain (len addresses, innermost first, perf's context markers
 * allowed) of process pid: 0 with *pin filled, where
 * ms_symbols_call_site_pinned() will name it later exactly as
 * ms_symbols_call_site() would now; -EAGAIN where it must be named now.
 */
int ms_symbols_pin(struct ms_symbols *s, uint32_t pid, const uint64_t *chain, uint32_t len, struct ms_pin *pin);

/*
 * ms_symbols_call_site() of a pinned chain, as things were at the pin; s
 * must not have been freed since. site or text may be NULL: that part is
 * not named (a text report prints sites, never chains).
 */
void ms_symbols_call_site_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid,
				 const uint64_t *chain, uint32_t len, char *site, size_t site_len, char *text,
				 size_t text_len);

/* Frames, and the binary's path, copied with their strings into one block: free() frees it. */
struct ms_frames_copy {
	const char *dso;
	int n;                       /* as ms_symbols_frames() answered: 0 or less where none */
	struct ms_frame f[];
};

/* f[0, n) (none where n is 0 or less) and dso copied: NULL on no memory. */
struct ms_frames_copy *ms_frames_copy(const struct ms_frame *f, int n, const char *dso);

/*
 * ms_symbols_frames() of ip in process pid, with the path of the binary
 * holding it in *dso where the outermost frame has no source file (else
 * NULL): the frames' number.
 */
int ms_symbols_frames_dso(struct ms_symbols *s, uint32_t pid, uint64_t ip, struct ms_frame *out, int max,
			  const char **dso);

/* ms_symbols_frames_dso() of ip (pinned as a chain of it alone), as things were at the pin. */
int ms_symbols_frames_pinned(struct ms_symbols *s, const struct ms_pin *pin, uint32_t pid, uint64_t ip,
			     struct ms_frame *out, int max, const char **dso);

#endif
