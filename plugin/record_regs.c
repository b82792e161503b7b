/* Registers recorded on the way (--regs-every=N, the software backend):
 * the stepper reads every register of a thread at each of its stops;
 * every N instructions or so, at a stop that shows the state before the
 * next instruction, they are kept, tied to the instruction by the last
 * PSB and the count of instructions fed since (struct hist_regsnap), and
 * saved as threads/TID.regs.  replay/ proves values from them as from the
 * state at the end (docs/replay.md, "Registers recorded on the way").
 */
#include <config.h>

#include "record.h"

#include <stdlib.h>
#include <string.h>

/* True if the emitter of @rt counted, since its last PSB, exactly the
 * instructions a decoder walks there: packets on, no IP filters, no
 * overflow and no instructions it was not fed (emit.h: what makes a
 * segment HIST_PSB_INEXACT). */
static bool count_exact(const struct rec_thread *rt)
{
	const struct cap_emit *e = &rt->em;

	return e->state == CAP_EMIT_ON && !e->seg_inexact &&
	       !e->cfg.nfilters && e->psbs.v && e->psbs.n &&
	       !rt->overflowed;
}

/* Drops the snapshots whose PSB the ring no longer holds. */
static void drop_overwritten(struct rec_thread *rt)
{
	uint64_t total = cap_ring_total(&rt->ring);
	uint64_t start = total - cap_ring_size(&rt->ring);
	size_t i = 0;

	while (i < rt->snaps.n && rt->snaps.v[i].offset < start)
		i++;
	if (!i)
		return;
	rt->snaps.n -= i;
	memmove(rt->snaps.v, rt->snaps.v + i,
		rt->snaps.n * sizeof(*rt->snaps.v));
}

int rec_regs_note(const struct recorder *r, struct rec_thread *rt,
		  const struct cap_event *ev)
{
	const struct cap_emit *e = &rt->em;
	const struct hist_psb *psb;
	struct hist_regsnap *s;

	if (!r->opts->regs_every || !ev->regs_after ||
	    e->stats.insns < rt->snaps.due || !count_exact(rt))
		return 0;
	psb = &e->psbs.v[(e->psbs.n - 1) % e->psbs.cap];
	if (rt->snaps.n == rt->snaps.cap)
		drop_overwritten(rt);
	if (rt->snaps.n == rt->snaps.cap) {
		size_t cap = rt->snaps.cap ? 2 * rt->snaps.cap : 64;
		struct hist_regsnap *v = realloc(rt->snaps.v,
						 cap * sizeof(*v));

		if (!v)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		rt->snaps.v = v;
		rt->snaps.cap = cap;
	}
	_Static_assert(sizeof(ev->thread->regs) == sizeof(s->r),
		       "hist_regsnap follows user_regs_struct");
	s = &rt->snaps.v[rt->snaps.n++];
	s->offset = psb->offset;
	s->k = e->stats.insns - (psb->insns & ~HIST_PSB_INEXACT);
	memcpy(s->r, &ev->thread->regs, sizeof(s->r));
	rt->snaps.due = e->stats.insns + r->opts->regs_every;
	return 0;
}

int rec_regs_window(const struct rec_thread *rt, size_t size,
		    struct hist_regsnap **out, size_t *n)
{
	uint64_t total = cap_ring_total(&rt->ring), start = total - size;
	struct hist_regsnap *o;
	size_t m = 0;

	*n = 0;
	if (!rt->snaps.n)
		return 0;
	if (!(o = realloc(*out, rt->snaps.n * sizeof(*o))))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	*out = o;
	for (size_t i = 0; i < rt->snaps.n; i++) {
		struct hist_regsnap s = rt->snaps.v[i];

		if (s.offset < start || s.offset + HIST_PSB_SIZE > total)
			continue;
		s.offset -= start;
		o[m++] = s;
	}
	*n = m;
	return 0;
}
