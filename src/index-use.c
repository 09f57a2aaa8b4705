#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "index-use.h"
#include "output/text.h"
#include "session/index.h"

struct ms_index *index_use(const char *path)
{
	struct ms_index *ix = NULL;
	const char *why;
	char *idx;
	int err;

	if (!strcmp(path, "-") || asprintf(&idx, "%s%s", path, MS_INDEX_SUFFIX) < 0)
		return NULL;
	err = ms_index_open(path, idx, &ix);
	if (err && err != -ENOENT) {
		why = err == -ESTALE ? "it is stale: the recording changed after it was made" :
		      err == -EBADMSG ? "it is damaged or cut short" :
		      err == -EPROTO ? "it is no mapscope index of this version" : strerror(-err);
		fprintf(stderr, "mapscope: warning: ignoring the index '%s': %s; reading the whole recording "
			"(remake it: mapscope index -i %s)\n", MS_TEXT(idx), why, MS_TEXT(path));
	}
	free(idx);
	return err ? NULL : ix;
}
