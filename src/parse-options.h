/*
 * Options as data (git's parse-options): each command describes its options
 * in one table, and one parser reads the command line from it, so that every
 * command treats a missing value, a bad number, an unknown option and --help
 * alike; the same table prints the options' part of --help.
 *
 * The command line is read as getopt_long read it before: long options by
 * any unambiguous prefix, "--opt=value" and "--opt value", bundled short
 * options ("-vv", "-ifile"), options and arguments in any order unless the
 * command takes a command line after its options, "--" ending the options.
 */
#ifndef MS_PARSE_OPTIONS_H
#define MS_PARSE_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"

enum cli_option_kind {
	CLI_OPT_END,
	CLI_OPT_BOOL,           /* sets a bool */
	CLI_OPT_COUNT,          /* adds one to an int at each use (-v -v) */
	CLI_OPT_STRING,         /* points a const char * at the value */
	CLI_OPT_U64,            /* a decimal uint64_t in [min, max] */
	CLI_OPT_CHOICE,         /* an int set to the value's index in choices */
	CLI_OPT_CALLBACK,       /* the value handed to callback */
	CLI_OPT_CALLBACK_OPTARG,/* callback, with the value after "--name=", or NULL for "--name" alone */
	CLI_OPT_MORE_HELP,      /* a help line only: another form of the option above */
	CLI_OPT_HELP,           /* -h, --help: the parser adds it to every table */
};

struct cli_option {
	enum cli_option_kind kind;
	int short_name;          /* 0: none */
	const char *long_name;   /* NULL: none */
	void *value;             /* what the kind sets, or the callback's context */
	const char *argh;        /* the value's name in the help; NULL for BOOL and COUNT */
	const char *help;        /* its lines after the first are indented to the help's column */
	uint64_t min, max;       /* U64 */
	/* U64 and CHOICE, a bad value: "<what> '<value>'<expect>", expect NULL or ": expected ...". */
	const char *what, *expect;
	const char *const *choices;      /* CHOICE: NULL-terminated */
	/* CALLBACK: 0, or EXIT_USAGE once it has said what is wrong with arg. */
	int (*callback)(const struct cli_option *opt, const char *arg);
};

#define OPT_END() { .kind = CLI_OPT_END }
#define OPT_BOOL(s, l, v, h) { .kind = CLI_OPT_BOOL, .short_name = (s), .long_name = (l), .value = (v), .help = (h) }
#define OPT_COUNT(s, l, v, h) { .kind = CLI_OPT_COUNT, .short_name = (s), .long_name = (l), .value = (v), .help = (h) }
#define OPT_STRING(s, l, v, a, h) \
	{ .kind = CLI_OPT_STRING, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), .help = (h) }
#define OPT_U64(s, l, v, a, h, lo, hi, bad, exp) \
	{ .kind = CLI_OPT_U64, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), .help = (h), \
	  .min = (lo), .max = (hi), .what = (bad), .expect = (exp) }
#define OPT_CHOICE(s, l, v, a, h, list, bad, exp) \
	{ .kind = CLI_OPT_CHOICE, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), .help = (h), \
	  .choices = (list), .what = (bad), .expect = (exp) }
#define OPT_CALLBACK(s, l, v, a, h, cb) \
	{ .kind = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), .help = (h), \
	  .callback = (cb) }
/* A long option whose value is optional: "--l" or "--l=VALUE"; a helps as "[=VALUE]". */
#define OPT_CALLBACK_OPTARG(l, v, a, h, cb) \
	{ .kind = CLI_OPT_CALLBACK_OPTARG, .long_name = (l), .value = (v), .argh = (a), .help = (h), \
	  .callback = (cb) }
#define OPT_MORE_HELP(l, a, h) { .kind = CLI_OPT_MORE_HELP, .long_name = (l), .argh = (a), .help = (h) }

/* -i, --input FILE: the recording a command reads. */
#define OPT_INPUT(v, h) OPT_STRING('i', "input", v, "FILE", h)
#define CLI_INPUT_HELP "the recording (default " CLI_DEFAULT_DATA "; '-': stdin)"

/* A process id, from 1 to CLI_PID_MAX, into a uint64_t. */
#define OPT_PID(s, l, v, h) OPT_U64(s, l, v, "PID", h, 1, CLI_PID_MAX, "invalid PID", NULL)

/* --abs: text gives times as the recording's clock has them, not as seconds from its start. */
#define OPT_ABS(v) OPT_BOOL(0, "abs", v, "times as nanoseconds on the recording's clock\n" \
			    "(CLOCK_MONOTONIC), not seconds from its start")

/* "text", "json", NULL: the first values of enum cli_format. */
extern const char *const cli_text_json[];
/* --format text|json into an int that then holds an enum cli_format. */
#define OPT_FORMAT_TEXT_JSON(v, h) \
	OPT_CHOICE(0, "format", v, "FMT", h, cli_text_json, "unknown format", ": use text or json")

/* The rest of a command's --help: the table gives the lines in between. */
struct cli_usage {
	const char *cmd;         /* "record": named in the messages */
	const char *head;        /* the usage lines and the description, before the options */
	const char *tail;        /* after the options: notes, EXIT STATUS, EXAMPLES */
	int column;              /* where the options' help starts */
};

/* Stop at the first argument that is not an option: a command line follows (record, watch). */
#define PARSE_OPT_STOP_AT_NON_OPTION 1u

#define PARSE_OPT_HELP (-1)      /* --help was printed: exit 0 */
#define PARSE_OPT_ERROR (-2)     /* a usage error was printed: exit EXIT_USAGE */

/*
 * Reads argv[1..argc) (argv[0] is the command's name) by the table opts,
 * which ends with OPT_END(); -h and --help come with every table. argv is
 * left as it is (record writes it into the recording). Returns the index
 * of the first argument after the options: with
 * PARSE_OPT_STOP_AT_NON_OPTION the command line that follows them, if
 * below argc; without it an argument that is not an option is a usage
 * error, and it returns argc. On -h or --help it prints the help to
 * stdout and returns PARSE_OPT_HELP; on bad usage it prints the error and
 * returns PARSE_OPT_ERROR.
 */
int parse_options(int argc, char **argv, const struct cli_option *opts, const struct cli_usage *usage,
		  unsigned int flags);

/* A command's whole --help: head, one line per option (and -h), tail. */
void parse_options_usage(FILE *out, const struct cli_option *opts, const struct cli_usage *usage);

/* What a parse_args() returns for a parse_options() result below 0: -1 after --help, else EXIT_USAGE. */
int parse_options_failed(int r);

#endif
