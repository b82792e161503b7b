/* The activations of a thread's call history (plugin/timeline.h).
 *
 * history/calls.c cuts the history into call segments, the pieces of one
 * function instance linked by @inst, and links each instance to its
 * caller's segment by @up (a caller found later, by a return to a frame
 * never seen being called, is linked too).  An activation is an instance
 * from its first entry to its last; the callers' links make a forest, and
 * each activation is widened to hold its callees, so that a callee that
 * never returned (a crash, a longjmp past it, the end of the trace) and a
 * caller found late still nest.  Drawn depths come from that nesting;
 * they equal call-history's levels except after gaps, where the history
 * goes on with no known caller and the timeline starts again at depth 0.
 */
#include <config.h>

#include "timeline.h"

#include <stdlib.h>
#include <string.h>

/* Activations of one thread under construction. */
struct builder {
	struct history *h;
	struct hist_symtab *st;
	struct hist_call *calls;	/* [1 .. ncalls] */
	size_t ncalls;
	uint32_t *act_of;	/* segment id -> activation index + 1 */
	uint32_t *parent;	/* activation -> caller's index + 1 */
	uint32_t *height;	/* activation -> callers above it + 1 */
	struct tl_thread *t;
};

/* Name of the function at @func, "??" if no symbol covers it. */
static const char *func_name(struct hist_symtab *st, uint64_t func)
{
	struct hist_sym sym;

	if (st && hist_sym_lookup(st, func, &sym) == 0)
		return sym.name;
	return "??";
}

/* Records the gap of segment @c with the reason of its entry. */
static int add_gap(struct builder *b, const struct hist_call *c)
{
	struct tl_thread *t = b->t;
	struct tl_gap *g = &t->gaps[t->ngaps++];
	struct hist_cursor *cur;
	int err = hist_cursor_new(b->h, &cur);

	g->entry = c->first;
	g->reason[0] = '\0';
	if (err < 0)
		return err;
	if (hist_cursor_seek(cur, c->first) == 0)
		hist_gap_reason(hist_cursor_entry(cur), g->reason,
				sizeof(g->reason));
	hist_cursor_free(cur);
	return 0;
}

/* Reads the call segments, making one activation per function instance
 * and one gap per gap segment. */
static int read_segments(struct builder *b)
{
	struct tl_thread *t = b->t;
	int err = 0;

	for (uint32_t id = 1; !err && id <= b->ncalls; id++) {
		struct hist_call *c = &b->calls[id];
		uint32_t inst;

		if ((err = hist_call_get(b->h, id, c)) < 0)
			break;
		if (c->flags & HIST_CALL_GAP) {
			err = add_gap(b, c);
			continue;
		}
		inst = c->inst && c->inst < id ? c->inst : id;
		if (inst == id || !b->act_of[inst]) {
			struct tl_act *a = &t->acts[t->nacts++];

			*a = (struct tl_act){ .first = c->first, .last = c->last,
				.func = c->func, .name = func_name(b->st, c->func),
				.tailcall = c->flags & HIST_CALL_TAILCALL };
			b->act_of[inst] = t->nacts;
		}
		struct tl_act *a = &t->acts[b->act_of[inst] - 1];

		b->act_of[id] = b->act_of[inst];
		a->segments++;
		if (c->last > a->last)
			a->last = c->last;
	}
	return err;
}

/* Links each activation to its caller's: the activation of the @up
 * segment of the instance's first segment. */
static void link_callers(struct builder *b)
{
	for (uint32_t id = 1; id <= b->ncalls; id++) {
		const struct hist_call *c = &b->calls[id];
		uint32_t a = b->act_of[id], up = c->up;

		if (a && up && up <= b->ncalls && b->act_of[up] &&
		    b->act_of[up] != a && (!c->inst || c->inst >= id))
			b->parent[a - 1] = b->act_of[up];
	}
}

/* Counts the callers above each activation (height 1 for a root), with
 * @path as scratch space; a link that would close a cycle is cut. */
static void measure_heights(struct builder *b, uint32_t *path,
			    uint32_t *stamp)
{
	for (uint32_t i = 0; i < b->t->nacts; i++) {
		uint32_t len = 0, base, p = i;

		while (!b->height[p]) {
			if (stamp[p] == i + 1) {	/* a cycle: cut it */
				b->parent[path[len - 1]] = 0;
				break;
			}
			stamp[p] = i + 1;
			path[len++] = p;
			if (!b->parent[p])
				break;
			p = b->parent[p] - 1;
		}
		base = b->height[p];	/* 0 unless p is off the path */
		while (len)
			b->height[path[--len]] = ++base;
	}
}

static const uint32_t *sort_heights;

/* qsort order of activation indices: the deepest first. */
static int by_height_desc(const void *x, const void *y)
{
	uint32_t a = sort_heights[*(const uint32_t *)x];
	uint32_t c = sort_heights[*(const uint32_t *)y];

	return a < c ? 1 : a > c;
}

/* Widens every activation to hold its callees, deepest first, so that
 * each holds its callees' callees too. */
static void widen_callers(struct builder *b, uint32_t *order)
{
	struct tl_act *acts = b->t->acts;

	for (uint32_t i = 0; i < b->t->nacts; i++)
		order[i] = i;
	sort_heights = b->height;
	qsort(order, b->t->nacts, sizeof(*order), by_height_desc);
	for (uint32_t i = 0; i < b->t->nacts; i++) {
		const struct tl_act *a = &acts[order[i]];
		uint32_t p = b->parent[order[i]];

		if (!p)
			continue;
		if (a->first < acts[p - 1].first)
			acts[p - 1].first = a->first;
		if (a->last > acts[p - 1].last)
			acts[p - 1].last = a->last;
	}
}

/* qsort order of activations: by start, the longer (the caller) first. */
static int by_start(const void *x, const void *y)
{
	const struct tl_act *a = x, *c = y;

	if (a->first != c->first)
		return a->first < c->first ? -1 : 1;
	return a->last > c->last ? -1 : a->last < c->last;
}

/* Orders the activations by start and gives each its depth in the
 * nesting; one that would end after an activation holding its start
 * (links that do not nest, after a guessed caller) is cut to end there.
 * @stack is scratch space for nacts indices. */
static void nest(struct tl_thread *t, uint32_t *stack)
{
	uint32_t top = 0;

	qsort(t->acts, t->nacts, sizeof(*t->acts), by_start);
	for (uint32_t i = 0; i < t->nacts; i++) {
		struct tl_act *a = &t->acts[i];

		while (top && t->acts[stack[top - 1]].last < a->first)
			top--;
		if (top && a->last > t->acts[stack[top - 1]].last)
			a->last = t->acts[stack[top - 1]].last;
		a->depth = top;
		if (top > t->max_depth)
			t->max_depth = top;
		stack[top++] = i;
	}
}

/* Fills @t from history @h: its activations, nested, and its gaps. */
static int build_thread(struct history *h, struct hist_symtab *st,
			struct tl_thread *t)
{
	struct builder b = { .h = h, .st = st, .t = t };
	uint32_t *scratch = NULL;
	int err = hist_calls_count(h, &b.ncalls);

	t->entries = hist_size(h);
	if (err < 0)
		return err;
	b.calls = calloc(b.ncalls + 1, sizeof(*b.calls));
	b.act_of = calloc(b.ncalls + 1, sizeof(*b.act_of));
	b.parent = calloc(b.ncalls + 1, sizeof(*b.parent));
	b.height = calloc(b.ncalls + 1, sizeof(*b.height));
	scratch = calloc(2 * (b.ncalls + 1), sizeof(*scratch));
	t->acts = calloc(b.ncalls + 1, sizeof(*t->acts));
	t->gaps = calloc(b.ncalls + 1, sizeof(*t->gaps));
	if (!b.calls || !b.act_of || !b.parent || !b.height || !scratch ||
	    !t->acts || !t->gaps)
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err)
		err = read_segments(&b);
	if (!err) {
		link_callers(&b);
		measure_heights(&b, scratch, scratch + b.ncalls + 1);
		widen_callers(&b, scratch);
		nest(t, scratch);
	}
	free(scratch);
	free(b.height);
	free(b.parent);
	free(b.act_of);
	free(b.calls);
	return err;
}

int tl_build(struct hist_recording *r, struct tl_timeline *out)
{
	const struct hist_bundle *bd = hist_recording_bundle(r);
	struct hist_symtab *st = hist_recording_symtab(r);
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->exe = bd->exe ? bd->exe : "";
	out->pid = bd->nthreads ? bd->threads[0].tid : 0;
	out->threads = calloc(bd->nthreads ? bd->nthreads : 1,
			      sizeof(*out->threads));
	if (!out->threads)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; !err && i < bd->nthreads; i++) {
		struct tl_thread *t = &out->threads[out->nthreads++];
		struct history *h;

		t->tid = bd->threads[i].tid;
		err = hist_recording_history(r, i, &h);
		if (!err)
			err = build_thread(h, st, t);
		if (!err)
			err = tl_read_tsc(&bd->cpu, &bd->threads[i], h, t);
	}
	if (err < 0)
		tl_free(out);
	else
		tl_settle_time(out);
	return err;
}

void tl_free(struct tl_timeline *tl)
{
	for (size_t i = 0; i < tl->nthreads; i++) {
		free(tl->threads[i].acts);
		free(tl->threads[i].gaps);
		free(tl->threads[i].anchors);
	}
	free(tl->threads);
	memset(tl, 0, sizeof(*tl));
}
