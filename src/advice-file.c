/*
 * The advice file of profile-guided hugepages, for the CLI: written by
 * `hugepages --save`, read by `run --hugepages`. The rules themselves are
 * the library's (mapscope/advice.h); this says what happened to the user.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice-file.h"
#include "cli.h"
#include "outfile.h"

/* The advised regions' rules; they come first, and end at one neither advised nor left out for lack of room. */
static int add_advised(struct ms_advice *adv, const struct ms_session *s, struct ms_hugepages *hp, size_t n,
		       size_t *advised)
{
	const struct ms_huge_advice *a;
	size_t i;
	int nr = ms_advice_add(adv, s, NULL, 0);      /* the recording's losses, advice or none */

	for (i = 0; i < n && (a = ms_hugepages_advice_at(hp, i)) && (a->advised || a->no_room) && nr >= 0; i++) {
		*advised += a->advised;
		nr = ms_advice_add(adv, s, a, 1);
	}
	return nr;
}

int advice_file_save(const char *path, struct ms_advice *adv, const struct ms_session *s,
		     struct ms_hugepages *hp, size_t n)
{
	struct outfile out;
	size_t advised = 0;
	FILE *f;
	int nr = add_advised(adv, s, hp, n, &advised), ret;

	if (nr < 0) {
		cli_error("cannot build the advice for '%s': %s", path, strerror(-nr));
		return EXIT_RUNTIME;
	}
	if (!(f = outfile_fopen(&out, path)))
		return EXIT_RUNTIME;
	if (ms_advice_write(adv, f)) {
		cli_error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
		fclose(f);
		return outfile_close(&out, false);
	}
	if ((ret = outfile_fclose(&out, f)))
		return ret;
	fprintf(stderr, "mapscope: %d rule%s for %zu advised region%s saved to '%s'\n", nr, nr == 1 ? "" : "s",
		advised, advised == 1 ? "" : "s", path);
	if (ms_advice_unkeyed(adv))
		cli_hint("%zu advised region%s had no call chain to key it by: record with mapscope record "
			 "(it copies each mapping call's stack, unless --no-alloc-stacks) or --call-graph dwarf",
			 ms_advice_unkeyed(adv), ms_advice_unkeyed(adv) == 1 ? "" : "s");
	return 0;
}

struct ms_advice *advice_file_load(const char *path)
{
	struct ms_advice *adv = NULL;
	char *text = NULL, *more;
	size_t len = 0, cap = 0, got;
	int line = 0, err;
	FILE *f = fopen(path, "re");

	if (!f) {
		cli_error("cannot open the advice file '%s': %s", path, strerror(errno));
		cli_hint("write one with 'mapscope hugepages -i RECORDING --save %s'", path);
		return NULL;
	}
	do {
		if (len + 4096 > cap) {
			/* On failure text stays whole, to be freed below. */
			if (!(more = realloc(text, cap * 2 + 8192))) {
				free(text);
				text = NULL;
				break;
			}
			text = more;
			cap = cap * 2 + 8192;
		}
		len += got = fread(text + len, 1, cap - len, f);
	} while (got && len < (64u << 20));
	if (!text || ferror(f) || len >= (64u << 20)) {
		cli_error("cannot read '%s': %s", path, !text ? strerror(ENOMEM) : len ? "larger than 64 MiB" :
			  strerror(EIO));
		goto out;
	}
	if (!(adv = ms_advice_new()) || (err = ms_advice_read(adv, text, len, &line))) {
		err = adv ? err : -ENOMEM;
		cli_error("cannot read '%s': %s", path, err == -EINVAL ? "not a hugepage advice file" : strerror(-err));
		if (err == -EINVAL)
			cli_hint("line %d is not what 'mapscope hugepages --save' writes", line);
		ms_advice_free(adv);
		adv = NULL;
	}
out:
	free(text);
	fclose(f);
	return adv;
}
