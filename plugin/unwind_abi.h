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

/* Synthetic stack addresses for frame ids: frame ids must grow toward
 * outer frames, so the frame of call depth L and function instance I has
 * stack address PTRR_UNWIND_STACK_TOP - ((L + 1) << 32) + I. */
#define PTRR_UNWIND_STACK_TOP	0x7fff00000000000ull

struct ptrr_unwind_header {
	uint64_t magic;		/* PTRR_UNWIND_MAGIC */
	uint64_t tid;		/* thread the stack belongs to */
	uint64_t position;	/* its history entry number */
	uint32_t nframes;	/* 0: not replaying, decline */
	uint32_t frame_size;	/* sizeof (struct ptrr_unwind_frame) */
};

struct ptrr_unwind_frame {
	uint64_t pc;		/* frame 0: the PC; outer: return address */
	uint64_t func;		/* function start address */
	int32_t level;		/* call depth, >= 0 */
	uint32_t instance;	/* stable id of the function activation */
};

#define PTRR_UNWIND_MAX_FRAMES \
	((PTRR_UNWIND_SIZE - sizeof (struct ptrr_unwind_header)) / \
	 sizeof (struct ptrr_unwind_frame))

#endif
