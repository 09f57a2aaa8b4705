/* The option parser every command uses, and strict number parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "parse-options.h"

/* Bytes waiting in the pipe's read end fd, read out (non-blocking). */
static size_t drained(int fd)
{
	char buf[16384];
	size_t n = 0;
	ssize_t k;

	while ((k = read(fd, buf, sizeof(buf))) > 0)
		n += (size_t)k;
	return n;
}

/*
 * stdout into a pipe, from a recording in a regular file: 8000 bytes stay
 * in the buffer (stdio's own, of 4 KiB, would have written some); from
 * stdin ("-") or a FIFO, either read as it is written, stdio's buffer is
 * kept.
 */
static void stdout_buffered_unless_live(void **state)
{
	static const char *const inputs[] = { "/proc/self/exe", "-", "/tmp/test-cli-fifo" };
	static char line[8000];
	int p[2];
	pid_t child;
	int status, out;

	(void)state;
	memset(line, 'x', sizeof(line) - 1);
	unlink(inputs[2]);
	assert_int_equal(mkfifo(inputs[2], 0600), 0);
	for (out = 0; out < 3; out++) {
		assert_int_equal(pipe2(p, O_NONBLOCK), 0);
		fflush(stdout);
		child = fork();                     /* a fresh stdout in each: setvbuf comes before any output */
		if (child == 0) {
			dup2(p[1], STDOUT_FILENO);
			cli_stdout_for_reading(inputs[out]);
			fputs(line, stdout);
			_exit((drained(p[0]) > 0) == (out > 0) ? 0 : 1);
		}
		assert_true(child > 0);
		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		close(p[0]);
		close(p[1]);
	}
	unlink(inputs[2]);
}

static void parses_in_range(void **state)
{
	uint64_t v = 0;

	assert_int_equal(cli_parse_u64("1024", 1, 4096, &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
}

static void rejects_junk_sign_and_range(void **state)
{
	uint64_t v = 7;

	assert_int_equal(cli_parse_u64("", 0, 10, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("12x", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("+1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_u64("0", 1, 100, &v), -ERANGE);
	assert_int_equal(cli_parse_u64("101", 1, 100, &v), -ERANGE);
	assert_int_equal(cli_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 7);                 /* untouched on failure */
}

/* Text times: seconds from the start with six decimals, or the clock's ns with --abs. */
static void time_text(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(cli_time_text(b, 1110520000000ULL, 1110000000000ULL, false), "0.520000");
	assert_string_equal(cli_time_text(b, 1110520000000ULL, 1110000000000ULL, true), "1110520000000");
	assert_string_equal(cli_time_text(b, 1110000000000ULL, 1110000000000ULL, false), "0.000000");
	assert_string_equal(cli_time_text(b, 999999999000ULL, 1000000000000ULL, false), "-0.000001");
}

/*
 * The seconds are put together in integers where printf's "%.6f" of the
 * double could not differ: checked against it at ties, either side of
 * them, at the carries and over a sweep up to and past the 2^50 ns bound.
 */
static void time_text_as_printf(void **state)
{
	static const uint64_t at[] = { 0, 1, 499, 500, 501, 999, 1000, 999999499, 999999500, 999999501,
				       999999999, 1000000000, 1000000500, 59999999500ULL, 123456789012ULL,
				       (1ULL << 50) - 1, 1ULL << 50, (1ULL << 50) + 501, UINT64_MAX / 2 };
	const uint64_t t0 = 1110000000000ULL;
	char b[32], want[32];
	uint64_t d, x = 88172645463325252ULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(at) / sizeof(at[0]) + 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		d = i < sizeof(at) / sizeof(at[0]) ? at[i] : i % 2 ? x % 100000000000ULL : x >> (x % 24);
		snprintf(want, sizeof(want), "%.6f", (double)d / 1e9);
		assert_string_equal(cli_time_text(b, t0 + d, t0, false), want);
	}
}

/* What the test table sets; cleared before each parse. */
static struct {
	bool b, b2;
	int count, choice, calls;
	const char *s, *cb_arg;
	uint64_t u;
} v;

static int callback(const struct cli_option *opt, const char *arg)
{
	assert_ptr_equal(opt->value, &v);
	v.calls++;
	v.cb_arg = arg;
	return arg && !strcmp(arg, "bad") ? cli_usage_error("test", "bad callback value '%s'", arg) : 0;
}

static const char *const colours[] = { "red", "green", NULL };

static const struct cli_option opts[] = {
	OPT_BOOL('b', "bool", &v.b, "a flag"),
	OPT_BOOL(0, "bool-more", &v.b2, "a flag whose name begins with another's"),
	OPT_COUNT('v', "verbose", &v.count, "say more"),
	OPT_STRING('s', "string", &v.s, "S", "a string"),
	OPT_U64('u', "number", &v.u, "N", "a number\nfrom 2 to 10", 2, 10, "invalid number", ": expected 2 to 10"),
	OPT_CHOICE(0, "colour", &v.choice, "C", "red or green", colours, "unknown colour", ": use red or green"),
	OPT_CALLBACK(0, "call", &v, "X", "handed to a callback", callback),
	OPT_MORE_HELP("call", "A-MUCH-LONGER-FORM", "another form of --call"),
	OPT_END(),
};

static const struct cli_usage usage = {
	.cmd = "test", .head = "usage: test [OPTIONS]\n\n", .tail = "\nEXAMPLES\n  test -b\n", .column = 20,
};

static char *args[32];
static int nargs;
static char out[4096], err[1024];

static void slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Parses the words of line after argv[0] "test"; what is printed lands in out and err. */
static int parse(const char *line, unsigned int flags)
{
	static char copy[256];
	FILE *fo = tmpfile(), *fe = tmpfile();
	int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO), ret;
	char *tok;

	assert_non_null(fo);
	assert_non_null(fe);
	memset(&v, 0, sizeof(v));
	snprintf(copy, sizeof(copy), "%s", line);
	nargs = 0;
	args[nargs++] = "test";
	for (tok = strtok(copy, " "); tok; tok = strtok(NULL, " "))
		args[nargs++] = tok;
	args[nargs] = NULL;
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(fo), STDOUT_FILENO);
	dup2(fileno(fe), STDERR_FILENO);
	ret = parse_options(nargs, args, opts, &usage, flags);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	slurp(fo, out, sizeof(out));
	slurp(fe, err, sizeof(err));
	return ret;
}

static void assert_usage_error(const char *line, const char *message)
{
	char want[256];

	snprintf(want, sizeof(want), "mapscope: %s\nTry 'mapscope test --help' for more information.\n", message);
	assert_int_equal(parse(line, 0), PARSE_OPT_ERROR);
	assert_string_equal(err, want);
	assert_string_equal(out, "");
}

/* line parses cleanly: every word read, nothing printed. */
static void assert_parses(const char *line)
{
	int r = parse(line, 0);

	assert_int_equal(r, nargs);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
}

static void reads_every_kind_in_both_forms(void **state)
{
	assert_parses("--bool -v -vv --string=x --number 5 --colour green --call y");
	assert_true(v.b);
	assert_false(v.b2);
	assert_int_equal(v.count, 3);
	assert_string_equal(v.s, "x");
	assert_int_equal(v.u, 5);
	assert_int_equal(v.choice, 1);
	assert_int_equal(v.calls, 1);
	assert_string_equal(v.cb_arg, "y");
	assert_parses("-bsfile -u10");      /* a letter that takes a value ends the bundle */
	assert_true(v.b);
	assert_string_equal(v.s, "file");
	assert_int_equal(v.u, 10);
	assert_parses("-s -v --string= --number=2");
	assert_string_equal(v.s, "");                           /* "-v" was -s's value, then --string= */
	assert_int_equal(v.count, 0);
	assert_int_equal(v.u, 2);
}

static void long_names_by_unambiguous_prefix(void **state)
{
	assert_parses("--str y --num 3 --bool");
	assert_string_equal(v.s, "y");
	assert_int_equal(v.u, 3);
	assert_true(v.b);                       /* an exact name wins over a longer one it begins */
	assert_false(v.b2);
	assert_parses("--bool-m");
	assert_true(v.b2);
	assert_parses("--call x");  /* the help-only line is no second --call */
	assert_int_equal(v.calls, 1);
	assert_usage_error("--boo", "unknown option '--boo'");
	assert_usage_error("--c x", "unknown option '--c'");
}

/* Every usage error names what is wrong and the word as typed. */
static const struct {
	const char *line, *message;
} usage_errors[] = {
	/* a value missing, at the end of the line or of a bundle */
	{ "--string", "option '--string' needs a value" },
	{ "-b -vs", "option '-vs' needs a value" },
	{ "--num", "option '--num' needs a value" },
	/* a bad number, or one out of range */
	{ "-u 11", "invalid number '11': expected 2 to 10" },
	{ "--number=1", "invalid number '1': expected 2 to 10" },
	{ "-u 5x", "invalid number '5x': expected 2 to 10" },
	{ "-u -3", "invalid number '-3': expected 2 to 10" },
	{ "--number=99999999999999999999", "invalid number '99999999999999999999': expected 2 to 10" },
	/* a bad choice, a callback's own message */
	{ "--colour blue", "unknown colour 'blue': use red or green" },
	{ "--call bad", "bad callback value 'bad'" },
	/* unknown options; a letter inside a bundle names the bundle, not the word before it */
	{ "--bogus", "unknown option '--bogus'" },
	{ "--bogus=3", "unknown option '--bogus=3'" },
	{ "--bool=1", "unknown option '--bool=1'" },
	{ "-x", "unknown option '-x'" },
	{ "-s x -bx", "unknown option '-bx'" },
	{ "-xb", "unknown option '-xb'" },
	{ "-b --bogus --help", "unknown option '--bogus'" },
};

static void usage_errors_named(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(usage_errors) / sizeof(usage_errors[0]); i++)
		assert_usage_error(usage_errors[i].line, usage_errors[i].message);
	assert_usage_error("-u 5 -u 11", "invalid number '11': expected 2 to 10");
	assert_int_equal(v.u, 5);                       /* a bad value leaves the one before */
}

static void arguments_and_double_dash(void **state)
{
	/* Options and arguments in any order; the first argument is the one named. */
	assert_usage_error("one -b two", "unexpected argument 'one'");
	assert_true(v.b);
	assert_usage_error("-- -b", "unexpected argument '-b'");
	assert_false(v.b);
	assert_usage_error("-", "unexpected argument '-'");
	assert_usage_error("one --bogus", "unknown option '--bogus'");
	/* A command line after the options: it starts at the first argument or after "--". */
	assert_int_equal(parse("-b cmd -v", PARSE_OPT_STOP_AT_NON_OPTION), 2);
	assert_string_equal(args[2], "cmd");
	assert_int_equal(v.count, 0);
	assert_int_equal(parse("-v -- -b x", PARSE_OPT_STOP_AT_NON_OPTION), 3);
	assert_string_equal(args[3], "-b");
	assert_false(v.b);
	assert_int_equal(parse("-v", PARSE_OPT_STOP_AT_NON_OPTION), 2);
	assert_int_equal(parse("-v --", PARSE_OPT_STOP_AT_NON_OPTION), 3);
	assert_string_equal(args[0], "test");            /* argv is left as it was */
	assert_string_equal(args[1], "-v");
}

static const char help_text[] =
"usage: test [OPTIONS]\n"
"\n"
"  -b, --bool        a flag\n"
"      --bool-more   a flag whose name begins with another's\n"
"  -v, --verbose     say more\n"
"  -s, --string S    a string\n"
"  -u, --number N    a number\n"
"                    from 2 to 10\n"
"      --colour C    red or green\n"
"      --call X      handed to a callback\n"
"      --call A-MUCH-LONGER-FORM  another form of --call\n"
"  -h, --help        show this help\n"
"\n"
"EXAMPLES\n"
"  test -b\n";

static void help_from_the_table(void **state)
{
	assert_int_equal(parse("-h", 0), PARSE_OPT_HELP);
	assert_string_equal(out, help_text);
	assert_string_equal(err, "");
	assert_int_equal(parse("-b --he --bogus", 0), PARSE_OPT_HELP);   /* at once, where it stands */
	assert_string_equal(out, help_text);
	assert_int_equal(parse("arg -vh", 0), PARSE_OPT_HELP);
	assert_int_equal(parse("--help", PARSE_OPT_STOP_AT_NON_OPTION), PARSE_OPT_HELP);
	assert_int_equal(parse("cmd --help", PARSE_OPT_STOP_AT_NON_OPTION), 1);
	assert_string_equal(out, "");
	assert_int_equal(parse_options_failed(PARSE_OPT_HELP), -1);
	assert_int_equal(parse_options_failed(PARSE_OPT_ERROR), EXIT_USAGE);
}

/* An optional value: "--opt" alone hands the callback NULL, "--opt=V" V; the next word is never taken. */
static void optional_value(void **state)
{
	static const struct cli_option optarg_opts[] = {
		OPT_CALLBACK_OPTARG("every", &v, "[=MS]", "an optional value", callback),
		OPT_END(),
	};
	char *argv1[] = { "test", "--every", "word", NULL }, *argv2[] = { "test", "--every=50", NULL };
	FILE *f = tmpfile();

	(void)state;
	memset(&v, 0, sizeof(v));
	v.cb_arg = "unset";
	assert_int_equal(parse_options(3, argv1, optarg_opts, &usage, PARSE_OPT_STOP_AT_NON_OPTION), 2);
	assert_int_equal(v.calls, 1);
	assert_null(v.cb_arg);
	memset(&v, 0, sizeof(v));
	assert_int_equal(parse_options(2, argv2, optarg_opts, &usage, 0), 2);
	assert_string_equal(v.cb_arg, "50");
	parse_options_usage(f, optarg_opts, &usage);
	slurp(f, out, sizeof(out));
	assert_non_null(strstr(out, "      --every[=MS]  "));
}

static void *malloc_on_a_thread(void *arg)
{
	(void)arg;
	return malloc(64 << 10);          /* under malloc's mmap threshold: from the thread's arena */
}

/* In a child: the heap set up for reading, then whether a thread's block lies in it. */
static int thread_block_in_heap(void)
{
	unsigned long lo, hi, at;
	char line[512];
	bool in = false;
	pthread_t t;
	void *p = NULL;
	FILE *f;

	cli_heap_for_reading();
	if (pthread_create(&t, NULL, malloc_on_a_thread, NULL) || pthread_join(t, &p) || !p)
		return 2;
	at = (unsigned long)(uintptr_t)p;
	if (!(f = fopen("/proc/self/maps", "r")))
		return 2;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && at >= lo && at < hi)
			in = true;
	fclose(f);
	return in;
}

/*
 * A reading command's threads allocate from its heap, on hugepages where
 * THP allows (one arena: a thread's arena of its own grew in 4 KiB pages,
 * a fault each), report --format pprof's namer thread included.
 */
static void threads_allocate_from_the_heap(void **state)
{
	int st;
	pid_t pid;

	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	skip();                              /* ASan's allocator has no arenas or break */
#endif
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(thread_block_in_heap());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
}

/* The flags (smaps' VmFlags line) of the mapping that holds p; "" where none does. */
static void flags_of(const void *p, char *flags, size_t size)
{
	unsigned long lo, hi, at = (unsigned long)(uintptr_t)p;
	char line[512];
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	flags[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = at >= lo && at < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			snprintf(flags, size, "%.200s", line + 8);
	fclose(f);
}

/*
 * In a child: the heap set up for reading, a block that is not small, and
 * stdout's buffer for a recording in a file. 0 where both lie in memory
 * advised for hugepages (VmFlags hg), 1 where either does not.
 */
static int used_first_is_advised(void)
{
	char flags[208];
	void *p;
	int ok = 1;

	cli_heap_for_reading();
	if (!(p = malloc(64 << 10)))
		return 2;
	memset(p, 1, 64 << 10);
	flags_of(p, flags, sizeof(flags));
	if (!strstr(flags, " hg")) {
		fprintf(stderr, "a block at %p lies in memory with flags:%s", p, flags);
		ok = 0;
	}
#ifdef __GLIBC__
	cli_stdout_for_reading("/proc/self/exe");
	flags_of(stdout->_IO_buf_base, flags, sizeof(flags));
	if (!strstr(flags, " hg")) {
		fprintf(stderr, "stdout's buffer at %p lies in memory with flags:%s", (void *)stdout->_IO_buf_base, flags);
		ok = 0;
	}
#endif
	return ok ? 0 : 1;
}

/*
 * What a reading command allocates first comes from the heap's advised
 * 2 MiB-aligned span, not its 4 KiB head below the first boundary (up to
 * 2 MiB, faulted a page at a time); stdout's buffer too.
 */
static void what_is_used_first_is_advised(void **state)
{
	int st, p[2];
	pid_t pid;

	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	skip();                              /* ASan's allocator has no arenas or break */
#endif
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK))
		skip();                      /* no THP in this kernel: nothing is advised */
	assert_int_equal(pipe(p), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(p[1], STDOUT_FILENO);   /* not a terminal: the buffer is set */
		_exit(used_first_is_advised());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(p[0]);
	close(p[1]);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_in_range),
		cmocka_unit_test(time_text),
		cmocka_unit_test(time_text_as_printf),
		cmocka_unit_test(rejects_junk_sign_and_range),
		cmocka_unit_test(reads_every_kind_in_both_forms),
		cmocka_unit_test(long_names_by_unambiguous_prefix),
		cmocka_unit_test(usage_errors_named),
		cmocka_unit_test(arguments_and_double_dash),
		cmocka_unit_test(help_from_the_table),
		cmocka_unit_test(optional_value),
		cmocka_unit_test(stdout_buffered_unless_live),
		cmocka_unit_test(threads_allocate_from_the_heap),
		cmocka_unit_test(what_is_used_first_is_advised),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
