/* Call frame information of the recorded code: what the compiler's CFI
 * (.eh_frame, else .debug_frame) says of a frame at an address, reduced
 * to what replay/ proves stack pointers and frames with: the Canonical
 * Frame Address as a register plus an offset, and where the return
 * address, the caller's rbp and its other callee-saved registers are.
 * Anything the CFI says in another
 * form (expressions, other registers) comes back as HIST_CFI_OTHER: not
 * known, never guessed.
 */
#include "config.h"
#include "history_internal.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>

/* DWARF register numbers of amd64 (the System V psABI). */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16

const int hist_cfi_saved_reg[HIST_CFI_NSAVED] = {
	HIST_RBX, HIST_RBP, HIST_R12, HIST_R13, HIST_R14, HIST_R15,
};

/* Their DWARF register numbers. */
static const int saved_dw[HIST_CFI_NSAVED] = { 3, 6, 12, 13, 14, 15 };

/* The history register of DWARF register @dw, or -1 if it is not one
 * the CFA is taken from here. */
static int hist_reg_of(uint64_t dw)
{
	return dw == DW_RSP ? HIST_RSP : dw == DW_RBP ? HIST_RBP : -1;
}

/* The CFA rule of @frame into @out; false if it is not reg + offset. */
static bool cfa_rule(Dwarf_Frame *frame, struct hist_cfi *out)
{
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		out->cfa_reg = hist_reg_of(ops[0].number);
		out->cfa_off = (int64_t) ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		out->cfa_reg = hist_reg_of(ops[0].atom - DW_OP_breg0);
		out->cfa_off = (int64_t) ops[0].number;
	} else {
		return false;
	}
	return out->cfa_reg >= 0;
}

/* The rule for DWARF register @dw of the caller in @frame. */
static struct hist_cfi_reg reg_rule(Dwarf_Frame *frame, int dw)
{
	struct hist_cfi_reg r = { HIST_CFI_OTHER, 0 };
	Dwarf_Op mem[3], *ops;
	size_t nops, i = 0;

	if (dwarf_frame_register(frame, dw, mem, &ops, &nops))
		return r;
	if (nops == 0) {
		r.how = ops ? HIST_CFI_UNDEFINED : HIST_CFI_SAME;
		return r;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return r;
	i = 1;
	if (i < nops && ops[i].atom == DW_OP_plus_uconst)
		r.off = (int64_t) ops[i++].number;
	if (i == nops)
		r.how = HIST_CFI_AT;
	else if (i + 1 == nops && ops[i].atom == DW_OP_stack_value)
		r.how = HIST_CFI_VALUE;
	return r;
}

/* The CFI of @pc in module @mod from @cfi (whose addresses are @bias
 * below the module's). */
static bool frame_in(Dwarf_CFI *cfi, Dwarf_Addr bias, uint64_t pc,
		     struct hist_cfi *out)
{
	Dwarf_Frame *frame;
	bool ok;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame))
		return false;
	ok = cfa_rule(frame, out);
	if (ok) {
		out->ra = reg_rule(frame, DW_RA);
		out->rbp = reg_rule(frame, DW_RBP);
		for (int i = 0; i < HIST_CFI_NSAVED; i++)
			out->saved[i] = reg_rule(frame, saved_dw[i]);
		/* A register the CFI does not mention has the rule of
		 * elfutils' x86-64 ABI defaults (backends/x86_64_cfi.c):
		 * "same value" for the callee-saved ones, but they name
		 * DWARF register 0 (rax) where rbx (3) is meant, so an
		 * unmentioned rbx comes back "undefined".  gdb's unwinder
		 * takes an unmentioned register as the same; so does this
		 * (compilers never say rbx is undefined). */
		if (out->saved[0].how == HIST_CFI_UNDEFINED)
			out->saved[0].how = HIST_CFI_SAME;
		dwarf_frame_info(frame, NULL, NULL, &out->signal);
	}
	free(frame);
	return ok;
}

int hist_cfi_at(struct hist_symtab *st, uint64_t pc, struct hist_cfi *out)
{
	Dwfl *dwfl = hist_symtab_lock(st);
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Addr bias;
	bool ok = false;

	if (mod) {
		Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);

		ok = frame_in(cfi, bias, pc, out);
		if (!ok) {
			cfi = dwfl_module_dwarf_cfi(mod, &bias);
			ok = frame_in(cfi, bias, pc, out);
		}
	}
	hist_symtab_unlock(st);
	return ok ? 0 : PTRR_ERR_NOTFOUND;
}
