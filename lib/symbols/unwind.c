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
#include <gelf.h>

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

/*
 * A module's ELF, the binary's one read shared (libelf counts the
 * references; each Dwfl's end drops its own).
 */
static int shared_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
		      Elf **elfp)
{
	Elf *elf = *userdata;

	(void)mod; (void)modname; (void)base; (void)file_name;
	*elfp = elf ? elf_begin(-1, ELF_C_READ_MMAP, elf) : NULL;
	return -1;
}

static const Dwfl_Callbacks unwind_callbacks = {
	.find_elf = shared_elf,
	.find_debuginfo = no_debuginfo,
};

void ms_bin_unwind_release(struct bin *b)
{
	if (b->uw_elf)
		elf_end(b->uw_elf);
	if (b->uw_state > 0)
		close(b->uw_fd);
	b->uw_elf = NULL;
	b->uw_state = -1;
}

/*
 * The span dwfl_report_elf() gives a binary's module: an ET_DYN at the
 * base it is given (the first PT_LOAD's aligned vaddr there), an ET_EXEC
 * at its own addresses; to the end of its last PT_LOAD.
 */
static int unwind_span(struct bin *b, const GElf_Ehdr *eh)
{
	bool first = true;
	GElf_Phdr ph;
	size_t n, i;

	if ((eh->e_type != ET_DYN && eh->e_type != ET_EXEC) || elf_getphdrnum(b->uw_elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(b->uw_elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first)
			b->uw_vaddr = ph.p_vaddr & -ph.p_align;
		first = false;
		b->uw_end = ph.p_vaddr + ph.p_memsz;
	}
	b->uw_exec = eh->e_type == ET_EXEC;
	return first ? -1 : 0;
}

/*
 * Every process's unwinder used to read each of its binaries again
 * (dwfl_report_elf(): libelf maps the whole file and reads its headers,
 * and unmaps it at the process's end): with chromium's ~170 processes
 * mapping the same libraries that was most of the unwinding's cost, and
 * the peak memory. Now a binary is read once, and a process's module gets
 * that ELF only when its walk reaches it. 1: read; -1: cannot be.
 */
static int bin_unwind_elf(struct bin *b)
{
	GElf_Ehdr eh;

	if (b->uw_state)
		return b->uw_state;
	b->uw_state = -1;
	if ((b->uw_fd = ms_elf_open(b->path)) < 0)
		return -1;
	b->uw_state = 1;
	b->uw_elf = elf_begin(b->uw_fd, ELF_C_READ_MMAP, NULL);
	if (!b->uw_elf || elf_kind(b->uw_elf) != ELF_K_ELF || !gelf_getehdr(b->uw_elf, &eh) || unwind_span(b, &eh))
		ms_bin_unwind_release(b);
	return b->uw_state;
}

/* Reports instances [from, p->n) of the process's binaries to its Dwfl, each at its bias. */
static void report_bins(struct ms_symbols *s, struct proc_bins *p, size_t from)
{
	uint64_t start, bias;
	Dwfl_Module *mod;
	struct bin *b;
	void **ud;
	size_t i;

	for (i = from; i < p->n; i++) {
		b = &s->bins[p->v[i].bin];
		if (b->state <= 0 || bin_unwind_elf(b) < 0)
			continue;
		start = b->uw_exec ? b->uw_vaddr : p->v[i].bias;
		bias = b->uw_exec ? 0 : p->v[i].bias - b->uw_vaddr;
		mod = dwfl_report_module(p->dwfl, basename(b->path), start, bias + b->uw_end);
		if (mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
			*ud = b->uw_elf;
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
