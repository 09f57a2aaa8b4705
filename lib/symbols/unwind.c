/*
 * Unwinding a user stack copied by record --call-graph dwarf: each
 * process's binaries reported to one Dwfl at their bias, and libdwfl's
 * frame walker reading registers and stack from the copy.
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>

#include "symbols/internal.h"

#include "util/log.h"

static pid_t uw_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct unwind_arg *u = dwfl_arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->tid;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unwind_arg *u = dwfl_arg;
	uint64_t sp = u->regs[7];

	(void)dwfl;
	if (addr < sp || addr - sp + 8 > u->stack_len)
		return false;
	memcpy(result, u->stack + (addr - sp), 8);
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind_arg *u = thread_arg;

	return dwfl_thread_state_registers(thread, 0, 17, (const Dwarf_Word *)u->regs);
}

static const Dwfl_Thread_Callbacks uw_callbacks = {
	.next_thread = uw_next_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

static int uw_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwind_arg *u = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || u->n >= u->max)
		return DWARF_CB_ABORT;
	u->out[u->n++] = pc;
	return DWARF_CB_OK;
}

/*
 * A process's binaries are found as for symbols, but not their separate
 * debug files. libdwfl's walker asks for a module's .debug_frame where
 * .eh_frame does not take it further, which every stack's outermost frame
 * does; with a debug file (libc6-dbg's for libc) that means inflating its
 * compressed DWARF, once per process: 26% of a report of a recording of
 * chromium's processes went there. x86-64 code carries .eh_frame, which is
 * all the walk needs.
 */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base, const char *file_name,
			const char *debuglink_file, GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod; (void)userdata; (void)modname; (void)base; (void)file_name; (void)debuglink_file;
	(void)debuglink_crc; (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks unwind_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = no_debuginfo,
};

/* Reports instances [from, p->n) of the process's binaries to its Dwfl, each at its bias. */
static void report_bins(struct ms_symbols *s, struct proc_bins *p, size_t from)
{
	struct bin *b;
	size_t i;
	int fd;

	for (i = from; i < p->n; i++) {
		b = &s->bins[p->v[i].bin];
		if (b->state > 0 && (fd = ms_elf_open(b->path)) >= 0 &&
		    !dwfl_report_elf(p->dwfl, basename(b->path), b->path, fd, p->v[i].bias, false))
			close(fd);                   /* libdwfl takes it only on success */
	}
}

/*
 * The process's binaries reported at their bias. A process only adds
 * instances (exec and exit clear them), so one that maps more has the new
 * ones added to the Dwfl it has: rebuilding it would read every binary's
 * ELF headers and CFI again at each dlopen of each process, which made
 * unwinding a recording of chromium's ~170 processes spend most of its
 * time in libelf.
 */
static Dwfl *proc_dwfl(struct ms_symbols *s, struct proc_bins *p, uint32_t pid)
{
	if (p->dwfl && p->dwfl_n == p->n)
		return p->dwfl;
	if (p->dwfl && p->dwfl_n < p->n) {
		dwfl_report_begin_add(p->dwfl);
		report_bins(s, p, p->dwfl_n);
		dwfl_report_end(p->dwfl, NULL, NULL);
		p->dwfl_n = p->n;
		return p->dwfl;
	}
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = dwfl_begin(&unwind_callbacks);
	if (!p->dwfl)
		return NULL;
	if (!p->uw && !(p->uw = calloc(1, sizeof(*p->uw))))
		return NULL;
	dwfl_report_begin(p->dwfl);
	report_bins(s, p, 0);
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->uw->tid = pid;
	if (!dwfl_attach_state(p->dwfl, NULL, (pid_t)pid, &uw_callbacks, p->uw)) {
		ms_debug("cannot prepare unwinding for process %u: %s", pid, dwfl_errmsg(-1));
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return NULL;
	}
	p->dwfl_n = p->n;
	return p->dwfl;
}

/* perf's register order for x86_64: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15. */
static bool perf_reg(const uint64_t *regs, uint64_t mask, int bit, uint64_t *v)
{
	if (!(mask >> bit & 1))
		return false;
	*v = regs[__builtin_popcountll(mask & ((1ULL << bit) - 1))];
	return true;
}

MS_EXPORT int ms_symbols_unwind(struct ms_symbols *s, uint32_t pid, const uint64_t *regs, uint64_t mask,
				const unsigned char *stack, size_t stack_len, uint64_t *out, int max)
{
#if defined(__x86_64__)
	static const int to_perf[17] = { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8 };
	struct proc_bins *p = ms_symbols_proc(s, pid, false);
	Dwfl *dwfl;
	int i;

	if (!p || !regs)
		return -ENOENT;
	dwfl = proc_dwfl(s, p, pid);
	if (!dwfl)
		return -ENOENT;
	for (i = 0; i < 17; i++)
		if (!perf_reg(regs, mask, to_perf[i], &p->uw->regs[i]))
			return -EINVAL;
	p->uw->stack = stack;
	p->uw->stack_len = stack_len;
	p->uw->out = out;
	p->uw->n = 0;
	p->uw->max = max;
	dwfl_getthread_frames(dwfl, (pid_t)pid, uw_frame, p->uw);
	return p->uw->n;
#else
	(void)s; (void)pid; (void)regs; (void)mask; (void)stack; (void)stack_len; (void)out; (void)max;
	return -ENOTSUP;
#endif
}
