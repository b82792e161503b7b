/* Searching the history for the nearest execution of a set of addresses
 * (the breakpoint search behind reverse-continue).  Segments whose code
 * summary rules all the addresses out are skipped without decoding;
 * inside a decoded segment, whole runs are ruled in or out by their
 * address range before any instruction length is decoded. */
#include "history_internal.h"

#include <stdlib.h>

/* True if segment @s may have executed one of @ips. */
static bool segment_may_touch_any(const struct hist_segment *s,
				  const uint64_t *ips, size_t nips)
{
	for (size_t i = 0; i < nips; i++)
		if (hist_segment_may_touch(s, ips[i]))
			return true;
	return false;
}

/* True if @ip is an instruction boundary of run @r (whose code is read
 * from @img); sets *idx to its index in the run. */
static bool run_has_insn(struct hist_image *img, const struct hist_run *r,
			 uint64_t ip, uint64_t *idx)
{
	uint64_t at = r->ip;

	if (r->kind != HIST_ENTRY_INSN || ip < r->ip || ip > r->end_ip)
		return false;
	for (uint64_t j = 0; j < r->ninsn; j++) {
		struct hist_insn_info info;

		if (at == ip) {
			*idx = j;
			return true;
		}
		if (at > ip || hist_insn_info_at(img, at, &info))
			return false;
		at += info.size;
	}
	return false;
}

/* Best match of @ips in run @r of @d within (lo, hi) entry numbers: the
 * last one for @dir < 0, the first one otherwise.  0 if none. */
static uint64_t run_match(struct history *h, const struct hist_decoded *d,
			  size_t ri, const uint64_t *ips, size_t nips,
			  uint64_t lo, uint64_t hi, int dir)
{
	const struct hist_run *r = &d->runs[ri];
	uint64_t best = 0;

	for (size_t i = 0; i < nips; i++) {
		uint64_t idx, n;

		if (!run_has_insn(h->cfg.image, r, ips[i], &idx))
			continue;
		n = d->run_first[ri] + idx;
		if (n <= lo || n >= hi)
			continue;
		if (!best || (dir < 0 ? n > best : n < best))
			best = n;
	}
	return best;
}

/* Searches decoded segment @d for the match nearest to the search start,
 * among entries strictly between @lo and @hi. */
static uint64_t segment_match(struct history *h, const struct hist_decoded *d,
			      const uint64_t *ips, size_t nips, uint64_t lo,
			      uint64_t hi, int dir)
{
	for (size_t k = 0; k < d->nruns; k++) {
		size_t ri = dir < 0 ? d->nruns - 1 - k : k;
		uint64_t n = run_match(h, d, ri, ips, nips, lo, hi, dir);

		if (n)
			return n;
	}
	return 0;
}

int hist_search_ips(struct history *h, uint64_t from, int dir,
		    const uint64_t *ips, size_t nips, uint64_t *found)
{
	bool stopped;

	return hist_search_ips_until(h, from, dir, ips, nips, NULL, NULL,
				     found, &stopped);
}

int hist_search_ips_until(struct history *h, uint64_t from, int dir,
			  const uint64_t *ips, size_t nips,
			  bool (*stop)(void *arg), void *arg,
			  uint64_t *found, bool *stopped)
{
	size_t seg;
	uint64_t lo = dir < 0 ? 0 : from, hi = dir < 0 ? from : UINT64_MAX;
	uint64_t reached;	/* the far end of the segments searched */
	int err;

	*stopped = false;
	if (!h->nsegs || !nips)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no such instruction");
	if (from > h->size)
		from = h->size;
	if (from < 1)
		from = 1;
	err = hist_segment_find(h, from, &seg);
	if (err)
		return err;
	reached = from;
	for (;;) {
		const struct hist_segment *s = &h->segs[seg];

		if (stop && stop(arg)) {
			*found = reached;
			*stopped = true;
			return 0;
		}
		if (segment_may_touch_any(s, ips, nips)) {
			struct hist_decoded *d;
			uint64_t n;

			err = hist_get_decoded(h, seg, 0, &d);
			if (err)
				return err;
			n = segment_match(h, d, ips, nips, lo, hi, dir);
			hist_put_decoded(h, d);
			if (n) {
				*found = n;
				return 0;
			}
		}
		reached = dir < 0 ? s->first : s->first + s->count - 1;
		if (dir < 0 ? seg == 0 : seg + 1 >= h->nsegs)
			break;
		seg = dir < 0 ? seg - 1 : seg + 1;
	}
	return ptrr_fail(PTRR_ERR_NOTFOUND, "no earlier or later execution");
}
