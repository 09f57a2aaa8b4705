/*
 * The fields every format writes alike, in one place, so that the table,
 * the CSV, the JSON and the HTML page never disagree about them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <mapscope/pdreader.h>

#include "output/format.h"

void ms_format_perms(uint32_t prot, uint32_t flags, char out[5])
{
	out[0] = prot & PROT_READ ? 'r' : '-';
	out[1] = prot & PROT_WRITE ? 'w' : '-';
	out[2] = prot & PROT_EXEC ? 'x' : '-';
	out[3] = flags & MAP_SHARED ? 's' : 'p';
	out[4] = '\0';
}

const char *ms_format_change_what(const struct ms_change *c, char buf[16])
{
	const char *a;

	if (c->lock >= 0)
		return !c->lock ? "unlocked" : c->lock & MS_LOCK_ONFAULT ? "onfault" : "locked";

	if (c->prot >= 0) {
		buf[0] = c->prot & PROT_READ ? 'r' : '-';
		buf[1] = c->prot & PROT_WRITE ? 'w' : '-';
		buf[2] = c->prot & PROT_EXEC ? 'x' : '-';
		buf[3] = '\0';
		return buf;
	}
	if (c->advice < 0)
		return "";
	a = ms_event_advice_name((uint32_t)c->advice);
	if (!a) {
		snprintf(buf, 16, "advice-%d", c->advice);
		return buf;
	}
	return a;
}

const char *ms_format_change_word(const struct ms_change *c, char buf[16])
{
	return c->op == MS_OP_BRK && c->end < c->start ? "shrink" : ms_format_change_what(c, buf);
}

void ms_format_code(struct ms_symbols *syms, uint32_t pid, uint64_t ip, char *buf, size_t len,
		    const char **file, int *line)
{
	struct ms_sym sym = { 0 };
	int err = syms ? ms_symbols_resolve(syms, pid, ip, true, &sym) : -ENOENT;

	ms_sym_format(&sym, err, ip, buf, len);
	*file = err ? NULL : sym.file;
	*line = err ? 0 : sym.line;
}

void ms_format_set_aside(const struct ms_session_stats *st, char *out, size_t len)
{
	size_t used = 0;

	out[0] = 0;
#define PART(n, what) \
	if ((n) && used < len) \
		used += (size_t)snprintf(out + used, len - used, "%s%llu %s", used ? ", " : "", \
					 (unsigned long long)(n), what)
	PART(st->zero_addr, "at address 0 (no data address: perf -d writes 0 for events without one)");
	PART(st->kernel_addr, "at kernel addresses");
	PART(st->unknown_id, "of no event the file describes");
	PART(st->bad_samples, "that do not fit their records");
	PART(st->bad_records, "damaged records of other kinds (not samples; see the warnings)");
#undef PART
}

/* Seconds from the start of the recording. */
static double rel_s(const struct ms_session_stats *st, uint64_t t)
{
	return (double)(t > st->first_time ? t - st->first_time : 0) / 1e9;
}

/* Appends "; " and one part of the losses line to out[0, len), at *used. */
static void __attribute__((format(printf, 4, 5))) add_part(char *out, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used && *used < len)
		*used += (size_t)snprintf(out + *used, len - *used, "; ");
	if (*used >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(out + *used, len - *used, fmt, ap);
	va_end(ap);
	*used += n > 0 ? (size_t)n : 0;
}

bool ms_format_losses(const struct ms_session *s, char *out, size_t len)
{
	struct ms_session_stats st;
	size_t used = 0;

	ms_session_stats(s, &st);
	out[0] = 0;
	if (st.lost)
		add_part(out, len, &used, "%llu records lost by the kernel, from %.6f s to %.6f s",
			 (unsigned long long)st.lost, rel_s(&st, st.lost_first), rel_s(&st, st.lost_last));
	if (st.unknown_records)
		add_part(out, len, &used, "%llu records of unknown or unasked-for types skipped",
			 (unsigned long long)st.unknown_records);
	if (st.bad_records)
		add_part(out, len, &used, "%llu damaged records skipped", (unsigned long long)st.bad_records);
	if (st.bad_samples)
		add_part(out, len, &used, "%llu samples that do not fit their records skipped",
			 (unsigned long long)st.bad_samples);
	if (st.bad_names)
		add_part(out, len, &used, "%llu names with no end cut short", (unsigned long long)st.bad_names);
	if (ms_session_corrupt(s))
		add_part(out, len, &used, "the data is damaged or cut short: the records after the damage are missing");
	if (ms_pdreader_unfinished(ms_session_reader(s)))
		add_part(out, len, &used, "the recording was not finished: the records after its last flush are missing");
	if (used && used < len)
		snprintf(out + used, len - used, "; attribution is uncertain");
	return used > 0;
}

char *ms_format_dec(char *out, uint64_t v)
{
	size_t n = 1;
	uint64_t t;
	char *p;

	for (t = v; t >= 10; t /= 10)       /* the digits counted, then written from the last: no copy */
		n++;
	for (p = out + n; p > out; v /= 10)
		*--p = (char)('0' + v % 10);
	return out + n;
}

/*
 * printf's "%.1f" of a size over 1024^(u + 1), from the exact value of the
 * double it would be given: tenths rounded to nearest, a tie to even, as
 * glibc rounds. A report prints thousands; the format took 2,000
 * instructions each.
 */
void ms_format_size(uint64_t bytes, char out[16])
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned __int128 tenths, rem, half;
	unsigned shift;
	int u = -1;
	char *p;

	if (bytes < 1024) {
		*ms_format_dec(out, bytes) = '\0';
		strcat(out, " B");
		return;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	/* 1023.96 KiB would print as "1024.0 KiB": the next unit says it in fewer digits. */
	if (v >= 1023.95 && u < 5) {
		v /= 1024;
		u++;
	}
	shift = 10 * (unsigned)(u + 1);
	tenths = (unsigned __int128)(double)bytes * 10;      /* the double's value: 2^64 for UINT64_MAX */
	rem = tenths & (((unsigned __int128)1 << shift) - 1);
	half = (unsigned __int128)1 << (shift - 1);
	tenths >>= shift;
	tenths += rem > half || (rem == half && (tenths & 1));
	p = ms_format_dec(out, (uint64_t)(tenths / 10));
	*p++ = '.';
	*p++ = (char)('0' + (int)(tenths % 10));
	*p++ = ' ';
	memcpy(p, units[u], 4);
}

/* "0x" and v in lower-case hex, printf's "0x%" PRIx64, at out (18 bytes at most): the end. */
static char *put_hex(char *out, uint64_t v)
{
	char tmp[16];
	int n = 0;

	*out++ = '0';
	*out++ = 'x';
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*out++ = tmp[--n];
	return out;
}

/* By hand, not snprintf: a timeline prints one per change, and printf's parsing was most of the line's cost. */
void ms_format_range(uint64_t a, uint64_t b, char out[40])
{
	char *at = put_hex(out, a < b ? a : b);

	*at++ = '-';
	*put_hex(at, a < b ? b : a) = '\0';
}
