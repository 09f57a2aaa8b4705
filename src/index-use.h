/*
 * The CLI's side of a recording's index (lib/session/index.h): finding
 * FILE.msidx beside a recording, and the one warning where it is unusable.
 */
#ifndef MS_INDEX_USE_H
#define MS_INDEX_USE_H

struct ms_index;

/*
 * The valid index of the recording at path, or NULL: none there (quietly),
 * a pipe, or one that is damaged, stale or foreign (one warning line: the
 * command then reads the whole recording). The caller frees it.
 */
struct ms_index *index_use(const char *path);

#endif
