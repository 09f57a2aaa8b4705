/*
 * For every unmap path, the registration cache of examples/regcache.c must
 * never return an entry for memory that has been unmapped, and the
 * generation must have moved by the time the unmapping call returned. Built
 * twice: dynamic, and static (no libc symbol to interpose on). Run in each
 * watch mode (MAPSCOPE_WATCH=kernel|interpose|uffd, or the one the open
 * falls back to): each mode's blind spots are checked to be what watch.h
 * says, and printed as "blind spot: ...". A free() inside the drain (the
 * notification path) must not hang, as libfabric's uffd monitor did.
 * Exit 0 all passed, 1 a failure, 77 skipped (no privileges).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "regcache.h"

#define PAGE 4096UL

static struct regcache rc;
static int failures, checks;
static enum ms_watch_mode mode;
static const char *const mode_names[] = { "kernel", "interpose", "uffd" };

static char *map_pages(size_t n, int flags)
{
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(p, 1, n * PAGE);
	return p;
}

/*
 * uffd mode: the watch's reader publishes a kernel event a moment after
 * the unmapping thread is let go, and interposition has already published
 * a libc call's. On a loaded machine the reader's copy of the last unmap
 * (a duplicate) can land after the next registration of the same address:
 * it drops that fresh entry, which costs a registration, never a stale
 * handle. Waits until nothing has come for 20 ms (at most a second).
 */
static void settle(void)
{
	uint64_t g;
	int i, quiet = 0;

	if (mode != MS_WATCH_UFFD)
		return;
	for (i = 0; i < 1000 && quiet < 20; i++) {
		g = ms_watch_generation(rc.watch);
		usleep(1000);
		quiet = ms_watch_generation(rc.watch) == g ? quiet + 1 : 0;
	}
	regcache_cached(&rc, NULL, 0);          /* drains what came */
}

/* Registers [p, p+len) and checks that it is cached; returns the generation before the unmap. */
static uint64_t arm(const char *path, void *p, size_t len)
{
	regcache_lookup(&rc, p, len);
	if (!regcache_cached(&rc, p, len) && mode == MS_WATCH_UFFD) {
		settle();                               /* a late duplicate dropped it: once more */
		regcache_lookup(&rc, p, len);
	}
	if (!regcache_cached(&rc, p, len)) {
		printf("FAIL: %s: the range was not cached after registering\n", path);
		failures++;
	}
	return ms_watch_generation(rc.watch);
}

/* After the unmapping call returned: the generation moved, and nothing stale is handed out. */
static void verify(const char *path, uint64_t before, void *p, size_t len)
{
	uint64_t after = ms_watch_generation(rc.watch);

	checks++;
	if (after == before) {
		printf("FAIL: %s: the generation did not change\n", path);
		failures++;
		return;
	}
	if (regcache_cached(&rc, p, len)) {
		printf("FAIL: %s: the cache still returns an entry for unmapped memory %p+%zu\n", path, p, len);
		failures++;
		return;
	}
}

/* uffd mode, a raw syscall: the reader thread queues the event just after the unmapper is let go. */
static void verify_soon(const char *path, uint64_t before, void *p, size_t len)
{
	int i;

	for (i = 0; i < 5000 && ms_watch_generation(rc.watch) == before; i++)
		usleep(1000);
	verify(path, before, p, len);
}

/* A path this mode cannot see (watch.h): the cache must still hold the entry, or the test shows nothing. */
static void verify_blind(const char *path, uint64_t before, void *p, size_t len)
{
	checks++;
	if (ms_watch_generation(rc.watch) != before || !regcache_cached(&rc, p, len)) {
		printf("FAIL: %s: seen in %s mode, which watch.h says cannot see it\n", path, mode_names[mode]);
		failures++;
		return;
	}
	printf("blind spot: %s is not seen in %s mode (as watch.h says)\n", path, mode_names[mode]);
	regcache_lookup(&rc, p, len);
}

static void report(const char *path, int before_failures)
{
	if (failures == before_failures)
		printf("ok: %s\n", path);
}

static void *unmapper(void *arg)
{
	munmap(arg, 4 * PAGE);
	return NULL;
}

static pthread_mutex_t old_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t old_cond = PTHREAD_COND_INITIALIZER;
static void *old_target;
static int old_done;

/* A thread that exists before the watch opens, and later unmaps on request. */
static void *old_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&old_lock);
	while (!old_target)
		pthread_cond_wait(&old_cond, &old_lock);
	munmap(old_target, 4 * PAGE);
	old_done = 1;
	pthread_cond_broadcast(&old_cond);
	pthread_mutex_unlock(&old_lock);
	return NULL;
}

/*
 * The notification path frees memory: a drain that, at its first event,
 * frees a large tracked block, which glibc gives back with its internal
 * munmap. In uffd mode the unmapping thread (this one, inside free) waits
 * for the library's reader, which must not wait for anything of ours.
 * Kernel and uffd modes see that unmap; interposition cannot (libc's
 * internal call), which is its blind spot.
 */
static void free_in_drain(void)
{
	struct ms_watch_event ev;
	size_t len = 1 << 20;
	char *big = malloc(len), *p = map_pages(1, MAP_PRIVATE | MAP_ANONYMOUS);
	uint64_t lo = (uint64_t)big, g;
	int seen = 0, freed = 0, i;
#ifdef __SANITIZE_ADDRESS__
	const int asan = 1;
#else
	const int asan = 0;
#endif

	memset(big, 1, len);
	regcache_lookup(&rc, big, len);          /* tracks it */
	while (ms_watch_next(rc.watch, &ev) > 0)
		;
	g = ms_watch_generation(rc.watch);
	munmap(p, PAGE);
	for (i = 0; i < 5000 && !seen; i++) {
		while (ms_watch_next(rc.watch, &ev) > 0) {
			if (!freed++)
				free(big);       /* inside the notification path */
			seen |= ev.change.release_start <= lo && lo < ev.change.release_end;
		}
		if (mode != MS_WATCH_UFFD || !freed || asan)
			break;                  /* under ASan free() keeps the block: nothing to wait for */
		usleep(1000);
	}
	checks++;
	(void)g;
#ifdef __SANITIZE_ADDRESS__
	printf("note: free() under ASan keeps the block (quarantine): only the absence of a hang is checked\n");
	return;
#endif
	if (!freed) {
		printf("FAIL: free() in the drain: the munmap before it was not seen\n");
		failures++;
	} else if (mode == MS_WATCH_INTERPOSE && seen) {
		printf("FAIL: free() in the drain: interposition saw glibc's internal munmap\n");
		failures++;
	} else if (mode == MS_WATCH_INTERPOSE) {
		printf("blind spot: free() of a large block (glibc's internal munmap) is not seen in interpose mode\n");
	} else if (!seen) {
		printf("FAIL: free() in the drain: the unmap of the freed block was not seen in %s mode\n", mode_names[mode]);
		failures++;
	}
}

int main(void)
{
	pthread_t t, old;
	uint64_t g;
	char *p, *q, *brk0;
	int f, i, id, err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * Large blocks always mmap'd, as under ASan: if draining the watch freed
	 * and mapped memory, each drain would make a new event and a drain loop
	 * would never end. The test's timeout catches that.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	pthread_create(&old, NULL, old_thread, NULL);
	err = regcache_init(&rc);
	if (err == -ENOTSUP && getenv("MAPSCOPE_WATCH") && !strcmp(getenv("MAPSCOPE_WATCH"), "interpose")) {
		printf("blind spot: a static binary has no relocations to patch: interposition refuses to open\n");
		printf("ok: interposition says -ENOTSUP here\n");
		return 0;
	}
	if (err == -EACCES || err == -EPERM || err == -ENOENT) {
		printf("SKIP: cannot open the watch (%s): needs root or CAP_PERFMON and tracefs\n", strerror(-err));
		return 77;
	}
	if (err) {
		printf("FAIL: ms_watch_open: %s\n", strerror(-err));
		return 1;
	}
	mode = ms_watch_mode(rc.watch);
	printf("mode: %s\n", mode_names[mode]);
	if (getenv("MAPSCOPE_WATCH") && strcmp(getenv("MAPSCOPE_WATCH"), mode_names[mode])) {
		printf("FAIL: MAPSCOPE_WATCH=%s, but the watch is in %s mode\n", getenv("MAPSCOPE_WATCH"), mode_names[mode]);
		failures++;
	}

	f = failures;
	for (i = 0; i < 200; i++) {               /* the same path, many times over */
		p = map_pages(4, MAP_PRIVATE | MAP_ANONYMOUS);
		g = arm("munmap", p, 4 * PAGE);
		munmap(p, 4 * PAGE);
		verify("munmap", g, p, 4 * PAGE);
	}
	report("munmap (200 times)", f);

	f = failures;
	p = map_pages(4, MAP_PRIVATE | MAP_ANONYMOUS);
	g = arm("syscall(SYS_munmap)", p, 4 * PAGE);
	syscall(SYS_munmap, p, 4 * PAGE);
	if (mode == MS_WATCH_INTERPOSE)
		verify_blind("syscall(SYS_munmap)", g, p, 4 * PAGE);
	else if (mode == MS_WATCH_UFFD)
		verify_soon("syscall(SYS_munmap) on a tracked range", g, p, 4 * PAGE);
	else
		verify("syscall(SYS_munmap)", g, p, 4 * PAGE);
	report("syscall(SYS_munmap) directly", f);

	if (mode == MS_WATCH_UFFD) {
		/* Not registered, so not tracked: the userfaultfd's blind spot, as interposition's. */
		p = map_pages(4, MAP_PRIVATE | MAP_ANONYMOUS);
		settle();                               /* the last step's late events first */
		g = ms_watch_generation(rc.watch);
		syscall(SYS_munmap, p, 4 * PAGE);
		usleep(100000);                 /* a tracked range's event would be queued within microseconds */
		checks++;
		if (ms_watch_generation(rc.watch) != g) {
			printf("FAIL: a raw munmap of an untracked range was seen in uffd mode\n");
			failures++;
		} else {
			printf("blind spot: syscall(SYS_munmap) of an untracked range is not seen in uffd mode (as watch.h says)\n");
		}
	}

	f = failures;
	p = map_pages(9, MAP_PRIVATE | MAP_ANONYMOUS);
	mprotect(p + 8 * PAGE, PAGE, PROT_NONE);  /* no room: it must move */
	g = arm("mremap move", p, 8 * PAGE);
	q = mremap(p, 8 * PAGE, 64 * PAGE, MREMAP_MAYMOVE);
	if (q == MAP_FAILED || q == p) {
		printf("FAIL: mremap did not move\n");
		failures++;
	}
	verify("mremap move", g, p, 8 * PAGE);
	report("mremap with a move", f);

	f = failures;
	p = map_pages(8, MAP_PRIVATE | MAP_ANONYMOUS);
	g = arm("mremap shrink", p, 8 * PAGE);
	mremap(p, 8 * PAGE, 2 * PAGE, 0);
	verify("mremap shrink", g, p, 8 * PAGE);
	report("mremap shrinking", f);

	f = failures;
	p = map_pages(8, MAP_PRIVATE | MAP_ANONYMOUS);
	g = arm("MAP_FIXED", p + 2 * PAGE, 2 * PAGE);
	mmap(p + 2 * PAGE, 2 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	verify("MAP_FIXED", g, p + 2 * PAGE, 2 * PAGE);
	report("MAP_FIXED over a cached range", f);

	f = failures;
	brk0 = sbrk(0);
	if (brk(brk0 + 16 * PAGE) == 0) {
		memset(brk0, 1, 16 * PAGE);
		g = arm("brk shrink", brk0 + 8 * PAGE, 8 * PAGE);
		brk(brk0);
		verify("brk shrink", g, brk0 + 8 * PAGE, 8 * PAGE);
		report("brk shrink", f);
	} else {
		printf("FAIL: brk growth failed\n");
		failures++;
	}

	{
		static const struct { int advice; const char *name; int flags; } adv[] = {
			{ MADV_DONTNEED, "madvise(MADV_DONTNEED)", MAP_PRIVATE | MAP_ANONYMOUS },
			{ MADV_FREE, "madvise(MADV_FREE)", MAP_PRIVATE | MAP_ANONYMOUS },
			{ MADV_REMOVE, "madvise(MADV_REMOVE)", MAP_SHARED | MAP_ANONYMOUS },
		};
		for (i = 0; i < 3; i++) {
			f = failures;
			p = map_pages(4, adv[i].flags);
			g = arm(adv[i].name, p, 4 * PAGE);
			if (madvise(p, 4 * PAGE, adv[i].advice)) {
				printf("FAIL: %s: %s\n", adv[i].name, strerror(errno));
				failures++;
			}
			verify(adv[i].name, g, p, 4 * PAGE);
			report(adv[i].name, f);
		}
	}

	f = failures;
	id = shmget(IPC_PRIVATE, 4 * PAGE, IPC_CREAT | 0600);
	p = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	memset(p, 1, 4 * PAGE);
	g = arm("shmdt", p, 4 * PAGE);
	shmdt(p);
	verify("shmdt", g, p, 4 * PAGE);
	report("shmdt", f);

	f = failures;
	p = map_pages(4, MAP_PRIVATE | MAP_ANONYMOUS);
	g = arm("munmap in a new thread", p, 4 * PAGE);
	pthread_create(&t, NULL, unmapper, p);
	pthread_join(t, NULL);
	verify("munmap in a new thread", g, p, 4 * PAGE);
	report("munmap from another thread (created after the watch)", f);

	f = failures;
	p = map_pages(4, MAP_PRIVATE | MAP_ANONYMOUS);
	g = arm("munmap in an older thread", p, 4 * PAGE);
	pthread_mutex_lock(&old_lock);
	old_target = p;
	pthread_cond_broadcast(&old_cond);
	while (!old_done)
		pthread_cond_wait(&old_cond, &old_lock);
	pthread_mutex_unlock(&old_lock);
	verify("munmap in an older thread", g, p, 4 * PAGE);
	pthread_join(old, NULL);
	report("munmap from another thread (older than the watch)", f);

	f = failures;
	free_in_drain();
	report("free() inside the drain", f);

	printf("%d checks, %d failures; cache: %lu hits, %lu misses, %lu invalidated\n",
	       checks, failures, rc.hits, rc.misses, rc.invalidated);
	regcache_release(&rc);
	return failures ? 1 : 0;
}
