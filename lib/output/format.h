/*
 * Internal: fields every output format writes the same way, text, CSV,
 * JSON or the HTML page: a region's permissions, what a change did, the
 * code at an address, why samples were set aside, the file's sample count.
 */
#ifndef MS_OUTPUT_FORMAT_H
#define MS_OUTPUT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mapscope/aspace.h>
#include <mapscope/session.h>
#include <mapscope/symbols.h>

/* "rw-p" from PROT_* and MAP_SHARED. */
void ms_format_perms(uint32_t prot, uint32_t flags, char out[5]);

/* v in decimal at out, printf's "%" PRIu64 with no NUL (20 bytes at most): the end. */
char *ms_format_dec(char *out, uint64_t v);

/* A size for people: "512 B", "4.0 KiB", "64.0 MiB", "1.3 TiB" (powers of 1024). */
void ms_format_size(uint64_t bytes, char out[16]);

/*
 * An address range as every text output writes it: "0x1000-0x3000", low
 * to high whichever end comes first (a brk shrink's range is given from
 * the old end down to the new one), in hex with 0x.
 */
void ms_format_range(uint64_t a, uint64_t b, char out[40]);

/* "rw-" for a protection; for madvise, the advice; for lock, the state; "" where none applies. */
const char *ms_format_change_what(const struct ms_change *c, char buf[16]);

/* What the timeline's line says of change c: ms_format_change_what(), or "shrink" for a brk that shrinks. */
const char *ms_format_change_word(const struct ms_change *c, char buf[16]);

/*
 * The code at ip in process pid, as unmapped and the HTML page name it:
 * "func+0x1a" (the binary and offset, or the raw address, where there is
 * no name) into buf, and its source place (*file NULL, *line 0 where
 * unknown; *file is the symbols' and lives as long as they do). syms may be NULL.
 */
void ms_format_code(struct ms_symbols *syms, uint32_t pid, uint64_t ip, char *buf, size_t len,
		    const char **file, int *line);

/* "N at address 0 (...), M at kernel addresses": the samples not charged, and why; "" where none. */
void ms_format_set_aside(const struct ms_session_stats *st, char *out, size_t len);

/*
 * What the recording lost, in one line that every output carries in its
 * own way (a comment line in text and CSV, a "losses" key in JSON, a text
 * element in SVG, a comment in pprof), so that an output read later, away
 * from the warnings on the terminal, says it is incomplete: records the
 * kernel lost, records skipped as damaged or of unknown types, names cut
 * short, the data cut short by damage, an unfinished recording. "" and
 * false where nothing was lost.
 */
bool ms_format_losses(const struct ms_session *s, char *out, size_t len);

/* Every sample record of the file, of any event (what perf script counts). */
static inline uint64_t ms_format_file_samples(const struct ms_session_stats *st)
{
	return st->samples + st->other_samples + st->zero_addr + st->kernel_addr + st->unknown_id +
	       st->bad_samples;
}

#endif
