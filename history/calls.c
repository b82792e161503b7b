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
 *    links for a segment of the same function; if there is none, a new
 *    segment one level up that becomes the caller of the outermost
 *    instance seen (HIST_CALL_UP_RETURN);
 *  - after a jump: to the start of a function, a tail call (a callee
 *    entered by a jump); into the middle of a function with an instance
 *    up the stack, a return to that instance (longjmp, unwinding, code
 *    split into .cold parts); into code without a symbol, a tail call if
 *    the function changed (two stretches of such code cannot be told
 *    apart, so they are never taken for an instance up the stack);
 *  - anything else that changes the function: a switch, keeping the call
 *    stack as it is.
 * A gap entry is a segment of its own; after it, segments start over
 * with no up link, at the level before the gap.  Finally levels are
 * shifted so that the lowest is 0.
 */
#include "history_internal.h"

#include <stdlib.h>
#include <string.h>

/* Every STRIDE-th segment's first entry is kept apart, so that most of
 * hist_call_find's binary search runs in a small, cache-friendly array. */
#define STRIDE 64

struct hist_calls_state {
	struct hist_call *v;
	size_t n;
	uint64_t *sparse;	/* sparse[k] = v[k * STRIDE].first */
};

/* Serialises the first computation of any history's calls. */
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;

/* Build-time facts about a segment, beside the public hist_call. */
#define SEG_NOSYM	0x1	/* no symbol covers it: func is its first IP */
#define SEG_ENDS_CALL	0x2	/* its last instruction is a call */

/* The function an instruction lies in. */
struct func {
	uint64_t start;		/* symbol address, or the IP if no symbol */
	uint64_t end;		/* end of the symbol, start if none */
	const char *name;	/* NULL if no symbol */
};

struct builder {
	struct hist_symtab *st;
	struct hist_call *v;	/* the segments; v[id - 1] */
	uint8_t *seg;		/* SEG_* per segment */
	size_t n, cap;
	struct func cur;	/* function of the current segment */
	bool have_last;		/* the current segment has an instruction: */
	struct hist_entry last;	/* its last one so far */
};

/* The segment with 1-based id @id, or NULL for 0. */
static struct hist_call *seg(struct builder *b, uint32_t id)
{
	return id ? &b->v[id - 1] : NULL;
}

/* The function at @ip. */
static struct func func_at(struct builder *b, uint64_t ip)
{
	struct hist_sym sym;

	if (b->st && !hist_sym_lookup(b->st, ip, &sym))
		return (struct func) { sym.start, sym.start + sym.size,
				       sym.name };
	return (struct func) { ip, ip, NULL };
}

/* True if @f is the function of segment @id: the same symbol, or both
 * without one (as GDB's ftrace_function_switched has it). */
static bool same_func(struct builder *b, uint32_t id, const struct func *f)
{
	bool nosym = b->seg[id - 1] & SEG_NOSYM;

	if (nosym || !f->name)
		return nosym && !f->name;
	return b->v[id - 1].func == f->start;
}

/* Appends a segment for entry @e in function @f: at the level of the
 * segment before, with no links; returns it. */
static struct hist_call *new_segment(struct builder *b,
				     const struct hist_entry *e,
				     const struct func *f)
{
	struct hist_call *s;

	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		struct hist_call *v = realloc(b->v, cap * sizeof(*v));
		uint8_t *sg = v ? realloc(b->seg, cap) : NULL;

		if (v)
			b->v = v;
		if (!sg)
			return NULL;
		b->seg = sg;
		b->cap = cap;
	}
	s = &b->v[b->n];
	*s = (struct hist_call) {
		.id = (uint32_t) (b->n + 1), .first = e->number,
		.last = e->number, .level = b->n ? s[-1].level : 0,
		.func = f->start,
	};
	b->seg[b->n++] = f->name ? 0 : SEG_NOSYM;
	b->cur = *f;
	return s;
}

/* Sets the caller of every piece of @s's function instance to @up. */
static void fixup_caller(struct builder *b, struct hist_call *s, uint32_t up,
			 uint32_t flags)
{
	struct hist_call *p;

	for (p = s; p; p = seg(b, p->prev)) {
		p->up = up;
		p->flags = flags;
	}
	for (p = seg(b, s->next); p; p = seg(b, p->next)) {
		p->up = up;
		p->flags = flags;
	}
}

/* The innermost segment up the stack from @id (inclusive) in function
 * @f, or 0. */
static uint32_t find_caller(struct builder *b, uint32_t id,
			    const struct func *f)
{
	for (; id; id = b->v[id - 1].up)
		if (same_func(b, id, f))
			return id;
	return 0;
}

/* The innermost segment up the stack from @id (inclusive) that ended
 * with a call, or 0. */
static uint32_t find_call(struct builder *b, uint32_t id)
{
	for (; id; id = b->v[id - 1].up)
		if (b->seg[id - 1] & SEG_ENDS_CALL)
			return id;
	return 0;
}

/* Makes new segment @s the continuation of instance @caller (its latest
 * piece). */
static void continue_instance(struct builder *b, struct hist_call *s,
			      uint32_t caller)
{
	struct hist_call *c = seg(b, caller);

	while (c->next)
		c = seg(b, c->next);
	c->next = s->id;
	s->prev = c->id;
	s->level = c->level;
	s->up = c->up;
	s->flags = c->flags;
}

/* A return from segment @from into new segment @s, whose caller was not
 * found: either the trace began below it (@s becomes the caller of the
 * outermost instance), or control went somewhere unexpected. */
static void return_unknown(struct builder *b, struct hist_call *s,
			   uint32_t from)
{
	struct hist_call *p = seg(b, from);

	if (!find_call(b, p->up)) {
		while (p->up)
			p = seg(b, p->up);
		s->level = p->level - 1;
		fixup_caller(b, p, s->id, HIST_CALL_UP_RETURN);
		return;
	}
	s->level = p->level - 1;
	p->up = s->id;
	p->flags = HIST_CALL_UP_RETURN;
}

/* Starts segment @e in @f after a return from the current segment. */
static struct hist_call *new_return(struct builder *b,
				    const struct hist_entry *e,
				    const struct func *f)
{
	uint32_t from = (uint32_t) b->n;
	uint32_t caller = find_caller(b, b->v[from - 1].up, f);
	struct hist_call *s = new_segment(b, e, f);

	if (s && caller)
		continue_instance(b, s, caller);
	else if (s)
		return_unknown(b, s, from);
	return s;
}

/* Starts segment @e in @f, called from the current segment (by a jump if
 * @flags is HIST_CALL_TAILCALL). */
static struct hist_call *new_call(struct builder *b,
				  const struct hist_entry *e,
				  const struct func *f, uint32_t flags)
{
	uint32_t from = (uint32_t) b->n;
	struct hist_call *s = new_segment(b, e, f);

	if (s) {
		s->up = from;
		s->level++;
		s->flags = flags;
	}
	return s;
}

/* Starts segment @e in @f after an unexplained change of function: the
 * call stack stays. */
static struct hist_call *new_switch(struct builder *b,
				    const struct hist_entry *e,
				    const struct func *f)
{
	struct hist_call *prev = &b->v[b->n - 1];
	uint32_t up = prev->up, flags = prev->flags;
	struct hist_call *s = new_segment(b, e, f);

	if (s) {
		s->up = up;
		s->flags = flags;
	}
	return s;
}

/* True if the current function is the dynamic linker's lazy binding
 * trampoline, which "returns" into the resolved function: GDB treats
 * that as a tail call, to keep the back trace. */
static bool in_dl_resolve(const struct builder *b)
{
	return b->cur.name &&
	       !strncmp(b->cur.name, "_dl_runtime_resolve", 19);
}

/* The segment instruction @e (in @f) starts after the jump that ended
 * the current segment, or the current one if the jump stays in it. */
static struct hist_call *after_jump(struct builder *b,
				    const struct hist_entry *e,
				    const struct func *f, bool switched)
{
	struct hist_call *cur = &b->v[b->n - 1];
	uint32_t caller;

	if (f->name && e->ip == f->start)
		return new_call(b, e, f, HIST_CALL_TAILCALL);
	if (!switched)
		return cur;
	caller = f->name ? find_caller(b, cur->up, f) : 0;
	if (caller) {
		struct hist_call *s = new_segment(b, e, f);

		if (s)
			continue_instance(b, s, caller);
		return s;
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

/* The segment instruction @e belongs to, following instruction b->last
 * of the current segment; NULL if out of memory. */
static struct hist_call *next_segment(struct builder *b,
				      const struct hist_entry *e)
{
	const struct hist_entry *l = &b->last;
	bool inside = b->cur.name && e->ip >= b->cur.start &&
		      e->ip < b->cur.end;
	struct func f = inside ? b->cur : func_at(b, e->ip);
	bool switched = !same_func(b, (uint32_t) b->n, &f);

	switch (transfer_class(l, e)) {
	case HIST_IC_CALL:
		if (e->ip == l->ip + l->size)
			break;
		b->seg[b->n - 1] |= SEG_ENDS_CALL;
		return new_call(b, e, &f, 0);
	case HIST_IC_RETURN:
		if (in_dl_resolve(b))
			return new_call(b, e, &f, HIST_CALL_TAILCALL);
		return new_return(b, e, &f);
	case HIST_IC_JUMP:
	case HIST_IC_COND_JUMP:
		return after_jump(b, e, &f, switched);
	default:
		break;
	}
	return switched ? new_switch(b, e, &f) : &b->v[b->n - 1];
}

/* Adds entry @e to the segments. */
static int add_entry(struct builder *b, const struct hist_entry *e)
{
	struct hist_call *s;

	if (e->kind == HIST_ENTRY_GAP) {
		s = new_segment(b, e, &(struct func) { 0, 0, NULL });
		if (s)
			s->flags = HIST_CALL_GAP;
		b->have_last = false;
	} else if (!b->have_last) {
		struct func f = func_at(b, e->ip);

		s = new_segment(b, e, &f);
		b->have_last = true;
	} else {
		s = next_segment(b, e);
	}
	if (!s)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	s->last = e->number;
	b->last = *e;
	return 0;
}

/* Shifts all levels so that the lowest is 0. */
static void normalize_levels(struct builder *b)
{
	int32_t min = 0;

	for (size_t i = 0; i < b->n; i++)
		if (i == 0 || b->v[i].level < min)
			min = b->v[i].level;
	for (size_t i = 0; i < b->n; i++)
		b->v[i].level -= min;
}

/* Walks all of @h's entries into @b. */
static int walk_history(struct history *h, struct builder *b)
{
	struct hist_cursor *c;
	int err;

	if (!hist_size(h))
		return 0;
	err = hist_cursor_new(h, &c);
	if (err)
		return err;
	err = hist_cursor_seek(c, 1);
	while (!err) {
		err = add_entry(b, hist_cursor_entry(c));
		if (!err)
			err = hist_cursor_next(c);
	}
	hist_cursor_free(c);
	return err == PTRR_ERR_RANGE ? 0 : err;
}

/* Moves the segments of @b into @cs (which then owns them) and builds
 * its sparse index. */
static int keep_segments(struct builder *b, struct hist_calls_state *cs)
{
	cs->v = b->n ? realloc(b->v, b->n * sizeof(*b->v)) : NULL;
	if (!cs->v)
		cs->v = b->v;
	b->v = NULL;
	cs->n = b->n;
	cs->sparse = malloc((cs->n / STRIDE + 1) * sizeof(*cs->sparse));
	if (!cs->sparse)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t k = 0; k * STRIDE < cs->n; k++)
		cs->sparse[k] = cs->v[k * STRIDE].first;
	return 0;
}

/* Computes the call segments of @h. */
static int build(struct history *h, struct hist_calls_state **out)
{
	struct builder b = { .st = h->cfg.symtab };
	struct hist_calls_state *cs = calloc(1, sizeof(*cs));
	int err = cs ? walk_history(h, &b) :
		  ptrr_fail(PTRR_ERR_NOMEM, "out of memory");

	if (!err) {
		normalize_levels(&b);
		err = keep_segments(&b, cs);
	}
	free(b.seg);
	free(b.v);
	if (err) {
		hist_calls_free(cs);
		return err;
	}
	*out = cs;
	return 0;
}

/* The call segments of @h, computed the first time. */
static int calls_of(struct history *h, struct hist_calls_state **out)
{
	struct hist_calls_state *cs = __atomic_load_n(&h->calls,
						      __ATOMIC_ACQUIRE);
	int err = 0;

	if (!cs) {
		pthread_mutex_lock(&calls_lock);
		cs = h->calls;
		if (!cs)
			err = build(h, &cs);
		if (!err)
			__atomic_store_n(&h->calls, cs, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&calls_lock);
	}
	*out = cs;
	return err;
}

int hist_calls(struct history *h, const struct hist_call **calls,
	       size_t *ncalls)
{
	struct hist_calls_state *cs;
	int err = calls_of(h, &cs);

	if (err)
		return err;
	*calls = cs->v;
	*ncalls = cs->n;
	return 0;
}

/* The segment holding entry @number of @cs, which has one: a binary
 * search on the sparse index, then a scan of at most STRIDE segments. */
static const struct hist_call *segment_of(const struct hist_calls_state *cs,
					  uint64_t number)
{
	size_t lo = 0, hi = (cs->n + STRIDE - 1) / STRIDE, i, end;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (cs->sparse[mid] <= number)
			lo = mid;
		else
			hi = mid;
	}
	i = lo * STRIDE;
	end = i + STRIDE < cs->n ? i + STRIDE : cs->n;
	while (i + 1 < end && cs->v[i + 1].first <= number)
		i++;
	return &cs->v[i];
}

int hist_call_find(struct history *h, uint64_t number, uint32_t *id)
{
	struct hist_calls_state *cs;
	int err = calls_of(h, &cs);

	if (err)
		return err;
	if (!cs->n || number < 1 || number > cs->v[cs->n - 1].last)
		return ptrr_fail(PTRR_ERR_RANGE,
				 "instruction %llu is outside the history",
				 (unsigned long long) number);
	*id = segment_of(cs, number)->id;
	return 0;
}

void hist_calls_free(struct hist_calls_state *cs)
{
	if (!cs)
		return;
	free(cs->v);
	free(cs->sparse);
	free(cs);
}
