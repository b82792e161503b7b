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

/* Entries read back from the end for a stack without the call segments
 * (replay_frames_local), at most: about 50 ms. */
#define LOCAL_SCAN (1u << 17)

/* Frames a stack without the call segments holds, at most. */
#define LOCAL_FRAMES 256

/* The stack without the call segments at entry @pos, read back from the
 * end (replay_frames_local); innermost last. */
struct replay_local {
	uint64_t pos;		/* 0: nothing read yet, or failed */
	size_t n;
	uint64_t pc[LOCAL_FRAMES], cfa[LOCAL_FRAMES];
};

void replay_frames_reset(struct replay_thread *t)
{
	free(t->local);
	t->local = NULL;
	free(t->ct.slots);
	t->ct = (struct replay_call_tables) { 0 };
	replay_known_reset(t);
}

/* A hash of segment id @id. */
static size_t memo_hash(uint32_t id)
{
	return (size_t) (id * 0x9e3779b1u);
}

/* Rebuilds thread @t's memo at twice the size; false if out of memory. */
static bool memo_grow(struct replay_call_tables *ct)
{
	size_t n = ct->nslots ? 2 * ct->nslots : 256;
	struct replay_memo *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t i = 0; i < ct->nslots; i++) {
		size_t k = memo_hash(ct->slots[i].id) & (n - 1);

		if (!ct->slots[i].id)
			continue;
		while (slots[k].id)
			k = (k + 1) & (n - 1);
		slots[k] = ct->slots[i];
	}
	free(ct->slots);
	ct->slots = slots;
	ct->nslots = n;
	return true;
}

/* What thread @t knows of segment @id, added empty if new; valid until
 * the next call.  NULL if out of memory (nothing is then remembered). */
static struct replay_memo *memo_of(struct replay_thread *t, uint32_t id)
{
	struct replay_call_tables *ct = &t->ct;
	size_t k;

	if (2 * (ct->used + 1) > ct->nslots && !memo_grow(ct))
		return NULL;
	for (k = memo_hash(id) & (ct->nslots - 1); ct->slots[k].id;
	     k = (k + 1) & (ct->nslots - 1))
		if (ct->slots[k].id == id)
			return &ct->slots[k];
	ct->used++;
	ct->slots[k] = (struct replay_memo) { .id = id };
	return &ct->slots[k];
}

/* Call segment @id of thread @t's history into @c; false if none. */
static bool call_of(struct replay_thread *t, uint32_t id, struct hist_call *c)
{
	return id && !hist_call_get(t->h, id, c);
}

/* The first segment of the activation segment @s belongs to, into @a. */
static bool activation_of(struct replay_thread *t, const struct hist_call *s,
			  struct hist_call *a)
{
	return call_of(t, s->inst, a);
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
 * that is a call, else 0; read once, then remembered. */
static uint64_t address_after_call(struct replay_thread *t,
				   const struct hist_call *c)
{
	struct replay_memo *m = memo_of(t, c->id);
	const struct hist_entry *e;
	uint64_t ret;

	if (m && m->ret)
		return m->ret == 1 ? 0 : m->ret;
	e = insn_at(t, c->last);
	ret = e && e->iclass == HIST_IC_CALL ? e->ip + e->size : 1;
	if ((m = memo_of(t, c->id)))
		m->ret = ret;
	return ret == 1 ? 0 : ret;
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

/* True if instruction entry @first, the first of a segment, was entered
 * asynchronously: it resumed tracing somewhere else than after the
 * system call (or the interrupted instruction) before it. */
static bool resumed_elsewhere(struct replay_thread *t, uint64_t first)
{
	const struct hist_entry *e = first > 1 ? insn_at(t, first - 1) : NULL;
	uint64_t after;

	if (!e || (e->iclass != HIST_IC_FAR_CALL &&
		   !(e->flags & HIST_F_INTERRUPTED)))
		return false;
	after = e->ip + e->size;
	if (hist_cursor_next(t->look))
		return false;
	e = hist_cursor_entry(t->look);
	return (e->flags & HIST_F_RESUMED) && e->ip != after;
}

/* True if segment @s was entered asynchronously — a signal handler, or
 * the return from one through sigreturn.  Its caller is then not the one
 * the call segments link it to.  Read once, then remembered. */
static bool entered_async(struct replay_thread *t, const struct hist_call *s)
{
	struct replay_memo *m = memo_of(t, s->id);
	bool async;

	if (m && m->async)
		return m->async == 2;
	async = resumed_elsewhere(t, s->first);
	if ((m = memo_of(t, s->id)))
		m->async = async ? 2 : 1;
	return async;
}

/* The segment segment @s was called from, into @c, if it is a function
 * one level or more out (anything else is no caller). */
static bool up_of(struct replay_thread *t, const struct hist_call *s,
		  struct hist_call *c)
{
	return call_of(t, s->up, c) && !(c->flags & HIST_CALL_GAP) &&
	       c->level < s->level;
}

/* The segment whose call returned to the first instruction of segment @s
 * (entered by a return from the segment before it), into @out: the
 * first one up the stack of that segment whose call's return address it
 * is; false if none.  Searched once, then remembered. */
static bool returned_into(struct replay_thread *t, const struct hist_call *s,
			  struct hist_call *out)
{
	uint32_t id = s->id, found = UINT32_MAX;
	struct replay_memo *m = memo_of(t, id);
	const struct hist_entry *e;
	struct hist_call c, a;
	uint64_t ip;
	bool more;

	if (m && m->back)
		return m->back != UINT32_MAX && call_of(t, m->back, out);
	e = insn_at(t, s->first);
	ip = e ? e->ip : 0;
	more = ip && call_of(t, id - 1, &c);
	for (int i = 0; more && i < MAX_CLIMB; i++) {
		more = activation_of(t, &c, &a) && up_of(t, &a, &c);
		if (more && address_after_call(t, &c) == ip) {
			found = c.id;
			*out = c;
			break;
		}
	}
	if ((m = memo_of(t, id)))
		m->back = found;
	return found != UINT32_MAX;
}

/* The segment that stands for segment @s's activation, into @out: @s
 * itself, unless it is a piece of code without symbols continuing an
 * activation (its function, the address it starts at, is not that of
 * the activation's first piece), which stands for the activation whose
 * call returned to it.  False if that is not found. */
static bool identity_of(struct replay_thread *t, const struct hist_call *s,
			struct hist_call *out)
{
	struct hist_call a;

	*out = *s;
	for (int i = 0; i < MAX_CLIMB; i++) {
		if (!activation_of(t, out, &a))
			return false;
		if (a.id == out->id || out->func == a.func)
			return true;
		if (!returned_into(t, out, out))
			return false;
	}
	return false;
}

/* The activation that made the call (or tail call) activation @a was
 * entered by, through the segment that stands for it, into @out; false
 * if none further out. */
static bool outer_activation(struct replay_thread *t,
			     const struct hist_call *a, struct hist_call *out)
{
	struct hist_call p, pi;

	return up_of(t, a, &p) && identity_of(t, &p, &pi) &&
	       pi.level < a->level && activation_of(t, &pi, out);
}

/* Frame @f for segment @s (which stands for its activation) at @pc. */
static void frame_of(const struct hist_call *s, uint64_t pc,
		     struct replay_frame *f)
{
	*f = (struct replay_frame) {
		.pc = pc, .func = s->func, .level = s->level,
		.instance = s->inst,
	};
}

/* The caller of the frame of segment @s (which stands for its
 * activation) into @f; sets *@s to the segment that stands for the
 * caller's activation, and *@more to whether the stack goes on past @f.
 * False if there is no caller.  The caller is the one the activation was
 * entered from (its first segment's link: later pieces' links may have
 * been changed by a return that went elsewhere).  Activations entered by
 * a tail call are passed over: the function that jumped is no longer on
 * the stack.  One entered asynchronously (a signal handler) ends the
 * stack. */
static bool caller_frame(struct replay_thread *t, struct hist_call *s,
			 struct replay_frame *f, bool *more)
{
	struct hist_call a, c, ci;
	bool have_a = activation_of(t, s, &a), have_c;
	uint64_t pc;

	while (have_a && (a.flags & HIST_CALL_TAILCALL) &&
	       !entered_async(t, &a))
		have_a = outer_activation(t, &a, &a);
	have_c = have_a && !entered_async(t, &a) && up_of(t, &a, &c);
	pc = have_c ? return_address(t, &c, a.flags & HIST_CALL_UP_RETURN) :
		      0;
	if (!pc)
		return false;
	*more = identity_of(t, &c, &ci) && ci.level < a.level;
	frame_of(*more ? &ci : &c, pc, f);
	*s = ci;
	return true;
}

int replay_frames_at(struct replay_thread *t, uint64_t pos, uint64_t pc,
		     struct replay_frame *frames, size_t max, size_t *n)
{
	struct hist_call s, si;
	bool more;
	uint32_t id;
	int err;

	*n = 0;
	if (!t->last || !max)
		return 0;
	err = hist_call_find(t->h, pos, &id);
	if (!err)
		err = hist_call_get(t->h, id, &s);
	if (err)
		return err;
	more = identity_of(t, &s, &si);
	frame_of(more ? &si : &s, pc, &frames[0]);
	for (*n = 1; more && *n < max; (*n)++)
		if (!caller_frame(t, &si, &frames[*n], &more))
			break;
	return 0;
}

int replay_frames(struct replay *rp, size_t thr, struct replay_frame *frames,
		  size_t max, size_t *n)
{
	*n = 0;
	if (!rp || thr >= rp->n)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %zu in the "
				 "replay", thr);
	return replay_frames_at(&rp->t[thr], rp->t[thr].pos, rp->t[thr].pc,
				frames, max, n);
}

/* rsp before entry @pos of thread @thr, proven by the walk back from the
 * end (recover.c); false if not known. */
static bool local_rsp(struct replay *rp, size_t thr, uint64_t pos,
		      uint64_t *rsp)
{
	uint64_t r[HIST_NREGS];
	uint8_t k[HIST_NREGS];

	replay_recover_regs(rp, thr, pos, r, k);
	*rsp = r[HIST_RSP];
	return k[HIST_RSP] == 0xff;
}

/* True if jump @e to @next stays in the activation of the top frame
 * of @l: a jump within its function, or a tail call (or a PLT stub's
 * jump) to the first instruction of a function with rsp where the
 * activation's CFA puts it there.  Not a longjmp or an exception's
 * landing, which leave for another activation. */
static bool local_same_frame(struct replay *rp, size_t thr,
			     const struct replay_local *l,
			     const struct hist_entry *e,
			     const struct hist_entry *next)
{
	struct hist_symtab *st = hist_recording_symtab(rp->rec);
	struct hist_sym from, to;
	uint64_t rsp;

	if (hist_sym_lookup(st, e->ip, &from) ||
	    hist_sym_lookup(st, next->ip, &to))
		return false;
	if (from.start == to.start)
		return true;
	return next->ip == to.start && local_rsp(rp, thr, next->number, &rsp) &&
	       rsp + 8 == l->cfa[l->n - 1];
}

/* Undoes entry @e (whose next entry was at the top of @l's stack) in
 * @l: a return enters its callee again (its frame's CFA is rsp before
 * the return + 8), a call leaves the callee its rsp before shows it
 * entered, anything else moves the top frame's pc.  False where the
 * stack cannot be told without the call segments: a gap, a transfer
 * the program did not make itself (a signal, a resume elsewhere), a
 * far transfer that does not come back to the next instruction, an rsp
 * not proven, a call whose callee is not the top frame. */
static bool local_undo(struct replay *rp, size_t thr, struct replay_local *l,
		       const struct hist_entry *e, const struct hist_entry *next)
{
	uint64_t rsp;

	if (e->kind != HIST_ENTRY_INSN || !l->n ||
	    (e->flags & HIST_F_INTERRUPTED) ||
	    ((next->flags & HIST_F_RESUMED) &&
	     !known_resume_continues(rp, e, next)))
		return false;
	switch (e->iclass) {
	case HIST_IC_RETURN:
		if (l->n == LOCAL_FRAMES ||
		    !local_rsp(rp, thr, e->number, &rsp) ||
		    rsp + 8 >= l->cfa[l->n - 1])
			return false;
		l->cfa[l->n] = rsp + 8;
		l->pc[l->n++] = e->ip;
		return true;
	case HIST_IC_CALL:
		if (l->n < 2 || !local_rsp(rp, thr, e->number, &rsp) ||
		    rsp != l->cfa[l->n - 1] ||
		    e->ip + e->size != l->pc[l->n - 2])
			return false;
		l->n--;
		l->pc[l->n - 1] = e->ip;
		return true;
	case HIST_IC_FAR_CALL:
	case HIST_IC_FAR_RETURN:
	case HIST_IC_FAR_JUMP:
		if (next->ip != e->ip + e->size)
			return false;
		break;
	case HIST_IC_JUMP:
	case HIST_IC_COND_JUMP:
		if (next->ip != e->ip + e->size &&
		    !local_same_frame(rp, thr, l, e, next))
			return false;
		break;
	default:
		break;
	}
	l->pc[l->n - 1] = e->ip;
	return true;
}

/* Reads @l back to entry @pos of thread @thr: from where it is if that
 * is at or after @pos, else from the end's stack; false if it cannot. */
static bool local_read_back(struct replay *rp, size_t thr,
			    struct replay_local *l, uint64_t pos)
{
	struct replay_thread *t = &rp->t[thr];
	struct hist_entry e, next;
	uint64_t pc[LOCAL_FRAMES], cfa[LOCAL_FRAMES];

	if (!l->pos || l->pos < pos) {
		size_t m = known_end_frames(rp, thr, pc, cfa, LOCAL_FRAMES);

		l->n = m;
		for (size_t i = 0; i < m; i++) {
			l->pc[m - 1 - i] = pc[i];
			l->cfa[m - 1 - i] = cfa[i];
		}
		l->pos = m && pos + LOCAL_SCAN >= t->last ? t->last : 0;
	}
	if (!l->pos || l->pos - pos > LOCAL_SCAN ||
	    !known_insn(t, l->pos, &next))
		return l->pos = 0, false;
	while (l->pos > pos) {
		if (!known_insn(t, l->pos - 1, &e) ||
		    !local_undo(rp, thr, l, &e, &next))
			return l->pos = 0, false;
		l->pos--;
		next = e;
	}
	return true;
}

bool replay_frames_local(struct replay *rp, size_t thr,
			 struct replay_frame *frames, size_t max, size_t *n)
{
	struct replay_thread *t = &rp->t[thr];
	struct replay_local *l = t->local;
	struct hist_symtab *st;
	struct hist_sym sym;

	*n = 0;
	if (!rp->rec)
		return false;
	st = hist_recording_symtab(rp->rec);
	if (!l && !(l = t->local = calloc(1, sizeof(*l))))
		return false;
	if (!local_read_back(rp, thr, l, t->pos)) {
		ptrr_clear_error();
		return false;
	}
	for (size_t i = 0; i < l->n && i < max; i++) {
		uint64_t pc = l->pc[l->n - 1 - i];

		/* A function without a symbol: the call segments name it by
		 * where its activation began, which only they know. */
		if (hist_sym_lookup(st, i ? pc - 1 : pc, &sym)) {
			ptrr_clear_error();
			*n = 0;
			return false;
		}
		frames[i] = (struct replay_frame) {
			.pc = pc, .func = sym.start, .level = -(int32_t) i,
			.cfa = l->cfa[l->n - 1 - i], .cfa_known = true,
		};
		(*n)++;
	}
	return *n > 0;
}
