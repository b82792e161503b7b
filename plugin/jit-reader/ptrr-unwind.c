/* ptrr-unwind.so — gdb's frames while ptrr replays (docs/unwinder.md).
 *
 * A gdb JIT reader (gdb/jit-reader.h, `jit-reader-load`): gdb asks its
 * unwind and get_frame_id for every frame before any other unwinder.
 * While the selected thread replays, ptrr's server answers reads of the
 * range PTRR_UNWIND_ADDR (plugin/unwind_abi.h) with the call stack at
 * the replay position, from the function-call history; the reader turns
 * it into frames:
 *
 *   - frame 0 is the one whose pc is the stack's first pc and whose
 *     stack pointer is not one the reader gave (in replay gdb has rsp
 *     only where the server proves it);
 *   - each frame comes with its stack address: its CFA where the server
 *     proves it, else (only in a thread with no registers recorded: an
 *     imported perf.data) a synthetic address no program has;
 *   - the caller of frame k gets rip = the return address of frame k's
 *     call and rsp = frame k's stack address (a caller's rsp after the
 *     return is its callee's CFA), by which the reader knows it again,
 *     and the callee-saved registers the server proves for it;
 *   - a frame's id is its function's address and its stack address, as
 *     gdb's own DWARF unwinder makes it where the CFA is proven (so the
 *     frames at the end of history, which gdb unwinds itself, keep their
 *     ids one step back), stable for as long as the activation lasts,
 *     and growing toward outer frames as gdb requires;
 *   - the caller of the outermost frame known is at pc 0, with a stack
 *     address above all others: gdb ends a backtrace there;
 *   - the stack ends at the first frame whose CFA the server cannot
 *     prove (PTRR_UNWIND_NOBASE): the reader declines that frame, which
 *     its callee gave a pc but no rsp, and gdb's own unwinding shows it
 *     without a frame address and ends the backtrace there.
 *
 * At the end of history, live, or whenever the range cannot be read or
 * makes no sense, the reader declines (GDB_FAIL) and gdb unwinds as
 * usual.  Every call reads the header again; the frames are read again
 * for each frame 0 (after every stop, gdb builds frame 0 first) and
 * reused for the outer frames while the header is the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gdb/jit-reader.h>

#include "unwind_abi.h"

GDB_DECLARE_GPL_COMPATIBLE_READER

/* DWARF register numbers of amd64 (the System V psABI). */
#define DWARF_RSP 7
#define DWARF_RIP 16

/* DWARF numbers of ptrr_unwind_frame.saved's registers. */
static const int saved_dwarf[6] = { 3, 6, 12, 13, 14, 15 };
/* ... and of its clobbered's. */
static const int clobbered_dwarf[9] = { 0, 1, 2, 4, 5, 8, 9, 10, 11 };

/* Frames kept at most: a deeper stack ends at this depth. */
#define MAX_FRAMES 4096

/* Largest frame record accepted (a later layout may grow the record;
 * the fields known are read from its start). */
#define MAX_FRAME_SIZE 256

/* Frames beyond the outermost one known, at pc 0, have stack addresses
 * from BEYOND_SP on, above every synthetic stack address. */
#define BEYOND_SP PTRR_UNWIND_STACK_TOP
#define BEYOND_MAX 0xffffffffu

/* The call stack as the server last gave it. */
struct stack {
	int valid;			/* f holds the stack of h */
	struct ptrr_unwind_header h;
	uint32_t n;			/* frames kept: min(nframes, MAX) */
	struct ptrr_unwind_frame f[MAX_FRAMES];
};

/* Reads the header into @h; false if the range cannot be read or says
 * there is no stack to use (not replaying, or not a layout we know). */
static int read_header(struct gdb_unwind_callbacks *cb,
		       struct ptrr_unwind_header *h)
{
	uint64_t room = PTRR_UNWIND_SIZE - sizeof(*h);

	if (cb->target_read(PTRR_UNWIND_ADDR, h, sizeof(*h)) != GDB_SUCCESS)
		return 0;
	return h->magic == PTRR_UNWIND_MAGIC && h->nframes != 0 &&
	       h->frame_size >= sizeof(struct ptrr_unwind_frame) &&
	       h->frame_size <= MAX_FRAME_SIZE &&
	       h->nframes <= room / h->frame_size;
}

/* Reads the frames of header @h into @st; false if they cannot be
 * read. */
static int read_frames(struct gdb_unwind_callbacks *cb,
		       const struct ptrr_unwind_header *h, struct stack *st)
{
	uint32_t n = h->nframes < MAX_FRAMES ? h->nframes : MAX_FRAMES;
	size_t bytes = (size_t) n * h->frame_size;
	uint8_t *raw = malloc(bytes);
	int ok = raw && cb->target_read(PTRR_UNWIND_ADDR + sizeof(*h), raw,
					(int) bytes) == GDB_SUCCESS;

	for (uint32_t k = 0; ok && k < n; k++)
		memcpy(&st->f[k], raw + (size_t) k * h->frame_size,
		       sizeof(st->f[k]));
	free(raw);
	st->valid = ok;
	st->h = *h;
	st->n = n;
	return ok;
}

/* Reads register @regnum of the frame being unwound; false if it is
 * not defined (gdb's answer for a register the server has not). */
static int get_reg(struct gdb_unwind_callbacks *cb, int regnum, uint64_t *v)
{
	struct gdb_reg_value *r = cb->reg_get(cb, regnum);
	int ok;

	if (!r)
		return 0;
	ok = r->defined && r->size == 8;
	if (ok)
		memcpy(v, r->value, 8);
	if (r->free)
		r->free(r);
	return ok;
}

/* The outer frame of @st whose rsp is @sp, the stack address of the
 * frame it called: its index (>= 1; st->n + j for the frame beyond the
 * outermost known whose rsp is BEYOND_SP + j - 1), or -1. */
static int64_t outer_frame(const struct stack *st, uint64_t sp)
{
	if (sp >= BEYOND_SP && sp - BEYOND_SP < BEYOND_MAX)
		return st->n + 1 + (int64_t) (sp - BEYOND_SP);
	for (uint32_t k = 1; k <= st->n; k++)
		if (sp == st->f[k - 1].sp)
			return k;
	return -1;
}

/* Which frame of the server's stack the frame being unwound is: its
 * index, or -1 if it is not one of ours.  An outer frame is known by
 * the stack address our unwind of its callee gave it, from the frames
 * kept if the header has not changed; anything else is read afresh
 * and is frame 0 if its pc is the stack's first. */
static int64_t which_frame(struct gdb_unwind_callbacks *cb, struct stack *st)
{
	struct ptrr_unwind_header h;
	uint64_t pc, sp;
	int have_sp;
	int64_t k;

	if (!read_header(cb, &h)) {
		st->valid = 0;
		return -1;
	}
	have_sp = get_reg(cb, DWARF_RSP, &sp);
	if (have_sp && st->valid && !memcmp(&h, &st->h, sizeof(h)) &&
	    (k = outer_frame(st, sp)) > 0)
		return k;
	if (!read_frames(cb, &h, st))
		return -1;
	if (have_sp && (k = outer_frame(st, sp)) > 0)
		return k;
	if (!get_reg(cb, DWARF_RIP, &pc) || pc != st->f[0].pc)
		return -1;
	return 0;
}

/* Frees a register value made by set_reg. */
static void free_value(struct gdb_reg_value *v)
{
	free(v);
}

/* Sets 8-byte register @regnum of the caller frame to @value. */
static void set_reg(struct gdb_unwind_callbacks *cb, int regnum,
		    uint64_t value)
{
	struct gdb_reg_value *v = malloc(sizeof(*v) + 8);

	if (!v)
		return;
	v->size = 8;
	v->defined = 1;
	v->free = free_value;
	memcpy(v->value, &value, 8);
	cb->reg_set(cb, regnum, v);
}

/* The stack address of frame @k of @st: its own, or beyond the
 * outermost known one, BEYOND_SP and up. */
static uint64_t frame_sp(const struct stack *st, int64_t k)
{
	return k < st->n ? st->f[k].sp : BEYOND_SP + (uint64_t) (k - st->n);
}

/* gdb's unwind: gives the caller of the frame being unwound its rip
 * and rsp if the frame is ours. */
static enum gdb_status unwind(struct gdb_reader_funcs *self,
			      struct gdb_unwind_callbacks *cb)
{
	struct stack *st = self->priv_data;
	int64_t k = which_frame(cb, st);

	/* A frame whose CFA is not proven: no frame base, rsp or frame
	 * address rather than an invented one (unwind_abi.h,
	 * PTRR_UNWIND_NOBASE).  gdb's own unwinding takes it. */
	if (k < 0 || (k < st->n && (st->f[k].flags & PTRR_UNWIND_NOBASE)))
		return GDB_FAIL;
	/* Beyond the outermost frame we know: pc 0, where a backtrace
	 * ends, and one more such frame above each, so that gdb asking for
	 * its caller gets one, not an error (docs/unwinder.md).  A caller
	 * the reader will decline gets its pc only. */
	set_reg(cb, DWARF_RIP, k + 1 < st->n ? st->f[k + 1].pc : 0);
	if (!(k + 1 < st->n && (st->f[k + 1].flags & PTRR_UNWIND_NOBASE)))
		set_reg(cb, DWARF_RSP, frame_sp(st, k));
	/* The caller's callee-saved registers the server proves (gdb finds
	 * an optimized caller's locals in them). */
	for (int i = 0; k + 1 < st->n && i < 6; i++)
		if (st->f[k + 1].saved_mask & (1u << i))
			set_reg(cb, saved_dwarf[i], st->f[k + 1].saved[i]);
	/* And its call-clobbered ones where nothing wrote them since its
	 * call (gdb's own unwinding takes the callee's: these are those
	 * values, proven). */
	for (int i = 0; k + 1 < st->n && i < 9; i++)
		if (st->f[k + 1].clobbered_mask & (1u << i))
			set_reg(cb, clobbered_dwarf[i],
				st->f[k + 1].clobbered[i]);
	return GDB_SUCCESS;
}

/* gdb's get_frame_id, for a frame unwind accepted: the function's
 * address and the frame's stack address. */
static struct gdb_frame_id get_frame_id(struct gdb_reader_funcs *self,
					struct gdb_unwind_callbacks *cb)
{
	struct stack *st = self->priv_data;
	struct gdb_frame_id id = { 0, 0 };
	int64_t k = which_frame(cb, st);

	if (k < 0)
		return id;	/* the server changed its mind: no frame */
	id.code_address = k < st->n ? st->f[k].func : 0;
	id.stack_address = frame_sp(st, k);
	return id;
}

/* gdb calls this only for programs that register JIT code; ptrr
 * describes none. */
static enum gdb_status read_debug_info(struct gdb_reader_funcs *self,
				       struct gdb_symbol_callbacks *cb,
				       void *memory, long memory_sz)
{
	(void) self, (void) cb, (void) memory, (void) memory_sz;
	return GDB_FAIL;
}

/* gdb's destroy, at jit-reader-unload or exit. */
static void destroy(struct gdb_reader_funcs *self)
{
	free(self->priv_data);
	free(self);
}

/* The reader's entry point, which gdb looks up after dlopen. */
struct gdb_reader_funcs *gdb_init_reader(void)
{
	struct gdb_reader_funcs *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->priv_data = calloc(1, sizeof(struct stack));
	if (!f->priv_data) {
		free(f);
		return NULL;
	}
	f->reader_version = GDB_READER_INTERFACE_VERSION;
	f->read = read_debug_info;
	f->unwind = unwind;
	f->get_frame_id = get_frame_id;
	f->destroy = destroy;
	return f;
}
