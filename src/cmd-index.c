/*
 * mapscope index: one full replay of a recording, kept beside it as
 * FILE.msidx, from which `maps --at T` and `timeline` answer at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "output/text.h"
#include "parse-options.h"
#include "replay.h"
#include "session/index.h"
#include "session/source.h"

#include <mapscope/pdreader.h>

static const struct cli_usage usage = {
	.cmd = "index",
	.column = 21,
	.head =
"usage: mapscope index [-i FILE]\n"
"\n"
"Replays the recording once and writes FILE.msidx beside it: each\n"
"process's maps as they changed, and every change. 'mapscope maps --at'\n"
"and 'mapscope timeline' (with or without --time) then answer from it\n"
"without reading the recording; their output is the same byte for byte.\n"
"An index the recording no longer matches (rewritten, changed, or the\n"
"index damaged) is ignored with a warning, and the whole recording read.\n"
"Other commands do not use it.\n"
"\n",
	.tail =
"\n"
"A damaged or unfinished recording is not indexed.\n"
"\n"
"EXAMPLES\n"
"  mapscope index -i run.data\n"
"  mapscope maps -i run.data --pid 1234 --at +2.5\n",
};

int cmd_index(int argc, char **argv)
{
	const char *input = CLI_DEFAULT_DATA;
	const struct cli_option options[] = {
		OPT_INPUT(&input, "the recording (default " CLI_DEFAULT_DATA "; not a pipe)"),
		OPT_END(),
	};
	struct ms_indexer *x = NULL;
	struct ms_session *s = NULL;
	struct ms_session_stats st;
	char *idx = NULL;
	int ret, err;

	if ((ret = parse_options(argc, argv, options, &usage, 0)) < 0) {
		ret = parse_options_failed(ret);
		return ret < 0 ? 0 : ret;
	}
	cli_log_init(0);
	if (!strcmp(input, "-")) {
		cli_error("cannot index a pipe: a pipe is read once; record to a file");
		return EXIT_USAGE;
	}
	if ((ret = replay_open(&s, input, NULL)))
		goto out;
	session_read_ahead(s, false);     /* the builder reads the stream's statistics at each change */
	if (!(x = ms_indexer_new()) || asprintf(&idx, "%s%s", input, MS_INDEX_SUFFIX) < 0 ||
	    ms_session_add(s, &ms_indexer_analysis, x)) {
		cli_error("cannot index '%s': out of memory", MS_TEXT(input));
		ret = EXIT_RUNTIME;
		goto out;
	}
	if ((ret = replay_run(s, input)))
		goto out;
	ms_session_stats(s, &st);
	if (ms_session_corrupt(s) || ms_pdreader_unfinished(ms_session_reader(s)) || st.unknown_records ||
	    st.bad_names || st.bad_records || st.bad_samples) {
		cli_error("not indexing '%s': it is damaged or unfinished, and each command says how; "
			  "it is read whole each time", MS_TEXT(input));
		ret = EXIT_RUNTIME;
		goto out;
	}
	if ((err = ms_indexer_write(x, input, idx))) {
		cli_error("cannot write '%s': %s", MS_TEXT(idx), strerror(-err));
		ret = EXIT_RUNTIME;
	}
out:
	free(idx);
	ms_indexer_free(x);
	replay_close(s);
	return ret;
}
