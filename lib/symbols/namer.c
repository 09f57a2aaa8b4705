/*
 * Sites named on a second thread (namer.h). Naming the sites a report
 * prints is a fifth of its time on a chromium recording, and almost all
 * of it libdw's first reading of each binary's symbols and of the line
 * tables and scopes of the units the sites lie in: work that waits only
 * on the chain being pinned. So each pinned chain is handed, as it is
 * pinned, to a thread with symbols of its own (libdw's handles are not to
 * be shared between threads): it reads the binaries again, by the paths
 * and build-ids the pin saw, and names the chain through a view of just
 * the instances the chain lies in, as a pin names it (pin.c). A chain's
 * answer depends on nothing else (ms_pin_key()), so it is the answer the
 * caller's symbols would give. Where the thread cannot read a binary as
 * the caller did, it says so and the caller names the chain itself. A
 * profile's code (its frames) and a report's children (a code address's
 * symbol) are named the same way, as chains of one address.
 *
 * The thread takes the chains in the order they come, and a chain the
 * caller waits for first; the caller hands them over some at a time, so
 * that it seldom takes the lock, and wakes the thread only when it sleeps.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <linux/perf_event.h>

#include "symbols/internal.h"
#include "symbols/namecache.h"
#include "symbols/namer.h"
#include "util/buf.h"
#include "util/grow.h"

#define BATCH 64                 /* chains handed over at a time */
#define BLOCK_SIZE (128 * 1024)  /* the caller's jobs are cut from blocks of this */
#define MAX_INSTS 64             /* a chain's instances: past this, the caller names it */
#define NAMER_MIN_FILES 4096     /* descriptors the process may hold, at least, for a namer */

/* A binary as the caller's pin saw it, and the thread's own bin for it. */
struct named_bin {
	char *path;
	unsigned char id[64];
	size_t id_len;
	const char *image;           /* the caller's mapping of the file, which outlives the thread; or NULL */
	size_t image_size;
	int state;                   /* the caller's: 2 read, below 0 unusable (and said so) */
	ssize_t own;                 /* the thread's alone: its bin + 1; -1 it cannot read it so; 0 not yet */
	struct stat file;            /* the file as the caller read it (fstat of its descriptor) */
	bool have_file;
	struct ms_namekey key;       /* the thread's alone: what names in it depend on (namekey.h) */
	int key_state;               /* 1: key made; -1: none can be; 0: not yet */
};

struct job_inst {
	struct named_bin *b;
	uint64_t bias, lo, hi;
};

enum job_state { QUEUED, RUNNING, DONE, FAILED, DROPPED };
enum job_kind { SITE, FRAMES, SYMBOL };

struct ms_name_job {
	struct ms_name_job *next;    /* in the queue, or in the caller's batch */
	struct ms_name_job *all;     /* every job, newest first */
	const uint64_t *chain;
	struct job_inst *inst;
	uint32_t pid, len, nr_inst;
	enum job_state state;        /* under the lock, once handed over */
	unsigned char kind;          /* enum job_kind: a site, a code address's frames or its symbol */
	bool hit, put;               /* the thread's: answered by the cache; named and put in it */
	union {                      /* DONE: the thread's answer, by kind, until asked */
		struct {
			char *site, *text;
		};
		struct {
			struct ms_frame *f;  /* nf of them, malloc'd; their strings the thread's symbols' */
			int nf;
		};
		struct {
			const char *name, *raw;   /* the thread's strings, or the cache's */
			uint64_t id;
			int held;            /* a binary holds the address (its path is the job's instance's) */
		} sym;
	};
};

struct block {
	struct block *next;
	size_t used;
	max_align_t data[];
};

struct ms_namer {
	struct ms_symbols *own;      /* the thread's symbols */
	struct ms_namecache *cache;  /* the thread's: answers kept from earlier runs, or NULL */
	bool exact_only;             /* the caller's symbols' setting, which the answers depend on */
	size_t hits, puts;           /* under the lock: answers the cache gave, and jobs named and put in it */
	char *scratch, *scratch_text;   /* the thread's: a site and a chain named, of site_len and text_len bytes */
	size_t site_len, text_len;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	/* Under the lock: */
	struct ms_name_job *head, *tail;   /* handed over, in order */
	struct ms_name_job *urgent;  /* the one the caller waits for */
	bool stop, idle, busy;       /* busy: naming a job */
	bool started;                /* the thread was made: it is joined */
	unsigned waiting;
	/* The caller's alone: */
	struct ms_name_job *batch_head, *batch_tail, *all;
	size_t batch_n;
	struct named_bin **by_bin;   /* the caller's bin index -> what the thread is told of it */
	size_t cap_by_bin;
	struct block *blocks;
};

/* len bytes from the caller's blocks (aligned as malloc's), or NULL. */
static void *carve(struct ms_namer *n, size_t len)
{
	struct block *b = n->blocks;
	size_t need = (len + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	void *at;

	if (!b || b->used + need > BLOCK_SIZE) {
		if (need > BLOCK_SIZE || !(b = malloc(sizeof(*b) + BLOCK_SIZE)))
			return NULL;
		b->next = n->blocks;
		b->used = 0;
		n->blocks = b;
	}
	at = (char *)b->data + b->used;
	b->used += need;
	return at;
}

/* The thread's bin for b, made and read the first time; false where it cannot read it as the caller did. */
static bool own_bin(struct ms_namer *n, struct named_bin *nb)
{
	struct bin *b;
	ssize_t i;

	if (nb->own)
		return nb->own > 0;
	nb->own = -1;
	if ((i = ms_bin_index(n->own, nb->path, true)) < 0)
		return false;
	b = &n->own->bins[i];
	/*
	 * The caller maps each binary's file: the thread reads that mapping
	 * (read only, by both), so that it reads what the caller read. A
	 * mapping of its own had the pages both touched resident twice (64 KiB
	 * around each touched page); a binary the caller has not mapped, or
	 * whose mapping libelf writes into (its compressed sections' headers
	 * rewritten as they are inflated: what one thread inflated, the other
	 * would read as DWARF), is read from its path, its sections as asked
	 * (ELF_C_READ).
	 */
	b->image = nb->image;
	b->image_size = nb->image_size;
	b->elf_read = true;
	memcpy(b->want_id, nb->id, nb->id_len);
	b->want_id_len = nb->id_len;
	if (nb->state < 0) {
		b->state = nb->state;        /* unusable to the caller, who said so: raw here too, and quiet */
		b->warned = true;
	} else {
		ms_bin_read_segments(b);
		if (b->state != 1 || !ms_bin_open_symbols(b)) {
			b->state = -1;           /* never read again, so never warned of */
			b->warned = true;
			return false;
		}
	}
	nb->own = i + 1;
	return true;
}

/* --- answers kept on disk (namecache.h) ----------------------------------------------- */

/* The config every answer depends on: the code that names, its settings, the answers' room. */
static struct ms_namecache *open_cache(const struct ms_namer *n)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct ms_namekey k;

	if (urls && *urls)
		return NULL;             /* debuginfod's answers change with its server */
	ms_namekey_init(&k, 0x6e616d6572);
	if (!ms_namekey_code(&k))
		return NULL;
	ms_namekey_word(&k, n->site_len);
	ms_namekey_word(&k, n->text_len);
	ms_namekey_word(&k, n->exact_only);
	ms_namekey_word(&k, MS_NAMER_FRAMES);
	k = ms_namekey_done(&k);
	return ms_namecache_open(&k);
}

/* b's key, made once; false where it has none. */
static bool bin_key(struct named_bin *b)
{
	if (!b->key_state)
		b->key_state = ms_namekey_bin(&b->key, b->path, b->state, b->id, b->id_len,
					      b->have_file ? &b->file : NULL, b->image, b->image_size) ? 1 : -1;
	return b->key_state > 0;
}

/* addr as j's naming sees it, as words of k: the binary that holds it and its place there, or itself. */
static bool addr_words(const struct ms_name_job *j, uint64_t addr, struct ms_namekey *k)
{
	const struct job_inst *at = NULL;
	uint32_t i;

	for (i = 0; i < j->nr_inst; i++)
		if (addr >= j->inst[i].lo && addr < j->inst[i].hi) {
			if (at)
				return false;    /* two hold it: which names it is the view's order */
			at = &j->inst[i];
		}
	if (!at) {
		ms_namekey_word(k, 3);
		ms_namekey_word(k, addr);
		return true;
	}
	if (!bin_key(at->b))
		return false;
	ms_namekey_word(k, 2);
	ms_namekey_word(k, at->b->key.a);
	ms_namekey_word(k, at->b->key.b);
	ms_namekey_word(k, addr - at->bias);
	return true;
}

/*
 * j's key: its kind and each address of its chain with the byte before
 * it (a return address is named by its call), as addr_words() has them:
 * what a pin's naming depends on (ms_pin_key()), each binary by its
 * content. False where it has none.
 */
static bool job_key(const struct ms_name_job *j, struct ms_namekey *out)
{
	struct ms_namekey k;
	uint32_t i;

	ms_namekey_init(&k, j->kind == FRAMES ? 'F' : j->kind == SYMBOL ? 'Y' : 'S');
	ms_namekey_word(&k, j->len);
	for (i = 0; i < j->len; i++) {
		if (j->chain[i] >= (uint64_t)PERF_CONTEXT_MAX) {
			ms_namekey_word(&k, 1);
			ms_namekey_word(&k, j->chain[i]);
		} else if (!addr_words(j, j->chain[i], &k) || !addr_words(j, j->chain[i] - 1, &k))
			return false;
	}
	*out = ms_namekey_done(&k);
	return true;
}

/* A string of an answer at *p, before end: it, *p past it; NULL where it runs past end. */
static const char *answer_str(const char **p, const char *end)
{
	const char *s = *p, *nul = memchr(s, '\0', (size_t)(end - s));

	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

/* A frame's flags in an answer: which of its strings follow. */
#define HAS_NAME 1
#define HAS_FILE 2

/* A symbol's flags in an answer: which of its strings follow. */
#define SYM_HELD 1
#define SYM_NAME 2
#define SYM_RAW 4
#define SYM_ID 8

/* A symbol job's answer from the cache's bytes (its strings stay there): flags, the id, then each string. */
static bool take_symbol(struct ms_name_job *j, const char *p, const char *end)
{
	unsigned char flags;

	if (p == end || (flags = (unsigned char)*p++) & ~(SYM_HELD | SYM_NAME | SYM_RAW | SYM_ID) ||
	    (!(flags & SYM_HELD) && flags))
		return false;
	j->sym.held = flags & SYM_HELD;
	j->sym.name = j->sym.raw = NULL;
	j->sym.id = 0;
	if (flags & SYM_ID) {
		if (end - p < 8)
			return false;
		memcpy(&j->sym.id, p, 8);
		p += 8;
	}
	if ((flags & SYM_NAME && !(j->sym.name = answer_str(&p, end))) ||
	    (flags & SYM_RAW && !(j->sym.raw = answer_str(&p, end))))
		return false;
	return p == end;
}

/*
 * j's answer from the cache's bytes: a site and its chain's text, or
 * frames (a count, then each: flags, line, its strings), or a symbol
 * (take_symbol()), whose strings stay in the cache. False where the bytes
 * are not one.
 */
static bool take_answer(struct ms_namer *n, struct ms_name_job *j, const char *p, size_t len)
{
	const char *end = p + len, *site, *text = NULL;
	struct ms_frame f[MS_NAMER_FRAMES];
	unsigned char flags;
	int i, nf;

	if (j->kind == SYMBOL)
		return take_symbol(j, p, end);
	if (j->kind == SITE) {
		/* As long as the thread's own buffers would have held them. */
		if (!(site = answer_str(&p, end)) || (n->text_len && !(text = answer_str(&p, end))) || p != end ||
		    strlen(site) >= n->site_len || (text && strlen(text) >= n->text_len) || !(j->site = strdup(site)))
			return false;
		if (n->text_len && !(j->text = strdup(text))) {
			free(j->site);
			j->site = NULL;
			return false;
		}
		return true;
	}
	if (p == end || (nf = (unsigned char)*p++) > MS_NAMER_FRAMES)
		return false;
	for (i = 0; i < nf; i++) {
		if (end - p < 5)
			return false;
		flags = (unsigned char)*p;
		memcpy(&f[i].line, p + 1, 4);
		p += 5;
		f[i].name = flags & HAS_NAME ? answer_str(&p, end) : NULL;
		f[i].file = flags & HAS_FILE ? answer_str(&p, end) : NULL;
		if (((flags & HAS_NAME) && !f[i].name) || ((flags & HAS_FILE) && !f[i].file))
			return false;
	}
	if (p != end || (nf && !(j->f = malloc((size_t)nf * sizeof(*f)))))
		return false;
	if (nf)
		memcpy(j->f, f, (size_t)nf * sizeof(*f));
	j->nf = nf;
	return true;
}

/* j's answer, named just now, put in the cache under key. */
static void put_answer(struct ms_namer *n, struct ms_name_job *j, const struct ms_namekey *key)
{
	struct ms_buf b;
	unsigned char flags;
	int i;

	ms_buf_init(&b);
	if (j->kind == SYMBOL) {
		flags = j->sym.held ? SYM_HELD | (j->sym.name ? SYM_NAME : 0) | (j->sym.raw ? SYM_RAW : 0) |
					      (j->sym.id ? SYM_ID : 0) : 0;
		ms_buf_append(&b, &flags, 1);
		if (flags & SYM_ID)
			ms_buf_append(&b, &j->sym.id, 8);
		if (j->sym.name)
			ms_buf_cstr(&b, j->sym.name);
		if (j->sym.raw)
			ms_buf_cstr(&b, j->sym.raw);
	} else if (j->kind == SITE) {
		ms_buf_cstr(&b, j->site);
		if (n->text_len)
			ms_buf_cstr(&b, j->text);
	} else {
		ms_buf_append(&b, &(unsigned char){ (unsigned char)j->nf }, 1);   /* 0 to MS_NAMER_FRAMES: name() asks */
		for (i = 0; i < j->nf; i++) {
			flags = (j->f[i].name ? HAS_NAME : 0) | (j->f[i].file ? HAS_FILE : 0);
			ms_buf_append(&b, &flags, 1);
			ms_buf_append(&b, &j->f[i].line, 4);
			if (j->f[i].name)
				ms_buf_cstr(&b, j->f[i].name);
			if (j->f[i].file)
				ms_buf_cstr(&b, j->f[i].file);
		}
	}
	j->put = !ms_buf_error(&b) && !ms_namecache_put(n->cache, key, b.data, b.len);
	ms_buf_release(&b);
}

/* Names j's site into j->site as the caller's pin would; false where it cannot. */
static bool name_now(struct ms_namer *n, struct ms_name_job *j)
{
	struct proc_bins view = { .perfmap_state = -1 };  /* no JIT: the pin saw none could name the chain */
	struct inst v[MAX_INSTS];
	uint32_t i;

	for (i = 0; i < j->nr_inst; i++) {
		if (!own_bin(n, j->inst[i].b))
			return false;
		v[i] = (struct inst){ (size_t)(j->inst[i].b->own - 1), j->inst[i].bias, j->inst[i].lo, j->inst[i].hi };
	}
	view.v = v;
	view.n = j->nr_inst;
	n->own->view = &view;
	n->own->view_pid = j->pid;
	if (j->kind == SYMBOL) {
		struct ms_code_sym cs;

		j->sym.held = ms_symbols_code_symbol(n->own, j->pid, j->chain[0], &cs);
		n->own->view = NULL;
		j->sym.name = cs.name;
		j->sym.raw = cs.raw;
		j->sym.id = cs.id;
		return true;
	}
	if (j->kind == FRAMES) {
		struct ms_frame f[MS_NAMER_FRAMES];

		j->nf = ms_symbols_code_frames(n->own, j->pid, j->chain[0], f, MS_NAMER_FRAMES);
		n->own->view = NULL;
		j->f = j->nf > 0 ? malloc((size_t)j->nf * sizeof(*f)) : NULL;
		if (j->f)
			memcpy(j->f, f, (size_t)j->nf * sizeof(*f));
		return j->nf <= 0 || j->f;
	}
	ms_call_site_parts(n->own, j->pid, j->chain, j->len, n->scratch, n->site_len,
			   n->text_len ? n->scratch_text : NULL, n->text_len);
	n->own->view = NULL;
	j->site = strdup(n->scratch);
	j->text = n->text_len ? strdup(n->scratch_text) : NULL;
	return j->site && (j->text || !n->text_len);
}

/* j named: from the cache where it has j's answer, else now (and the answer put in it). */
static bool name(struct ms_namer *n, struct ms_name_job *j)
{
	struct ms_namekey key;
	const void *answer;
	bool keyed = n->cache && job_key(j, &key);
	size_t len;

	if (keyed && (answer = ms_namecache_get(n->cache, &key, &len)) && take_answer(n, j, answer, len))
		return j->hit = true;
	if (!name_now(n, j))
		return false;
	if (keyed && (j->kind != FRAMES || j->nf >= 0))
		put_answer(n, j, &key);
	return true;
}

/* The next job to name, under the lock: the one waited for, else the oldest queued; NULL where none. */
static struct ms_name_job *next_job(struct ms_namer *n)
{
	struct ms_name_job *j = n->urgent;

	n->urgent = NULL;
	if (j && j->state == QUEUED)
		return j;
	while ((j = n->head)) {
		n->head = j->next;
		if (!n->head)
			n->tail = NULL;
		if (j->state == QUEUED)
			return j;
	}
	return NULL;
}

static void *work(void *arg)
{
	struct ms_namer *n = arg;
	struct ms_name_job *j;
	bool ok;

	pthread_mutex_lock(&n->lock);
	while (!n->stop) {
		if (!(j = next_job(n))) {
			n->idle = true;
			pthread_cond_wait(&n->work, &n->lock);
			n->idle = false;
			continue;
		}
		j->state = RUNNING;
		n->busy = true;
		pthread_mutex_unlock(&n->lock);
		ok = name(n, j);
		pthread_mutex_lock(&n->lock);
		j->state = ok ? DONE : FAILED;
		n->hits += j->hit;
		n->puts += j->put;
		n->busy = false;
		if (n->waiting)
			pthread_cond_broadcast(&n->done);
	}
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

/*
 * Whether a second CPU may run the thread beside the caller, and
 * descriptors are plenty: the thread holds a second one for each binary
 * it names, and where the caller's own reads then ran out, its names
 * would differ (a recording of some 140 binaries under a limit of 140).
 */
static bool it_pays(void)
{
	struct rlimit rl;
	cpu_set_t set;

	return !sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 1 && !getrlimit(RLIMIT_NOFILE, &rl) &&
	       rl.rlim_cur >= NAMER_MIN_FILES;
}

struct ms_namer *ms_namer_new(const struct ms_symbols *s, size_t site_len, size_t text_len)
{
	const char *env = getenv("MAPSCOPE_NAMER");
	struct ms_namer *n;

	if ((env && !strcmp(env, "off")) || !it_pays() || !(n = calloc(1, sizeof(*n))))
		return NULL;
	n->site_len = site_len;
	n->text_len = text_len;
	if (!(n->own = ms_symbols_new()) || !(n->scratch = malloc(site_len)) ||
	    (text_len && !(n->scratch_text = malloc(text_len)))) {
		ms_symbols_free(n->own);
		free(n->scratch);
		free(n);
		return NULL;
	}
	ms_symbols_exact_only(n->own, s->exact_only);
	n->exact_only = s->exact_only;
	n->cache = open_cache(n);        /* here, not on the thread: ms_namer_stop() may come before it runs */
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->work, NULL);
	pthread_cond_init(&n->done, NULL);
	if (pthread_create(&n->thread, NULL, work, n)) {
		ms_namer_free(n);
		return NULL;
	}
	n->started = true;
	return n;
}

/* What the thread is told of the caller's bin i (told once); NULL where it cannot be told. */
static struct named_bin *told(struct ms_namer *n, const struct ms_symbols *s, size_t i)
{
	const struct bin *b = &s->bins[i];
	struct named_bin *nb;

	if (MS_GROW(n->by_bin, i + 1, n->cap_by_bin, 64, SIZE_MAX, true))
		return NULL;
	if (n->by_bin[i])
		return n->by_bin[i];
	/* A pin leaves each of its chain's binaries read, or unusable and said so: anything else is not handed over. */
	if ((b->state != 2 && b->state >= 0) || !(nb = carve(n, sizeof(*nb))) ||
	    !(nb->path = carve(n, strlen(b->path) + 1)))
		return NULL;
	strcpy(nb->path, b->path);
	nb->image = b->elf_state > 0 && !b->elf_written ? elf_rawfile(b->elf, &nb->image_size) : NULL;
	memcpy(nb->id, b->want_id, b->want_id_len);
	nb->id_len = b->want_id_len;
	nb->state = b->state;
	nb->own = 0;
	nb->key_state = 0;
	/* What the caller read (the path may hold another file by the time the thread keys it). */
	nb->have_file = b->elf_state > 0 && b->elf_fd >= 0 && !fstat(b->elf_fd, &nb->file);
	return n->by_bin[i] = nb;
}

/* Hands the caller's batch to the thread, waking it where it sleeps. */
static void hand_over(struct ms_namer *n)
{
	bool idle;

	if (!n->batch_head)
		return;
	pthread_mutex_lock(&n->lock);
	if (n->tail)
		n->tail->next = n->batch_head;
	else
		n->head = n->batch_head;
	n->tail = n->batch_tail;
	idle = n->idle;
	pthread_mutex_unlock(&n->lock);
	/*
	 * Woken once the lock is free: woken while it is held, the thread
	 * would wake only to wait for it, and its unlock would be a second
	 * wake (report of chromium's page load: 124 of each a run).
	 */
	if (idle)
		pthread_cond_signal(&n->work);
	n->batch_head = n->batch_tail = NULL;
	n->batch_n = 0;
}

static struct ms_name_job *submit(struct ms_namer *n, const struct ms_symbols *s, const struct ms_pin *pin,
				  uint32_t pid, const uint64_t *chain, uint32_t len, enum job_kind kind)
{
	struct inst v[MAX_INSTS];
	struct job_inst *inst;
	struct ms_name_job *j;
	uint64_t *copy;
	int k = ms_pin_insts(s, pin, chain, len, v, MAX_INSTS), i;

	if (k < 0 || !(j = carve(n, sizeof(*j))) || !(copy = carve(n, len * sizeof(*chain) + 1)) ||
	    !(inst = carve(n, (size_t)k * sizeof(*inst) + 1)))
		return NULL;
	for (i = 0; i < k; i++) {
		inst[i] = (struct job_inst){ told(n, s, v[i].bin), v[i].bias, v[i].lo, v[i].hi };
		if (!inst[i].b)
			return NULL;
	}
	memcpy(copy, chain, len * sizeof(*chain));
	*j = (struct ms_name_job){ .all = n->all, .chain = copy, .inst = inst, .pid = pid, .len = len,
				   .nr_inst = (uint32_t)k, .state = QUEUED, .kind = kind };
	n->all = j;
	if (n->batch_tail)
		n->batch_tail->next = j;
	else
		n->batch_head = j;
	n->batch_tail = j;
	if (++n->batch_n == BATCH)
		hand_over(n);
	return j;
}

struct ms_name_job *ms_namer_submit(struct ms_namer *n, const struct ms_symbols *s, const struct ms_pin *pin,
				    uint32_t pid, const uint64_t *chain, uint32_t len)
{
	return submit(n, s, pin, pid, chain, len, SITE);
}

struct ms_name_job *ms_namer_submit_frames(struct ms_namer *n, const struct ms_symbols *s, const struct ms_pin *pin,
					   uint32_t pid, uint64_t ip)
{
	return submit(n, s, pin, pid, &ip, 1, FRAMES);
}

struct ms_name_job *ms_namer_submit_symbol(struct ms_namer *n, const struct ms_symbols *s, const struct ms_pin *pin,
					   uint32_t pid, uint64_t ip)
{
	return submit(n, s, pin, pid, &ip, 1, SYMBOL);
}

/* Waits for j to be named (told to be named next where it has not begun): whether it was. Under the lock. */
static bool wait_named(struct ms_namer *n, struct ms_name_job *j)
{
	if (j->state == QUEUED) {
		n->urgent = j;
		if (n->idle)
			pthread_cond_signal(&n->work);
	}
	n->waiting++;
	while (j->state == QUEUED || j->state == RUNNING)
		pthread_cond_wait(&n->done, &n->lock);
	n->waiting--;
	return j->state == DONE;
}

int ms_namer_wait_frames(struct ms_namer *n, struct ms_name_job *j, struct ms_frame *out, int max)
{
	int k = -1;

	hand_over(n);
	pthread_mutex_lock(&n->lock);
	if (wait_named(n, j)) {
		k = j->nf > max ? max : j->nf;
		if (k > 0)
			memcpy(out, j->f, (size_t)k * sizeof(*out));
	}
	j->state = DROPPED;
	pthread_mutex_unlock(&n->lock);
	return k;
}

/* The path of the binary that holds addr in j's view (the first instance that does, as inst_at() takes it). */
static const char *held_by(const struct ms_name_job *j, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < j->nr_inst; i++)
		if (addr >= j->inst[i].lo && addr < j->inst[i].hi)
			return j->inst[i].b->path;
	return NULL;
}

int ms_namer_wait_symbol(struct ms_namer *n, struct ms_name_job *j, struct ms_code_sym *out)
{
	int held = -1;

	*out = (struct ms_code_sym){ 0 };
	hand_over(n);
	pthread_mutex_lock(&n->lock);
	if (wait_named(n, j) && (held = j->sym.held) > 0 && !(out->dso = held_by(j, j->chain[0])))
		held = -1;
	if (held >= 0) {
		out->name = j->sym.name;
		out->raw = j->sym.raw;
		out->id = j->sym.id;
	}
	j->state = DROPPED;
	pthread_mutex_unlock(&n->lock);
	return held;
}

bool ms_namer_wait(struct ms_namer *n, struct ms_name_job *j, char **site, char **text)
{
	bool done;

	hand_over(n);
	pthread_mutex_lock(&n->lock);
	done = wait_named(n, j);
	*site = done ? j->site : NULL;
	*text = done ? j->text : NULL;
	if (done)
		j->site = j->text = NULL;
	j->state = DROPPED;
	pthread_mutex_unlock(&n->lock);
	return done;
}

void ms_namer_cache_counts(struct ms_namer *n, size_t *hits, size_t *put)
{
	pthread_mutex_lock(&n->lock);
	*hits = n->hits;
	*put = n->puts;
	pthread_mutex_unlock(&n->lock);
}

void ms_namer_drop(struct ms_namer *n, struct ms_name_job *j)
{
	pthread_mutex_lock(&n->lock);
	if (j->state == QUEUED)
		j->state = DROPPED;
	pthread_mutex_unlock(&n->lock);
}

void ms_namer_stop(struct ms_namer *n)
{
	if (!n)
		return;
	pthread_mutex_lock(&n->lock);
	n->stop = true;
	n->waiting++;
	while (n->busy)
		pthread_cond_wait(&n->done, &n->lock);
	n->waiting--;
	pthread_mutex_unlock(&n->lock);
	/* The thread names nothing more: its answers are saved here, and it is not woken for them. */
	ms_namecache_save(n->cache);     /* where it fails, the next run names them again */
}

void ms_namer_free(struct ms_namer *n)
{
	struct ms_name_job *j;
	struct block *b;

	if (!n)
		return;
	pthread_mutex_lock(&n->lock);
	n->stop = true;
	pthread_cond_signal(&n->work);
	pthread_mutex_unlock(&n->lock);
	if (n->started)
		pthread_join(n->thread, NULL);
	ms_namecache_save(n->cache);
	for (j = n->all; j; j = j->all) {
		if (j->kind == SITE) {
			free(j->site);
			free(j->text);
		} else if (j->kind == FRAMES)
			free(j->f);
	}
	while ((b = n->blocks)) {
		n->blocks = b->next;
		free(b);
	}
	free(n->by_bin);
	free(n->scratch);
	free(n->scratch_text);
	ms_symbols_free(n->own);
	ms_namecache_free(n->cache);     /* after the jobs: frames from it point into it */
	pthread_cond_destroy(&n->work);
	pthread_cond_destroy(&n->done);
	pthread_mutex_destroy(&n->lock);
	free(n);
}
