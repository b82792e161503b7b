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
 *
 * The call segments take a return into code without symbols for a return
 * into the nearest such code up the stack (they cannot tell two stretches
 * of it apart), which may be another function (a PLT stub).  So a piece
 * of such code that continues an activation stands for the activation
 * whose call returned to its first instruction, found by that return
 * address, or for none.
 *
 * Where nothing says who called, the stack ends: at a gap, at the start
 * of the trace, where a link does not lead to a call instruction, or at
 * a signal handler (the call segments do not know what it interrupted). */
#include <config.h>

#include <stdlib.h>

#include "replay_internal.h"

/* Steps a search up the stack may take (a bound against cycles). */
#define MAX_CLIMB 100000

void replay_frames_reset(struct replay_thread *t)
{
	free(t->ct.inst);
	free(t->ct.ret);
	free(t->ct.async);
	free(t->ct.back);
	t->ct = (struct replay_call_tables) { 0 };
}

/* Makes thread @t's tables describe the call segments of its history;
 * inst[] in one pass, since a segment's prev is always an earlier one,
 * the others empty (filled as frames are asked for). */
static int prepare_tables(struct replay_thread *t)
{
	struct replay_call_tables ct = { 0 };
	size_t m;
	int err = hist_calls(t->h, &ct.calls, &ct.ncalls);

	if (err)
		return err;
	if (t->ct.inst && ct.calls == t->ct.calls && ct.ncalls == t->ct.ncalls)
		return 0;
	m = ct.ncalls ? ct.ncalls : 1;
	ct.inst = malloc(m * sizeof(*ct.inst));
	ct.ret = calloc(m, sizeof(*ct.ret));
	ct.async = calloc(m, sizeof(*ct.async));
	ct.back = calloc(m, sizeof(*ct.back));
	replay_frames_reset(t);
	t->ct = ct;
	if (!ct.inst || !ct.ret || !ct.async || !ct.back) {
		replay_frames_reset(t);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < ct.ncalls; i++) {
		uint32_t prev = ct.calls[i].prev;

		ct.inst[i] = prev && prev <= i ? ct.inst[prev - 1] :
			     ct.calls[i].id;
	}
	return 0;
}

/* The call segment with id @id of thread @t, or NULL if none. */
static const struct hist_call *call_of(const struct replay_thread *t,
				       uint32_t id)
{
	return id && id <= t->ct.ncalls ? &t->ct.calls[id - 1] : NULL;
}

/* The first segment of the activation segment @s belongs to. */
static const struct hist_call *activation_of(const struct replay_thread *t,
					     const struct hist_call *s)
{
	return &t->ct.calls[t->ct.inst[s->id - 1] - 1];
}

/* The instruction entry @number of @t's history, or NULL. */
static const struct hist_entry *insn_at(struct replay_thread *t,
					uint64_t number)
{
	const struct hist_entry *e;

	if (hist_cursor_seek(t->look, number))
		return NULL;
	e = hist_cursor_entry(t->look);
	return e->kind == HIST_ENTRY_INSN ? e : NULL;
}

/* The address of the instruction after the one that ends segment @c if
 * that is a call, else 0; read once, then from the table. */
static uint64_t address_after_call(struct replay_thread *t,
				   const struct hist_call *c)
{
	uint64_t *memo = &t->ct.ret[c->id - 1];
	const struct hist_entry *e;

	if (!*memo) {
		e = insn_at(t, c->last);
		*memo = e && e->iclass == HIST_IC_CALL ? e->ip + e->size : 1;
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
	e = insn_at(t, c->first);
	return e ? e->ip : 0;
}

/* True if segment @s was entered asynchronously: its first instruction
 * resumed tracing somewhere else than after the system call (or the
 * interrupted instruction) before it — a signal handler, or the return
 * from one through sigreturn.  Its caller is then not the one the call
 * segments link it to.  Read once, then from the table. */
static bool entered_async(struct replay_thread *t, const struct hist_call *s)
{
	uint8_t *memo = &t->ct.async[s->id - 1];
	const struct hist_entry *e;
	uint64_t after;

	if (*memo)
		return *memo == 2;
	*memo = 1;
	e = s->first > 1 ? insn_at(t, s->first - 1) : NULL;
	if (!e || (e->iclass != HIST_IC_FAR_CALL &&
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

/* The segment whose call returned to the first instruction of segment @s
 * (entered by a return from the segment before it): the first one up
 * the stack of that segment whose call's return address it is; NULL if
 * none.  Searched once, then from the table. */
static const struct hist_call *returned_into(struct replay_thread *t,
					     const struct hist_call *s)
{
	uint32_t *memo = &t->ct.back[s->id - 1];
	const struct hist_entry *e;
	const struct hist_call *c = call_of(t, s->id - 1);
	uint64_t ip;

	if (*memo)
		return *memo == UINT32_MAX ? NULL : call_of(t, *memo);
	*memo = UINT32_MAX;
	e = insn_at(t, s->first);
	ip = e ? e->ip : 0;
	for (int i = 0; ip && c && i < MAX_CLIMB; i++) {
		c = up_of(t, activation_of(t, c));
		if (c && address_after_call(t, c) == ip) {
			*memo = c->id;
			return c;
		}
	}
	return NULL;
}

/* The segment that stands for segment @s's activation: @s itself, unless
 * it is a piece of code without symbols continuing an activation (its
 * function, the address it starts at, is not that of the activation's
 * first piece), which stands for the activation whose call returned to
 * it.  NULL if that is not found. */
static const struct hist_call *identity_of(struct replay_thread *t,
					   const struct hist_call *s)
{
	for (int i = 0; s && i < MAX_CLIMB; i++) {
		const struct hist_call *a = activation_of(t, s);

		if (a == s || s->func == a->func)
			return s;
		s = returned_into(t, s);
	}
	return NULL;
}

/* The activation that made the call (or tail call) activation @a was
 * entered by, through the segment that stands for it; NULL if none
 * further out. */
static const struct hist_call *outer_activation(struct replay_thread *t,
						const struct hist_call *a)
{
	const struct hist_call *p = up_of(t, a);

	p = p ? identity_of(t, p) : NULL;
	return p && p->level < a->level ? activation_of(t, p) : NULL;
}

/* Frame @f for segment @s (which stands for its activation) at @pc. */
static void frame_of(const struct replay_thread *t, const struct hist_call *s,
		     uint64_t pc, struct replay_frame *f)
{
	*f = (struct replay_frame) { pc, s->func, s->level,
				     t->ct.inst[s->id - 1] };
}

/* The caller of the frame of segment @s (which stands for its
 * activation) into @f; returns the segment that stands for the caller's
 * activation, or NULL if the stack ends at @f.  false if there is no
 * caller.  The caller is the one the activation was entered from (its
 * first segment's link: later pieces' links may have been changed by a
 * return that went elsewhere).  Activations entered by a tail call are
 * passed over: the function that jumped is no longer on the stack.  One
 * entered asynchronously (a signal handler) ends the stack. */
static bool caller_frame(struct replay_thread *t, const struct hist_call *s,
			 struct replay_frame *f,
			 const struct hist_call **caller)
{
	const struct hist_call *a = activation_of(t, s), *c, *ci;
	uint64_t pc;

	while (a && (a->flags & HIST_CALL_TAILCALL) && !entered_async(t, a))
		a = outer_activation(t, a);
	c = a && !entered_async(t, a) ? up_of(t, a) : NULL;
	pc = c ? return_address(t, c, a->flags & HIST_CALL_UP_RETURN) : 0;
	if (!pc)
		return false;
	ci = identity_of(t, c);
	if (ci && ci->level >= a->level)
		ci = NULL;
	frame_of(t, ci ? ci : c, pc, f);
	*caller = ci;
	return true;
}

int replay_frames(struct replay *rp, size_t thr, struct replay_frame *frames,
		  size_t max, size_t *n)
{
	struct replay_thread *t;
	const struct hist_call *s, *si;
	uint32_t id;
	int err;

	*n = 0;
	if (!rp || thr >= rp->n)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %zu in the "
				 "replay", thr);
	t = &rp->t[thr];
	if (!t->last || !max)
		return 0;
	err = prepare_tables(t);
	if (!err)
		err = hist_call_find(t->h, t->pos, &id);
	if (err)
		return err;
	s = call_of(t, id);
	if (!s)
		return ptrr_fail(PTRR_ERR_INTERNAL, "no call segment %u", id);
	si = identity_of(t, s);
	frame_of(t, si ? si : s, t->pc, &frames[0]);
	for (*n = 1; si && *n < max; (*n)++)
		if (!caller_frame(t, si, &frames[*n], &si))
			break;
	return 0;
}
