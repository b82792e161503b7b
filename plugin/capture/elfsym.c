/* Symbol lookup for --start and --filter; see elfsym.h.  The symbol
 * tables are searched by history/ (libdwfl, as gdb searches them); this
 * file adds where the symbol is in the file and, for "main" in a
 * stripped program, the argument its entry code passes to
 * __libc_start_main. */
#include <config.h>

#include "capture/elfsym.h"
#include "error.h"
#include "history.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include <Zydis/Zydis.h>

/* Bytes of the entry code searched for the call to __libc_start_main
 * (glibc's _start reaches it in 12 instructions, 46 bytes). */
#define ENTRY_BYTES 128

/* The loadable segment of @elf whose file bytes hold link-time address
 * @addr, into @ph; false if none does. */
static bool segment_of(Elf *elf, uint64_t addr, GElf_Phdr *ph)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int) i, ph) && ph->p_type == PT_LOAD &&
		    addr - ph->p_vaddr < ph->p_filesz)
			return true;
	return false;
}

/* The file offset of link-time address @out->value: the loadable segment
 * holding it maps it from p_offset + (value - p_vaddr). */
static void find_offset(Elf *elf, struct cap_elf_sym *out)
{
	GElf_Phdr ph;

	out->in_file = segment_of(elf, out->value, &ph);
	if (out->in_file)
		out->offset = ph.p_offset + out->value - ph.p_vaddr;
}

/* True if @reg is RDI or a part of it. */
static bool is_rdi(ZydisRegister reg)
{
	return ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64,
						reg) == ZYDIS_REGISTER_RDI;
}

/* What instruction @zi at @ip (operands @ops) leaves in RDI, if it
 * writes RDI: into *@rdi, with *@known false if it is not a constant
 * ("lea rdi, [rip+X]" and "mov rdi, imm" are). */
static void track_rdi(const ZydisDecodedInstruction *zi,
		      const ZydisDecodedOperand *ops, uint64_t ip,
		      uint64_t *rdi, bool *known)
{
	for (uint8_t i = 0; i < zi->operand_count; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_REGISTER ||
		    !(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) ||
		    !is_rdi(ops[i].reg.value))
			continue;
		*known = false;
		if (i != 0 || zi->operand_count_visible != 2)
			return;
		if (zi->mnemonic == ZYDIS_MNEMONIC_LEA &&
		    ops[1].mem.base == ZYDIS_REGISTER_RIP)
			*known = ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(
						zi, &ops[1], ip, rdi));
		else if (zi->mnemonic == ZYDIS_MNEMONIC_MOV &&
			 ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			*rdi = ops[1].imm.value.u;
			if (ops[0].size == 32)
				*rdi &= UINT32_MAX;
			*known = true;
		}
		return;
	}
}

/* main's link-time address as the entry code @code (@n bytes at address
 * @entry) passes it to __libc_start_main: RDI, the first argument, at the
 * first call.  False if the code does not read so. */
static bool decode_entry(const uint8_t *code, size_t n, uint64_t entry,
			 uint64_t *main_addr)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	bool known = false;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	for (size_t off = 0; off < n; off += zi.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off,
				n - off, &zi, ops)))
			return false;
		if (zi.meta.category == ZYDIS_CATEGORY_CALL)
			return known;
		if (zi.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE ||
		    zi.meta.category == ZYDIS_CATEGORY_RET)
			return false;
		track_rdi(&zi, ops, entry + off, main_addr, &known);
	}
	return false;
}

/* main of a program without symbols for it: the first argument its entry
 * point passes to __libc_start_main ("lea rdi, [rip+main]" or "mov rdi,
 * main" before the call), if that is code of the file.  As @out's value;
 * false if the entry code does not read so. */
static bool entry_main(int fd, Elf *elf, const GElf_Ehdr *eh,
		       struct cap_elf_sym *out)
{
	uint8_t code[ENTRY_BYTES];
	GElf_Phdr ph;
	uint64_t n, addr;
	ssize_t got;

	if (!segment_of(elf, eh->e_entry, &ph) || !(ph.p_flags & PF_X))
		return false;
	n = ph.p_vaddr + ph.p_filesz - eh->e_entry;
	got = pread(fd, code, n < sizeof(code) ? n : sizeof(code),
		    (off_t) (ph.p_offset + eh->e_entry - ph.p_vaddr));
	if (got <= 0 || !decode_entry(code, (size_t) got, eh->e_entry, &addr) ||
	    !segment_of(elf, addr, &ph) || !(ph.p_flags & PF_X))
		return false;
	out->value = addr;
	out->size = 0;
	return true;
}

int cap_elf_find_symbol(const char *path, const char *name,
			struct cap_elf_sym *out)
{
	GElf_Ehdr eh;
	Elf *elf;
	bool is_elf;
	int fd, err;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot open %s: %s", path,
				 strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	is_elf = elf && gelf_getehdr(elf, &eh);
	if (!is_elf)
		err = ptrr_fail(PTRR_ERR_NOTFOUND, "%s is not an ELF file, "
				"so symbol '%s' cannot be found in it: give an "
				"address", path, name);
	else
		err = hist_elf_find_symbol(path, name, &out->value, &out->size);
	if (err == PTRR_ERR_NOTFOUND && is_elf && !strcmp(name, "main") &&
	    entry_main(fd, elf, &eh, out))
		err = 0;
	if (!err) {
		out->pie = eh.e_type == ET_DYN;
		find_offset(elf, out);
	}
	elf_end(elf);
	close(fd);
	return err;
}
