/* plugin/capture — instruction classification for the software PT backend.
 *
 * Sorts an x86-64 instruction into the change-of-flow (COFI) classes of
 * the Intel SDM (vol. 3C, "COFI Tracing", table 33-1) that decide which
 * packets a CPU emits for it.  Zydis decodes; the classes mirror what
 * libipt's decoder (pt_ild / enum pt_insn_class) expects trace for.
 */
#ifndef PTRR_CAP_INSN_H
#define PTRR_CAP_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest x86 instruction. */
#define CAP_INSN_MAX 15

enum cap_iclass {
	CAP_IC_OTHER = 0,	/* no change of flow */
	CAP_IC_COND,		/* jcc, jrcxz, loop*: one TNT bit */
	CAP_IC_JUMP,		/* near direct jmp: no packet */
	CAP_IC_CALL,		/* near direct call: no packet */
	CAP_IC_JUMP_IND,	/* near indirect jmp: TIP */
	CAP_IC_CALL_IND,	/* near indirect call: TIP */
	CAP_IC_RET,		/* near ret: TNT bit (compressed) or TIP */
	CAP_IC_FAR,		/* far jmp/call/ret, iret within user mode */
	CAP_IC_KERNEL,		/* syscall, sysenter, int n/int1/int3: enters
				 * the kernel, which a user-only trace omits */
};

struct cap_insn {
	uint8_t len;		/* length in bytes */
	uint8_t iclass;		/* enum cap_iclass */
	bool rep_string;	/* REP/REPE/REPNE string instruction: it
				 * single-steps once per iteration */
	bool logs_call;		/* a call that libipt pushes on its return
				 * stack (all near calls except the PIC idiom
				 * "call next-instruction") */
};

/* Decodes the 64-bit instruction at @code (@avail bytes readable) into
 * @out.  Returns its length, or PTRR_ERR_DECODE if it is not a valid
 * instruction (or is cut short by @avail). */
int cap_insn_decode(const uint8_t *code, size_t avail, struct cap_insn *out);

#endif
