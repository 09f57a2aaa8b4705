/*
 * The syscalls whose tracepoints record follows (kernel/sysevents.h).
 */
#include <string.h>

#include <mapscope/live.h>

#include "kernel/sysevents.h"

/*
 * Changes with no side-band record of their own, and mmap/shmat for their
 * call sites and failures. The mlock family, mseal, the NUMA policy calls,
 * userfaultfd's ioctls and prctl's VMA names change VMA flags, policy or
 * name, which splits and merges VMAs with no record; unlink and rename
 * change the names /proc gives mapped files. execve copies its arguments
 * onto the new program's stack before the exec, and the kernel records
 * that stack's growth as maps of the caller (a vfork child's are its
 * parent's): the stream passes over them. io_destroy unmaps its AIO ring
 * with no munmap. A kernel without one of those tracepoints records
 * without it.
 */
const char *const ms_sysevents[] = {
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise", "shmat", "shmdt",
	"mlock", "mlock2", "munlock", "mlockall", "munlockall",
	"unlink", "unlinkat", "mseal", "mbind", "set_mempolicy_home_node",
	"ioctl", "prctl", "rename", "renameat", "renameat2", "execve", "execveat", "io_destroy", "pkey_mprotect",
};
const size_t ms_nr_sysevents = sizeof(ms_sysevents) / sizeof(ms_sysevents[0]);

/* The frame-pointer walk skips the caller of a syscall wrapper (it builds no frame): the top of the stack holds it. */
#define STACK_TOP_BYTES 64
/* A userfaultfd ioctl's argument: a struct in the caller's frame. */
#define UFFD_STACK_BYTES 2048

/*
 * Entries of calls that are mostly about something else, filtered in the
 * kernel: userfaultfd's UFFDIO_REGISTER and UFFDIO_UNREGISTER, and
 * prctl(PR_SET_VMA) and prctl(PR_SET_MEMORY_MERGE). Their exits cannot be (they hold only the result), so
 * every ioctl's and prctl's exit is recorded; one without its entry is
 * passed over.
 */
const char *ms_sysevent_filter(const char *sc, bool enter)
{
	if (enter && !strcmp(sc, "ioctl"))
		return "cmd == 0xc020aa00 || cmd == 0x8010aa01";
	if (enter && !strcmp(sc, "prctl"))
		return "option == 0x53564d41 || option == 67";
	return NULL;
}

static bool makes_memory(const char *sc)
{
	return !strcmp(sc, "mmap") || !strcmp(sc, "mremap") || !strcmp(sc, "brk") || !strcmp(sc, "shmat");
}

/*
 * The entries whose strings record reads (kernel/ustring.h): a copy of
 * the stack, where a string built in a buffer lies as it was at the call,
 * and a wakeup each, so that record reads the others (literals, the heap)
 * and the working directory while the caller still has them.
 */
static bool points_to_strings(const char *sc)
{
	return !strcmp(sc, "prctl") || !strncmp(sc, "rename", 6);
}

uint32_t ms_sysevent_stack_bytes(const char *sc, bool enter, unsigned int flags, bool regs)
{
	uint32_t bytes = flags & MS_LIVE_CALLCHAIN ? STACK_TOP_BYTES : 0;

	if (!enter || !regs)
		return bytes;
	/*
	 * glibc and most runtimes are built without frame pointers: a copy of
	 * the stack at the entry, unwound later with the binaries' CFI, names
	 * who made the memory, at a cost paid per mapping call, not per fault.
	 */
	if ((flags & MS_LIVE_ALLOC_STACKS) && makes_memory(sc))
		return MS_LIVE_ALLOC_STACK_BYTES;
	if (!strcmp(sc, "ioctl"))
		return UFFD_STACK_BYTES;
	if (points_to_strings(sc))
		return MS_LIVE_ALLOC_STACK_BYTES;
	return bytes;
}

bool ms_sysevent_wakes(const char *sc, bool enter)
{
	return enter && points_to_strings(sc);
}
