/*
 * One parser for every command's options (see parse-options.h). It reads
 * a command line as the getopt_long loops it replaced did, with their
 * messages, so that no command's behaviour changed with it; where getopt
 * named the wrong argument (an unknown letter inside "-xv"), it names the
 * argument that holds it.
 */
#include <stdbool.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"

const char *const cli_text_json[] = { "text", "json", NULL };

static const struct cli_option help_option = {
	.kind = CLI_OPT_HELP, .short_name = 'h', .long_name = "help", .help = "show this help",
};

struct parser {
	int argc;
	char **argv;
	int i;                                  /* the next argument to read */
	const struct cli_option *opts;
	const struct cli_usage *usage;
};

/* The table's entries, then -h: first_option(), next_option() until NULL. */
static const struct cli_option *first_option(const struct cli_option *opts)
{
	return opts->kind == CLI_OPT_END ? &help_option : opts;
}

static const struct cli_option *next_option(const struct cli_option *o)
{
	if (o == &help_option)
		return NULL;
	return o[1].kind == CLI_OPT_END ? &help_option : o + 1;
}

static bool takes_value(const struct cli_option *o)
{
	return o->kind == CLI_OPT_STRING || o->kind == CLI_OPT_U64 || o->kind == CLI_OPT_CHOICE ||
	       o->kind == CLI_OPT_CALLBACK;
}

/* "<what> '<arg>'<expect>": every message names the argument as it was typed. */
static int usage_error(const struct parser *p, const char *what, const char *arg, const char *expect)
{
	cli_usage_error(p->usage->cmd, "%s '%s'%s", what, arg, expect ? expect : "");
	return PARSE_OPT_ERROR;
}

static int set_u64(const struct parser *p, const struct cli_option *o, const char *arg)
{
	uint64_t v;

	if (cli_parse_u64(arg, o->min, o->max, &v))
		return usage_error(p, o->what, arg, o->expect);
	*(uint64_t *)o->value = v;
	return 0;
}

static int set_choice(const struct parser *p, const struct cli_option *o, const char *arg)
{
	int i;

	for (i = 0; o->choices[i]; i++)
		if (!strcmp(o->choices[i], arg)) {
			*(int *)o->value = i;
			return 0;
		}
	return usage_error(p, o->what, arg, o->expect);
}

/* Does what option o says with its value arg (NULL if it takes none). */
static int set_value(const struct parser *p, const struct cli_option *o, const char *arg)
{
	switch (o->kind) {
	case CLI_OPT_HELP:
		parse_options_usage(stdout, p->opts, p->usage);
		return PARSE_OPT_HELP;
	case CLI_OPT_BOOL:
		*(bool *)o->value = true;
		return 0;
	case CLI_OPT_COUNT:
		(*(int *)o->value)++;
		return 0;
	case CLI_OPT_STRING:
		*(const char **)o->value = arg;
		return 0;
	case CLI_OPT_U64:
		return set_u64(p, o, arg);
	case CLI_OPT_CHOICE:
		return set_choice(p, o, arg);
	case CLI_OPT_CALLBACK:
	case CLI_OPT_CALLBACK_OPTARG:
		return o->callback(o, arg) ? PARSE_OPT_ERROR : 0;
	default:
		return 0;
	}
}

/*
 * The option a long name stands for: the one it names exactly, else the
 * only one it begins (getopt_long's abbreviations); NULL if none or several.
 */
static const struct cli_option *find_long(const struct cli_option *opts, const char *name, size_t len)
{
	const struct cli_option *o, *found = NULL;
	int matches = 0;

	for (o = first_option(opts); o; o = next_option(o)) {
		if (!o->long_name || o->kind == CLI_OPT_MORE_HELP || strncmp(o->long_name, name, len))
			continue;
		if (strlen(o->long_name) == len)
			return o;
		found = o;
		matches++;
	}
	return matches == 1 ? found : NULL;
}

static const struct cli_option *find_short(const struct cli_option *opts, char c)
{
	const struct cli_option *o;

	for (o = first_option(opts); o; o = next_option(o))
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* "--name", "--name=value" or "--name value". */
static int read_long(struct parser *p)
{
	const char *arg = p->argv[p->i++], *name = arg + 2, *eq = strchr(name, '=');
	const struct cli_option *o = find_long(p->opts, name, eq ? (size_t)(eq - name) : strlen(name));

	if (!o || (eq && !takes_value(o) && o->kind != CLI_OPT_CALLBACK_OPTARG))
		return usage_error(p, "unknown option", arg, NULL);
	if (eq)
		return set_value(p, o, eq + 1);
	if (!takes_value(o))
		return set_value(p, o, NULL);
	if (p->i == p->argc)
		return usage_error(p, "option", arg, " needs a value");
	return set_value(p, o, p->argv[p->i++]);
}

/* "-v", "-vv", "-ifile", "-i file": letters until one that takes a value. */
static int read_short(struct parser *p)
{
	const char *arg = p->argv[p->i++], *c;
	const struct cli_option *o;
	int ret;

	for (c = arg + 1; *c; c++) {
		o = find_short(p->opts, *c);
		if (!o)
			return usage_error(p, "unknown option", arg, NULL);
		if (!takes_value(o)) {
			if ((ret = set_value(p, o, NULL)))
				return ret;
			continue;
		}
		if (c[1])
			return set_value(p, o, c + 1);
		if (p->i == p->argc)
			return usage_error(p, "option", arg, " needs a value");
		return set_value(p, o, p->argv[p->i++]);
	}
	return 0;
}

int parse_options(int argc, char **argv, const struct cli_option *opts, const struct cli_usage *usage,
		  unsigned int flags)
{
	struct parser p = { .argc = argc, .argv = argv, .i = 1, .opts = opts, .usage = usage };
	const char *extra = NULL, *a;
	int ret;

	while (p.i < argc) {
		a = argv[p.i];
		if (!strcmp(a, "--")) {
			p.i++;
			break;
		}
		if (a[0] != '-' || !a[1]) {             /* not an option: "-" is a file name */
			if (flags & PARSE_OPT_STOP_AT_NON_OPTION)
				break;
			if (!extra)
				extra = a;
			p.i++;
			continue;
		}
		if ((ret = a[1] == '-' ? read_long(&p) : read_short(&p)))
			return ret;
	}
	if (!(flags & PARSE_OPT_STOP_AT_NON_OPTION)) {
		if (!extra && p.i < argc)
			extra = argv[p.i];
		if (extra)
			return usage_error(&p, "unexpected argument", extra, NULL);
	}
	return p.i;
}

int parse_options_failed(int r)
{
	return r == PARSE_OPT_HELP ? -1 : EXIT_USAGE;
}

/*
 * "  -i, --input FILE   the recording": the help at the column, or two
 * spaces on where the option is wider; its further lines at the column.
 */
static void print_option(FILE *out, const struct cli_option *o, int column)
{
	const char *h, *nl;
	int n;

	if (o->short_name && o->long_name)
		n = fprintf(out, "  -%c, --%s", o->short_name, o->long_name);
	else if (o->short_name)
		n = fprintf(out, "  -%c", o->short_name);
	else
		n = fprintf(out, "      --%s", o->long_name);
	if (o->argh)
		n += fprintf(out, o->kind == CLI_OPT_CALLBACK_OPTARG ? "%s" : " %s", o->argh);
	fprintf(out, "%*s", n <= column - 2 ? column - n : 2, "");
	for (h = o->help; (nl = strchr(h, '\n')); h = nl + 1)
		fprintf(out, "%.*s\n%*s", (int)(nl - h), h, column, "");
	fprintf(out, "%s\n", h);
}

void parse_options_usage(FILE *out, const struct cli_option *opts, const struct cli_usage *usage)
{
	const struct cli_option *o;

	fputs(usage->head, out);
	for (o = first_option(opts); o; o = next_option(o))
		print_option(out, o, usage->column);
	fputs(usage->tail, out);
}
