/*
 * ms_pdwriter: writes perf.data, in file mode (seekable, header rewritten at
 * the end) or pipe mode (a stream, headers as records first), so that perf
 * script and perf report read what mapscope records.
 */
#ifndef MAPSCOPE_PDWRITER_H
#define MAPSCOPE_PDWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ms_pdwriter;

struct ms_pdwriter_evsel {
	const struct perf_event_attr *attr;
	const char *name;            /* "page-faults", "syscalls:sys_enter_munmap" */
	const uint64_t *ids;         /* the kernel's ids of this event's fds */
	size_t nr_ids;
};

struct ms_pdwriter_opts {
	const struct ms_pdwriter_evsel *evsels;
	size_t nr_evsels;
	const void *tracing_data;    /* TRACING_DATA blob, or NULL */
	size_t tracing_data_len;
	int argc;                    /* the command line, for the CMDLINE feature */
	char *const *argv;
	int clockid;                 /* clock of the records' timestamps */
	bool pipe;                   /* pipe mode: no seeking, headers as records */
	/*
	 * zstd level (1 to 22) of the data, written as perf record -z writes
	 * it (PERF_RECORD_COMPRESSED records, the COMPRESSED feature); 0: the
	 * records as they are. The header and feature sections stay plain.
	 */
	int compress_level;
};

struct ms_pdwriter_stats {
	uint64_t records;
	uint64_t samples;            /* PERF_RECORD_SAMPLE records */
	uint64_t data_samples;       /* of them, of events with a data address (not tracepoints) */
	uint64_t lost;               /* records the kernel reported lost */
	uint64_t bytes;              /* written to the file so far, headers included */
	uint64_t data_bytes;         /* the records given, as they are before compression */
};

/*
 * Starts a file on fd, which stays the caller's (it is not closed). Every
 * pointer in opts is read during the call only. NULL with errno set. File
 * mode writes the file in place from its start (pwrite), whatever fd's
 * offset, which it leaves as it is: EINVAL for an fd opened O_APPEND.
 */
struct ms_pdwriter *ms_pdwriter_new(int fd, const struct ms_pdwriter_opts *opts);

/* Appends one record (rec->size bytes). 0 or a negative errno. */
int ms_pdwriter_write(struct ms_pdwriter *w, const struct perf_event_header *rec);

/* Appends a FINISHED_ROUND record: what came before is safe to sort. */
int ms_pdwriter_finish_round(struct ms_pdwriter *w);

/*
 * Adds path's build-id to the BUILD_ID section (file mode), so a later
 * report can tell a rebuilt binary from the one recorded. 0 or -ENOMEM.
 */
int ms_pdwriter_add_build_id(struct ms_pdwriter *w, const char *path, const unsigned char *id, size_t len);

/*
 * Writes what is buffered and, in file mode, the data size into the header
 * on disk, so that the file reads whole up to here if the recorder dies or
 * the disk fills later. 0 or a negative errno (ENOSPC where the disk is full:
 * the file then reads up to the last flush that succeeded).
 */
int ms_pdwriter_flush(struct ms_pdwriter *w);

/*
 * Flushes; in file mode also writes the feature sections and the final
 * header, so the file is complete. 0 or a negative errno.
 */
int ms_pdwriter_close(struct ms_pdwriter *w);

/* The counts so far; after a failed write in file mode, those of the file as it was cut back to. */
void ms_pdwriter_stats(const struct ms_pdwriter *w, struct ms_pdwriter_stats *st);

/* Frees w without closing its fd. Accepts NULL. */
void ms_pdwriter_free(struct ms_pdwriter *w);

#ifdef __cplusplus
}
#endif
#endif
