/* plugin/capture — the memory an instruction is about to access.
 *
 * A fault's address, where no siginfo says it (QEMU's core file, QEMU's
 * gdb stub): the instruction at the faulting pc, decoded with Zydis, and
 * the registers it was about to run with tell where its memory operands
 * are.  Registers are in history.h's HIST_* order (a struct
 * user_regs_struct's).
 */
#ifndef PTRR_CAP_OPERAND_H
#define PTRR_CAP_OPERAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The address of the first explicit memory operand of the instruction
 * @code (@n bytes, at @ip) run with registers @regs; 0 if it has none
 * or it does not decode. */
uint64_t cap_operand_address(const uint8_t *code, size_t n, uint64_t ip,
			     const uint64_t *regs);

/* True if the instruction @code (@n bytes, at @ip), about to run with
 * registers @regs, may access byte @addr: one of its memory operands
 * covers it (explicit, a string operation's at rsi or rdi, or the
 * stack's, a push's below rsp), or its own bytes do (@n may be 0 where
 * they cannot be read: a fetch fault). */
bool cap_operand_covers(const uint8_t *code, size_t n, uint64_t ip,
			const uint64_t *regs, uint64_t addr);

#endif
