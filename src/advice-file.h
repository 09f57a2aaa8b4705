/* The advice file of profile-guided hugepages: hugepages --save writes it, run --hugepages reads it. */
#ifndef MS_ADVICE_FILE_H
#define MS_ADVICE_FILE_H

#include <mapscope/advice.h>

/*
 * Adds the advised regions of hp (sorted: n entries) to adv and writes its
 * rules to path. 0, or EXIT_RUNTIME after the message.
 */
int advice_file_save(const char *path, struct ms_advice *adv, const struct ms_session *s,
		     struct ms_hugepages *hp, size_t n);

/* The rules in the file at path, or NULL after the message. */
struct ms_advice *advice_file_load(const char *path);

#endif
