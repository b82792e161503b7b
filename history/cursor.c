/* Random access to the history: the cache of decoded segments and the
 * cursor that moves over entries in both directions.
 *
 * Entry N is found by binary search on the segment index, decoding that
 * one segment (or taking it from the cache), and binary search on its
 * runs.  Inside a run, instruction addresses come from instruction
 * lengths, decoded once per run the cursor enters.
 */
#include "history_internal.h"

#include <Zydis/Zydis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frees decoded segment @d. */
static void decoded_free(struct hist_decoded *d)
{
	free(d->runs);
	free(d->run_first);
	free(d);
}

void hist_put_decoded(struct history *h, struct hist_decoded *d)
{
	bool last;

	if (!d)
		return;
	pthread_mutex_lock(&h->lock);
	last = --d->refs == 0;
	pthread_mutex_unlock(&h->lock);
	if (last)
		decoded_free(d);
}

/* Appends segment @i's extra runs (walked code, the final PC) to @res. */
static int add_extra(struct history *h, size_t i, struct hist_seg_result *res)
{
	const struct hist_runs *extra = &h->extra[i];

	for (size_t j = 0; j < extra->n; j++)
		if (hist_runs_push(&res->runs, &extra->v[j]))
			return PTRR_ERR_NOMEM;
	return 0;
}

/* Wraps the runs of @res into a new hist_decoded of segment @i holding one
 * reference, numbering them from the segment's first entry. */
static int wrap_runs(struct history *h, size_t i, struct hist_seg_result *res,
		     struct hist_decoded **out)
{
	const struct hist_segment *s = &h->segs[i];
	struct hist_decoded *d = calloc(1, sizeof(*d));
	uint64_t number = s->first;

	if (d)
		d->run_first = malloc((res->runs.n + 1) * sizeof(uint64_t));
	if (!d || !d->run_first) {
		free(d);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	d->seg = i;
	d->generation = h->generation;
	d->settled = i + 1 < h->nsegs;
	d->runs = res->runs.v;
	d->nruns = res->runs.n;
	d->refs = 1;
	d->complete = !res->partial;
	for (size_t j = 0; j < d->nruns; j++) {
		d->run_first[j] = number;
		number += d->runs[j].ninsn;
	}
	d->valid = number - s->first < s->count ? number - s->first : s->count;
	memset(&res->runs, 0, sizeof(res->runs));
	*out = d;
	if (!d->complete || number - s->first == s->count)
		return 0;
	decoded_free(d);
	*out = NULL;
	if (h->from_table)
		atomic_store(&h->table_wrong, true);
	return ptrr_fail(PTRR_ERR_INTERNAL,
			 "segment at trace offset 0x%llx decoded to %llu "
			 "entries, the index says %llu",
			 (unsigned long long) s->offset,
			 (unsigned long long) (number - s->first),
			 (unsigned long long) s->count);
}

/* The libipt image @h decodes through (h->lock held): its own copy of
 * its image's, made again if the image changed since; NULL if out of
 * memory. */
static struct pt_image *own_pt_image(struct history *h)
{
	unsigned long changes = atomic_load(&h->cfg.image->changes);

	if (h->pti && h->pti_changes == changes)
		return h->pti;
	pt_image_free(h->pti);
	h->pti = hist_image_pt_clone(h->cfg.image);
	h->pti_changes = changes;
	return h->pti;
}

/* Fills in what numbering segment @i from the table of PSBs left
 * unknown (index.c, fill_from_table()) from its complete decode @res,
 * made with the summary: its code summary, first and last addresses and
 * net call depth, as the index pass would have (depth_in 0 until
 * hist_learn_segments() puts the depths of all in sequence).  A gap in
 * it means the table was wrong (the emitter's exact segments have none).
 * Readers of the summary take no lock: each word goes from all ones
 * (any code) to its value, so that one read while this writes says no
 * less than the truth. */
static void learn_segment(struct history *h, size_t i,
			  const struct hist_seg_result *res)
{
	struct hist_segment *s = &h->segs[i];

	if (res->gaps) {
		atomic_store(&h->table_wrong, true);
		return;
	}
	s->start_ip = res->start_ip;
	s->end_ip = res->end_ip;
	s->depth_in = 0;
	s->depth_out = res->depth;
	for (size_t k = 0; k < 8; k++)
		__atomic_store_n(&s->summary[k], res->summary[k],
				 __ATOMIC_RELAXED);
}

int hist_learn_segments(struct history *h)
{
	int32_t depth = 0;

	for (size_t i = 0; i < h->nsegs; i++) {
		struct hist_decoded *d;
		int err;

		if (!hist_summary_unknown(h->segs[i].summary))
			continue;
		err = hist_get_decoded(h, i, 0, &d);
		if (err)
			return err;
		hist_put_decoded(h, d);
	}
	if (atomic_load(&h->table_wrong))
		return ptrr_fail(PTRR_ERR_INTERNAL, "a segment decoded "
				 "otherwise than the table of PSBs says");
	for (size_t i = 0; h->from_table && i < h->nsegs; i++) {
		struct hist_segment *s = &h->segs[i];
		int32_t delta = s->depth_out - s->depth_in;

		s->depth_in = depth;
		depth += delta;
		s->depth_out = depth;
	}
	return 0;
}

/* Decodes segment @i (up to entry @upto if not 0) through @image into a
 * new hist_decoded holding one reference. */
static int decode_segment(struct history *h, size_t i, uint64_t upto,
			  struct pt_image *image, struct hist_decoded **out)
{
	const struct hist_segment *s = &h->segs[i];
	struct hist_seg_result res;
	uint64_t next_ip, stop = upto ? upto - s->first + 1 : 0;
	bool have_next = hist_psb_start_ip(&h->cfg, s->end_offset, &next_ip);
	bool learn = h->from_table && hist_summary_unknown(s->summary);
	int err;

	if (!image)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	err = hist_decode_segment_prefix(&h->cfg, image,
					 s->offset, s->end_offset,
					 have_next ? &next_ip : NULL, stop,
					 learn, &res);
	if (!err && !res.partial)
		err = add_extra(h, i, &res);
	if (!err)
		err = wrap_runs(h, i, &res, out);
	if (!err && learn && (*out)->complete)
		learn_segment(h, i, &res);
	hist_seg_result_fini(&res);
	return err;
}

/* Drops the cache's reference to the segment in slot @k. */
static void cache_drop(struct history *h, size_t k)
{
	if (h->cache[k] && --h->cache[k]->refs == 0)
		decoded_free(h->cache[k]);
	h->cache[k] = NULL;
}

/* Drops the least recently used segments from the cache while it holds
 * more than HIST_CACHE_BYTES of them, down to the most recent one. */
static void cache_trim(struct history *h)
{
	for (;;) {
		size_t bytes = 0, n = 0, lru = 0;

		for (size_t k = 0; k < HIST_CACHE_SLOTS; k++) {
			const struct hist_decoded *d = h->cache[k];

			if (!d)
				continue;
			bytes += d->nruns * (sizeof(*d->runs) +
					     sizeof(*d->run_first));
			if (!n++ || h->cache_use[k] < h->cache_use[lru])
				lru = k;
		}
		if (bytes <= HIST_CACHE_BYTES || n <= 1)
			return;
		cache_drop(h, lru);
	}
}

/* Puts @d in the cache, in place of a partial decode of the same
 * segment, else of the least recently used slot; then trims the cache
 * to its size. */
static void cache_insert(struct history *h, struct hist_decoded *d)
{
	size_t victim = 0;

	for (size_t k = 0; k < HIST_CACHE_SLOTS; k++) {
		if (!h->cache[k] || h->cache[k]->seg == d->seg) {
			victim = k;
			break;
		}
		if (h->cache_use[k] < h->cache_use[victim])
			victim = k;
	}
	cache_drop(h, victim);
	d->refs++;
	h->cache[victim] = d;
	h->cache_use[victim] = ++h->clock;
	cache_trim(h);
}

/* True if decoded segment @d of @h holds entry @upto (0: all entries)
 * and is still right: decoded since the last hist_extend(), or of a
 * segment that was not the last then (hist_extend() decodes only the last
 * segment again). */
static bool decoded_covers(const struct history *h,
			   const struct hist_decoded *d, uint64_t upto)
{
	if (d->generation != h->generation && !d->settled)
		return false;
	return d->complete || (upto && upto < h->segs[d->seg].first +
						 d->valid);
}

/* The cache's decode of segment @i of @h that covers entry @upto (0:
 * all), with a reference for the caller, or NULL (h->lock held). */
static struct hist_decoded *cache_take(struct history *h, size_t i,
				       uint64_t upto)
{
	for (size_t k = 0; k < HIST_CACHE_SLOTS; k++) {
		struct hist_decoded *c = h->cache[k];

		if (c && c->seg == i && decoded_covers(h, c, upto)) {
			c->refs++;
			h->cache_use[k] = ++h->clock;
			return c;
		}
	}
	return NULL;
}

int hist_get_decoded(struct history *h, size_t i, uint64_t upto,
		     struct hist_decoded **out)
{
	struct hist_decoded *d;
	int err = 0;

	/* A segment numbered from the table and not decoded yet is decoded
	 * whole: a prefix would not show whether the table counted it
	 * right. */
	if (upto && h->from_table && hist_summary_unknown(h->segs[i].summary))
		upto = 0;
	pthread_mutex_lock(&h->lock);
	while (!(d = cache_take(h, i, upto)) && h->ahead_busy &&
	       h->ahead == i)
		pthread_cond_wait(&h->ahead_done, &h->lock);
	if (!d) {
		err = decode_segment(h, i, upto, own_pt_image(h), &d);
		if (!err)
			cache_insert(h, d);
	}
	pthread_mutex_unlock(&h->lock);
	*out = d;
	return err;
}

int hist_decode_ahead(struct history *h, struct pt_image *image,
		      unsigned long changes, size_t i)
{
	struct hist_decoded *d;
	int err;

	pthread_mutex_lock(&h->lock);
	d = cache_take(h, i, 0);
	h->ahead = i;
	h->ahead_busy = !d;
	pthread_mutex_unlock(&h->lock);
	err = d ? 0 : decode_segment(h, i, 0, image, &d);
	pthread_mutex_lock(&h->lock);
	if (!err && atomic_load(&h->cfg.image->changes) != changes)
		err = 1;
	if (!err && h->ahead_busy)
		cache_insert(h, d);
	h->ahead_busy = false;
	pthread_cond_broadcast(&h->ahead_done);
	pthread_mutex_unlock(&h->lock);
	if (d)		/* NULL if it did not decode */
		hist_put_decoded(h, d);
	return err;
}


/* ------------------------------------------------------------------ */

/* Instruction offsets of one run, from a single read of its code. */
struct run_offsets {
	const struct hist_run *run;	/* the run they belong to */
	uint32_t *off;			/* off[j]: address of insn j - ip */
	uint8_t *len;
	size_t cap;
	uint8_t *code;			/* the run's code, read once */
	size_t code_cap;
};

struct hist_cursor {
	struct history *h;
	struct hist_decoded *d;	/* the current segment */
	size_t run;		/* index of the current run in d */
	uint32_t idx;		/* instruction index inside the run */
	struct run_offsets ro;
	struct hist_entry entry;
};

static ZydisDecoder len_decoder;
static pthread_once_t len_once = PTHREAD_ONCE_INIT;

static void len_decoder_init(void)
{
	ZydisDecoderInit(&len_decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	ZydisDecoderEnableMode(&len_decoder, ZYDIS_DECODER_MODE_MINIMAL,
			       ZYAN_TRUE);
}

/* Grows @ro to hold @n instructions. */
static int offsets_reserve(struct run_offsets *ro, size_t n)
{
	uint32_t *off;
	uint8_t *len;

	if (n <= ro->cap)
		return 0;
	off = realloc(ro->off, n * sizeof(*off));
	if (off)
		ro->off = off;
	len = realloc(ro->len, n);
	if (len)
		ro->len = len;
	if (!off || !len)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	ro->cap = n;
	return 0;
}

/* Decodes the instruction lengths of run @r into @ro.  The run's code is
 * read once; the last instruction must start exactly at its end_ip. */
static int offsets_compute(struct hist_image *img, const struct hist_run *r,
			   struct run_offsets *ro)
{
	uint64_t span = r->end_ip - r->ip + ZYDIS_MAX_INSTRUCTION_LENGTH;
	uint8_t *code;
	ssize_t n;
	uint64_t pos = 0;
	int err = offsets_reserve(ro, r->ninsn);

	if (err)
		return err;
	if (r->kind != HIST_ENTRY_INSN || r->ninsn == 1 || span > (1u << 26)) {
		memset(ro->off, 0, r->ninsn * sizeof(*ro->off));
		memset(ro->len, 0, r->ninsn);
		if (r->kind == HIST_ENTRY_INSN && r->ninsn == 1) {
			struct hist_insn_info info;

			if (!hist_insn_info_at(img, r->ip, &info))
				ro->len[0] = info.size;
		}
		ro->run = r;
		return r->ninsn == 1 || r->kind != HIST_ENTRY_INSN ? 0 :
		       ptrr_fail(PTRR_ERR_INTERNAL, "run too long");
	}
	pthread_once(&len_once, len_decoder_init);
	if (span > ro->code_cap) {
		code = realloc(ro->code, span);
		if (!code)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		ro->code = code;
		ro->code_cap = span;
	}
	code = ro->code;
	n = hist_image_read(img, r->ip, code, span);
	for (uint32_t j = 0; j < r->ninsn; j++) {
		/* The image remembers lengths it was told: a loop's runs,
		 * walked again and again, are decoded once. */
		uint8_t len = hist_image_len_get(img, r->ip + pos);
		ZydisDecoderContext ctx;
		ZydisDecodedInstruction zi;

		if (pos >= (uint64_t) (n > 0 ? n : 0))
			break;
		if (!len) {
			if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(
				    &len_decoder, &ctx, code + pos,
				    (size_t) n - pos, &zi)))
				break;
			len = zi.length;
			hist_image_len_put(img, r->ip + pos, len);
		}
		ro->off[j] = (uint32_t) pos;
		ro->len[j] = len;
		pos += len;
		if (j + 1 == r->ninsn) {
			ro->run = r;
			if (r->ip + ro->off[j] == r->end_ip)
				return 0;
			return ptrr_fail(PTRR_ERR_INTERNAL,
					 "run at 0x%llx does not decode to "
					 "0x%llx", (unsigned long long) r->ip,
					 (unsigned long long) r->end_ip);
		}
	}
	return ptrr_fail(PTRR_ERR_DECODE, "cannot read the code at 0x%llx",
			 (unsigned long long) (r->ip + pos));
}

/* The length of the instruction at @ip, 0 if its code cannot be read
 * (as for a run of one instruction: its entry is still there); decoded
 * once per address (the image remembers it). */
static uint8_t insn_length(struct hist_image *img, uint64_t ip)
{
	uint8_t code[ZYDIS_MAX_INSTRUCTION_LENGTH];
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction zi;
	uint8_t len = hist_image_len_get(img, ip);
	ssize_t n;

	if (len)
		return len;
	n = hist_image_read(img, ip, code, sizeof(code));
	pthread_once(&len_once, len_decoder_init);
	if (n <= 0 || !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(
			&len_decoder, &ctx, code, (size_t) n, &zi)))
		return 0;
	hist_image_len_put(img, ip, zi.length);
	return zi.length;
}

/* Fills c->entry for the current position.  The first and the last
 * instruction of a run are read alone: a walk that goes from one to the
 * other (hist_cursor_skip_run) never decodes those between. */
static int cursor_fill(struct hist_cursor *c)
{
	const struct hist_run *r = &c->d->runs[c->run];
	struct hist_entry *e = &c->entry;
	bool alone = r->kind == HIST_ENTRY_INSN && c->ro.run != r &&
		     (c->idx == 0 || c->idx + 1 == r->ninsn);
	uint8_t len = 0;
	int err = 0;

	if (alone)
		len = insn_length(c->h->cfg.image, c->idx ? r->end_ip : r->ip);
	else if (c->ro.run != r)
		err = offsets_compute(c->h->cfg.image, r, &c->ro);
	if (err)
		return err;
	memset(e, 0, sizeof(*e));
	e->number = c->d->run_first[c->run] + c->idx;
	e->kind = r->kind;
	if (r->kind == HIST_ENTRY_GAP) {
		e->ip = r->ip;
		e->gap_code = r->gap_code;
		e->gap_offset = r->gap_offset;
		return 0;
	}
	e->ip = alone ? (c->idx ? r->end_ip : r->ip) :
			r->ip + c->ro.off[c->idx];
	e->size = alone ? len : c->ro.len[c->idx];
	e->iclass = c->idx + 1 == r->ninsn ? r->iclass : HIST_IC_OTHER;
	e->flags = c->idx == 0 ? r->flags : 0;
	return 0;
}

int hist_cursor_new(struct history *h, struct hist_cursor **out)
{
	struct hist_cursor *c = calloc(1, sizeof(*c));

	if (!c)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	c->h = h;
	*out = c;
	return 0;
}

void hist_cursor_free(struct hist_cursor *c)
{
	if (!c)
		return;
	hist_put_decoded(c->h, c->d);
	free(c->ro.off);
	free(c->ro.len);
	free(c->ro.code);
	free(c);
}

size_t hist_cursor_segment(const struct hist_cursor *c)
{
	return c->d ? c->d->seg : 0;
}

/* Makes segment @i, decoded at least up to entry @upto (all of it if 0),
 * the cursor's current one. */
static int cursor_enter(struct hist_cursor *c, size_t i, uint64_t upto)
{
	struct hist_decoded *d;
	int err;

	if (c->d && c->d->seg == i && decoded_covers(c->h, c->d, upto))
		return 0;
	err = hist_get_decoded(c->h, i, upto, &d);
	if (err)
		return err;
	hist_put_decoded(c->h, c->d);
	c->d = d;
	c->ro.run = NULL;
	return 0;
}

/* Moves to entry @number; a seek needs its segment decoded only up to
 * the entry (@partial), a step needs all of it. */
static int cursor_goto(struct hist_cursor *c, uint64_t number, bool partial)
{
	const struct history *h = c->h;
	size_t seg, lo, hi;
	int err;

	/* Within the current segment (value recovery's look-ups seek
	 * back and forth inside one), its search is not needed. */
	if (c->d && number >= 1 && number <= h->size &&
	    number >= h->segs[c->d->seg].first &&
	    (c->d->seg + 1 == h->nsegs ||
	     number < h->segs[c->d->seg + 1].first)) {
		seg = c->d->seg;
		err = 0;
	} else {
		err = hist_segment_find(h, number, &seg);
	}
	if (!err)
		err = cursor_enter(c, seg, partial ? number : 0);
	if (err)
		return err;
	lo = 0;
	hi = c->d->nruns;
	/* ... nor the runs' if it is in the current run. */
	if (c->run < hi && c->d->run_first[c->run] <= number &&
	    number - c->d->run_first[c->run] < c->d->runs[c->run].ninsn) {
		lo = c->run;
		hi = lo + 1;
	}
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->d->run_first[mid] <= number)
			lo = mid;
		else
			hi = mid;
	}
	c->run = lo;
	c->idx = (uint32_t) (number - c->d->run_first[lo]);
	return cursor_fill(c);
}

int hist_cursor_seek(struct hist_cursor *c, uint64_t number)
{
	/* A seek to a neighbour is a step: a walk by seeks (replay/'s
	 * proofs) would otherwise decode its segment's prefix again at every
	 * entry past what was decoded. */
	if (c->d && c->entry.number && number == c->entry.number + 1 &&
	    number <= c->h->size)
		return hist_cursor_next(c);
	if (c->d && number && number + 1 == c->entry.number)
		return hist_cursor_prev(c);
	/* Already there (a scan back seeks the entry it last stepped to). */
	if (c->d && number && number == c->entry.number &&
	    c->run < c->d->nruns &&
	    c->d->run_first[c->run] + c->idx == number &&
	    decoded_covers(c->h, c->d, number))
		return 0;
	return cursor_goto(c, number, true);
}

int hist_cursor_next(struct hist_cursor *c)
{
	int err;

	if (!c->d)
		return cursor_goto(c, 1, false);
	if (!decoded_covers(c->h, c->d, 0)) {
		err = cursor_goto(c, c->entry.number, false);
		if (err)
			return err;
	}
	if (c->idx + 1 < c->d->runs[c->run].ninsn) {
		c->idx++;
		return cursor_fill(c);
	}
	if (c->run + 1 < c->d->nruns) {
		c->run++;
		c->idx = 0;
		return cursor_fill(c);
	}
	if (c->entry.number >= c->h->size)
		return ptrr_fail(PTRR_ERR_RANGE, "at the end of the history");
	return cursor_goto(c, c->entry.number + 1, false);
}

int hist_cursor_prev(struct hist_cursor *c)
{
	if (!c->d)
		return cursor_goto(c, c->h->size, false);
	/* A prefix decoded up to the entry holds every entry before it. */
	if (!decoded_covers(c->h, c->d, c->entry.number)) {
		int err = cursor_goto(c, c->entry.number, false);

		if (err)
			return err;
	}
	if (c->idx > 0) {
		c->idx--;
		return cursor_fill(c);
	}
	if (c->run > 0) {
		c->run--;
		c->idx = c->d->runs[c->run].ninsn - 1;
		return cursor_fill(c);
	}
	if (c->entry.number <= 1)
		return ptrr_fail(PTRR_ERR_RANGE,
				 "at the beginning of the history");
	return cursor_goto(c, c->entry.number - 1, false);
}

bool hist_cursor_run_end(const struct hist_cursor *c, uint64_t *number,
			 uint64_t *ip)
{
	const struct hist_run *r;

	if (!c->d || !decoded_covers(c->h, c->d, 0))
		return false;
	r = &c->d->runs[c->run];
	if (r->kind != HIST_ENTRY_INSN || c->idx + 1 >= r->ninsn)
		return false;
	*number = c->d->run_first[c->run] + r->ninsn - 1;
	*ip = r->end_ip;
	return true;
}

int hist_cursor_skip_run(struct hist_cursor *c)
{
	c->idx = c->d->runs[c->run].ninsn - 1;
	return cursor_fill(c);
}

const struct hist_entry *hist_cursor_entry(const struct hist_cursor *c)
{
	return c->d ? &c->entry : NULL;
}

const char *hist_gap_reason(const struct hist_entry *e, char *buf,
			    size_t bufsz)
{
	const char *what;

	switch (e->gap_code) {
	case HIST_GAP_OVERFLOW:
		what = "trace overflow (OVF): trace was lost here";
		break;
	case HIST_GAP_DISCONNECTED:
		what = "the trace does not lead to the next sync point";
		break;
	case HIST_GAP_NO_END:
		what = "the trace does not lead to the thread's final PC";
		break;
	case HIST_GAP_ENDLESS:
		what = "a loop the trace never leaves (a million instructions "
		       "on no packet)";
		break;
	default:
		what = pt_errstr(pt_errcode(e->gap_code));
		break;
	}
	snprintf(buf, bufsz, "%s (trace offset 0x%llx%s%.0llx)", what,
		 (unsigned long long) e->gap_offset, e->ip ? ", at 0x" : "",
		 (unsigned long long) e->ip);
	return buf;
}
