/* The call stack at a position, from the function-call segments of the
 * history (history/calls.c), as gdb's unwinder will show it.
 *
 * Frame 0 is the position.  The caller of a frame is the segment its
 * activation was called from (hist_call.up): the segment of the caller
 * that ends with the call instruction, so the caller's PC is the address
 * after that instruction (the return address).  A function entered by a
 * tail call replaces the frame that jumped to it, as on the real stack.
 * A caller learned only from a return (HIST_CALL_UP_RETURN) is the
 * segment returned to: its first instruction is the return address.
 * Where nothing says who called, the stack ends: at a gap, at the start
 * of the trace, where a link does not lead to a call instruction, or at
 * a signal handler (the call segments do not know what it interrupted). */
#include <config.h>

#include <stdlib.h>

#include "replay_internal.h"

void replay_frames_reset(struct replay_thread *t)
{
	free(t->inst);
	free(t->ret);
	free(t->async);
	t->inst = NULL;
	t->ret = NULL;
	t->async = NULL;
	t->calls = NULL;
	t->ncalls = 0;
}

/* Makes thread @t's instance table describe the call segments of its
 * history: inst[id - 1] is the first segment of the activation of
 * segment id (its prev links followed back), in one pass since a
 * segment's prev is always an earlier one. */
static int prepare_instances(struct replay_thread *t)
{
	const struct hist_call *calls;
	size_t n;
	uint32_t *inst;
	uint64_t *ret;
	uint8_t *async;
	int err = hist_calls(t->h, &calls, &n);

	if (err)
		return err;
	if (t->inst && calls == t->calls && n == t->ncalls)
		return 0;
	inst = malloc((n ? n : 1) * sizeof(*inst));
	ret = calloc(n ? n : 1, sizeof(*ret));
	async = calloc(n ? n : 1, sizeof(*async));
	if (!inst || !ret || !async) {
		free(inst);
		free(ret);
		free(async);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t prev = calls[i].prev;

		inst[i] = prev && prev <= i ? inst[prev - 1] : calls[i].id;
	}
	replay_frames_reset(t);
	t->inst = inst;
	t->ret = ret;
	t->async = async;
	t->calls = calls;
	t->ncalls = n;
	return 0;
}

/* The call segment with id @id of thread @t, or NULL if none. */
static const struct hist_call *call_of(const struct replay_thread *t,
				       uint32_t id)
{
	return id && id <= t->ncalls ? &t->calls[id - 1] : NULL;
}

/* The address of the instruction after the one that ends segment @c if
 * that is a call, else 0; read once, then from t->ret. */
static uint64_t address_after_call(struct replay_thread *t,
				   const struct hist_call *c)
{
	const struct hist_entry *e;
	uint64_t *memo = &t->ret[c->id - 1];

	if (!*memo) {
		*memo = 1;
		if (!hist_cursor_seek(t->look, c->last)) {
			e = hist_cursor_entry(t->look);
			if (e->kind == HIST_ENTRY_INSN &&
			    e->iclass == HIST_IC_CALL)
				*memo = e->ip + e->size;
		}
	}
	return *memo == 1 ? 0 : *memo;
}

/* The return address into caller segment @c: the first instruction of @c
 * if the link to it was learned from a return (@up_return), else the
 * instruction after the call that ends @c.  0 if neither is there. */
static uint64_t return_address(struct replay_thread *t,
			       const struct hist_call *c, bool up_return)
{
	const struct hist_entry *e;

	if (!up_return)
		return address_after_call(t, c);
	if (hist_cursor_seek(t->look, c->first))
		return 0;
	e = hist_cursor_entry(t->look);
	return e->kind == HIST_ENTRY_INSN ? e->ip : 0;
}

/* True if segment @s was entered asynchronously: its first instruction
 * resumed tracing somewhere else than after the system call (or the
 * interrupted instruction) before it — a signal handler, or the return
 * from one through sigreturn.  Its caller is then not the one the call
 * segments link it to.  Read once, then from t->async. */
static bool entered_async(struct replay_thread *t, const struct hist_call *s)
{
	uint8_t *memo = &t->async[s->id - 1];
	const struct hist_entry *e;
	uint64_t after;

	if (*memo)
		return *memo == 2;
	*memo = 1;
	if (s->first < 2 || hist_cursor_seek(t->look, s->first - 1))
		return false;
	e = hist_cursor_entry(t->look);
	if (e->kind != HIST_ENTRY_INSN || (e->iclass != HIST_IC_FAR_CALL &&
					   !(e->flags & HIST_F_INTERRUPTED)))
		return false;
	after = e->ip + e->size;
	if (hist_cursor_next(t->look))
		return false;
	e = hist_cursor_entry(t->look);
	if ((e->flags & HIST_F_RESUMED) && e->ip != after)
		*memo = 2;
	return *memo == 2;
}

/* The segment segment @s was called from, if it is a function one level
 * or more out (anything else is no caller); else NULL. */
static const struct hist_call *up_of(const struct replay_thread *t,
				     const struct hist_call *s)
{
	const struct hist_call *c = call_of(t, s->up);

	if (!c || (c->flags & HIST_CALL_GAP) || c->level >= s->level)
		return NULL;
	return c;
}

/* The first segment of the activation segment @s belongs to. */
static const struct hist_call *activation_of(const struct replay_thread *t,
					     const struct hist_call *s)
{
	return &t->calls[t->inst[s->id - 1] - 1];
}

/* The frame of the caller of segment @s's frame into @f, and its segment
 * into *@caller; false if the history does not show it.  The caller is
 * the one the activation was entered from (its first segment's link):
 * the links of its later pieces may have been changed by a return that
 * went elsewhere.  Activations entered by a tail call are passed over:
 * the function that jumped is no longer on the stack.  One entered
 * asynchronously (a signal handler) ends the stack. */
static bool caller_frame(struct replay_thread *t, const struct hist_call *s,
			 const struct hist_call **caller,
			 struct replay_frame *f)
{
	const struct hist_call *c;

	s = activation_of(t, s);
	while (s && (s->flags & HIST_CALL_TAILCALL) && !entered_async(t, s)) {
		s = up_of(t, s);
		s = s ? activation_of(t, s) : NULL;
	}
	c = s && !entered_async(t, s) ? up_of(t, s) : NULL;
	if (!c)
		return false;
	f->pc = return_address(t, c, s->flags & HIST_CALL_UP_RETURN);
	f->func = c->func;
	f->level = c->level;
	f->instance = t->inst[c->id - 1];
	*caller = c;
	return f->pc != 0;
}

int replay_frames(struct replay *rp, size_t thr, struct replay_frame *frames,
		  size_t max, size_t *n)
{
	struct replay_thread *t;
	const struct hist_call *s;
	uint32_t id;
	int err;

	*n = 0;
	if (!rp || thr >= rp->n)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %zu in the "
				 "replay", thr);
	t = &rp->t[thr];
	if (!t->last || !max)
		return 0;
	err = prepare_instances(t);
	if (!err)
		err = hist_call_find(t->h, t->pos, &id);
	if (err)
		return err;
	s = call_of(t, id);
	if (!s)
		return ptrr_fail(PTRR_ERR_INTERNAL, "no call segment %u", id);
	frames[0] = (struct replay_frame) { t->pc, s->func, s->level,
					    t->inst[id - 1] };
	for (*n = 1; *n < max; (*n)++)
		if (!caller_frame(t, s, &s, &frames[*n]))
			break;
	return 0;
}
