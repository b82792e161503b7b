/* The time of an entry in a timeline (plugin/timeline.h).
 *
 * A trace recorded with timing packets says the TSC in the packet header
 * after each PSB; the history starts a segment at each PSB, so the entry
 * that starts it gets that TSC (an anchor), and entries between anchors
 * get times interpolated by instruction count.  TSC packets elsewhere
 * (after a TIP.PGE) and MTC/CYC packets are not used: the timeline is as
 * fine as the PSB period.  Without TSC packets (the software backend, the
 * perf backend as ptrr sets it up) an entry's time is the number of
 * entries before it.
 */
#include <config.h>

#include "timeline.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

/* The first TSC after each PSB of a trace. */
struct psb_tsc {
	uint64_t offset;
	uint64_t tsc;
};

/* Collects into @out (at most @max) the TSC of the PSB+ header of each
 * PSB of the trace @cfg describes; returns how many. */
static size_t scan_psbs(const struct pt_config *cfg, struct psb_tsc *out,
			size_t max)
{
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(cfg);
	size_t size = (size_t) (cfg->end - cfg->begin);
	uint64_t psb = 0, next = 0, at;
	struct pt_packet pkt;
	bool want = false;
	size_t n = 0;

	if (!d)
		return 0;
	/* Synchronized at each PSB in turn, as pt_pkt_sync_forward() would
	 * (hist_next_psb() says why not it), reading on until an error. */
	while (n < max && !hist_next_psb(cfg->begin, size, next, &at) &&
	       pt_pkt_sync_set(d, at) >= 0) {
		uint64_t off;

		next = at + HIST_PSB_SIZE;
		while (n < max && pt_pkt_get_offset(d, &off) >= 0 &&
		       pt_pkt_next(d, &pkt, sizeof(pkt)) >= 0) {
			if (pkt.type == ppt_psb) {
				psb = off;
				want = true;
			} else if (pkt.type == ppt_tsc && want) {
				out[n++] = (struct psb_tsc){ psb,
							     pkt.payload.tsc.tsc };
				want = false;
			} else if (pkt.type == ppt_psbend) {
				want = false;
			}
		}
		if (pt_pkt_get_offset(d, &off) >= 0 && off > next)
			next = off;
	}
	pt_pkt_free_decoder(d);
	return n;
}

int tl_read_tsc(const struct hist_cpu *cpu, const struct hist_thread *th,
		struct history *h, struct tl_thread *t)
{
	size_t nseg = hist_nsegments(h), max = nseg ? nseg : 1, n, k = 0;
	struct psb_tsc *psbs = calloc(max, sizeof(*psbs));
	struct pt_config cfg;

	t->anchors = calloc(max, sizeof(*t->anchors));
	if (!psbs || !t->anchors) {
		free(psbs);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	if (!th->trace_size) {
		free(psbs);
		return 0;
	}
	pt_config_init(&cfg);
	cfg.begin = th->trace;
	cfg.end = th->trace + th->trace_size;
	if (!strcmp(cpu->vendor, "GenuineIntel")) {
		cfg.cpu.vendor = pcv_intel;
		cfg.cpu.family = cpu->family;
		cfg.cpu.model = cpu->model;
		cfg.cpu.stepping = cpu->stepping;
	}
	n = scan_psbs(&cfg, psbs, max);
	for (size_t i = 0; i < nseg && k < n; i++) {
		const struct hist_segment *s = hist_segment_at(h, i);
		struct tl_anchor *prev = t->nanchors ?
			&t->anchors[t->nanchors - 1] : NULL;

		while (k < n && psbs[k].offset < s->offset)
			k++;
		if (k == n || psbs[k].offset != s->offset || !s->count)
			continue;
		/* Time only moves forward: a TSC that does not is dropped. */
		if (!prev || (s->first > prev->entry && psbs[k].tsc > prev->tsc))
			t->anchors[t->nanchors++] = (struct tl_anchor){
				s->first, psbs[k].tsc };
	}
	free(psbs);
	return 0;
}

/* The TSC at entry @entry of @t, from its anchors: interpolated between
 * the two around it, extrapolated from the nearest two outside them, one
 * tick per instruction from a single anchor. */
static double raw_tsc(const struct tl_thread *t, uint64_t entry)
{
	const struct tl_anchor *a = t->anchors, *b;
	size_t lo = 0, hi = t->nanchors - 1;

	if (t->nanchors == 1)
		return (double)a->tsc + ((double)entry - (double)a->entry);
	while (hi - lo > 1) {	/* the interval [lo, lo + 1] holding entry */
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid].entry <= entry)
			lo = mid;
		else
			hi = mid;
	}
	a += lo;
	b = a + 1;
	return (double)a->tsc + ((double)entry - (double)a->entry) *
		((double)(b->tsc - a->tsc) / (double)(b->entry - a->entry));
}

void tl_settle_time(struct tl_timeline *tl)
{
	bool any = false, first = true;

	tl->tsc = true;
	for (size_t i = 0; i < tl->nthreads; i++) {
		const struct tl_thread *t = &tl->threads[i];

		if (t->entries && !t->nanchors)
			tl->tsc = false;
		any = any || t->nanchors;
	}
	tl->tsc = tl->tsc && any;
	tl->tsc_base = 0;
	for (size_t i = 0; tl->tsc && i < tl->nthreads; i++) {
		const struct tl_thread *t = &tl->threads[i];
		double start;

		if (!t->nanchors)
			continue;
		start = raw_tsc(t, 1);
		if (first || start < tl->tsc_base)
			tl->tsc_base = start;
		first = false;
	}
}

double tl_time(const struct tl_timeline *tl, const struct tl_thread *t,
	       uint64_t entry)
{
	if (!tl->tsc)
		return entry ? (double)(entry - 1) : 0;
	if (!t->nanchors)
		return 0;
	return raw_tsc(t, entry) - tl->tsc_base;
}

double tl_end_time(const struct tl_timeline *tl)
{
	double end = 0;

	for (size_t i = 0; i < tl->nthreads; i++) {
		const struct tl_thread *t = &tl->threads[i];
		double e = tl_time(tl, t, t->entries + 1);

		if (e > end)
			end = e;
	}
	return end;
}
