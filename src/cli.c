#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mapscope/log.h>

#include "cli.h"
#include "kernel/doctor.h"
#include "output/format.h"
#include "output/text.h"

/* A message may quote a name from a recording: its control bytes are escaped, one message a line. */
static void __attribute__((format(printf, 2, 0))) vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = NULL;

	fputs(prefix, stderr);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	ms_text_str(stderr, msg ? msg : "(message lost: out of memory)");
	free(msg);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("mapscope: ", fmt, ap);
	va_end(ap);
}

void cli_hint(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("hint: ", fmt, ap);
	va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("mapscope: ", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'mapscope %s%s--help' for more information.\n",
		cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')       /* no sign, no space: strtoull takes both */
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/*
 * printf's "%.6f" of d / 1e9 from d nanoseconds, in integers, where it
 * cannot differ: d's microseconds rounded to nearest. The double d / 1e9
 * lies within 2^-33 s of the true value below 2^50 ns (13 days), so away
 * from a tie (d % 1000 == 500, which a double may put either side) it
 * rounds as the true value does. false where printf must say it.
 */
static bool seconds_text(char buf[32], uint64_t d)
{
	uint64_t us;
	int n, k;

	if (d >= 1ULL << 50 || d % 1000 == 500)
		return false;
	us = d / 1000 + (d % 1000 > 500);
	k = (int)(ms_format_dec(buf, us / 1000000) - buf);
	buf[k++] = '.';
	for (n = 5, us %= 1000000; n >= 0; n--, us /= 10)
		buf[k + n] = (char)('0' + us % 10);
	buf[k + 6] = '\0';
	return true;
}

const char *cli_time_text(char buf[32], uint64_t t, uint64_t t0, bool abs)
{
	if (abs)
		snprintf(buf, 32, "%" PRIu64, t);
	else if (t < t0 || !seconds_text(buf, t - t0))
		snprintf(buf, 32, "%.6f", t >= t0 ? (double)(t - t0) / 1e9 : -((double)(t0 - t) / 1e9));
	return buf;
}

static int verbose_level;

static void log_cb(enum ms_log_level level, const char *msg, void *ctx)
{
	/* The library's messages quote names from the recording: escaped here, where they reach the terminal. */
	if (level == MS_LOG_ERROR)
		fprintf(stderr, "mapscope: %s\n", MS_TEXT(msg));
	else if (level == MS_LOG_WARN)
		fprintf(stderr, "mapscope: warning: %s\n", MS_TEXT(msg));
	else if (verbose_level >= (level == MS_LOG_INFO ? 1 : 2))
		fprintf(stderr, "mapscope: %s\n", MS_TEXT(msg));
}

void cli_log_init(int verbose)
{
	verbose_level = verbose;
	ms_log_set(log_cb, NULL);
}

void cli_log_quiet(bool quiet)
{
	ms_log_set(quiet ? NULL : log_cb, NULL);
}

void cli_hint_privileges(int err)
{
	struct ms_doctor d;
	size_t i;

	if (err != EACCES && err != EPERM)
		return;
	ms_doctor_probe(&d);
	for (i = 0; i < d.n; i++)
		if (d.checks[i].state == MS_CHECK_NO && d.checks[i].fix[0]) {
			cli_hint("%s: %s", d.checks[i].what, d.checks[i].fix);
			return;
		}
	cli_hint("'mapscope doctor' says what this user may record here (mode: %s)", ms_record_mode_name(d.mode));
}

/*
 * A reading command's heap, one page fault a 4 KiB page: 1,400-3,000
 * faults on a report of a chromium or `make -j2` recording, most of the
 * kernel's share of its time (mapscope recording its own report). So the
 * heap's first growth takes 16 MiB more than asked (M_TOP_PAD: address
 * space; untouched pages cost nothing), its 2 MiB-aligned inside is
 * advised for hugepages (THP in madvise mode, as on most distributions),
 * and each 2 MiB there is one fault: report --children 0 ran 7-8% faster.
 *
 * The span must stay the heap's: malloc trims free memory at the heap's
 * top, and the break grown again is a VMA of its own, not advised. Kept by
 * the pad itself (M_TOP_PAD left at 16 MiB), every trim kept 16 MiB of
 * touched memory: hugepages of 500,000 mappings took 8 MB more at its
 * peak. So the span is held by a plug instead, a small block put after
 * it and never freed, and the pad goes back to malloc's own: the span
 * below the plug is free memory in the middle of the heap, used first
 * and never trimmed; above it the heap grows and is trimmed as before.
 * Where THP is off, nothing is advised and the span is held all the same.
 * The span's unaligned head is held too (heap_hold()), so that what is
 * used first is what is advised.
 */
static void *heap_plug, *heap_head;

bool cli_exit_frees;

/*
 * Takes the free span [from, brk1) of the heap whole, puts heap_plug after
 * it, and frees the span. Its head, [from, lo) below the first 2 MiB
 * boundary, is 4 KiB pages: it stays taken, never touched (address space
 * only), so that malloc carves from lo up, where the hugepages are. Left
 * free, up to 2 MiB of it went first, a fault a page: 257 of timeline's
 * 470 faults on chromium's page load.
 */
static bool heap_hold(char *from, char *lo, char *brk1)
{
	const size_t plug = 64u << 10;
	size_t len = (size_t)(brk1 - from);
	/* A chunk of lo - from bytes, its header 16 below from: the next block's memory starts at lo. */
	size_t head = lo > from + 64 && lo < brk1 ? (size_t)(lo - from) - 16 : 0;
	void *body;

	if (len < 4 * plug + head || !mallopt(M_MMAP_THRESHOLD, 32 << 20))
		return false;
	heap_head = head ? malloc(head) : NULL;
	body = malloc(len - 2 * plug - (head ? head + 16 : 0));   /* from the top: the bins hold nothing that large */
	heap_plug = body ? malloc(plug) : NULL;
	mallopt(M_MMAP_THRESHOLD, 128 << 10);   /* malloc's own */
	if (heap_head != (void *)from) {         /* not where it was meant to be: free memory like the rest */
		free(heap_head);
		heap_head = NULL;
	}
	if (body && heap_plug && (char *)heap_plug > (char *)body && (char *)heap_plug < brk1) {
		free(body);
		return true;
	}
	free(heap_plug);
	heap_plug = NULL;
	free(body);
	return false;
}

/*
 * A timeline or a report of a real recording is megabytes: stdio's
 * buffer, one write a 4 KiB, made ~300 calls for chromium's page load.
 * glibc sizes a buffer it allocates itself by the file's st_blksize,
 * whatever size setvbuf asks for with no buffer given: so this one. It
 * comes from the heap (below malloc's mmap threshold for the call), on
 * its hugepages after cli_heap_for_reading(): in .bss it was 64 pages
 * faulted one at a time as a long output first filled it.
 */
void cli_stdout_for_reading(const char *input)
{
	static char *buf;
	const size_t size = 256 << 10;
	struct stat st;
	int raised;

	if (isatty(STDOUT_FILENO) || !strcmp(input, "-") || stat(input, &st) || !S_ISREG(st.st_mode))
		return;
	if (!buf) {
		raised = mallopt(M_MMAP_THRESHOLD, 32 << 20);   /* not under ASan, whose malloc has none */
		buf = malloc(size);
		if (raised)
			mallopt(M_MMAP_THRESHOLD, 128 << 10);   /* malloc's own */
	}
	if (buf)
		setvbuf(stdout, buf, _IOFBF, size);
}

void cli_heap_for_reading(void)
{
	const uintptr_t huge = 2u << 20;
	void *first[4] = { 0 };
	char *brk0 = sbrk(0), *brk1;
	uintptr_t lo, hi, past;
	int i;

	/*
	 * One arena for every thread: the stream's thread and the namer's took
	 * arenas of their own, 4 KiB pages grown by mprotect and faulted one
	 * at a time (~460 faults, 10-12 us each on the PVM guest measured
	 * here, in a report of chromium's page load); they now allocate from
	 * this heap, its hugepages faulted once. Small blocks come from each
	 * thread's tcache, without the arena's lock.
	 */
	mallopt(M_ARENA_MAX, 1);
	if (brk0 == (void *)-1 || !mallopt(M_TOP_PAD, 16 << 20))
		return;
	/* Blocks under malloc's mmap threshold, until the heap has grown once. */
	for (i = 0; i < 4 && (char *)sbrk(0) == brk0; i++)
		first[i] = malloc(96 << 10);
	/* malloc wrote the top's header past the last of them: the advised part starts past that page. */
	past = i && first[i - 1] ? (uintptr_t)first[i - 1] + (96 << 10) + 16 : 0;
	for (i = 0; i < 4; i++)
		free(first[i]);
	brk1 = sbrk(0);                          /* after the frees: a trim may have lowered it */
	mallopt(M_TOP_PAD, 128 << 10);          /* malloc's own: nothing more kept at the top */
	/*
	 * Only what the break grew by: where malloc took its memory elsewhere
	 * (no room to grow the break, or another allocator, as under ASan), the
	 * break has not moved and nothing is advised.
	 */
	if (brk1 == (void *)-1 || brk1 <= brk0 || !first[0] || !past)
		return;
	lo = (past + 4096 + huge - 1) & ~(huge - 1);     /* a head of a page at least */
	hi = (uintptr_t)brk1 & ~(huge - 1);
	/*
	 * Advised before heap_hold() writes malloc's links at lo and by the
	 * plug: a 2 MiB stretch with a page touched in it before stays 4 KiB
	 * pages. A hint: where it fails, 4 KiB pages.
	 */
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	heap_hold((char *)first[0], (char *)lo, brk1);
}
