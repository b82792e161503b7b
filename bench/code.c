/* The binary gen-trace walks: ELF segments and symbols (libelf) and the
 * instruction cache (Zydis).  See code.h. */
#include "code.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Adds the executable PT_LOAD segments of @elf to @c. */
static void load_segments(Elf *elf, struct code *c)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		bench_die(c->bt.binary, elf_errmsg(-1));
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct bench_section *s;

		if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || ph.p_filesz == 0)
			continue;
		if (c->bt.nsect == BENCH_MAX_SECTIONS)
			bench_die(c->bt.binary, "too many executable segments");
		s = &c->bt.sect[c->bt.nsect++];
		s->offset = ph.p_offset;
		s->size = ph.p_filesz;
		s->vaddr = c->bt.bias + ph.p_vaddr;
	}
	if (c->bt.nsect == 0)
		bench_die(c->bt.binary, "no executable PT_LOAD segment");
}

/* Index of the section holding @ip, or -1. */
int code_section_of(const struct code *c, uint64_t ip)
{
	for (size_t i = 0; i < c->bt.nsect; i++)
		if (ip - c->bt.sect[i].vaddr < c->bt.sect[i].size)
			return (int) i;
	return -1;
}

/* Appends the function symbols of symbol table @scn that lie in code. */
static void add_functions(struct code *c, Elf *elf, Elf_Scn *scn,
			  const GElf_Shdr *sh, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		int type;
		uint64_t addr;

		if (!gelf_getsym(data, (int) i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		addr = c->bt.bias + sym.st_value;
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || code_section_of(c, addr) < 0)
			continue;
		if (c->nfuncs == *cap) {
			*cap = *cap ? 2 * *cap : 1024;
			c->funcs = realloc(c->funcs, *cap * sizeof(*c->funcs));
			if (!c->funcs)
				bench_die("functions", strerror(ENOMEM));
		}
		c->funcs[c->nfuncs++] = addr;
	}
	(void) elf;
}

/* Orders addresses for qsort. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/* Collects the distinct function entries of .symtab and .dynsym. */
static void load_functions(Elf *elf, struct code *c)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0, n = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			add_functions(c, elf, scn, &sh, &cap);
	}
	if (c->nfuncs == 0)
		bench_die(c->bt.binary, "no function symbols in executable code");
	qsort(c->funcs, c->nfuncs, sizeof(*c->funcs), cmp_u64);
	for (size_t i = 0; i < c->nfuncs; i++)
		if (n == 0 || c->funcs[i] != c->funcs[n - 1])
			c->funcs[n++] = c->funcs[i];
	c->nfuncs = n;
}

/* Reads the code bytes of each section and allocates its decode cache. */
static void load_bytes(int fd, struct code *c)
{
	for (size_t i = 0; i < c->bt.nsect; i++) {
		const struct bench_section *s = &c->bt.sect[i];

		c->bytes[i] = malloc(s->size);
		c->slots[i] = calloc(s->size, sizeof(struct insn_slot));
		if (!c->bytes[i] || !c->slots[i])
			bench_die("code", strerror(ENOMEM));
		if (pread(fd, c->bytes[i], s->size, (off_t) s->offset) !=
		    (ssize_t) s->size)
			bench_die(c->bt.binary, "short read of an executable segment");
	}
}

/* Loads binary @path; a shared object or PIE is placed at @bias. */
void code_load(struct code *c, const char *path, uint64_t bias)
{
	GElf_Ehdr eh;
	Elf *elf;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		bench_die(path, strerror(errno));
	snprintf(c->bt.binary, sizeof(c->bt.binary), "%s", path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		bench_die(path, "not an x86-64 ELF file");
	c->bt.bias = eh.e_type == ET_DYN ? bias : 0;
	load_segments(elf, c);
	load_functions(elf, c);
	load_bytes(fd, c);
	elf_end(elf);
	close(fd);
	ZydisDecoderInit(&c->zydis, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
}

/* ------------------------------------------------------------------ */
/* Classifying instructions                                           */
/* ------------------------------------------------------------------ */

/* True for Jcc, JrCXZ and LOOPcc, by opcode as libipt tells them: Zydis's
 * COND_BR category also holds XBEGIN and XEND, which need no TNT bit. */
static bool is_cond_branch(const ZydisDecodedInstruction *zi)
{
	if (zi->encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY)
		return false;
	if (zi->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT)
		return (zi->opcode >= 0x70 && zi->opcode <= 0x7f) ||
		       (zi->opcode >= 0xe0 && zi->opcode <= 0xe3);
	return zi->opcode_map == ZYDIS_OPCODE_MAP_0F &&
	       zi->opcode >= 0x80 && zi->opcode <= 0x8f;
}

/* The class libipt gives a control transfer or a privileged instruction
 * (mirroring its pt_ild.c), K_OTHER for the rest. */
static uint8_t classify(const ZydisDecodedInstruction *zi)
{
	/* A direct branch has a relative immediate; ZYDIS_ATTRIB_IS_RELATIVE
	 * is also set for an indirect one through a RIP-relative pointer. */
	bool rel = zi->raw.imm[0].is_relative;
	bool far = zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;

	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		return far ? K_FAR : rel ? K_JMP : K_IND_JMP;
	case ZYDIS_MNEMONIC_CALL:
		return far ? K_FAR : rel ? K_CALL : K_IND_CALL;
	case ZYDIS_MNEMONIC_RET:
		return far ? K_FAR : K_RET;
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ: case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_SYSEXIT: case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER: case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1: case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO:
		return K_FAR;
	case ZYDIS_MNEMONIC_HLT: case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_VMCALL: case ZYDIS_MNEMONIC_VMLAUNCH:
	case ZYDIS_MNEMONIC_VMRESUME: case ZYDIS_MNEMONIC_VMPTRLD:
	case ZYDIS_MNEMONIC_UIRET: case ZYDIS_MNEMONIC_PTWRITE:
		return K_STOP;
	default:
		break;
	}
	if (is_cond_branch(zi))
		return K_COND;
	if (zi->opcode_map == ZYDIS_OPCODE_MAP_0F && zi->opcode == 0x22)
		return K_STOP;	/* mov to a control register */
	return K_OTHER;
}

/* Decodes the instruction at offset @off of section @si into @slot. */
static void decode_slot(struct code *c, size_t si, uint64_t off,
			struct insn_slot *slot)
{
	ZydisDecodedInstruction zi;

	if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&c->zydis, NULL,
			c->bytes[si] + off, c->bt.sect[si].size - off, &zi))) {
		slot->len = 1;
		slot->kind = K_STOP;
		return;
	}
	slot->len = zi.length;
	slot->kind = classify(&zi);
	if (slot->kind == K_JMP || slot->kind == K_CALL ||
	    slot->kind == K_COND)
		slot->disp = (int32_t) zi.raw.imm[0].value.s;
}

/* The instruction at @ip, decoded on first use; NULL outside the code. */
const struct insn_slot *code_insn_at(struct code *c, uint64_t ip)
{
	int si = code_section_of(c, ip);
	uint64_t off;
	struct insn_slot *slot;

	if (si < 0)
		return NULL;
	off = ip - c->bt.sect[si].vaddr;
	slot = &c->slots[si][off];
	if (!slot->len)
		decode_slot(c, (size_t) si, off, slot);
	return slot;
}


void code_free(struct code *c)
{
	for (size_t i = 0; i < c->bt.nsect; i++) {
		free(c->bytes[i]);
		free(c->slots[i]);
	}
	free(c->funcs);
}
