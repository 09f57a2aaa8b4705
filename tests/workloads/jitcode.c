/*
 * A tiny JIT that tells perf about its code as JITs do: a jitdump,
 * ./jit-PID.dump, mapped executable so that the recording shows it
 * (perf's jvmti agent does the same). It writes one function (touch one
 * byte per page of n pages) into anonymous executable memory three times:
 * as jit_first at A, as jit_second at the same A (the address reused),
 * then moves jit_second to B (CODE_MOVE). Each runs over fresh pages, so
 * every page fault's ip is in code whose name depends on the time; no
 * traced syscall comes between the runs, so their samples can be one run
 * of the recording's (which must be split where the code changed).
 * Prints the ground truth: "code NAME PAGES".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

struct header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct prefix {
	uint32_t id, total_size;
	uint64_t timestamp;
};

struct load {
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

struct move {
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

/*
 * touch(char *p, long n): for (; n; n--, p += 4096) *p = 1;
 *   test %rsi,%rsi; je out; loop: movb $1,(%rdi); add $4096,%rdi; dec %rsi; jne loop; out: ret
 */
static const unsigned char touch_code[] = {
	0x48, 0x85, 0xf6, 0x74, 0x0f, 0xc6, 0x07, 0x01, 0x48, 0x81, 0xc7, 0x00, 0x10, 0x00, 0x00,
	0x48, 0xff, 0xce, 0x75, 0xf1, 0xc3,
};

static int fd;

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n) {
		perror("jitcode: write");
		exit(1);
	}
}

static void code_load(const char *name, void *at, uint64_t index)
{
	size_t len = strlen(name) + 1;
	struct prefix pr = { 0, (uint32_t)(sizeof(pr) + sizeof(struct load) + len + sizeof(touch_code)), now() };
	struct load l = { (uint32_t)getpid(), (uint32_t)getpid(), (uint64_t)(uintptr_t)at, (uint64_t)(uintptr_t)at,
			  sizeof(touch_code), index };

	memcpy(at, touch_code, sizeof(touch_code));
	pr.timestamp = now();
	put(&pr, sizeof(pr));
	put(&l, sizeof(l));
	put(name, len);
	put(touch_code, sizeof(touch_code));
}

static void code_move(void *from, void *to, uint64_t index)
{
	struct prefix pr = { 1, sizeof(pr) + sizeof(struct move), 0 };
	struct move m = { (uint32_t)getpid(), (uint32_t)getpid(), (uint64_t)(uintptr_t)to, (uint64_t)(uintptr_t)from,
			  (uint64_t)(uintptr_t)to, sizeof(touch_code), index };

	memcpy(to, from, sizeof(touch_code));
	memset(from, 0xcc, sizeof(touch_code));
	pr.timestamp = now();
	put(&pr, sizeof(pr));
	put(&m, sizeof(m));
}

static char *pages;                   /* made at the start: no syscall between the runs */

/* Runs the code at `at` over the next n fresh pages. */
static void run(void *at, long n, const char *name)
{
	((void (*)(char *, long))at)(pages, n);
	pages += n * PAGE;
	printf("code %s %ld\n", name, n);
}

int main(void)
{
	struct header h = { 0x4A695444, 1, sizeof(h), 62 /* EM_X86_64 */, 0, (uint32_t)getpid(), now(), 0 };
	char path[64];
	unsigned char *code;

	snprintf(path, sizeof(path), "jit-%d.dump", getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0) {
		perror("jitcode: open");
		return 1;
	}
	put(&h, sizeof(h));
	/* The marker: the recording's map of the dump is how a reader finds it. */
	if (mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror("jitcode: mmap of the dump");
		return 1;
	}
	code = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitcode: mmap of the code");
		return 1;
	}
	pages = mmap(NULL, 600 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED) {
		perror("jitcode: mmap");
		return 1;
	}
	printf("dump %s\n", path);
	code_load("jit_first", code + 0x100, 1);
	run(code + 0x100, 300, "jit_first");
	code_load("jit_second", code + 0x100, 2);       /* the same address, other code */
	run(code + 0x100, 200, "jit_second");
	code_move(code + 0x100, code + PAGE + 0x40, 2);
	run(code + PAGE + 0x40, 100, "jit_second");
	close(fd);
	return 0;
}
