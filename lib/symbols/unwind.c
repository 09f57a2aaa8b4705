/*
 * Unwinding a user stack copied by record --call-graph dwarf: each
 * process's binaries reported to one Dwfl at their bias, and libdwfl's
 * frame walker reading registers and stack from the copy; or, where every
 * frame of the stack has a simple CFI row or none at all (the walker then
 * follows the frame pointer), the same walk by those rows, each decoded
 * once per binary and address (cfirule.c).
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <gelf.h>

#include "symbols/internal.h"

#include "util/grow.h"
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
	const struct unwind_arg *u = dwfl_arg;
	const struct ms_cfistack st = { u->stack, u->stack_len, u->regs[MS_CFI_SP] };

	(void)dwfl;
	return ms_cfistack_read(&st, addr, result);
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
	struct bin_unwind *bu = *userdata;

	(void)mod; (void)modname; (void)base; (void)file_name;
	*elfp = bu ? ms_bin_elf_ref(bu->elf) : NULL;
	return -1;
}

static const Dwfl_Callbacks unwind_callbacks = {
	.find_elf = shared_elf,
	.find_debuginfo = no_debuginfo,
};

void ms_bin_unwind_release(struct bin *b)
{
	if (b->uw) {
		dwarf_cfi_end(b->uw->cfi);
		ms_cfirules_free(b->uw->rules);
		free(b->uw);
	}
	b->uw = NULL;
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

	if ((eh->e_type != ET_DYN && eh->e_type != ET_EXEC) || elf_getphdrnum(b->uw->elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(b->uw->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first)
			b->uw_vaddr = ph.p_vaddr & -ph.p_align;
		first = false;
		b->uw_end = ph.p_vaddr + ph.p_memsz;
	}
	b->uw_exec = eh->e_type == ET_EXEC;
	b->uw->x86_64 = eh->e_machine == EM_X86_64 && eh->e_ident[EI_CLASS] == ELFCLASS64;
	return first ? -1 : 0;
}

/*
 * Whether elf has a section libdw would read as .debug_frame (compressed,
 * or under another prefix, too): where it has, libdwfl looks there for a
 * row .eh_frame lacks before it follows the frame pointer.
 */
static bool has_debug_frame(Elf *elf)
{
	Elf_Scn *scn = NULL;
	const char *name;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return true;
	while ((scn = elf_nextscn(elf, scn)))
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strstr(name, "debug_frame"))
			return true;
	return false;
}

/*
 * Every process's unwinder used to read each of its binaries again
 * (dwfl_report_elf(): libelf maps the whole file and reads its headers,
 * and unmaps it at the process's end): with chromium's ~170 processes
 * mapping the same libraries that was most of the unwinding's cost, and
 * the peak memory. Now a binary is read once, the file its symbols read
 * too (ms_bin_elf()), and a process's module gets that ELF only when its
 * walk reaches it. 1: read; -1: cannot be.
 */
static int bin_unwind_elf(struct bin *b)
{
	GElf_Ehdr eh;
	Elf *elf;

	if (b->uw_state)
		return b->uw_state;
	b->uw_state = -1;
	if (ms_bin_elf(b, &elf) || !(b->uw = calloc(1, sizeof(*b->uw))))
		return -1;
	b->uw->elf = elf;
	b->uw_state = 1;
	if (!gelf_getehdr(elf, &eh) || unwind_span(b, &eh))
		ms_bin_unwind_release(b);
	else
		b->uw->debug_frame = has_debug_frame(elf);
	return b->uw_state;
}

/* The span dwfl_report_module() gets for instance i of p: 0, or -1 where report_bins() leaves it out. */
static int inst_span(struct ms_symbols *s, const struct proc_bins *p, size_t i, struct uw_span *out)
{
	struct bin *b = &s->bins[p->v[i].bin];

	if (b->state <= 0 || bin_unwind_elf(b) < 0)
		return -1;
	out->lo = b->uw_exec ? b->uw_vaddr : p->v[i].bias;
	out->bias = b->uw_exec ? 0 : p->v[i].bias - b->uw_vaddr;
	out->hi = out->bias + b->uw_end;
	out->bin = p->v[i].bin;
	return 0;
}

/* Whether dwfl_attach_state() may take the process's backend from a module of this name. */
static bool attachable(const char *name)
{
	size_t n = strlen(name);

	return strncmp(name, "[vdso: ", 7) && !(n >= 10 && !strcmp(name + n - 10, " (deleted)"));
}

static int by_lo(const void *a, const void *b)
{
	const struct uw_span *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/*
 * p's spans by address, one for each module dwfl_report_module() would
 * have (a binary reported twice over the same addresses, as an ET_EXEC
 * whose text was mapped again, is one module), and whether any two share
 * an address or one is empty: then the walk is libdwfl's. A few new spans
 * (from old on) are sorted alone and merged into the sorted ones, the old
 * first where two start alike, as a stable sort of them all puts them:
 * not every span sorted again at each binary a process maps.
 */
static int sort_spans(struct proc_bins *p, size_t old)
{
	struct uw_span fresh[32], t, *v, *sp, *prev;
	const size_t nr_new = p->uw_nr - old;
	const bool merge = old && nr_new <= sizeof(fresh) / sizeof(fresh[0]) && p->uw_sorted_nr;
	size_t i, j, n = 0, k = nr_new, a = merge ? p->uw_sorted_nr : 0, all = merge ? a + k : p->uw_nr;

	if (old && !nr_new)
		return 0;                /* nothing new: the spans and what was said of them stand */
	p->uw_overlap = false;
	p->uw_sorted_nr = 0;
	if (!p->uw_nr)
		return 0;                /* no binary yet: memcpy and qsort must not be given NULL */
	if (MS_GROW(p->uw_sorted, p->uw_nr, p->uw_sorted_cap, 16, SIZE_MAX, false))
		return -ENOMEM;
	v = p->uw_sorted;
	if (!merge) {
		memcpy(v, p->uw_spans, p->uw_nr * sizeof(*v));
		qsort(v, p->uw_nr, sizeof(*v), by_lo);
	} else {
		for (i = 0; i < k; i++) {          /* insertion, stable */
			t = p->uw_spans[old + i];
			for (j = i; j && fresh[j - 1].lo > t.lo; j--)
				fresh[j] = fresh[j - 1];
			fresh[j] = t;
		}
		for (i = all; k; i--)              /* from the back: the old first where two start alike */
			v[i - 1] = a && v[a - 1].lo > fresh[k - 1].lo ? v[--a] : fresh[--k];
	}
	for (i = 0; i < all; i++) {
		sp = &v[i];
		prev = n ? &v[n - 1] : NULL;
		if (prev && sp->lo == prev->lo && sp->hi == prev->hi && sp->bin == prev->bin)
			continue;
		p->uw_overlap |= sp->lo >= sp->hi || (prev && sp->lo < prev->hi);
		v[n++] = *sp;
	}
	p->uw_sorted_nr = n;
	return 0;
}

/*
 * Brings p's spans up to its instances as its Dwfl would have them, were
 * it built at each stack as it used to be: from every instance where the
 * spans were reset (or held none a Dwfl could attach to), else with the
 * instances added since; report_bins() reports them. 0 or -ENOMEM.
 */
static int proc_spans(struct ms_symbols *s, struct proc_bins *p)
{
	struct uw_span sp;
	size_t i, old, from = p->uw_valid && p->uw_attachable && p->uw_n <= p->n ? p->uw_n : 0;

	if (from && from == p->n)
		return 0;
	if (!from) {
		ms_unwind_proc_reset(p);
		p->uw_nr = p->uw_attachable = 0;
		p->uw_other = false;
	}
	old = p->uw_nr;
	for (i = from; i < p->n; i++) {
		if (inst_span(s, p, i, &sp))
			continue;
		if (MS_GROW(p->uw_spans, p->uw_nr + 1, p->uw_cap, 16, SIZE_MAX, false))
			goto nomem;
		p->uw_spans[p->uw_nr++] = sp;
		p->uw_other |= !s->bins[sp.bin].uw->x86_64;
		p->uw_attachable += attachable(basename(s->bins[sp.bin].path));
	}
	if (sort_spans(p, old))
		goto nomem;
	p->uw_n = p->n;
	p->uw_valid = true;
	return 0;
nomem:
	p->uw_valid = false;             /* made again, whole, at the next stack: never the spans half added or unsorted */
	return -ENOMEM;
}

/* Reports spans [p->uw_dwfl_nr, p->uw_nr) to p's Dwfl, each with its binary's ELF for libdwfl's find_elf. */
static void report_bins(struct ms_symbols *s, struct proc_bins *p)
{
	const struct uw_span *sp;
	Dwfl_Module *mod;
	struct bin *b;
	void **ud;

	for (; p->uw_dwfl_nr < p->uw_nr; p->uw_dwfl_nr++) {
		sp = &p->uw_spans[p->uw_dwfl_nr];
		b = &s->bins[sp->bin];
		mod = dwfl_report_module(p->dwfl, basename(b->path), sp->lo, sp->hi);
		if (mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
			*ud = b->uw;
	}
}

/*
 * The process's binaries reported at their bias, from p's spans: made
 * only where libdwfl walks a stack, the rows not. A process only
 * adds instances (exec and exit reset them), so one that maps more has the
 * new ones added to the Dwfl it has: rebuilding it would read every
 * binary's ELF headers and CFI again at each dlopen of each process, which
 * made unwinding a recording of chromium's ~170 processes spend most of
 * its time in libelf.
 */
static Dwfl *proc_dwfl(struct ms_symbols *s, struct proc_bins *p, uint32_t pid)
{
	if (p->dwfl && p->uw_dwfl_nr < p->uw_nr) {
		dwfl_report_begin_add(p->dwfl);
		report_bins(s, p);
		dwfl_report_end(p->dwfl, NULL, NULL);
	}
	if (p->dwfl)
		return p->dwfl;
	p->dwfl = dwfl_begin(&unwind_callbacks);
	if (!p->dwfl)
		return NULL;
	p->uw_dwfl_nr = 0;
	dwfl_report_begin(p->dwfl);
	report_bins(s, p);
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->uw->tid = pid;
	if (!dwfl_attach_state(p->dwfl, NULL, (pid_t)pid, &uw_callbacks, p->uw)) {
		ms_debug("cannot prepare unwinding for process %u: %s", pid, dwfl_errmsg(-1));
		ms_unwind_proc_reset(p);
		return NULL;
	}
	return p->dwfl;
}

void ms_unwind_proc_reset(struct proc_bins *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->uw_valid = false;
}

void ms_unwind_proc_release(struct proc_bins *p)
{
	ms_unwind_proc_reset(p);
	free(p->uw);
	free(p->uw_spans);
	free(p->uw_sorted);
}

/* perf's register order for x86_64: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15. */
static bool perf_reg(const uint64_t *regs, uint64_t mask, int bit, uint64_t *v)
{
	if (!(mask >> bit & 1))
		return false;
	*v = regs[__builtin_popcountll(mask & ((1ULL << bit) - 1))];
	return true;
}

/*
 * The span of the module dwfl_addrmodule() gives addr in p's Dwfl, from
 * spans none of which overlap (segment.c's table then has each module's
 * addresses as one segment): the one holding addr or, where none does,
 * one that ends at addr (dwfl_addrsegment() takes "the upper boundary of
 * the previous segment's module"); NULL where no module would be found.
 */
static const struct uw_span *span_at(const struct proc_bins *p, uint64_t addr)
{
	size_t lo = 0, hi = p->uw_sorted_nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->uw_sorted[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr <= p->uw_sorted[lo - 1].hi ? &p->uw_sorted[lo - 1] : NULL;
}

/* b's .eh_frame as dwfl_module_eh_cfi() reads it for each process's module of b; NULL where it has none. */
static Dwarf_CFI *bin_cfi(struct bin_unwind *bu)
{
	if (!bu->cfi_state) {
		bu->cfi = dwarf_getcfi_elf(bu->elf);
		bu->cfi_state = bu->cfi ? 1 : -1;
	}
	return bu->cfi;
}

/*
 * One frame of the walk __libdwfl_frame_unwind() makes, from the frame
 * whose pc looked up is look: by its module's .eh_frame row where that is
 * simple; where the module has no row for it and no .debug_frame, or no
 * module holds look, by the frame pointer as libdwfl's x86-64 backend
 * does. 1: next holds the caller's frame, with *pc; 0: the walk ends
 * there; or -why (enum ms_unwind_why): libdwfl has to walk this stack.
 */
static int step(struct ms_symbols *s, struct proc_bins *p, uint64_t look, const struct ms_cfiregs *cur,
		const struct ms_cfistack *st, struct ms_cfiregs *next, uint64_t *pc)
{
	const struct uw_span *sp = span_at(p, look);
	const struct ms_cfirule *r;
	struct bin_unwind *bu;

	if (sp) {
		bu = s->bins[sp->bin].uw;
		if (bin_cfi(bu)) {
			if (!(r = ms_cfirules_get(&bu->rules, bu->cfi, look - sp->bias)))
				return -MS_CFI_OTHER;
			if (r->why == MS_CFI_SIMPLE)
				return ms_cfirule_step(r, cur, st, next, pc);
			if (r->why != MS_CFI_NO_FDE)
				return -r->why;
		}
		if (bu->debug_frame)
			return -MS_UW_DEBUG_FRAME;
	}
	return ms_cfi_fp_step(cur, st, next, pc);
}

/*
 * The walk dwfl_getthread_frames() makes, by step(): each frame's pc
 * recorded, then looked up (less one past the first frame: a return
 * address may be the next function's first byte) and its caller's frame
 * found. u->n frames; -1 where the walk ended as libdwfl's would, or the
 * reason (enum ms_unwind_why) libdwfl has to walk the stack.
 */
static int walk_rows(struct ms_symbols *s, struct proc_bins *p, struct unwind_arg *u)
{
	const struct ms_cfistack st = { u->stack, u->stack_len, u->regs[MS_CFI_SP] };
	struct ms_cfiregs regs[2] = { 0 };     /* an unset register's slot is read, never used */
	uint64_t pc = u->regs[MS_CFI_RA];
	int cur = 0, on;

	if (p->uw_other)
		return MS_UW_NOT_X86_64;
	if (p->uw_overlap)
		return MS_UW_OVERLAP;
	memcpy(regs[0].r, u->regs, sizeof(regs[0].r));
	regs[0].set = (1u << MS_CFI_NREGS) - 1;
	for (u->n = 0; u->n < u->max; cur ^= 1) {
		u->out[u->n++] = pc;
		if (u->n == u->max)
			break;               /* libdwfl's callback stops the walk at the next frame */
		on = step(s, p, u->n == 1 ? pc : pc - 1, &regs[cur], &st, &regs[cur ^ 1], &pc);
		if (on < 0)
			return -on;
		if (!on)
			break;
	}
	return -1;
}

/*
 * A stack walked by its rows where each frame has a simple one (or none,
 * and no .debug_frame, where libdwfl follows the frame pointer), by
 * libdwfl otherwise, with the Dwfl it had; the process's binaries as they
 * would have been reported to it, the Dwfl itself made only then.
 */
MS_EXPORT int ms_symbols_unwind(struct ms_symbols *s, uint32_t pid, const uint64_t *regs, uint64_t mask,
				const unsigned char *stack, size_t stack_len, uint64_t *out, int max)
{
#if defined(__x86_64__)
	static const int to_perf[17] = { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8 };
	struct proc_bins *p = ms_symbols_proc(s, pid, false);
	struct unwind_arg *u;
	uint64_t r[17];
	Dwfl *dwfl;
	int i, why = 0;                  /* always set before it is read; -O with ASan cannot tell */

	if (!p || !regs || proc_spans(s, p) || !p->uw_attachable)
		return -ENOENT;                  /* as where libdwfl would have no module to attach to */
	if (!p->uw && !(p->uw = calloc(1, sizeof(*p->uw))))
		return -ENOENT;
	for (i = 0; i < 17; i++)
		if (!perf_reg(regs, mask, to_perf[i], &r[i]))
			return -EINVAL;
	u = p->uw;
	*u = (struct unwind_arg){ .tid = pid, .stack = stack, .stack_len = stack_len, .out = out, .max = max };
	memcpy(u->regs, r, sizeof(r));
	if (!s->unwind_dwfl && (why = walk_rows(s, p, u)) < 0) {
		s->unwind_stats.rules++;
		return u->n;
	}
	if (!s->unwind_dwfl)
		s->unwind_stats.why[why]++;
	s->unwind_stats.dwfl++;
	if (!(dwfl = proc_dwfl(s, p, pid)))
		return -ENOENT;
	u->n = 0;
	dwfl_getthread_frames(dwfl, (pid_t)pid, uw_frame, u);
	return u->n;
#else
	(void)s; (void)pid; (void)regs; (void)mask; (void)stack; (void)stack_len; (void)out; (void)max;
	return -ENOTSUP;
#endif
}

void ms_symbols_unwind_dwfl_only(struct ms_symbols *s, bool on)
{
	s->unwind_dwfl = on;
}

void ms_symbols_unwind_stats(const struct ms_symbols *s, struct ms_unwind_stats *st)
{
	*st = s->unwind_stats;
}

void ms_symbols_unwind_log(const struct ms_symbols *s)
{
	const struct ms_unwind_stats *st = &s->unwind_stats;

	if (!st->rules && !st->dwfl)
		return;
	ms_debug("unwound %llu stacks by CFI rows, %llu by libdwfl: expression %llu, signal frame %llu, "
		 ".debug_frame %llu, overlapping binaries %llu, not x86-64 %llu, other %llu",
		 (unsigned long long)st->rules, (unsigned long long)st->dwfl,
		 (unsigned long long)st->why[MS_CFI_EXPR], (unsigned long long)st->why[MS_CFI_SIGNAL],
		 (unsigned long long)st->why[MS_UW_DEBUG_FRAME], (unsigned long long)st->why[MS_UW_OVERLAP],
		 (unsigned long long)st->why[MS_UW_NOT_X86_64], (unsigned long long)st->why[MS_CFI_OTHER]);
}
