/* plugin/capture — exact emulation of near branches on a stopped thread.
 *
 * The block stepper (block.c) runs straight-line code natively and stops
 * on an int3 planted over the branch that ends it: the branch itself
 * never runs, it is emulated here on the thread's registers, with the
 * memory it reads (an indirect target, a return address) or writes (the
 * return address a call pushes) accessed through callbacks.  Only what
 * can be emulated exactly is accepted: jcc (all 16 conditions), jrcxz,
 * jecxz, loop, loope, loopne, near jmp and call (relative, register,
 * memory incl. rip-, fs- and gs-relative) and near ret (also ret imm16),
 * all with 64-bit operands.
 */
#ifndef PTRR_CAP_BRANCH_H
#define PTRR_CAP_BRANCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* The memory of the thread: each callback returns the number of bytes
 * it moved (fewer, or -1, if the memory is not there). */
struct cap_mem {
	void *arg;
	ssize_t (*read)(void *arg, uint64_t addr, void *buf, size_t n);
	ssize_t (*write)(void *arg, uint64_t addr, const void *buf, size_t n);
};

/* True if the instruction at @code (@avail bytes) is a branch that
 * cap_branch_emulate() emulates exactly. */
bool cap_branch_emulable(const uint8_t *code, size_t avail);

/* Executes the branch at @ip (bytes @code, @avail of them) on @regs and
 * @mem: rip becomes the next instruction, which is also stored in
 * *@next; rsp and rcx change as the instruction would change them.
 * PTRR_ERR_DECODE if it is not emulable; PTRR_ERR_IO (@regs untouched,
 * nothing written) if its memory access would fault. */
int cap_branch_emulate(const uint8_t *code, size_t avail, uint64_t ip,
		       struct user_regs_struct *regs,
		       const struct cap_mem *mem, uint64_t *next);

#endif
