/* The window pass (hist_calls_window, history/calls.c) against the pass
 * over the whole history: the call-segment pass started at an index
 * segment near the end, knowing nothing of what came before, as the
 * tail pass of docs/history.md ("Not built yet: call stacks near the end
 * without the forward pass") starts.  At each of the last WINDOWS index
 * segments of every thread (and one in the middle), the window's
 * segments must be the whole pass's from there on, ids less a constant:
 * the same entries (the first one cut at the window's start), functions
 * (but the cut one's if it has no symbol) and gaps always; levels (relative to the first), up, inst and next
 * links and flags wherever the window does not say they may differ.
 * How many segments the window is sure of is printed, not checked: a
 * window that says everything may differ is correct, only useless. */
#include <config.h>

#include "history_internal.h"
#include "test-replay.h"
#include "test.h"

/* Windows tried: at the last index segments of a history. */
#define WINDOWS 6

/* Segments checked, and those of which the window was sure. */
struct window_stats {
	uint64_t segments, sure;
};

/* Window id @id as the whole pass's: @base more, 0 staying 0. */
static uint32_t whole_id(uint32_t id, uint32_t base)
{
	return id ? id + base : 0;
}

/* Window segment @c (what it may have wrong: @unsure) against the whole
 * pass's @f; @base maps ids, @dlevel levels. */
static void check_segment(struct tcase *tc, size_t seg,
			  const struct hist_call *c, unsigned unsure,
			  const struct hist_call *f, uint32_t base,
			  int32_t dlevel)
{
	bool cut = c->id == 1 && f->first < c->first;
	/* A segment without a symbol is named by its first address. */
	bool ok = c->last == f->last && (c->func == f->func || cut) &&
		  (cut || f->first == c->first) &&
		  (c->flags & HIST_CALL_GAP) == (f->flags & HIST_CALL_GAP);

	if (!(unsure & HIST_WINDOW_LEVEL))
		ok = ok && c->level + dlevel == f->level;
	if (!(unsure & HIST_WINDOW_UP))
		ok = ok && whole_id(c->up, base) == f->up;
	if (!(unsure & HIST_WINDOW_INST))
		ok = ok && whole_id(c->inst, base) == f->inst;
	if (!(unsure & HIST_WINDOW_NEXT))
		ok = ok && whole_id(c->next, base) == f->next;
	if (!(unsure & HIST_WINDOW_FLAGS))
		ok = ok && c->flags == f->flags;
	if (!ok)
		tc_fail(tc, "window at index segment %zu: its segment %u "
			"(entries %" PRIu64 "-%" PRIu64 ", level %d, up %u, "
			"inst %u, next %u, flags %#x, unsure %#x) is not the "
			"whole pass's %u (%" PRIu64 "-%" PRIu64 ", level %d, "
			"up %u, inst %u, next %u, flags %#x; ids %u apart, "
			"levels %d)", seg, c->id, c->first, c->last,
			c->level, c->up, c->inst, c->next, c->flags, unsure,
			f->id, f->first, f->last, f->level, f->up, f->inst,
			f->next, f->flags, base, dlevel);
}

/* The window pass at index segment @seg of @h against the whole pass. */
static void check_window_at(struct tcase *tc, struct history *h, size_t seg,
			    struct window_stats *st)
{
	struct hist_call c, f;
	struct calls *w;
	size_t n, nwhole;
	uint32_t at, base;
	int32_t dlevel = 0;
	int err = hist_calls_window(h, seg, &w);

	if (err) {
		tc_fail(tc, "window at index segment %zu: %s", seg,
			ptrr_errmsg(err));
		return;
	}
	n = hist_calls_window_count(w);
	if (hist_call_find(h, hist_segment_at(h, seg)->first, &at) ||
	    hist_calls_count(h, &nwhole)) {
		tc_fail(tc, "no whole pass: %s", ptrr_errmsg(-1));
		hist_calls_free(w);
		return;
	}
	base = at - 1;
	CHECK(n == nwhole - base);
	CHECK(hist_calls_window_find(w, hist_segment_at(h, seg)->first) == 1);
	for (uint32_t id = 1; id <= n && id + base <= nwhole; id++) {
		unsigned unsure = hist_calls_window_get(w, id, &c);

		if (hist_call_get(h, id + base, &f))
			break;
		if (id == 1)
			dlevel = f.level - c.level;
		check_segment(tc, seg, &c, unsure, &f, base, dlevel);
		st->segments++;
		st->sure += !unsure;
	}
	hist_calls_free(w);
}

void check_window(struct tcase *tc, struct history *h)
{
	struct window_stats last = { 0 }, st = { 0 };
	size_t nsegs = hist_nsegments(h);

	if (nsegs)
		check_window_at(tc, h, nsegs - 1, &last);
	for (size_t k = 1; k < WINDOWS && k < nsegs; k++)
		check_window_at(tc, h, nsegs - 1 - k, &st);
	if (nsegs > 2 * WINDOWS)
		check_window_at(tc, h, nsegs / 2, &st);
	printf("%s thread %d: window passes: the last index segment's %"
	       PRIu64 " call segments, sure of %" PRIu64 "; the others' %"
	       PRIu64 ", sure of %" PRIu64 "\n", tc->name, tc->tid,
	       last.segments, last.sure, st.segments, st.sure);
}
