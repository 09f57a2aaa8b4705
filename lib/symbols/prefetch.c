/*
 * The prefetch instructions of a binary (symbols/prefetch.h): each
 * executable section disassembled linearly with capstone; bytes that do
 * not decode (data in code, padding) are stepped over one at a time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "symbols/prefetch.h"
#include "symbols/internal.h"
#include "util/grow.h"

/*
 * capstone is opened the first time a binary is scanned, not linked: its
 * 77,000 relocations and 1.3 MiB of pointer tables cost every mapscope
 * command about 8 ms and 370 page faults at start (measured on a PVM
 * guest), and only record --prefetches uses it. The library of the
 * major version the header describes, whose structures these are.
 */
#define CS_SONAME_(v) "libcapstone.so." #v
#define CS_SONAME(v) CS_SONAME_(v)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_insn *(*malloc)(csh);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;
static bool cs_loaded;

static void cs_load(void)
{
	void *h = dlopen(CS_SONAME(CS_API_MAJOR), RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.option = dlsym(h, "cs_option");
	*(void **)&cs.malloc = dlsym(h, "cs_malloc");
	*(void **)&cs.disasm_iter = dlsym(h, "cs_disasm_iter");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	cs_loaded = cs.open && cs.option && cs.malloc && cs.disasm_iter && cs.free && cs.close;
}

/* x86-64's 64-bit registers as tracefs fetch arguments name them; "" where a uprobe cannot fetch it. */
static const char *x86_fetch_name(unsigned int r)
{
	static const struct { unsigned int reg; const char *name; } t[] = {
		{ X86_REG_RAX, "ax" }, { X86_REG_RBX, "bx" }, { X86_REG_RCX, "cx" }, { X86_REG_RDX, "dx" },
		{ X86_REG_RSI, "si" }, { X86_REG_RDI, "di" }, { X86_REG_RBP, "bp" }, { X86_REG_RSP, "sp" },
		{ X86_REG_R8, "r8" }, { X86_REG_R9, "r9" }, { X86_REG_R10, "r10" }, { X86_REG_R11, "r11" },
		{ X86_REG_R12, "r12" }, { X86_REG_R13, "r13" }, { X86_REG_R14, "r14" }, { X86_REG_R15, "r15" },
		{ X86_REG_RIP, "ip" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].reg == r)
			return t[i].name;
	return NULL;
}

static bool x86_prefetch(unsigned int id)
{
	return id == X86_INS_PREFETCHT0 || id == X86_INS_PREFETCHT1 || id == X86_INS_PREFETCHT2 ||
	       id == X86_INS_PREFETCHNTA || id == X86_INS_PREFETCHW || id == X86_INS_PREFETCH;
}

/* An x86 prefetch's memory operand into s: false where a uprobe cannot fetch it. */
static bool x86_site(const cs_insn *in, struct ms_prefetch_site *s)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *op = NULL;
	const char *b = "", *i = "";
	uint8_t k;

	for (k = 0; k < x->op_count; k++)
		if (x->operands[k].type == X86_OP_MEM)
			op = &x->operands[k];
	if (!op || op->mem.segment != X86_REG_INVALID)
		return false;
	if (op->mem.base != X86_REG_INVALID && !(b = x86_fetch_name(op->mem.base)))
		return false;
	if (op->mem.index != X86_REG_INVALID && (!(i = x86_fetch_name(op->mem.index)) || !strcmp(i, "ip")))
		return false;
	snprintf(s->base, sizeof(s->base), "%s", b);
	snprintf(s->index, sizeof(s->index), "%s", i);
	s->scale = (uint8_t)(op->mem.scale > 0 ? op->mem.scale : 1);
	s->disp = op->mem.disp + (!strcmp(b, "ip") ? in->size : 0);   /* RIP-relative: from the next instruction */
	return true;
}

/* arm64 PRFM/PRFUM [Xn{, Xm{, LSL #s}}{, #imm}]. */
static bool arm64_site(const cs_insn *in, struct ms_prefetch_site *s)
{
	const cs_arm64 *a = &in->detail->arm64;
	const cs_arm64_op *op = NULL;
	uint8_t k;

	if (in->id != ARM64_INS_PRFM && in->id != ARM64_INS_PRFUM)
		return false;
	for (k = 0; k < a->op_count; k++)
		if (a->operands[k].type == ARM64_OP_MEM)
			op = &a->operands[k];
	if (!op || op->mem.base < ARM64_REG_X0 || op->mem.base > ARM64_REG_X28 ||
	    (op->mem.index != ARM64_REG_INVALID && (op->mem.index < ARM64_REG_X0 || op->mem.index > ARM64_REG_X28)))
		return false;
	snprintf(s->base, sizeof(s->base), "x%d", op->mem.base - ARM64_REG_X0);
	if (op->mem.index != ARM64_REG_INVALID)
		snprintf(s->index, sizeof(s->index), "x%d", op->mem.index - ARM64_REG_X0);
	s->scale = (uint8_t)(op->shift.type == ARM64_SFT_LSL ? 1u << op->shift.value : 1);
	s->disp = op->mem.disp;
	return true;
}

/* ppc64 dcbt/dcbtst RA, RB: EA = (RA|0) + RB. */
static bool ppc_site(const cs_insn *in, struct ms_prefetch_site *s)
{
	const cs_ppc *p = &in->detail->ppc;

	if ((in->id != PPC_INS_DCBT && in->id != PPC_INS_DCBTST) || p->op_count < 2 ||
	    p->operands[0].type != PPC_OP_REG || p->operands[1].type != PPC_OP_REG)
		return false;
	if (p->operands[0].reg != PPC_REG_R0)
		snprintf(s->base, sizeof(s->base), "gpr%d", p->operands[0].reg - PPC_REG_R0);
	snprintf(s->index, sizeof(s->index), "gpr%d", p->operands[1].reg - PPC_REG_R0);
	s->scale = 1;
	return true;
}

/* Whether in is a prefetch of arch at all (before its operand is looked at). */
static bool is_prefetch(enum ms_prefetch_arch arch, const cs_insn *in)
{
	switch (arch) {
	case MS_PREFETCH_X86_64: return x86_prefetch(in->id);
	case MS_PREFETCH_ARM64: return in->id == ARM64_INS_PRFM || in->id == ARM64_INS_PRFUM;
	default: return in->id == PPC_INS_DCBT || in->id == PPC_INS_DCBTST;
	}
}

static int add_site(enum ms_prefetch_arch arch, const cs_insn *in, uint64_t vaddr, uint64_t offset,
		    struct ms_prefetch_sites *out)
{
	struct ms_prefetch_site s = { .vaddr = in->address, .offset = offset + (in->address - vaddr) };
	bool ok = arch == MS_PREFETCH_X86_64 ? x86_site(in, &s) : arch == MS_PREFETCH_ARM64 ? arm64_site(in, &s) :
		  ppc_site(in, &s);

	if (!ok) {
		out->unsupported++;
		return 0;
	}
	snprintf(s.mnemonic, sizeof(s.mnemonic), "%s", in->mnemonic);
	if (MS_ALLOC_GROW(out->v, out->n + 1, out->cap))
		return -ENOMEM;
	out->v[out->n++] = s;
	return 0;
}

static int open_arch(enum ms_prefetch_arch arch, csh *h)
{
	cs_err e;

	pthread_once(&cs_once, cs_load);
	if (!cs_loaded)
		return -ENOTSUP;
	e = arch == MS_PREFETCH_X86_64 ? cs.open(CS_ARCH_X86, CS_MODE_64, h) :
	    arch == MS_PREFETCH_ARM64 ? cs.open(CS_ARCH_ARM64, CS_MODE_ARM, h) :
	    cs.open(CS_ARCH_PPC, CS_MODE_64 | CS_MODE_BIG_ENDIAN, h);
	if (e != CS_ERR_OK)
		return e == CS_ERR_MEM ? -ENOMEM : -ENOTSUP;
	cs.option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

int ms_prefetch_scan_code(enum ms_prefetch_arch arch, const void *code, size_t len, uint64_t vaddr,
			  uint64_t offset, struct ms_prefetch_sites *out)
{
	const uint8_t *p = code;
	uint64_t addr = vaddr;
	size_t left = len, step = arch == MS_PREFETCH_X86_64 ? 1 : 4;
	cs_insn *in;
	csh h;
	int err = open_arch(arch, &h);

	if (err)
		return err;
	if (!(in = cs.malloc(h))) {
		cs.close(&h);
		return -ENOMEM;
	}
	while (left && !err) {
		if (!cs.disasm_iter(h, &p, &left, &addr, in)) {
			if (left < step)
				break;
			p += step, left -= step, addr += step;   /* not code: step over it */
			continue;
		}
		if (is_prefetch(arch, in))
			err = add_site(arch, in, vaddr, offset, out);
	}
	cs.free(in, 1);
	cs.close(&h);
	return err;
}

static int arch_of(GElf_Half machine, enum ms_prefetch_arch *arch)
{
	switch (machine) {
	case EM_X86_64: *arch = MS_PREFETCH_X86_64; return 0;
	case EM_AARCH64: *arch = MS_PREFETCH_ARM64; return 0;
	case EM_PPC64: *arch = MS_PREFETCH_PPC64; return 0;
	default: return -ENOEXEC;
	}
}

/* Names each site found since `from` by the function symbol that holds it, from the table in scn. */
static void name_sites(Elf *e, Elf_Scn *scn, struct ms_prefetch_sites *out, size_t from)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Shdr sh;
	GElf_Sym sym;
	const char *name;
	size_t i, k, n;

	if (!d || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return;
	n = sh.sh_size / sh.sh_entsize;
	for (k = 0; k < n; k++) {
		if (!gelf_getsym(d, (int)k, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		for (i = from; i < out->n; i++)
			if (!out->v[i].func && out->v[i].vaddr >= sym.st_value &&
			    out->v[i].vaddr - sym.st_value < sym.st_size &&
			    (name = elf_strptr(e, sh.sh_link, sym.st_name))) {
				out->v[i].func = strdup(name);
				out->v[i].func_vaddr = sym.st_value;
				out->v[i].func_size = sym.st_size;
			}
	}
}

/* Every executable section's code, scanned; then the symbol tables name the sites. */
static int scan_elf(Elf *e, enum ms_prefetch_arch arch, struct ms_prefetch_sites *out)
{
	size_t from = out->n;
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	GElf_Shdr sh;
	int err = 0;

	while (!err && (scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) &&
		    (d = elf_getdata(scn, NULL)) && d->d_buf)
			err = ms_prefetch_scan_code(arch, d->d_buf, d->d_size, sh.sh_addr, sh.sh_offset, out);
	for (scn = NULL; !err && from < out->n && (scn = elf_nextscn(e, scn));)
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			name_sites(e, scn, out, from);
	return err;
}

int ms_prefetch_scan_file(const char *path, struct ms_prefetch_sites *out)
{
	enum ms_prefetch_arch arch;
	GElf_Ehdr eh;
	Elf *e;
	int fd = ms_elf_open(path), err;

	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || !gelf_getehdr(e, &eh) || arch_of(eh.e_machine, &arch))
		err = -ENOEXEC;
	else
		err = scan_elf(e, arch, out);
	elf_end(e);
	close(fd);
	return err;
}

void ms_prefetch_sites_release(struct ms_prefetch_sites *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].func);
	free(s->v);
	*s = (struct ms_prefetch_sites){ 0 };
}
