/* Registers recorded on the way (struct hist_regsnap: the software
 * backend's --regs-every) as known points of the value recovery.
 *
 * A snapshot names its instruction by the PSB before it and the count
 * of instructions since (history.h): its entry is the first of the
 * segment starting at that PSB's trace offset plus the count.  It is
 * used only where that entry is an instruction at the address the
 * snapshot's rip holds (recover.c checks it where it uses one: the walk
 * has the entry at hand); the recorder took it only where its count is
 * the decoder's.  The entries are computed once per thread, from the
 * segment index (no decoding), and kept in entry order.
 */
#include <config.h>

#include <stdlib.h>

#include "recover_internal.h"

struct replay_evidence {
	uint64_t *entry;		/* increasing */
	const struct hist_regsnap **snap;
	size_t n;
};

void replay_evidence_reset(struct replay_thread *t)
{
	if (t->evidence) {
		free(t->evidence->entry);
		free(t->evidence->snap);
	}
	free(t->evidence);
	t->evidence = NULL;
}

/* The segment of @h whose PSB is at trace offset @offset; NULL if none. */
static const struct hist_segment *segment_at_offset(const struct history *h,
						    uint64_t offset)
{
	size_t lo = 0, hi = hist_nsegments(h);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct hist_segment *s = hist_segment_at(h, mid);

		if (s->offset == offset)
			return s;
		if (s->offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Thread @thr's snapshots with their entries, computed on first use;
 * NULL if it has none. */
static const struct replay_evidence *evidence_of(struct replay *rp,
						 size_t thr)
{
	struct replay_thread *t = &rp->t[thr];
	const struct hist_bundle *b = rp->rec ? hist_recording_bundle(rp->rec)
					      : NULL;
	const struct hist_thread *bt;
	struct replay_evidence *ev = t->evidence;

	if (ev)
		return ev->n ? ev : NULL;
	if (!(ev = calloc(1, sizeof(*ev))))
		return NULL;
	t->evidence = ev;
	if (!b || thr >= b->nthreads || !(bt = &b->threads[thr])->nsnaps ||
	    !(ev->entry = malloc(bt->nsnaps * sizeof(*ev->entry))) ||
	    !(ev->snap = malloc(bt->nsnaps * sizeof(*ev->snap))))
		return NULL;
	for (size_t i = 0; i < bt->nsnaps; i++) {
		const struct hist_regsnap *s = &bt->snaps[i];
		const struct hist_segment *g = segment_at_offset(t->h,
								 s->offset);
		uint64_t n;

		/* Within the segment, or the next one's first entry. */
		if (!g || g->gaps || s->k > g->count)
			continue;
		n = g->first + s->k;
		if (n < t->first || n > t->last ||
		    (ev->n && n <= ev->entry[ev->n - 1]))
			continue;
		ev->entry[ev->n] = n;
		ev->snap[ev->n++] = s;
	}
	return ev->n ? ev : NULL;
}

/* The index of the first entry of @ev at or after @pos (ev->n if none). */
static size_t first_from(const struct replay_evidence *ev, uint64_t pos)
{
	size_t lo = 0, hi = ev->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ev->entry[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct hist_regsnap *recover_evidence_at(struct replay *rp, size_t thr,
					       const struct hist_entry *e)
{
	const struct replay_evidence *ev = evidence_of(rp, thr);
	size_t i;

	if (!ev || e->kind != HIST_ENTRY_INSN)
		return NULL;
	i = first_from(ev, e->number);
	return i < ev->n && ev->entry[i] == e->number &&
	       ev->snap[i]->r[HIST_RIP] == e->ip ? ev->snap[i] : NULL;
}

size_t recover_evidence_sets(struct replay *rp, size_t thr)
{
	const struct replay_evidence *ev = evidence_of(rp, thr);

	return ev ? ev->n : 0;
}

uint64_t recover_evidence_from(struct replay *rp, size_t thr, uint64_t pos)
{
	const struct replay_evidence *ev = evidence_of(rp, thr);
	size_t i;

	if (!ev)
		return 0;
	i = first_from(ev, pos);
	return i < ev->n ? ev->entry[i] : 0;
}
