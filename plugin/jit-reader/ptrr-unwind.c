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
 *     stack pointer is not one of ours (in replay gdb has no rsp);
 *   - the caller of frame k gets rip = the return address of frame k's
 *     call and rsp = a synthetic stack address naming frame k + 1, by
 *     which the reader knows it again;
 *   - a frame's id is its function's address and its synthetic stack
 *     address, stable for as long as the activation lasts, and growing
 *     toward outer frames as gdb requires;
 *   - the caller of the outermost frame known gets pc 0: gdb ends the
 *     backtrace there without complaint.
 *
 * At the end of history, live, or whenever the range cannot be read,
 * the reader declines (GDB_FAIL) and gdb unwinds as usual.  It keeps no
 * state between calls: every call reads the stack again (a few hundred
 * bytes from the server).
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

/* Frames read at most: deeper stacks end at this depth. */
#define MAX_FRAMES 4096

/* The call stack as the server gave it. */
struct stack {
	uint32_t n;
	struct ptrr_unwind_frame f[MAX_FRAMES];
};

/* The synthetic stack address of frame @f (unwind_abi.h). */
static uint64_t synthetic_sp(const struct ptrr_unwind_frame *f)
{
	return PTRR_UNWIND_STACK_TOP - (((uint64_t) f->level + 1) << 32) +
	       f->instance;
}

/* Reads the stack through @cb; false if there is none to use. */
static int read_stack(struct gdb_unwind_callbacks *cb, struct stack *st)
{
	struct ptrr_unwind_header h;
	size_t bytes;

	if (cb->target_read(PTRR_UNWIND_ADDR, &h, sizeof(h)) != GDB_SUCCESS ||
	    h.magic != PTRR_UNWIND_MAGIC || h.nframes == 0 ||
	    h.frame_size != sizeof(struct ptrr_unwind_frame) ||
	    h.nframes > PTRR_UNWIND_MAX_FRAMES)
		return 0;
	st->n = h.nframes < MAX_FRAMES ? h.nframes : MAX_FRAMES;
	bytes = st->n * sizeof(struct ptrr_unwind_frame);
	return cb->target_read(PTRR_UNWIND_ADDR + sizeof(h), st->f,
			       (int) bytes) == GDB_SUCCESS;
}

/* Reads register @regnum of the frame being unwound; false if it is
 * not defined. */
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

/* Which frame of @st the frame being unwound is: its index, or -1 if
 * it is not one of ours. */
static int which_frame(struct gdb_unwind_callbacks *cb, const struct stack *st)
{
	uint64_t pc, sp;
	int have_sp = get_reg(cb, DWARF_RSP, &sp);

	if (have_sp)
		for (uint32_t k = 1; k < st->n; k++)
			if (sp == synthetic_sp(&st->f[k]))
				return (int) k;
	if (!get_reg(cb, DWARF_RIP, &pc) || pc != st->f[0].pc)
		return -1;
	return 0;
}

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

static enum gdb_status unwind(struct gdb_reader_funcs *self,
			      struct gdb_unwind_callbacks *cb)
{
	struct stack *st = self->priv_data;
	int k;

	if (!read_stack(cb, st) || (k = which_frame(cb, st)) < 0)
		return GDB_FAIL;
	if ((uint32_t) k + 1 < st->n) {
		set_reg(cb, DWARF_RIP, st->f[k + 1].pc);
		set_reg(cb, DWARF_RSP, synthetic_sp(&st->f[k + 1]));
	} else {
		/* The outermost frame we know: its caller is at pc 0, where
		 * gdb stops, with a stack address above all of ours. */
		set_reg(cb, DWARF_RIP, 0);
		set_reg(cb, DWARF_RSP, PTRR_UNWIND_STACK_TOP);
	}
	return GDB_SUCCESS;
}

static struct gdb_frame_id get_frame_id(struct gdb_reader_funcs *self,
					struct gdb_unwind_callbacks *cb)
{
	struct stack *st = self->priv_data;
	struct gdb_frame_id id = { 0, 0 };
	int k;

	if (!read_stack(cb, st) || (k = which_frame(cb, st)) < 0)
		return id;	/* cannot happen: unwind() accepted it */
	id.code_address = st->f[k].func;
	id.stack_address = synthetic_sp(&st->f[k]);
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

static void destroy(struct gdb_reader_funcs *self)
{
	free(self->priv_data);
	free(self);
}

struct gdb_reader_funcs *gdb_init_reader(void)
{
	struct gdb_reader_funcs *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->priv_data = malloc(sizeof(struct stack));
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
