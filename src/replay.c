#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mapscope/pdreader.h>
#include <mapscope/symbols.h>

#include "cli.h"
#include "launch.h"
#include "perfdata/evlist.h"
#include "output/format.h"
#include "output/json.h"
#include "replay.h"
#include "session/source.h"
#include "output/text.h"

int replay_open(struct ms_session **s, const char *path, const struct ms_session_opts *opts)
{
	launch_raise_fd_limit();      /* each binary whose symbols are read keeps a descriptor: libdwfl holds it */
	cli_stdout_for_reading(path);
	*s = ms_session_open(path, opts);
	if (*s) {
		/* The commands read the stream's statistics only after the run (the index builder says otherwise). */
		session_read_ahead(*s, true);
		return 0;
	}
	if (errno == ENOENT && !strcmp(path, CLI_DEFAULT_DATA))
		cli_hint("record one first: mapscope record -- CMD, or name a file with -i FILE");
	else if (errno == ENOMEM)
		cli_error("cannot read '%s': %s", path, strerror(errno));
	return EXIT_RUNTIME;
}

/*
 * Progress on a large file (over 100 MiB), where stderr is a terminal: how
 * far the reader is, at once (printed before the replay starts, so that a
 * thread not run before the replay ends still leaves it shown), then twice
 * a second from a thread, on one line that goes away at the end. It only
 * reads the reader's offset, a word the replay keeps writing: a stale
 * value shows a moment's old progress.
 */
struct progress {
	const struct ms_pdreader *r;
	const char *path;
	uint64_t size;
	pthread_mutex_t lock;
	pthread_cond_t done_cv;
	bool done, shown;
};

static void progress_line(struct progress *p)
{
	uint64_t off = ms_pdreader_offset(p->r);

	if (off > p->size)
		off = p->size;          /* compressed records count what they hold */
	fprintf(stderr, "\rmapscope: reading '%s': %3.0f%% (%.0f of %.0f MiB)\033[K", p->path,
		100.0 * (double)off / (double)p->size, (double)off / 1048576.0, (double)p->size / 1048576.0);
	p->shown = true;
}

static void *show_progress(void *arg)
{
	struct progress *p = arg;
	struct timespec until;

	pthread_mutex_lock(&p->lock);
	while (!p->done) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 500000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&p->done_cv, &p->lock, &until) == ETIMEDOUT && !p->done)
			progress_line(p);
	}
	if (p->shown)
		fputs("\r\033[K", stderr);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* A build whose sanitizer reports what is left at exit: memory (ASan's leak check), threads (TSan). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LEAK_CHECKED true
#elif defined(__has_feature)
#define LEAK_CHECKED (__has_feature(address_sanitizer) || __has_feature(leak_sanitizer) || \
		      __has_feature(thread_sanitizer))
#else
#define LEAK_CHECKED false
#endif

void replay_close(struct ms_session *s)
{
	if (cli_exit_frees && !LEAK_CHECKED)
		session_leave(s);
	else
		ms_session_free(s);
}

int replay_run(struct ms_session *s, const char *path)
{
	struct progress p = { .r = ms_session_reader(s), .path = path,
			      .lock = PTHREAD_MUTEX_INITIALIZER, .done_cv = PTHREAD_COND_INITIALIZER };
	bool threaded = false;
	pthread_t th;
	struct stat st;
	int err;

	if (isatty(STDERR_FILENO) && strcmp(path, "-") && !stat(path, &st) && S_ISREG(st.st_mode) &&
	    st.st_size > 100 * 1048576L) {
		p.size = (uint64_t)st.st_size;
		progress_line(&p);
		threaded = !pthread_create(&th, NULL, show_progress, &p);
		if (!threaded)
			fputs("\r\033[K", stderr);
	}
	err = ms_session_run(s);
	if (threaded) {
		pthread_mutex_lock(&p.lock);
		p.done = true;
		pthread_cond_signal(&p.done_cv);
		pthread_mutex_unlock(&p.lock);
		pthread_join(th, NULL);
	}

	if (err == 1 || err == 0 || err == -EBADMSG)
		return 0;                  /* stopped by an analysis, the end, or damage (warned of) */
	cli_error("cannot read '%s': %s", path, strerror(err < 0 ? -err : EIO));
	return EXIT_RUNTIME;
}

/* An event's name as perf prints it, where the file does not name it. */
static void event_name(const struct ms_pdreader *r, size_t i, char *out, size_t len)
{
	static const char *const hw[] = { "cycles", "instructions", "cache-references", "cache-misses",
					  "branches", "branch-misses", "bus-cycles" };
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults", "context-switches",
					  "cpu-migrations", "minor-faults", "major-faults" };
	const struct perf_event_attr *a = ms_pdreader_attr(r, i);
	const char *name = ms_pdreader_evsel_name(r, i);

	if (name)
		snprintf(out, len, "%s", name);
	else if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof(hw) / sizeof(hw[0]))
		snprintf(out, len, "%s", hw[a->config]);
	else if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof(sw) / sizeof(sw[0]))
		snprintf(out, len, "%s", sw[a->config]);
	else if (a->type == PERF_TYPE_TRACEPOINT)
		snprintf(out, len, "tracepoint %llu", (unsigned long long)a->config);
	else
		snprintf(out, len, "type %u config %#llx", a->type, (unsigned long long)a->config);
}

/* Says that the file has no data addresses at all, and which events it has instead. */
static void warn_no_addresses(const struct ms_pdreader *r, const char *path)
{
	char names[256] = "", one[64];
	size_t i, n = ms_pdreader_nr_evsels(r), used = 0;

	for (i = 0; i < n; i++)
		if (ms_pdreader_attr(r, i)->sample_type & PERF_SAMPLE_ADDR)
			return;
	for (i = 0; i < n && used < sizeof(names) - 1; i++) {
		event_name(r, i, one, sizeof(one));
		used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", one);
	}
	if (used >= sizeof(names) - 1)
		snprintf(names + sizeof(names) - 5, 5, "...");
	fprintf(stderr, "mapscope: warning: '%s' has no data addresses: its events (%s) were recorded "
		"without them; record with 'mapscope record', or 'perf record -d'\n", path, MS_TEXT(names));
}

/* A time as seconds from the start of the recording. */
static double rel_s(const struct ms_session_stats *st, uint64_t t)
{
	return (double)(t > st->first_time ? t - st->first_time : 0) / 1e9;
}

void replay_warnings(struct ms_session *s, const char *path)
{
	struct ms_pdreader *r = ms_session_reader(s);
	bool corrupt = ms_session_corrupt(s);
	struct ms_session_stats st;
	char aside[512];
	struct ms_session_lost lp;
	size_t i;

	ms_session_stats(s, &st);
	if (!st.samples && !st.zero_addr && !st.kernel_addr)
		warn_no_addresses(r, path);
	ms_format_set_aside(&st, aside, sizeof(aside));
	if (aside[0])
		fprintf(stderr, "mapscope: note: samples set aside, not charged: %s\n", aside);
	if (ms_pdreader_unfinished(r))
		fprintf(stderr, "mapscope: warning: '%s' was not finished (its recorder was killed, or "
			"its disk filled up): recovered %llu records, %llu of them samples%s\n", path,
			(unsigned long long)st.records, (unsigned long long)ms_format_file_samples(&st),
			ms_session_has_syscalls(s) ? ", with the unmaps" : "");
	if (corrupt)
		fprintf(stderr, "mapscope: warning: '%s' is corrupt or truncated: what follows covers "
			"the records before the bad one only\n", path);
	if (!ms_session_has_syscalls(s) && corrupt)
		fprintf(stderr, "mapscope: warning: the tracepoint descriptions stored at the end of '%s' "
			"are lost, so its unmaps cannot be read: a later map replaces an earlier one where "
			"they overlap, and attribution is uncertain\n", path);
	else if (!ms_session_has_syscalls(s))
		fprintf(stderr, "mapscope: warning: '%s' does not record munmap and mremap (perf record?): a later "
			"map replaces an earlier one where they overlap, so attribution is uncertain\n",
			path);
	if (st.lost) {
		fprintf(stderr, "mapscope: warning: the recording lost %llu records, from %.6f s to %.6f s: "
			"maps, unmaps and samples there may be missing, so attribution is uncertain "
			"(record with a larger ring buffer, -m)\n", (unsigned long long)st.lost,
			rel_s(&st, st.lost_first), rel_s(&st, st.lost_last));
		/* A LOST record names the process that wrote next once the ring had room. */
		for (i = 0; i < 8 && ms_session_lost_pid(s, i, &lp); i++)
			fprintf(stderr, "mapscope: warning:   %llu noticed as process %u wrote next, from %.6f s to "
				"%.6f s\n", (unsigned long long)lp.count, lp.pid, rel_s(&st, lp.first),
				rel_s(&st, lp.last));
		if (st.nr_lost_pids > 8)
			fprintf(stderr, "mapscope: warning:   and as other processes wrote next\n");
		fprintf(stderr, "mapscope: warning:   (a CPU's ring is shared: the records lost may be any "
			"process's)\n");
	}
	if (st.unknown_records)
		fprintf(stderr, "mapscope: warning: '%s' is damaged: %llu records of types nobody defines, or "
			"that none of its events writes, were skipped, and what they held is missing\n", path,
			(unsigned long long)st.unknown_records);
	if (st.bad_names)
		fprintf(stderr, "mapscope: warning: '%s' is damaged: %llu names with no end inside their record "
			"were cut where the record ends, and may be wrong\n", path, (unsigned long long)st.bad_names);
	if (st.out_of_order)
		fprintf(stderr, "mapscope: warning: %llu records came out of time order\n",
			(unsigned long long)st.out_of_order);
}

struct ms_pdreader *replay_peek(const char *path)
{
	struct ms_pdreader *r;

	if (!strcmp(path, "-"))
		return NULL;
	cli_log_quiet(true);
	r = ms_pdreader_open(path);
	cli_log_quiet(false);
	return r;
}

bool replay_has_call_chains(const struct ms_pdreader *r)
{
	const struct perf_event_attr *a;
	bool yes = false;
	size_t i;

	if (!r)
		return true;                 /* a pipe is read once: assume it has them */
	for (i = 0; !yes && i < ms_pdreader_nr_evsels(r); i++) {
		a = ms_pdreader_attr(r, i);
		yes = a && (a->sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER));
	}
	return yes;
}

void replay_loss_line(const struct ms_session *s, FILE *f, const char *prefix)
{
	char line[1024];

	if (ms_format_losses(s, line, sizeof(line)))
		fprintf(f, "%slosses: %s\n", prefix, line);
}

/* Whether the recording's page faults exclude the kernel (page-faults:u: an ordinary user's recording, or perf's). */
static bool user_mode_faults(const struct ms_session *s)
{
	const struct ms_pdreader *r = ms_session_reader(s);
	const struct perf_event_attr *a;
	size_t i;

	for (i = 0; r && i < ms_pdreader_nr_evsels(r); i++) {
		a = ms_pdreader_attr(r, i);
		if (a->exclude_kernel && ms_attr_page_faults(a))
			return true;
	}
	return false;
}

/* The i-th event whose samples carry data addresses (tracepoints' do not), from *i on: false past the last. */
static bool next_data_event(const struct ms_pdreader *r, size_t *i, const char **name, bool *faults)
{
	const struct perf_event_attr *a;

	for (; r && *i < ms_pdreader_nr_evsels(r); ++*i) {
		a = ms_pdreader_attr(r, *i);
		/* Software events other than faults (task-clock for stack pointers) give no data address. */
		if (!a || !(a->sample_type & PERF_SAMPLE_ADDR) || a->type == PERF_TYPE_TRACEPOINT ||
		    (a->type == PERF_TYPE_SOFTWARE && !ms_attr_page_faults(a)))
			continue;
		*faults = ms_attr_page_faults(a);
		*name = ms_pdreader_evsel_name(r, *i);
		if (!*name)
			*name = *faults ? "page-faults" : "(unnamed)";
		++*i;
		return true;
	}
	return false;
}

void replay_event_line(const struct ms_session *s, FILE *f, const char *prefix)
{
	const char *name;
	size_t i = 0;
	bool faults;

	while (next_data_event(ms_session_reader(s), &i, &name, &faults)) {
		fprintf(f, "%ssamples of event '", prefix);
		ms_text_str(f, name);
		fprintf(f, "': %s\n", faults ? "page faults, each the first touch of a page (a page faults once, when "
			"first touched after it is mapped; later accesses to it are not sampled)" :
			"sampled memory accesses (ongoing access)");
	}
}

void replay_event_json(const struct ms_session *s, struct ms_json *w)
{
	const char *name;
	size_t i = 0;
	bool faults;

	ms_json_key(w, "sample_events");
	ms_json_array_begin(w);
	while (next_data_event(ms_session_reader(s), &i, &name, &faults)) {
		ms_json_object_begin(w);
		ms_json_key_str(w, "name", name);
		ms_json_key_str(w, "measures", faults ? "first_touch" : "access");
		ms_json_object_end(w);
	}
	ms_json_array_end(w);
}

void replay_mode_line(const struct ms_session *s, FILE *f, const char *prefix)
{
	if (user_mode_faults(s))
		fprintf(f, "%spage faults of user mode only (recorded excluding the kernel, as an ordinary user "
			"records): faults taken in kernel mode, a read() into fresh pages say, are not in it\n", prefix);
}

void replay_mode_json(const struct ms_session *s, struct ms_json *w)
{
	if (user_mode_faults(s))
		ms_json_key_bool(w, "user_mode_faults", true);
}

void replay_loss_json(const struct ms_session *s, struct ms_json *w)
{
	char line[1024];

	if (ms_format_losses(s, line, sizeof(line)))
		ms_json_key_str(w, "losses", line);
}

int replay_status(const struct ms_session *s)
{
	struct ms_session_stats st;

	ms_session_stats(s, &st);
	return ms_session_corrupt(s) || st.unknown_records || st.bad_names || st.bad_records || st.bad_samples ?
	       EXIT_RUNTIME : 0;
}

/*
 * "1110.52": seconds on the recording's clock, as perf script prints a
 * sample's time and perf's --time takes it; exact to the nanosecond (no
 * floating point: 1110.52 s is 1110520000000 ns, not one less).
 */
static int parse_seconds(const char *s, uint64_t *ns)
{
	const char *dot = strchr(s, '.'), *p;
	uint64_t sec = 0, frac = 0, scale = 100000000;

	if (dot == s || !dot[1])
		return -EINVAL;
	for (p = s; p < dot; p++) {
		if (*p < '0' || *p > '9' || sec > (UINT64_MAX / 1000000000u - 9) / 10)
			return -EINVAL;
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	for (p = dot + 1; *p; p++, scale /= 10) {
		if (*p < '0' || *p > '9' || !scale)
			return -EINVAL;
		frac += (uint64_t)(*p - '0') * scale;
	}
	*ns = sec * 1000000000u + frac;
	return 0;
}

int parse_time(const char *s, uint64_t *ns, bool *relative)
{
	char *end;
	double sec;
	uint64_t v;

	*relative = false;
	if (!strcmp(s, "end")) {
		*ns = UINT64_MAX;
		return 0;
	}
	if (s[0] == '+') {
		errno = 0;
		sec = strtod(s + 1, &end);
		if (errno || end == s + 1 || *end || !(sec >= 0) || sec > 1e9)
			return -EINVAL;
		*ns = (uint64_t)llround(sec * 1e9);
		*relative = true;
		return 0;
	}
	if (strchr(s, '.'))
		return parse_seconds(s, ns);
	if (cli_parse_u64(s, 0, UINT64_MAX, &v))
		return -EINVAL;
	*ns = v;
	return 0;
}

int replay_parse_window(const char *s, uint64_t *from, bool *from_rel, uint64_t *to, bool *to_rel)
{
	const char *comma = strchr(s, ',');
	char a[64], b[64];

	if (!comma || (size_t)(comma - s) >= sizeof(a) || strlen(comma + 1) >= sizeof(b))
		return -EINVAL;
	snprintf(a, sizeof(a), "%.*s", (int)(comma - s), s);
	snprintf(b, sizeof(b), "%s", comma + 1);
	if (a[0] && parse_time(a, from, from_rel))
		return -EINVAL;
	if (b[0] && parse_time(b, to, to_rel))
		return -EINVAL;
	/* An empty window is a mistake; ends of different kinds are compared once the start is known. */
	if (a[0] && b[0] && *from_rel == *to_rel && *from > *to)
		return -ERANGE;
	return 0;
}
