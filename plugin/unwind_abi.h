/* What the ptrr server tells ptrr's gdb JIT-reader unwinder, through
 * memory.
 *
 * The JIT-reader interface gives a reader no channel to the target but
 * memory reads (gdb_unwind_callbacks.target_read).  So the server answers
 * reads of a reserved range of addresses, one that no x86-64 user program
 * can map (it lies in the kernel half of the canonical address space), with
 * the call stack of the thread gdb has selected (Hg) at its replay
 * position.  Both sides include this header; nothing else is shared.
 *
 * Layout at PTRR_UNWIND_ADDR, all fields little-endian:
 *   struct ptrr_unwind_header
 *   struct ptrr_unwind_frame[nframes]	(innermost first)
 * A read of the range while the thread is not replaying returns a header
 * with nframes = 0: the reader then declines and gdb unwinds as usual.
 */
#ifndef PTRR_UNWIND_ABI_H
#define PTRR_UNWIND_ABI_H

#include <stdint.h>

#define PTRR_UNWIND_ADDR	0xffffff7f00000000ull
#define PTRR_UNWIND_SIZE	0x100000ull	/* bytes reserved */
#define PTRR_UNWIND_MAGIC	0x31574e5552525450ull	/* "PTRRUNW1" */

/* Frame ids (gdb's frame address, which is also the CFA gdb finds a
 * function's locals from) must grow toward outer frames.  A frame whose
 * CFA the server proves has its CFA.  One it cannot has a synthetic
 * address no program has: below every real CFA (under 64 KiB, where
 * Linux maps nothing) while frames further out have real ones, else just
 * below PTRR_UNWIND_STACK_TOP (non-canonical): the frame of call depth L
 * and function instance I at PTRR_UNWIND_STACK_TOP - ((L + 1) << 32) + I. */
#define PTRR_UNWIND_STACK_TOP	0x7fff00000000000ull
#define PTRR_UNWIND_LOW_TOP	0x10000ull	/* low synthetic: below */
#define PTRR_UNWIND_LOW_STEP	0x10ull

struct ptrr_unwind_header {
	uint64_t magic;		/* PTRR_UNWIND_MAGIC */
	uint64_t tid;		/* thread the stack belongs to */
	uint64_t position;	/* its history entry number */
	uint32_t nframes;	/* 0: not replaying, decline */
	uint32_t frame_size;	/* sizeof (struct ptrr_unwind_frame) */
};

/* ptrr_unwind_frame.flags */
#define PTRR_UNWIND_CFA	0x1	/* sp is the frame's proven CFA */
/* The frame's CFA is not proven (the server sends no frame after it):
 * gdb would find its arguments and locals from sp, a synthetic address.
 * The reader declines the frame and gives it, as its callee's caller,
 * a pc and no rsp: gdb's own unwinding, without rsp, shows its variables
 * <unavailable> and ends the stack there (docs/unwinder.md, "Limits"). */
#define PTRR_UNWIND_NOBASE	0x2

struct ptrr_unwind_frame {
	uint64_t pc;		/* frame 0: the PC; outer: return address */
	uint64_t func;		/* function start address */
	int32_t level;		/* call depth (relative; outer is lower) */
	uint32_t instance;	/* stable id of the function activation */
	uint64_t sp;		/* the frame id's stack address: the CFA, or
				 * synthetic (see above); strictly growing
				 * outward.  The caller's rsp. */
	uint32_t flags;		/* PTRR_UNWIND_* */
	uint32_t saved_mask;	/* bit i: saved[i] is known */
	/* The frame's callee-saved registers rbx, rbp, r12, r13, r14, r15
	 * (DWARF 3, 6, 12..15) where the server proves them: gdb gets them
	 * with the frame when the reader unwinds its callee. */
	uint64_t saved[6];
	uint32_t clobbered_mask;	/* bit i: clobbered[i] is known */
	uint32_t pad;
	/* A caller's call-clobbered registers rax, rdx, rcx, rsi, rdi,
	 * r8, r9, r10, r11 (DWARF 0, 1, 2, 4, 5, 8..11) at its call, where
	 * the server proves nothing since wrote them (replay_frame's
	 * clobbered). */
	uint64_t clobbered[9];
};

#define PTRR_UNWIND_MAX_FRAMES \
	((PTRR_UNWIND_SIZE - sizeof (struct ptrr_unwind_header)) / \
	 sizeof (struct ptrr_unwind_frame))

#endif
