/*
 * ms_pdreader: reads perf.data written by mapscope or by perf, in file mode
 * or pipe mode (from a pipe, or saved to a file), and hands out its data
 * records in file order. Every size, offset and count taken from the file
 * is checked against what remains before it is used.
 */
#ifndef MAPSCOPE_PDREADER_H
#define MAPSCOPE_PDREADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_pdreader;

/*
 * Opens path ("-": standard input) and reads its headers. NULL with errno
 * set on failure, the cause logged with the byte offset where it applies
 * (EBADMSG: not perf.data, or a corrupt header).
 */
struct ms_pdreader *ms_pdreader_open(const char *path);

/*
 * The next data record: 1 with *rec set, 0 at the end, or -EBADMSG when
 * the data is corrupt or truncated (logged with the byte offset; the
 * records before it were good). Header records of pipe mode are consumed
 * here. *rec stays valid until the next call (records are read in blocks
 * into a buffer that is used again).
 */
int ms_pdreader_next(struct ms_pdreader *r, const struct perf_event_header **rec);

/* Byte offset of the record last returned. */
uint64_t ms_pdreader_offset(const struct ms_pdreader *r);
/*
 * A recording its recorder never closed (killed, or stopped by a full
 * disk), where the file can tell: a mapscope file without the SAMPLE_TIME
 * it adds at close, a mapscope pipe that ends without it (known at the
 * end of the data), or a file with no feature sections, which is read to
 * its end (a record cut short there is left out, with a warning).
 */
bool ms_pdreader_unfinished(const struct ms_pdreader *r);

size_t ms_pdreader_nr_evsels(const struct ms_pdreader *r);
/* attr as the file gave it, zero-extended to this build's struct size. */
const struct perf_event_attr *ms_pdreader_attr(const struct ms_pdreader *r, size_t i);
/* The name from EVENT_DESC, or NULL. */
const char *ms_pdreader_evsel_name(const struct ms_pdreader *r, size_t i);
/* The evsel whose fds had this id, or -1. */
int ms_pdreader_evsel_by_id(const struct ms_pdreader *r, uint64_t id);
/* The i-th entry of the BUILD_ID section: false past the last. Pointers live as long as r. */
bool ms_pdreader_build_id(const struct ms_pdreader *r, size_t i, const char **path,
			  const unsigned char **id, size_t *len);

/* Accepts NULL. */
void ms_pdreader_free(struct ms_pdreader *r);

#ifdef __cplusplus
}
#endif
#endif
