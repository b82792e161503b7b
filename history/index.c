/* The segment index: one pass over the trace that records, for each
 * PSB-delimited segment, where it is, which entry numbers it holds, its
 * first and last addresses, its call depth and a summary of the code it
 * touched.  Segments decode independently, so the pass runs on all cores.
 *
 * Between segments, and after the last one up to the thread's final PC,
 * execution may run through code that needs no trace; those instructions
 * are walked (walk.c) and kept as "extra" runs of the segment before.
 */
#include <config.h>

#include "history_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* At most this many instructions are walked without trace. */
#define WALK_LIMIT 1000000

/* Each thread of the pass beyond the first gets at least this much trace:
 * below it, starting the thread costs more than it saves (a live
 * session's first stops, small recordings). */
#define BYTES_PER_THREAD ((uint64_t) 64 << 10)

/* Appends @off to the growable array @v. */
static int push_offset(uint64_t **v, size_t *n, size_t *cap, uint64_t off)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		uint64_t *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = off;
	return 0;
}

/* The bytes of a PSB packet. */
static const uint8_t psb_bytes[HIST_PSB_SIZE] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

int hist_next_psb(const uint8_t *trace, size_t size, uint64_t from,
		  uint64_t *at)
{
	const uint8_t *p, *end = trace + size;

	if (!trace || from >= size)
		return -1;
	p = memmem(trace + from, size - from, psb_bytes, HIST_PSB_SIZE);
	if (!p)
		return -1;
	while (end - p >= HIST_PSB_SIZE + 2 && p[HIST_PSB_SIZE] == 0x02 &&
	       p[HIST_PSB_SIZE + 1] == 0x82)
		p += 2;
	*at = (uint64_t) (p - trace);
	return 0;
}

/* Finds the trace offset of every PSB from @from on (@from is 0, or the
 * offset of a PSB). */
static int find_psbs(const struct hist_config *cfg, uint64_t from,
		     uint64_t **offs, size_t *n)
{
	uint64_t at, next = 0;
	size_t cap = 0;
	int err = 0;

	*offs = NULL;
	*n = 0;
	if (from && from + HIST_PSB_SIZE <= cfg->size &&
	    !memcmp(cfg->trace + from, psb_bytes, HIST_PSB_SIZE)) {
		err = push_offset(offs, n, &cap, from);
		next = from + HIST_PSB_SIZE;
	}
	while (!err && !hist_next_psb(cfg->trace, cfg->size, next, &at)) {
		err = push_offset(offs, n, &cap, at);
		next = at + HIST_PSB_SIZE;
	}
	return err;
}

/* Work shared by the index workers. */
struct index_job {
	const struct hist_config *cfg;
	const uint64_t *offs;
	size_t n;
	struct hist_seg_result *res;
	atomic_size_t next;
	atomic_int err;
};

/* One index worker: decodes segments until none are left. */
static void *index_worker(void *arg)
{
	struct index_job *job = arg;
	struct pt_image *image = hist_image_pt_clone(job->cfg->image);

	if (!image) {
		atomic_store(&job->err, PTRR_ERR_NOMEM);
		return NULL;
	}
	for (;;) {
		size_t i = atomic_fetch_add(&job->next, 1);
		uint64_t end, next_ip;
		bool have_next;
		int err;

		if (i >= job->n || atomic_load(&job->err))
			break;
		end = i + 1 < job->n ? job->offs[i + 1] : job->cfg->size;
		have_next = hist_psb_start_ip(job->cfg, end, &next_ip);
		err = hist_decode_segment(job->cfg, image, job->offs[i], end,
					  have_next ? &next_ip : NULL, false,
					  &job->res[i]);
		if (err)
			atomic_store(&job->err, err);
	}
	pt_image_free(image);
	return NULL;
}

/* Decodes all segments in parallel, on as many threads as cores and as
 * the trace's size is worth. */
static int decode_all(struct index_job *job)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nthreads = cores > 1 ? (size_t) cores : 1;
	uint64_t bytes = job->n ? job->cfg->size - job->offs[0] : 0;
	pthread_t tids[16];
	size_t started = 0;

	if (nthreads > 16)
		nthreads = 16;
	if (nthreads > 1 + bytes / BYTES_PER_THREAD)
		nthreads = (size_t) (1 + bytes / BYTES_PER_THREAD);
	if (nthreads > job->n)
		nthreads = job->n ? job->n : 1;
	for (size_t i = 1; i < nthreads; i++) {
		if (pthread_create(&tids[started], NULL, index_worker, job))
			break;
		started++;
	}
	index_worker(job);
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	return atomic_load(&job->err);
}

/* The address execution continues at after segment result @r, or false
 * if that needs trace the segment does not have. */
static bool successor(struct hist_image *img, const struct hist_seg_result *r,
		      uint64_t *ip)
{
	struct hist_insn_info info;

	if (r->async_end) {
		*ip = r->async_ip;
		return true;
	}
	if (r->pending) {
		*ip = r->pending_ip;
		return true;
	}
	if (!r->started || r->error_end)
		return false;
	if (hist_insn_info_at(img, r->last_ip, &info))
		return false;
	if (info.has_target)
		*ip = info.target;
	else if (!info.needs_trace || info.iclass == HIST_IC_FAR_CALL)
		*ip = r->last_ip + info.size;
	else
		return false;
	return true;
}

/* Adds a gap run of @code to @runs. */
static int push_gap(struct hist_runs *runs, int code, uint64_t ip,
		    uint64_t offset)
{
	struct hist_run r = {
		.ip = ip, .end_ip = ip, .ninsn = 1, .kind = HIST_ENTRY_GAP,
		.gap_code = code, .gap_offset = offset,
	};

	return hist_runs_push(runs, &r);
}

/* Walks from the end of segment @r to @to into @runs; a walk that cannot
 * get there becomes a gap of @code. */
static int connect(struct hist_image *img, const struct hist_seg_result *r,
		   uint64_t to, int code, uint64_t offset,
		   struct hist_runs *runs)
{
	uint64_t from;
	int err;

	if (!successor(img, r, &from))
		return r->error_end ? 0 : push_gap(runs, code, to, offset);
	err = hist_walk(img, from, to, WALK_LIMIT, runs);
	if (err == PTRR_ERR_NOTFOUND) {
		free(runs->v);
		memset(runs, 0, sizeof(*runs));
		return push_gap(runs, code, to, offset);
	}
	return err;
}

/* Appends the thread's final PC as the last entry of @runs. */
static int push_end(struct hist_image *img, uint64_t end_ip,
		    struct hist_runs *runs)
{
	struct hist_insn_info info = { .iclass = HIST_IC_OTHER };
	struct hist_run r = {
		.ip = end_ip, .end_ip = end_ip, .ninsn = 1,
		.kind = HIST_ENTRY_INSN,
	};

	if (!hist_insn_info_at(img, end_ip, &info))
		r.iclass = info.iclass;
	return hist_runs_push(runs, &r);
}

/* Segment @r is followed by one whose first instruction comes with a
 * TIP.PGE.  Nothing is missing if @r ended with tracing off (TIP.PGD);
 * if it ended with tracing on, the trace was cut between them (a full
 * AUX area stops the CPU mid-stream, with no TIP.PGD) and what ran in
 * between is unknown: a gap, at @to (trace offset @offset). */
static int resumed_after(const struct hist_seg_result *r, uint64_t to,
			 uint64_t offset, struct hist_runs *runs)
{
	if (!r->started || !r->enabled_at_end || r->async_end || r->error_end)
		return 0;
	return push_gap(runs, HIST_GAP_DISCONNECTED, to, offset);
}

/* Computes the extra runs of segment @i of @job into @runs: the walk to
 * the next segment, or for the last one the walk to the final PC and that
 * PC itself. */
static int extra_runs(struct history *h, struct index_job *job, size_t i,
		      struct hist_runs *runs)
{
	const struct hist_config *cfg = &h->cfg;
	const struct hist_seg_result *r = &job->res[i];

	if (i + 1 < job->n) {
		const struct hist_seg_result *next = &job->res[i + 1];

		if (r->reached_next || !next->started)
			return 0;
		if (next->first_resumed)
			return resumed_after(r, next->start_ip,
					     job->offs[i + 1], runs);
		if (!r->enabled_at_end && !r->async_end)
			return 0;
		return connect(cfg->image, r, next->start_ip,
			       HIST_GAP_DISCONNECTED, job->offs[i + 1], runs);
	}
	if (!cfg->have_end_ip)
		return 0;
	if (r->started || r->async_end || r->pending) {
		int err = connect(cfg->image, r, cfg->end_ip, HIST_GAP_NO_END,
				  cfg->size, runs);
		if (err)
			return err;
	}
	return push_end(cfg->image, cfg->end_ip, runs);
}

/* Entries, net call depth, gaps and summary bits that @runs add. */
static uint64_t runs_count(const struct hist_runs *runs, int32_t *depth,
			   uint64_t *gaps, uint64_t summary[8])
{
	uint64_t n = 0;

	for (size_t i = 0; i < runs->n; i++) {
		const struct hist_run *r = &runs->v[i];

		n += r->ninsn;
		if (r->kind != HIST_ENTRY_INSN) {
			*gaps += r->ninsn;
			continue;
		}
		if (r->iclass == HIST_IC_CALL)
			(*depth)++;
		else if (r->iclass == HIST_IC_RETURN)
			(*depth)--;
		hist_summary_add(summary, r->ip, r->end_ip);
	}
	return n;
}

/* Fills the index from the decoded segment results, appended after the
 * first h->nsegs segments (numbered and nested on from them), dropping
 * segments that hold no entries; h->extra has room for them all. */
static int fill_index(struct history *h, struct index_job *job)
{
	struct hist_runs *extra = h->extra + h->nsegs;
	uint64_t number = h->size + 1;
	int32_t depth = h->nsegs ? h->segs[h->nsegs - 1].depth_out : 0;
	size_t kept = h->nsegs;

	for (size_t i = 0; i < job->n; i++) {
		const struct hist_seg_result *r = &job->res[i];
		struct hist_segment *s = &h->segs[kept];
		int32_t d = r->depth;
		int err = extra_runs(h, job, i, &extra[i]);

		if (err)
			return err;
		*s = (struct hist_segment) {
			.offset = job->offs[i],
			.end_offset = i + 1 < job->n ? job->offs[i + 1] :
				      h->cfg.size,
			.first = number, .start_ip = r->start_ip,
			.end_ip = r->end_ip, .depth_in = depth,
			.gaps = r->gaps,
		};
		memcpy(s->summary, r->summary, sizeof(s->summary));
		s->count = r->count + runs_count(&extra[i], &d, &s->gaps,
						 s->summary);
		s->depth_out = depth + d;
		depth = s->depth_out;
		number += s->count;
		if (!s->count)
			continue;
		if (!r->started && extra[i].n)
			s->start_ip = extra[i].v[0].ip;
		if (&h->extra[kept] != &extra[i]) {
			h->extra[kept] = extra[i];
			memset(&extra[i], 0, sizeof(extra[i]));
		}
		kept++;
	}
	h->nsegs = kept;
	h->size = number - 1;
	h->ninsn = h->size;
	for (size_t i = 0; i < kept; i++)
		h->ninsn -= h->segs[i].gaps;
	return 0;
}

/* The entry count of each segment but the last of the @n found at
 * @offs, from the table of PSBs, into @counts; false if the table cannot
 * give them all: a PSB it does not list, one it lists that is not there,
 * a segment it marks inexact, counts that go down. */
static bool table_counts(const struct hist_config *cfg, const uint64_t *offs,
			 size_t n, uint64_t *counts)
{
	const struct hist_psb *t = cfg->psbs;
	size_t j = 0;

	if (!t || n < 2)
		return false;
	while (j < cfg->npsbs && t[j].offset < offs[0])
		j++;
	for (size_t i = 0; i + 1 < n; i++, j++) {
		uint64_t a, b;

		if (j + 1 >= cfg->npsbs || t[j].offset != offs[i] ||
		    t[j + 1].offset != offs[i + 1] ||
		    (t[j + 1].insns & HIST_PSB_INEXACT))
			return false;
		a = t[j].insns & ~HIST_PSB_INEXACT;
		b = t[j + 1].insns & ~HIST_PSB_INEXACT;
		if (b < a)
			return false;
		counts[i] = b - a;
	}
	return true;
}

/* Appends the first @n - 1 segments at @offs to the index, numbered
 * from @counts (table_counts()) without decoding them: each segment's
 * first address is its PSB's FUP; its last address, its call depths and
 * its code summary are not known (the summary says "any code", so that
 * the breakpoint search decodes it).  Segments of no entries are left
 * out, as the index pass leaves them out.  h->segs and h->extra have
 * room. */
static void fill_from_table(struct history *h, const uint64_t *offs,
			    size_t n, const uint64_t *counts)
{
	uint64_t number = h->size + 1;

	for (size_t i = 0; i + 1 < n; i++) {
		struct hist_segment *s = &h->segs[h->nsegs];

		if (!counts[i])
			continue;
		*s = (struct hist_segment) {
			.offset = offs[i], .end_offset = offs[i + 1],
			.first = number, .count = counts[i],
		};
		if (!hist_psb_start_ip(&h->cfg, offs[i], &s->start_ip))
			s->start_ip = 0;
		memset(s->summary, 0xff, sizeof(s->summary));
		memset(&h->extra[h->nsegs], 0, sizeof(h->extra[0]));
		number += counts[i];
		h->nsegs++;
	}
	h->size = number - 1;
	h->ninsn = h->size;
	for (size_t i = 0; i < h->nsegs; i++)
		h->ninsn -= h->segs[i].gaps;
	h->from_table = true;
}

/* Indexes the trace from offset @from (0, or the PSB where the kept
 * segments end) on, after the h->nsegs segments kept. */
static int index_from(struct history *h, uint64_t from)
{
	struct index_job job = { .cfg = &h->cfg };
	size_t n, room;
	uint64_t *offs;
	void *segs, *extra;
	int err = find_psbs(&h->cfg, from, &offs, &n);

	if (err)
		return err;
	if (n == 0 && h->cfg.have_end_ip && !h->nsegs) {
		/* No trace at all: the history is just the final PC. */
		if (push_offset(&offs, &n, &(size_t){ 0 }, h->cfg.size))
			return PTRR_ERR_NOMEM;
	}
	if (!h->nsegs)
		h->skipped_prefix = n ? offs[0] : h->cfg.size;
	job.offs = offs;
	job.n = n;
	room = h->nsegs + (n ? n : 1);
	job.res = calloc(n ? n : 1, sizeof(*job.res));
	segs = realloc(h->segs, room * sizeof(*h->segs));
	if (segs)
		h->segs = segs;
	extra = realloc(h->extra, room * sizeof(*h->extra));
	if (extra) {
		h->extra = extra;
		memset(h->extra + h->nsegs, 0,
		       (room - h->nsegs) * sizeof(*h->extra));
	}
	if (!job.res || !segs || !extra)
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err && n > 1 && h->cfg.psbs && !atomic_load(&h->table_wrong)) {
		/* All but the last numbered from the table; the last (where
		 * the thread stopped) decoded. */
		uint64_t *counts = malloc((n - 1) * sizeof(*counts));

		if (!counts) {
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		} else if (table_counts(&h->cfg, offs, n, counts)) {
			fill_from_table(h, offs, n, counts);
			job.offs = offs + n - 1;
			job.n = 1;
		}
		free(counts);
	}
	if (!err)
		err = decode_all(&job);
	if (!err)
		err = fill_index(h, &job);
	for (size_t i = 0; err && i < job.n; i++)	/* extras not kept */
		free(h->extra[h->nsegs + i].v);
	free(job.res);
	free(offs);
	return err;
}

/* Forgets segments @keep on of @h (their entries, their extra runs,
 * their decoded forms).  The call segments notice the new generation and
 * go back to that segment's start themselves (calls.c). */
static void drop_segments(struct history *h, size_t keep)
{
	for (size_t k = 0; k < HIST_CACHE_SLOTS; k++)
		if (h->cache[k] && h->cache[k]->seg >= keep) {
			hist_put_decoded(h, h->cache[k]);
			h->cache[k] = NULL;
		}
	for (size_t i = keep; i < h->nsegs; i++) {
		free(h->extra[i].v);
		memset(&h->extra[i], 0, sizeof(h->extra[i]));
	}
	h->size = keep < h->nsegs ? h->segs[keep].first - 1 : h->size;
	h->nsegs = keep;
}

int hist_extend(struct history *h, const uint8_t *trace, size_t size,
		bool have_end_ip, uint64_t end_ip)
{
	uint64_t from = 0;
	bool held;
	int err;

	if (size < h->cfg.size)
		return ptrr_fail(PTRR_ERR_USAGE, "hist_extend: the trace "
				 "shrank from %zu to %zu bytes", h->cfg.size,
				 size);
	held = hist_calls_hold(h);
	if (h->from_table && atomic_load(&h->table_wrong)) {
		/* A decode disagreed with the table: every segment is
		 * indexed again by decoding, and renumbered. */
		drop_segments(h, 0);
		h->size = 0;
		h->from_table = false;
		h->renumbered++;
	} else if (h->nsegs) {
		from = h->segs[h->nsegs - 1].offset;
		drop_segments(h, h->nsegs - 1);
	} else {
		h->size = 0;
	}
	h->cfg.trace = trace;
	h->cfg.size = size;
	h->cfg.have_end_ip = have_end_ip;
	h->cfg.end_ip = end_ip;
	h->generation++;
	err = index_from(h, from);
	if (held)
		hist_calls_release(h);
	return err;
}

void hist_set_psbs(struct history *h, const struct hist_psb *psbs,
		   size_t npsbs)
{
	h->cfg.psbs = psbs;
	h->cfg.npsbs = npsbs;
}

bool hist_numbered_from_table(const struct history *h)
{
	return h->from_table && !atomic_load(&h->table_wrong);
}

int hist_open(const struct hist_config *cfg, struct history **out)
{
	struct history *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	h->cfg = *cfg;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->ahead_done, NULL);
	err = index_from(h, 0);
	if (err) {
		hist_close(h);
		return err;
	}
	*out = h;
	return 0;
}

void hist_close(struct history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < HIST_CACHE_SLOTS; i++)
		if (h->cache[i])
			hist_put_decoded(h, h->cache[i]);
	for (size_t i = 0; h->extra && i < h->nsegs; i++)
		free(h->extra[i].v);
	hist_calls_free(h->calls);
	pt_image_free(h->pti);
	free(h->extra);
	free(h->segs);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->ahead_done);
	free(h);
}

uint64_t hist_size(const struct history *h)
{
	return h->size;
}

uint64_t hist_insn_count(const struct history *h)
{
	return h->ninsn;
}

size_t hist_index_bytes(const struct history *h)
{
	size_t bytes = sizeof(*h) + h->nsegs * (sizeof(*h->segs) +
						sizeof(*h->extra));

	for (size_t i = 0; i < h->nsegs; i++)
		bytes += h->extra[i].cap * sizeof(struct hist_run);
	return bytes;
}

size_t hist_nsegments(const struct history *h)
{
	return h->nsegs;
}

const struct hist_segment *hist_segment_at(const struct history *h,
					   size_t i)
{
	return i < h->nsegs ? &h->segs[i] : NULL;
}

int hist_segment_find(const struct history *h, uint64_t number,
		      size_t *index)
{
	size_t lo = 0, hi = h->nsegs;

	if (number < 1 || number > h->size)
		return ptrr_fail(PTRR_ERR_RANGE,
				 "instruction %llu is outside the history "
				 "(1 to %llu)", (unsigned long long) number,
				 (unsigned long long) h->size);
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->segs[mid].first <= number)
			lo = mid;
		else
			hi = mid;
	}
	*index = lo;
	return 0;
}
