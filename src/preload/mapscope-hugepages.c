/*
 * mapscope-hugepages.so: the LD_PRELOAD shim of `mapscope run --hugepages`.
 * It advises (MADV_HUGEPAGE) each new mapping whose key matches a rule, as
 * the mapping is made, on the 2 MiB-aligned inside of it.
 *
 * The key of a mapping being made is its caller's chain (backtrace(), the
 * libgcc unwinder: it needs no frame pointers), from the first frame
 * outside the C library, the loader, the allocator and this shim, each
 * return address as (build-id, address in the binary) through
 * dl_iterate_phdr; its kind; its size class (lib/analysis/advice-key.h).
 * mmap is interposed, and so are malloc and its kin, because glibc's own
 * mmap calls for large allocations are internal and cannot be: the chunk
 * malloc returns is advised instead. Only sizes that can hold a whole
 * 2 MiB page are looked at, so small allocations cost one compare.
 *
 * A program whose malloc is another shared allocator (redis-server links
 * jemalloc) frees with that allocator's free, which this shim does not
 * interpose: its malloc and kin must hand out that allocator's memory, so
 * they call the next definition (RTLD_NEXT), found on the first call, and
 * look at glibc's chunks only where the next malloc is glibc's. What such
 * an allocator maps it maps through mmap, which is advised as any mapping.
 *
 * The rules come from MAPSCOPE_HUGEPAGES in the environment ("all" for
 * every private anonymous mapping, whatever its size, and malloc's blocks:
 * the upper bound a benchmark compares with). Nothing here allocates: it
 * runs inside malloc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "analysis/advice-key.h"

#define SPAN (2UL << 20)
#define MAX_RULES 256
#define MAX_DEPTH 24

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* The allocator after this shim: glibc's, or another shared one; found on first use (next_init). */
static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	bool glibc;               /* chunks carry glibc's header: chunk_kind() can read it */
	int state;                /* 0 not looked up, 1 looking up (dlsym may allocate), 2 done */
} next;

static struct ms_advice_key rules[MAX_RULES];
static int nr_rules;
static bool advise_all, ready;
static __thread __attribute__((tls_model("initial-exec"))) bool busy;          /* in the shim already (backtrace may allocate on its first call) */

/* The 2 MiB-aligned inside of [p, p + len), advised. */
static void advise(void *p, size_t len)
{
	uintptr_t s = ((uintptr_t)p + SPAN - 1) & ~(SPAN - 1), e = ((uintptr_t)p + len) & ~(SPAN - 1);
	int saved = errno;

	if (e > s)
		madvise((void *)s, e - s, MADV_HUGEPAGE);
	errno = saved;
}

struct find {
	uintptr_t ip;
	struct ms_advice_frame *f;
	bool runtime, found;
};

/* The GNU build-id note of an object, from its PT_NOTE segments in memory. */
static void build_id(const struct dl_phdr_info *info, struct ms_advice_frame *f)
{
	const ElfW(Nhdr) *n;
	const char *p, *end;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		end = p + info->dlpi_phdr[i].p_memsz;
		while (p + sizeof(*n) <= end) {
			n = (const ElfW(Nhdr) *)p;
			p += sizeof(*n) + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(n + 1, "GNU", 4) &&
			    n->n_descsz <= MS_BUILD_ID_MAX) {
				memcpy(f->id, p, n->n_descsz);
				f->id_len = (uint8_t)n->n_descsz;
				return;
			}
			p += (n->n_descsz + 3) & ~3u;
		}
	}
}

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *q = arg;
	uintptr_t a;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_LOAD)
			continue;
		a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		if (q->ip < a || q->ip >= a + info->dlpi_phdr[i].p_memsz)
			continue;
		/* The main program's name is "": it is never the runtime. */
		q->runtime = info->dlpi_name[0] && ms_advice_runtime_object(info->dlpi_name);
		q->found = true;
		if (!q->runtime) {
			q->f->vaddr = q->ip - info->dlpi_addr;
			build_id(info, q->f);
		}
		return 1;
	}
	return 0;
}

/* The key of the mapping being made, from the caller's chain: false where no frame names a site. */
static bool key_here(char kind, size_t len, struct ms_advice_key *k)
{
	void *ips[MAX_DEPTH];
	int n = backtrace(ips, MAX_DEPTH), i;
	struct find q;

	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->size_class = ms_advice_size_class(len);
	for (i = 0; i < n && k->nr < MS_ADVICE_FRAMES; i++) {
		memset(&q, 0, sizeof(q));
		q.ip = (uintptr_t)ips[i];
		q.f = &k->f[k->nr];
		memset(q.f, 0, sizeof(*q.f));
		if (!dl_iterate_phdr(find_object, &q) || !q.found)
			break;
		if (q.runtime && !k->nr)
			continue;
		if (q.runtime)
			break;               /* back in the runtime (a callback from it): the site ends here */
		k->nr++;
	}
	return k->nr > 0;
}

/* A new mapping of len bytes at p, of kind ('a' anon, 'h' heap, 's' shmem): advised if a rule matches. */
static void consider(void *p, size_t len, char kind)
{
	struct ms_advice_key k;
	int i;

	if (!p || len < SPAN || !ready || busy)
		return;
	if (advise_all) {
		if (kind != 's')
			advise(p, len);
		return;
	}
	busy = true;
	if (key_here(kind, len, &k))
		for (i = 0; i < nr_rules; i++)
			if (ms_advice_key_match(&rules[i], &k)) {
				advise(p, len);
				break;
			}
	busy = false;
}

/*
 * The allocator after this shim, by dlsym(RTLD_NEXT). Whatever dlsym
 * allocates meanwhile comes from glibc (state 1), as does everything
 * before: a foreign allocator's free of it would fail, but dlsym keeps
 * what it allocates (its error buffer) for good.
 */
static void next_init(void)
{
	void *m;

	if (next.state)
		return;
	next.state = 1;
	m = dlsym(RTLD_NEXT, "malloc");
	next.glibc = !m || m == (void *)__libc_malloc;
	if (!next.glibc) {
		next.malloc = (void *(*)(size_t))m;
		next.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
		next.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
		next.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
		next.glibc = !next.calloc || !next.realloc || !next.memalign;   /* not all of them: keep glibc's */
	}
	next.state = 2;
}

static inline bool foreign(void)
{
	if (next.state != 2)
		next_init();
	return next.state == 2 && !next.glibc;
}

/* Where malloc put a chunk: its own mapping (anon) or the heap or an arena (heap). */
static char chunk_kind(void *p)
{
	return ((size_t *)p)[-1] & 2 ? 'a' : 'h';     /* glibc's IS_MMAPPED bit */
}

void *malloc(size_t n)
{
	void *p;

	if (foreign())
		return next.malloc(n);
	p = __libc_malloc(n);

	if (p && n >= SPAN)
		consider(p, n, chunk_kind(p));
	return p;
}

void *calloc(size_t nmemb, size_t size)
{
	void *p;
	size_t n;

	if (foreign())
		return next.calloc(nmemb, size);
	p = __libc_calloc(nmemb, size);
	if (p && !__builtin_mul_overflow(nmemb, size, &n) && n >= SPAN)
		consider(p, n, chunk_kind(p));
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p;

	if (foreign())
		return next.realloc(old, n);
	p = __libc_realloc(old, n);

	if (p && n >= SPAN)
		consider(p, n, chunk_kind(p));
	return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align % sizeof(void *) || align & (align - 1))
		return EINVAL;
	if (!(p = foreign() ? next.memalign(align, n) : __libc_memalign(align, n)))
		return ENOMEM;
	*out = p;
	if (n >= SPAN && !foreign())
		consider(p, n, chunk_kind(p));
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	void *p;

	if (foreign())
		return next.memalign(align, n);
	p = __libc_memalign(align, n);

	if (p && n >= SPAN)
		consider(p, n, chunk_kind(p));
	return p;
}

void *memalign(size_t align, size_t n)
{
	return aligned_alloc(align, n);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	if (p == MAP_FAILED || !(flags & MAP_ANONYMOUS) || (flags & MAP_STACK) || !(prot & PROT_WRITE))
		return p;
	/* Every private anonymous mapping, whole: small ones merge into VMAs that can hold hugepages. */
	if (advise_all && ready && !(flags & MAP_SHARED)) {
		int saved = errno;

		madvise(p, len, MADV_HUGEPAGE);
		errno = saved;
	} else if (len >= SPAN)
		consider(p, len, flags & MAP_SHARED ? 's' : 'a');
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

/* Reads the rules; a first backtrace() loads the unwinder, so that it need not load inside malloc. */
__attribute__((constructor)) static void init(void)
{
	const char *s = getenv("MAPSCOPE_HUGEPAGES");
	void *ips[2];

	if (!s || !*s)
		return;
	busy = true;
	backtrace(ips, 2);
	busy = false;
	if (!strcmp(s, "all"))
		advise_all = true;
	while (!advise_all && *s && nr_rules < MAX_RULES) {
		if (!(s = ms_advice_key_decode(s, &rules[nr_rules])))
			break;               /* a damaged list: keep the rules read so far */
		nr_rules++;
		if (*s == ';')
			s++;
	}
	ready = true;
}
