/* Function-call segments of a history, as GDB's btrace computes them
 * (gdb/btrace.c, ftrace_update_function and friends).
 *
 * One forward pass over the entries.  Each instruction either continues
 * the current segment or starts a new one, by what the previous
 * instruction was and where the new one lies:
 *  - after a call (not to the next instruction, the PIC idiom): a callee
 *    one level deeper, whose up link is the caller's segment;
 *  - after a return: a new piece of the caller's instance (prev/next link
 *    the pieces; level and up are the caller's), found by walking up the
 *    links, from the caller of the activation that returned (past the
 *    ones entered by tail calls: each replaced its jumper's frame), for
 *    a segment of the same function; if there is none, a new segment
 *    one level up that becomes the caller of the outermost instance seen
 *    (HIST_CALL_UP_RETURN);
 *  - after a jump: to the start of a function, a tail call (a callee
 *    entered by a jump); into the middle of the function the activation
 *    replaced by tail calls (main -> main.cold -> main), back to that
 *    instance; by an indirect jump into the middle of a function with an
 *    instance up the stack, a return to that instance (longjmp,
 *    unwinding); into code without a symbol, a tail call if the function
 *    changed (two stretches of such code cannot be told apart, so they
 *    are never taken for an instance up the stack);
 *  - anything else that changes the function: a switch, keeping the call
 *    stack as it is (a direct jump into a function's cold part, compiled
 *    apart, even in a recursion whose outer activations are in it).
 * A gap entry is a segment of its own; after it, segments start over
 * with no up link, at the level before the gap.  Levels are kept as
 * built and reported shifted so that the lowest is 0.
 *
 * The pass is incremental: the builder's state is kept with the segments
 * (stored compactly, calls_store.c), and a later call walks only the
 * entries added since.  hist_extend() decodes the last index segment
 * again, so the store is marked where that segment begins and put back
 * to the mark when the history has been extended: only the entries from
 * there on are walked again.
 */
#include "history_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Serialises the creation of any history's calls state. */
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;

/* The function an instruction lies in. */
struct func {
	uint64_t start;		/* symbol address, or the IP if no symbol */
	uint64_t end;		/* end of the symbol, start if none */
	const char *name;	/* NULL if no symbol */
};

/* Where the pass stands: what it knows beyond the segments. */
/* Signals being handled, innermost last, at most: an older one is
 * forgotten (its sigreturn then starts an unlinked segment, as before). */
#define MAX_SIGNALS 8

/* A signal being handled: the segment it interrupted, the handler's
 * first segment, and the segment its return went to (the signal
 * trampoline, whose sigreturn goes back to the interrupted code), 0
 * until then. */
struct sig_frame {
	uint32_t interrupted, handler, tramp;
};

struct walk {
	uint64_t done;		/* entries walked: 1 .. done */
	struct func cur;	/* function of the current segment */
	bool have_last;		/* the current segment has an instruction: */
	struct hist_entry last;	/* its last one so far */
	int32_t min_level;	/* the lowest level of any segment */
	struct sig_frame sig[MAX_SIGNALS];
	unsigned nsig;
};

/* A history's call segments and the pass that builds them. */
struct calls {
	pthread_mutex_t lock;	/* guards all of it */
	struct hist_symtab *st;
	struct hist_image *image;	/* the code, to read jumps */
	struct call_store s;
	struct walk w;
	struct walk mark;	/* the pass at the store's mark, */
	uint64_t mark_entry;	/* before this entry (0 if none yet) */
	unsigned long generation;	/* of the history it walked */
	unsigned long renumbered;	/* the history's, when it walked */
	bool yield;		/* hist_extend() waits for the lock */
	uint64_t progress;	/* w.done as last published, for
				 * hist_calls_near() (atomic) */
	bool loaded;		/* read from a saved index: complete, but
				 * without the pass's state to go on from */
	/* A window pass (hist_calls_window): */
	uint64_t window;	/* its first entry; 0 for the whole pass */
	uint8_t *unsure;	/* UNSURE_* of segment id, at [id - 1] */
	size_t unsure_cap;
	bool hit;		/* the entry being added read something
				 * unsure (read_unsure) */
	bool sig_unsure;	/* the signals being handled may not be
				 * the whole pass's */
};

/* What a window pass may have got other than the pass over the whole
 * history, for want of the segments before the window: a segment's
 * level (relative to the window's other segments), links and flags.
 * Where a segment begins depends only on the instruction before it and
 * its own, so entry ranges and functions are the same, and ids differ
 * by a constant: the first segment of the window is the part of the
 * whole pass's segment there from the window on (named by its own first
 * address if it has no symbol). */
#define UNSURE_LEVEL	HIST_WINDOW_LEVEL
#define UNSURE_UP	HIST_WINDOW_UP
#define UNSURE_INST	HIST_WINDOW_INST
#define UNSURE_FLAGS	HIST_WINDOW_FLAGS
#define UNSURE_NEXT	HIST_WINDOW_NEXT
#define UNSURE_ALL	(UNSURE_LEVEL | UNSURE_UP | UNSURE_INST | \
			 UNSURE_FLAGS | UNSURE_NEXT)
/* What a segment takes from the instance it continues. */
#define UNSURE_COPIED	(UNSURE_LEVEL | UNSURE_UP | UNSURE_INST | \
			 UNSURE_FLAGS)

/* Segment @id (1-based), a copy to read. */
static struct call_rec rec(struct calls *b, uint32_t id)
{
	return call_store_get(&b->s, id);
}

/* Segment @id, to change: the pointer is valid until the next rec(),
 * mut() or other call on the store. */
static struct call_rec *mut(struct calls *b, uint32_t id)
{
	if (b->hit)
		b->unsure[id - 1] = UNSURE_ALL;
	return call_store_mut(&b->s, id);
}

/* What a window pass may have wrong about segment @id (UNSURE_*); 0 in
 * the pass over the whole history. */
static uint8_t unsure(const struct calls *b, uint32_t id)
{
	return b->window && id ? b->unsure[id - 1] : 0;
}

/* Sets what a window pass may have wrong about segment @id to @bits, or
 * to everything if the entry being added read something unsure. */
static void set_unsure(struct calls *b, uint32_t id, uint8_t bits)
{
	if (b->window)
		b->unsure[id - 1] = b->hit ? UNSURE_ALL : bits;
}

/* A step of the pass reads @what of segment @id: if a window pass may
 * have that wrong, the step's outcome may differ from the whole pass's,
 * and every segment it makes or changes is marked unsure (mut). */
static void read_unsure(struct calls *b, uint32_t id, uint8_t what)
{
	if (unsure(b, id) & what)
		b->hit = true;
}

static uint32_t flags_of(struct call_rec r)
{
	return r.fn >> CALL_FN_BITS;
}

/* Sets the HIST_CALL_* flags of @r to @flags. */
static void set_flags(struct call_rec *r, uint32_t flags)
{
	r->fn = (r->fn & ~(CALL_PUBLIC << CALL_FN_BITS)) |
		flags << CALL_FN_BITS;
}

/* The id of the current (last) segment. */
static uint32_t current(const struct calls *b)
{
	return (uint32_t) b->s.n;
}

/* The function at @ip. */
static struct func func_at(struct calls *b, uint64_t ip)
{
	struct hist_sym sym;

	if (b->st && !hist_sym_lookup(b->st, ip, &sym))
		return (struct func) { sym.start, sym.start + sym.size,
				       sym.name };
	return (struct func) { ip, ip, NULL };
}

/* True if @f is the function of segment @id: the same symbol, or both
 * without one (as GDB's ftrace_function_switched has it). */
static bool same_func(struct calls *b, uint32_t id, const struct func *f)
{
	struct call_rec r = rec(b, id);
	bool nosym = flags_of(r) & CALL_NOSYM;

	if (nosym || !f->name)
		return nosym && !f->name;
	return call_store_func(&b->s, &r) == f->start;
}

/* Makes room in a window pass's unsure[] for one more segment; false if
 * out of memory. */
static bool grow_unsure(struct calls *b)
{
	size_t n = b->unsure_cap ? 2 * b->unsure_cap : 1024;
	uint8_t *u;

	if (!b->window || b->s.n < b->unsure_cap)
		return true;
	u = realloc(b->unsure, n);
	if (!u)
		return false;
	b->unsure = u;
	b->unsure_cap = n;
	return true;
}

/* Appends a segment for entry @e in function @f: at the level of the
 * segment before, with no links; returns its id, 0 if out of memory. */
static uint32_t new_segment(struct calls *b, const struct hist_entry *e,
			    const struct func *f)
{
	int32_t level = b->s.n ? rec(b, current(b)).level : 0;
	uint32_t id = (uint32_t) b->s.n + 1;
	struct call_rec *r;

	if (!grow_unsure(b) || call_store_push(&b->s, e->number, f->start,
					       f->name ? 0 : CALL_NOSYM))
		return 0;
	/* A window's first segment: the instance, its caller and how it
	 * was entered are before the window. */
	set_unsure(b, id, b->s.n == 1 ? UNSURE_UP | UNSURE_INST |
		   UNSURE_FLAGS : unsure(b, id - 1) & UNSURE_LEVEL);
	r = mut(b, id);
	r->level = level;
	r->inst = id;
	b->w.cur = *f;
	return id;
}

/* Sets the caller of every piece of function instance @id to @up. */
static void fixup_caller(struct calls *b, uint32_t id, uint32_t up,
			 uint32_t flags)
{
	read_unsure(b, id, UNSURE_INST);
	for (uint32_t p = rec(b, id).inst; p; p = rec(b, p).next) {
		struct call_rec *r;

		read_unsure(b, p, UNSURE_NEXT);
		r = mut(b, p);

		r->up = up;
		set_flags(r, flags);
	}
}

/* The innermost segment up the stack from @id (inclusive) in function
 * @f, or 0. */
static uint32_t find_caller(struct calls *b, uint32_t id,
			    const struct func *f)
{
	for (; id; id = rec(b, id).up) {
		if (same_func(b, id, f))
			return id;
		read_unsure(b, id, UNSURE_UP);
	}
	return 0;
}

/* The innermost segment up the stack from @id (inclusive) that ended
 * with a call, or 0. */
static uint32_t find_call(struct calls *b, uint32_t id)
{
	for (; id; id = rec(b, id).up) {
		if (flags_of(rec(b, id)) & CALL_ENDS_CALL)
			return id;
		read_unsure(b, id, UNSURE_UP);
	}
	return 0;
}

/* Makes new segment @id the continuation of instance @caller (its
 * latest piece). */
static void continue_instance(struct calls *b, uint32_t id, uint32_t caller)
{
	struct call_rec c, *s;

	read_unsure(b, caller, UNSURE_NEXT);
	while (rec(b, caller).next) {
		caller = rec(b, caller).next;
		read_unsure(b, caller, UNSURE_NEXT);
	}
	mut(b, caller)->next = id;
	c = rec(b, caller);
	s = mut(b, id);
	s->inst = c.inst;
	s->level = c.level;
	s->up = c.up;
	set_flags(s, flags_of(c) & CALL_PUBLIC);
	set_unsure(b, id, unsure(b, caller) & UNSURE_COPIED);
}

/* A return from segment @from into new segment @id, whose caller was not
 * found: either the trace began below it (@id becomes the caller of the
 * outermost instance), or control went somewhere unexpected. */
static void return_unknown(struct calls *b, uint32_t id, uint32_t from)
{
	uint32_t p = from;
	bool below;
	struct call_rec *r;
	int32_t level;

	read_unsure(b, p, UNSURE_UP);
	below = !find_call(b, rec(b, p).up);
	while (below && rec(b, p).up) {
		p = rec(b, p).up;
		read_unsure(b, p, UNSURE_UP);
	}
	level = rec(b, p).level - 1;
	mut(b, id)->level = level;
	set_unsure(b, id, (unsure(b, id) & ~UNSURE_LEVEL) |
		   (unsure(b, p) & UNSURE_LEVEL));
	if (below) {
		fixup_caller(b, p, id, HIST_CALL_UP_RETURN);
		return;
	}
	r = mut(b, p);
	r->up = id;
	set_flags(r, HIST_CALL_UP_RETURN);
}

/* The segment a return from segment @from goes back to, or one further
 * up the stack: the caller of its activation, past the activations that
 * were entered by tail calls (each replaced, on the real stack, the frame
 * that jumped to it, so the return goes to that frame's caller). */
static uint32_t return_site(struct calls *b, uint32_t from)
{
	struct call_rec r = rec(b, from);

	read_unsure(b, from, UNSURE_FLAGS | UNSURE_UP);
	while ((flags_of(r) & HIST_CALL_TAILCALL) && r.up && r.up < from) {
		r = rec(b, from = r.up);
		read_unsure(b, from, UNSURE_FLAGS | UNSURE_UP);
	}
	return r.up;
}

/* The segment of function @f that the activation of segment @id replaced
 * by tail calls (main -> main.cold -> main), or 0. */
static uint32_t tail_caller(struct calls *b, uint32_t id,
			    const struct func *f)
{
	struct call_rec r = rec(b, id);

	read_unsure(b, id, UNSURE_FLAGS | UNSURE_UP);
	while ((flags_of(r) & HIST_CALL_TAILCALL) && r.up && r.up < id) {
		r = rec(b, id = r.up);
		if (same_func(b, id, f))
			return id;
		read_unsure(b, id, UNSURE_FLAGS | UNSURE_UP);
	}
	return 0;
}

/* True if instruction @l is a jump whose destination is in its code (a
 * direct jump): never a longjmp or an unwinder's jump to a handler. */
static bool direct_jump(struct calls *b, const struct hist_entry *l)
{
	struct hist_insn_info info;

	if (l->iclass == HIST_IC_COND_JUMP)
		return true;
	return l->iclass == HIST_IC_JUMP && b->image &&
	       !hist_insn_info_at(b->image, l->ip, &info) && info.has_target;
}

/* Starts segment @e in @f after a return from the current segment. */
static uint32_t new_return(struct calls *b, const struct hist_entry *e,
			   const struct func *f)
{
	uint32_t from = current(b);
	uint32_t caller = find_caller(b, return_site(b, from), f);
	uint32_t id = new_segment(b, e, f);

	if (id && caller)
		continue_instance(b, id, caller);
	else if (id)
		return_unknown(b, id, from);
	return id;
}

/* Starts segment @e in @f, called from the current segment (by a jump if
 * @flags is HIST_CALL_TAILCALL). */
static uint32_t new_call(struct calls *b, const struct hist_entry *e,
			 const struct func *f, uint32_t flags)
{
	uint32_t from = current(b);
	uint32_t id = new_segment(b, e, f);
	struct call_rec *s;

	if (id) {
		s = mut(b, id);
		s->up = from;
		s->level++;
		set_flags(s, flags);
	}
	return id;
}

/* Starts segment @e in @f after an unexplained change of function: the
 * call stack stays. */
static uint32_t new_switch(struct calls *b, const struct hist_entry *e,
			   const struct func *f)
{
	struct call_rec prev = rec(b, current(b));
	uint32_t up = prev.up, flags = flags_of(prev) & CALL_PUBLIC;
	uint32_t id = new_segment(b, e, f);
	struct call_rec *s;

	if (id) {
		s = mut(b, id);
		s->up = up;
		set_flags(s, flags);
		set_unsure(b, id, (unsure(b, id) & UNSURE_LEVEL) |
			   (unsure(b, id - 1) & (UNSURE_UP | UNSURE_FLAGS)));
	}
	return id;
}

/* True if the current function is the dynamic linker's lazy binding
 * trampoline, which "returns" into the resolved function: GDB treats
 * that as a tail call, to keep the back trace. */
static bool in_dl_resolve(const struct calls *b)
{
	return b->w.cur.name &&
	       !strncmp(b->w.cur.name, "_dl_runtime_resolve", 19);
}

/* The segment instruction @e (in @f) starts after jump @l that ended
 * the current segment, or the current one if the jump stays in it.  A
 * jump into the middle of a function goes back to an activation of it:
 * the one the current activation replaced by tail calls, or for an
 * indirect jump (longjmp, an unwinder's jump to a handler) the nearest
 * one up the stack.  A direct jump into the middle of another function
 * (a function's hot part to its cold part, compiled apart) keeps the
 * stack: in a recursion, the activations further up in that function are
 * not the one that jumped. */
static uint32_t after_jump(struct calls *b, const struct hist_entry *l,
			   const struct hist_entry *e, const struct func *f,
			   bool switched)
{
	uint32_t cur = current(b), caller = 0, id;

	if (f->name && e->ip == f->start)
		return new_call(b, e, f, HIST_CALL_TAILCALL);
	if (!switched)
		return cur;
	if (f->name && !(caller = tail_caller(b, cur, f)) &&
	    !direct_jump(b, l)) {
		read_unsure(b, cur, UNSURE_UP);
		caller = find_caller(b, rec(b, cur).up, f);
	}
	if (caller) {
		id = new_segment(b, e, f);
		if (id)
			continue_instance(b, id, caller);
		return id;
	}
	if (!f->name)
		return new_call(b, e, f, HIST_CALL_TAILCALL);
	return new_switch(b, e, f);
}

/* The class of the transfer from instruction @l to @e: its own, except
 * that a taken transfer from an instruction of another class (a far
 * jump, say) that is not an asynchronous event counts as a jump. */
static enum hist_iclass transfer_class(const struct hist_entry *l,
				       const struct hist_entry *e)
{
	if (l->iclass == HIST_IC_CALL || l->iclass == HIST_IC_RETURN ||
	    e->ip == l->ip + l->size || (l->flags & HIST_F_INTERRUPTED) ||
	    (e->flags & HIST_F_RESUMED))
		return l->iclass;
	return HIST_IC_JUMP;
}

/* An asynchronous transfer to instruction @e (in @f) after b->w.last:
 * tracing resumed somewhere other than the next instruction.  A
 * sigreturn from the trampoline a handler returned to, back into the
 * function the signal interrupted, continues the interrupted activation
 * (so the code after a signal is the same activation as before it);
 * the first instruction of a function is taken for a signal handler's
 * entry and remembered.  Returns the segment for @e, or 0 to go on as
 * for any other transfer (*@handler then says it is a handler's). */
static uint32_t after_async(struct calls *b, const struct hist_entry *e,
			    const struct func *f, bool *handler)
{
	struct walk *w = &b->w;
	struct sig_frame *top = w->nsig ? &w->sig[w->nsig - 1] : NULL;
	uint32_t id;

	*handler = false;
	/* A window pass knows the signals handled since its start only. */
	if (b->window && (!top || b->sig_unsure) &&
	    w->last.iclass == HIST_IC_FAR_CALL)
		b->hit = true;
	if (top && top->tramp && current(b) == top->tramp &&
	    w->last.iclass == HIST_IC_FAR_CALL &&
	    same_func(b, top->interrupted, f)) {
		id = new_segment(b, e, f);
		if (id)
			continue_instance(b, id, top->interrupted);
		w->nsig--;
		return id;
	}
	*handler = f->name && e->ip == f->start;
	return 0;
}

/* Remembers that segment @id is the entry of a signal handler that
 * interrupted segment @interrupted. */
static void push_signal(struct calls *b, uint32_t interrupted, uint32_t id)
{
	struct walk *w = &b->w;

	if (!id)
		return;
	if (w->nsig == MAX_SIGNALS) {
		memmove(w->sig, w->sig + 1, sizeof(w->sig[0]) *
			(MAX_SIGNALS - 1));
		w->nsig--;
	}
	w->sig[w->nsig++] = (struct sig_frame) { interrupted, id, 0 };
}

/* The segment instruction @e belongs to, following instruction
 * b->w.last of the current segment; 0 if out of memory. */
static uint32_t next_segment(struct calls *b, const struct hist_entry *e)
{
	const struct hist_entry *l = &b->w.last;
	bool inside = b->w.cur.name && e->ip >= b->w.cur.start &&
		      e->ip < b->w.cur.end;
	struct func f = inside ? b->w.cur : func_at(b, e->ip);
	/* w.cur is the current segment's function (new_segment) */
	bool switched = !inside && !same_func(b, current(b), &f);
	bool handler = false;
	uint32_t id, from = current(b);

	if ((e->flags & HIST_F_RESUMED) && e->ip != l->ip + l->size) {
		id = after_async(b, e, &f, &handler);
		if (id)
			return id;
	}
	switch (transfer_class(l, e)) {
	case HIST_IC_CALL:
		if (e->ip == l->ip + l->size) {
			id = switched ? new_switch(b, e, &f) : current(b);
			break;
		}
		mut(b, current(b))->fn |= CALL_ENDS_CALL << CALL_FN_BITS;
		id = new_call(b, e, &f, 0);
		break;
	case HIST_IC_RETURN:
		if (in_dl_resolve(b)) {
			id = new_call(b, e, &f, HIST_CALL_TAILCALL);
			break;
		}
		id = new_return(b, e, &f);
		if (b->w.nsig && (unsure(b, from) & UNSURE_INST))
			b->sig_unsure = true;
		if (b->w.nsig && rec(b, from).inst ==
				 b->w.sig[b->w.nsig - 1].handler)
			b->w.sig[b->w.nsig - 1].tramp = id;
		break;
	case HIST_IC_JUMP:
	case HIST_IC_COND_JUMP:
		id = after_jump(b, l, e, &f, switched);
		break;
	default:
		id = switched ? new_switch(b, e, &f) : current(b);
		break;
	}
	if (handler && id != from)
		push_signal(b, from, id);
	return id;
}

/* Adds entry @e to the segments. */
static int add_entry(struct calls *b, const struct hist_entry *e)
{
	size_t n = b->s.n;
	uint32_t id;

	b->hit = false;
	if (e->kind == HIST_ENTRY_GAP) {
		id = new_segment(b, e, &(struct func) { 0, 0, NULL });
		if (id)
			set_flags(mut(b, id), HIST_CALL_GAP);
		b->w.have_last = false;
	} else if (!b->w.have_last) {
		struct func f = func_at(b, e->ip);

		id = new_segment(b, e, &f);
		b->w.have_last = true;
	} else {
		id = next_segment(b, e);
	}
	if (!id)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (b->s.n > n && (!n || rec(b, id).level < b->w.min_level))
		b->w.min_level = rec(b, id).level;
	b->w.last = *e;
	b->w.done = e->number;
	return 0;
}

/* Marks the store before entry w.done + 1, the first one that
 * hist_extend() may decode again. */
static void take_mark(struct calls *b)
{
	call_store_mark(&b->s);
	b->mark = b->w;
}

/* True if a walk for hist_calls_prepare(), with @stop, should stop: *@stop
 * is true or hist_extend() is waiting. */
static bool should_stop(struct calls *b, const bool *stop)
{
	return stop && (__atomic_load_n(stop, __ATOMIC_ACQUIRE) ||
			__atomic_load_n(&b->yield, __ATOMIC_ACQUIRE));
}

/* True if the rest of the run cursor @c is in (after the entry just
 * added) lies in the function of the current segment, which has a
 * symbol: those instructions only continue the segment, so the walk may
 * go straight to the run's last one, whose transfer is what matters.  Not
 * across the entry where the store is to be marked, nor past @size. */
static bool run_stays(const struct calls *b, const struct hist_cursor *c,
		      uint64_t size)
{
	const struct hist_entry *e = hist_cursor_entry(c);
	uint64_t last, ip;

	return b->w.cur.name && e->ip >= b->w.cur.start &&
	       hist_cursor_run_end(c, &last, &ip) && last > e->number + 1 &&
	       last <= size && ip < b->w.cur.end &&
	       !(b->mark_entry > e->number && b->mark_entry <= last);
}

/* Segments decoded ahead of the walk: one, so that the cache's bound
 * (HIST_CACHE_BYTES, which keeps at least the newest segment) never
 * drops a segment decoded ahead before the walk reaches it, however
 * large segments are. */
#define AHEAD 1

/* A thread that decodes the segments after the walk's into the
 * history's cache (hist_decode_ahead) while the walk goes through its
 * own: on two cores or more, the pass's decoding (half of its time) and
 * its logic overlap. */
struct ahead {
	struct history *h;
	pthread_mutex_t lock;
	pthread_cond_t moved;	/* seg changed, or stop */
	size_t seg;		/* the walk's segment */
	bool stop;
	pthread_t tid;
};

/* Decodes the AHEAD segments after the walk's, then waits for it to
 * move on.  A failure only ends the thread: the walk decodes what it
 * needs itself, and says what fails. */
static void *ahead_main(void *arg)
{
	struct ahead *a = arg;
	unsigned long changes = atomic_load(&a->h->cfg.image->changes);
	struct pt_image *image = hist_image_pt_clone(a->h->cfg.image);
	size_t next = 0, nsegs = a->h->nsegs;
	bool failed = !image;

	pthread_mutex_lock(&a->lock);
	while (!a->stop && !failed) {
		size_t i;

		if (next <= a->seg)
			next = a->seg + 1;
		if (next > a->seg + AHEAD || next >= nsegs) {
			pthread_cond_wait(&a->moved, &a->lock);
			continue;
		}
		i = next++;
		pthread_mutex_unlock(&a->lock);
		failed = hist_decode_ahead(a->h, image, changes, i) != 0;
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	pt_image_free(image);
	ptrr_clear_error();
	return NULL;
}

/* Starts decoding ahead of a walk in segment @seg of @h, if there are
 * two cores or more and segments enough after it; false if not. */
static bool ahead_start(struct ahead *a, struct history *h, size_t seg)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || seg + AHEAD + 1 >= h->nsegs)
		return false;
	*a = (struct ahead) { .h = h, .seg = seg };
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->moved, NULL);
	if (!pthread_create(&a->tid, NULL, ahead_main, a))
		return true;
	pthread_cond_destroy(&a->moved);
	pthread_mutex_destroy(&a->lock);
	return false;
}

/* Tells the thread of @a that the walk is in segment @seg. */
static void ahead_move(struct ahead *a, size_t seg)
{
	pthread_mutex_lock(&a->lock);
	a->seg = seg;
	pthread_cond_signal(&a->moved);
	pthread_mutex_unlock(&a->lock);
}

/* Stops the thread of @a and waits for it. */
static void ahead_stop(struct ahead *a)
{
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->moved);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->tid, NULL);
	pthread_cond_destroy(&a->moved);
	pthread_mutex_destroy(&a->lock);
}

/* Walks entries w.done + 1 .. hist_size(@h) into @b, marking the store
 * on the way at mark_entry.  Returns 1 if it stopped early (with @stop,
 * checked every 4096 entries: see should_stop). */
static int walk_history(struct history *h, struct calls *b, const bool *stop)
{
	uint64_t size = hist_size(h);
	struct hist_cursor *c;
	struct ahead ahead;
	bool ahead_on = false;
	size_t seg = 0;
	int err;

	if (b->w.done >= size)
		return 0;
	err = hist_cursor_new(h, &c);
	if (err)
		return err;
	err = hist_cursor_seek(c, b->w.done + 1);
	if (!err)
		ahead_on = ahead_start(&ahead, h, seg = hist_cursor_segment(c));
	for (unsigned long steps = 1; !err; steps++) {
		const struct hist_entry *e = hist_cursor_entry(c);

		if (ahead_on && hist_cursor_segment(c) != seg)
			ahead_move(&ahead, seg = hist_cursor_segment(c));

		if (e->number == b->mark_entry)
			take_mark(b);
		err = add_entry(b, e);
		if (!err && run_stays(b, c, size) &&
		    !(err = hist_cursor_skip_run(c))) {
			e = hist_cursor_entry(c);
			b->w.last = *e;
			b->w.done = e->number;
		}
		if (err || e->number == size)
			break;
		if (!(steps & 4095)) {
			__atomic_store_n(&b->progress, b->w.done,
					 __ATOMIC_RELEASE);
			if (should_stop(b, stop)) {
				err = 1;
				break;
			}
		}
		err = hist_cursor_next(c);
	}
	if (ahead_on)
		ahead_stop(&ahead);
	hist_cursor_free(c);
	return err;
}

/* Forgets all segments: the next walk starts from entry 1. */
static void restart(struct calls *b)
{
	call_store_fini(&b->s);
	b->w = (struct walk) { 0 };
	__atomic_store_n(&b->progress, 0, __ATOMIC_RELEASE);
}

/* Brings the segments of @b up to date with @h: if @h was extended since
 * the walk passed the mark, back to the mark first (from the start if
 * the store lost changes); then on to the end (or until *@stop,
 * returning 1), and encodes what changed. */
static int bring_up_to_date(struct history *h, struct calls *b,
			    const bool *stop)
{
	int err, flushed;

	if (b->s.lost || b->s.damaged || b->renumbered != h->renumbered ||
	    (b->loaded && b->generation != h->generation)) {
		restart(b);
		b->loaded = false;
		b->renumbered = h->renumbered;
	}
	if (b->generation != h->generation) {
		if (b->mark_entry && b->w.done >= b->mark_entry) {
			if (call_store_rollback(&b->s))
				restart(b);
			else
				b->w = b->mark;
		}
		b->generation = h->generation;
	}
	b->mark_entry = h->nsegs ? h->segs[h->nsegs - 1].first : 1;
	err = walk_history(h, b, stop);
	__atomic_store_n(&b->progress, b->w.done, __ATOMIC_RELEASE);
	flushed = call_store_flush(&b->s);
	return err < 0 || !flushed ? err : flushed;
}

/* The calls state of @h, created empty the first time. */
static int state_of(struct history *h, struct calls **out)
{
	struct calls *b = __atomic_load_n(&h->calls, __ATOMIC_ACQUIRE);

	if (!b) {
		pthread_mutex_lock(&calls_lock);
		b = h->calls;
		if (!b && (b = calloc(1, sizeof(*b)))) {
			pthread_mutex_init(&b->lock, NULL);
			b->st = h->cfg.symtab;
			b->image = h->cfg.image;
			b->generation = h->generation;
			__atomic_store_n(&h->calls, b, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&calls_lock);
	}
	*out = b;
	return b ? 0 : ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
}

/* Locks the call segments of @h, brought up to date; on success the
 * caller unlocks b->lock. */
static int lock_calls(struct history *h, struct calls **out)
{
	struct calls *b;
	int err = state_of(h, &b);

	if (err)
		return err;
	pthread_mutex_lock(&b->lock);
	err = bring_up_to_date(h, b, NULL);
	if (err) {
		pthread_mutex_unlock(&b->lock);
		return err;
	}
	*out = b;
	return 0;
}

int hist_calls_prepare(struct history *h, const bool *stop)
{
	struct calls *b;
	int err = state_of(h, &b);

	if (err)
		return err;
	pthread_mutex_lock(&b->lock);
	err = bring_up_to_date(h, b, stop);
	pthread_mutex_unlock(&b->lock);
	return err;
}

bool hist_calls_near(struct history *h, uint64_t slack)
{
	struct calls *b;
	uint64_t size = hist_size(h);

	if (size <= slack)
		return true;
	if (state_of(h, &b)) {
		ptrr_clear_error();
		return false;
	}
	return __atomic_load_n(&b->progress, __ATOMIC_ACQUIRE) >= size - slack;
}

bool hist_calls_hold(struct history *h)
{
	struct calls *b;

	if (state_of(h, &b))
		return false;
	__atomic_store_n(&b->yield, true, __ATOMIC_RELEASE);
	pthread_mutex_lock(&b->lock);
	__atomic_store_n(&b->yield, false, __ATOMIC_RELEASE);
	return true;
}

void hist_calls_release(struct history *h)
{
	pthread_mutex_unlock(&h->calls->lock);
}

int hist_calls_count(struct history *h, size_t *ncalls)
{
	struct calls *b;
	int err = lock_calls(h, &b);

	if (err)
		return err;
	*ncalls = b->s.n;
	pthread_mutex_unlock(&b->lock);
	return 0;
}

/* Segment @id of @b as a hist_call. */
static void call_at(struct calls *b, uint32_t id, struct hist_call *c)
{
	struct call_rec r = rec(b, id);

	*c = (struct hist_call) {
		.first = call_store_first(&b->s, id),
		.last = id < b->s.n ? call_store_first(&b->s, id + 1) - 1 :
			b->w.done,
		.func = call_store_func(&b->s, &r),
		.id = id,
		.level = r.level - b->w.min_level,
		.up = r.up,
		.inst = r.inst,
		.next = r.next,
		.flags = flags_of(r) & CALL_PUBLIC,
	};
}

/* Unlocks @b and returns true if what was just read from its segments
 * cannot be trusted: they were read back from a saved index, and a
 * block of them failed its checks when first read.  The caller reads
 * again after lock_calls(), which puts the pass's segments in their
 * place. */
static bool read_again(struct calls *b)
{
	bool damaged = b->s.damaged;

	pthread_mutex_unlock(&b->lock);
	return damaged;
}

int hist_call_get(struct history *h, uint32_t id, struct hist_call *call)
{
	struct calls *b;
	int err;

	do {
		if ((err = lock_calls(h, &b)))
			return err;
		if (id < 1 || id > b->s.n)
			err = ptrr_fail(PTRR_ERR_RANGE, "no call segment %u: "
					"there are %zu", id, b->s.n);
		else
			call_at(b, id, call);
	} while (read_again(b));
	return err;
}

int hist_call_find(struct history *h, uint64_t number, uint32_t *id)
{
	struct calls *b;
	int err;

	do {
		if ((err = lock_calls(h, &b)))
			return err;
		if (!b->s.n || number < 1 || number > b->w.done)
			err = ptrr_fail(PTRR_ERR_RANGE, "instruction %llu is "
					"outside the history",
					(unsigned long long) number);
		else
			*id = call_store_find(&b->s, number);
	} while (read_again(b));
	return err;
}

int hist_calls_save(struct history *h, struct hist_wbuf *w)
{
	struct calls *b;
	size_t n = w->n;
	int err;

	do {
		if ((err = lock_calls(h, &b)))
			return err;
		w->n = n;
		call_store_save(&b->s, b->w.min_level, w);
	} while (read_again(b));
	return w->nomem ? ptrr_fail(PTRR_ERR_NOMEM, "out of memory") : 0;
}

int hist_calls_load(struct history *h, struct hist_rbuf *r)
{
	struct calls *b;
	int32_t min_level;
	int err = state_of(h, &b);

	if (err)
		return err;
	pthread_mutex_lock(&b->lock);
	restart(b);
	err = call_store_load(&b->s, r, hist_size(h), &min_level);
	if (!err && b->s.n) {
		b->w.done = hist_size(h);
		b->w.min_level = min_level;
		b->loaded = true;
		__atomic_store_n(&b->progress, b->w.done, __ATOMIC_RELEASE);
	}
	b->mark_entry = 0;
	b->generation = h->generation;
	pthread_mutex_unlock(&b->lock);
	return err;
}

size_t hist_index_inflated(struct history *h)
{
	struct calls *b = __atomic_load_n(&h->calls, __ATOMIC_ACQUIRE);
	size_t bytes;

	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	bytes = call_store_inflated(&b->s);
	pthread_mutex_unlock(&b->lock);
	return bytes;
}

size_t hist_calls_bytes(struct history *h)
{
	struct calls *b = __atomic_load_n(&h->calls, __ATOMIC_ACQUIRE);
	size_t bytes;

	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	bytes = sizeof(*b) + call_store_bytes(&b->s);
	pthread_mutex_unlock(&b->lock);
	return bytes;
}

bool hist_calls_ready(struct history *h)
{
	struct calls *b = __atomic_load_n(&h->calls, __ATOMIC_ACQUIRE);
	bool ready;

	/* Held: a walk (or a reader, briefly) is going on. */
	if (!b || pthread_mutex_trylock(&b->lock))
		return false;
	ready = !b->s.lost && !b->s.damaged &&
		b->generation == h->generation &&
		b->renumbered == h->renumbered &&
		b->w.done >= hist_size(h);
	pthread_mutex_unlock(&b->lock);
	return ready;
}

bool hist_calls_from_index(struct history *h)
{
	struct calls *b = __atomic_load_n(&h->calls, __ATOMIC_ACQUIRE);
	bool loaded;

	if (!b)
		return false;
	pthread_mutex_lock(&b->lock);
	loaded = b->loaded;
	pthread_mutex_unlock(&b->lock);
	return loaded;
}

int hist_calls_window(struct history *h, size_t seg, struct calls **out)
{
	struct calls *b;
	int err;

	*out = NULL;
	if (seg >= h->nsegs || !h->segs[seg].first)
		return ptrr_fail(PTRR_ERR_RANGE, "no segment %zu to start a "
				 "window at: there are %zu", seg, h->nsegs);
	b = calloc(1, sizeof(*b));
	if (!b)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	pthread_mutex_init(&b->lock, NULL);
	b->st = h->cfg.symtab;
	b->image = h->cfg.image;
	b->window = h->segs[seg].first;
	b->w.done = b->window - 1;
	err = walk_history(h, b, NULL);
	if (!err)
		err = call_store_flush(&b->s);
	if (err) {
		hist_calls_free(b);
		return err;
	}
	*out = b;
	return 0;
}

size_t hist_calls_window_count(const struct calls *b)
{
	return b->s.n;
}

uint32_t hist_calls_window_find(struct calls *b, uint64_t number)
{
	return b->s.n && number >= b->window && number <= b->w.done ?
	       call_store_find(&b->s, number) : 0;
}

unsigned hist_calls_window_get(struct calls *b, uint32_t id,
			       struct hist_call *c)
{
	call_at(b, id, c);
	return unsure(b, id);
}

void hist_calls_free(struct calls *b)
{
	if (!b)
		return;
	free(b->unsure);
	call_store_fini(&b->s);
	pthread_mutex_destroy(&b->lock);
	free(b);
}
