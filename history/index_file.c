/* A history's index and call segments, saved with its bundle
 * (threads/TID.idx) so that opening a long recording does not decode
 * its whole trace again, and the first call stack does not wait for the
 * pass over all of it (threads/TID.pt's index is threads/TID.idx;
 * docs/history.md, "The saved index").
 *
 * The file holds what hist_open() and the call-segment pass compute, in
 * the layout of this build (a header names it; another layout is not
 * read), behind a key: a hash of the trace, of where the history ends
 * and of the code it was decoded against (the bundle's modules and code
 * copies, recording.c).  A file whose key or layout differ is ignored
 * and the history built as without one.  Nothing in it is trusted: the
 * reader checks that the segments and call segments hold together, and
 * the cursor checks each segment's decoded length against the index
 * (cursor.c), so a damaged file gives an error or a wrong answer, never
 * a read out of bounds.
 *
 * After the header, the body (segments, their extra runs, the call
 * segments) is compressed with zlib in chunks (HIST_INDEX_CHUNK), whose
 * checksums turn most damage away before it is read.  The call segments take a few bytes each,
 * about one per 20 to 40 instructions, where the trace takes a bit or
 * two for a call and its return: they are left out of a file that would
 * be larger than the caller's bound with them (INDEX_CALLS clear), and
 * the pass computes them on opening as without a saved index.
 *
 * The file has two forms (docs/history.md, "The saved index"): the
 * complete one, made after the call-segment pass and after every
 * segment numbered from a table of PSBs was decoded; and the one a
 * recorder saves without doing any per-instruction work (the QEMU
 * backend's: ptrr index completes it), which holds the segments as
 * numbered and no call segments. */
#include "history_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#define INDEX_MAGIC "PTRRIDX1"

/* The layout of this build's records: files of another are not read. */
#define INDEX_LAYOUT ((uint64_t) sizeof(struct hist_segment) | \
		      (uint64_t) sizeof(struct hist_run) << 16 | \
		      (uint64_t) CALL_STRIDE << 32 | 5ull << 48)

/* index_header.flags: the body holds the call segments (INDEX_CALLS);
 * some segments were numbered from the emitter's table of PSBs and not
 * decoded when the index was saved (INDEX_TABLE): their code summaries
 * say "any code", and the history that reads the file decodes them and
 * checks them against the table when first used, as one opened from
 * the table does (from_table). */
#define INDEX_CALLS 0x1u
#define INDEX_TABLE 0x2u

/* Deflate makes at most this many bytes of one (zlib's technical
 * details): a larger body_size is damage. */
#define INFLATE_RATIO_MAX 1032

struct index_header {
	char magic[8];
	uint64_t layout;
	uint64_t key;
	uint64_t trace_size;
	uint64_t size;		/* struct history's */
	uint64_t ninsn;
	uint64_t skipped_prefix;
	uint64_t nsegs;
	uint64_t body_size;	/* the body's bytes, inflated */
	uint64_t flags;		/* INDEX_* */
};

void hist_wbuf_put(struct hist_wbuf *w, const void *data, size_t n)
{
	size_t cap = w->cap ? w->cap : 4096;
	uint8_t *p;

	if (w->nomem || !n)
		return;
	while (cap - w->n < n)
		cap *= 2;
	if (cap != w->cap) {
		if (!(p = realloc(w->p, cap))) {
			w->nomem = true;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->n, data, n);
	w->n += n;
}

const void *hist_rbuf_skip(struct hist_rbuf *r, size_t n)
{
	const void *p = r->p + r->off;

	if (r->bad || n > r->n - r->off) {
		r->bad = true;
		return NULL;
	}
	r->off += n;
	return p;
}

const void *hist_rbuf_take(struct hist_rbuf *r, size_t n)
{
	const void *p = hist_rbuf_skip(r, n);

	if (p && r->body && !hist_body_fetch(r->body, r->off - n, n)) {
		r->bad = true;
		return NULL;
	}
	return p;
}

void hist_rbuf_get(struct hist_rbuf *r, void *out, size_t n)
{
	const void *p = hist_rbuf_take(r, n);

	if (!n)
		return;
	if (p)
		memcpy(out, p, n);
	else
		memset(out, 0, n);
}

char *hist_trace_sibling(const char *trace_file, const char *ext)
{
	size_t n = strlen(trace_file);
	char *p;

	if (n > 3 && !strcmp(trace_file + n - 3, ".pt"))
		n -= 3;
	if ((p = malloc(n + strlen(ext) + 1))) {
		memcpy(p, trace_file, n);
		strcpy(p + n, ext);
	}
	return p;
}

uint64_t hist_hash(uint64_t h, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	for (; n; p++, n--)
		h = (h ^ *p) * 0x100000001b3ull;
	return h ^ h >> 32;
}

/* The body is compressed in chunks of HIST_INDEX_CHUNK bytes (the last
 * one shorter), each a zlib stream of its own, so that they are
 * compressed and inflated on all cores: a full recording's body is
 * hundreds of megabytes.  After the header, the file has each chunk's
 * compressed size (a uint64_t each), then the chunks. */
#define INDEX_CHUNK HIST_INDEX_CHUNK

/* The chunks of a body of @n bytes. */
static size_t chunk_count(uint64_t n)
{
	return (size_t) ((n + INDEX_CHUNK - 1) / INDEX_CHUNK);
}

/* The chunks of a body being compressed. */
struct chunk_job {
	uint8_t *body;
	size_t body_size;
	uint8_t **out;		/* each chunk's deflated bytes */
	uint64_t *len;		/* their sizes */
	atomic_bool bad;	/* a chunk failed */
};

/* Where chunk @i of @job's body starts, and its size. */
static size_t chunk_span(const struct chunk_job *job, size_t i, size_t *n)
{
	size_t from = i * INDEX_CHUNK;

	*n = job->body_size - from < INDEX_CHUNK ? job->body_size - from :
						  INDEX_CHUNK;
	return from;
}

/* Compresses chunk @i of @arg at zlib's fastest level: on a full
 * recording's 422 MB body it took 2 s where the default level took 10,
 * for 4% more bytes, and inflates as fast. */
static void deflate_chunk(void *arg, size_t i)
{
	struct chunk_job *job = arg;
	size_t n, from = chunk_span(job, i, &n);
	uLongf len = compressBound((uLong) n);
	uint8_t *p = malloc(len);

	if (!p || compress2(p, &len, job->body + from, (uLong) n,
			    Z_BEST_SPEED) != Z_OK) {
		free(p);
		p = NULL;
		atomic_store(&job->bad, true);
	}
	job->out[i] = p;
	job->len[i] = len;
}

/* Compresses the first @n bytes of @body after header @hd into a new
 * file, *@data of *@size bytes; false if out of memory. */
static bool compress_body(struct index_header *hd, const struct hist_wbuf *body,
			  size_t n, uint8_t **data, size_t *size)
{
	size_t nchunks = chunk_count(n), total = sizeof(*hd);
	struct chunk_job job = { .body = body->p, .body_size = n };
	uint8_t *p = NULL;

	atomic_init(&job.bad, false);
	hd->body_size = n;
	job.out = calloc(nchunks + 1, sizeof(*job.out));
	job.len = calloc(nchunks + 1, sizeof(*job.len));
	if (job.out && job.len) {
		hist_parallel_for(nchunks, deflate_chunk, &job);
		total += nchunks * sizeof(*job.len);
		for (size_t i = 0; i < nchunks; i++)
			total += job.len[i];
	}
	if (job.out && job.len && !atomic_load(&job.bad) &&
	    (p = malloc(total))) {
		size_t at = sizeof(*hd) + nchunks * sizeof(*job.len);

		memcpy(p, hd, sizeof(*hd));
		memcpy(p + sizeof(*hd), job.len, nchunks * sizeof(*job.len));
		for (size_t i = 0; i < nchunks; i++) {
			memcpy(p + at, job.out[i], job.len[i]);
			at += job.len[i];
		}
		*data = p;
		*size = total;
	}
	for (size_t i = 0; job.out && i < nchunks; i++)
		free(job.out[i]);
	free(job.out);
	free(job.len);
	return p != NULL;
}

/* hist_index_save(), once every segment of @h is complete if
 * @complete (then with the call segments), else as they are. */
static int save_index(struct history *h, uint64_t key, size_t max,
		      bool complete, uint8_t **data, size_t *size)
{
	struct index_header hd = {
		.layout = INDEX_LAYOUT, .key = key,
		.trace_size = h->cfg.size, .size = h->size,
		.ninsn = h->ninsn, .skipped_prefix = h->skipped_prefix,
		.nsegs = h->nsegs,
		.flags = complete ? INDEX_CALLS :
			 h->from_table ? INDEX_TABLE : 0,
	};
	struct hist_wbuf w = { 0 };
	size_t segs_only;
	int err;

	memcpy(hd.magic, INDEX_MAGIC, sizeof(hd.magic));
	hist_wbuf_put(&w, h->segs, h->nsegs * sizeof(*h->segs));
	for (size_t i = 0; i < h->nsegs; i++) {
		uint64_t n = h->extra[i].n;

		hist_wbuf_put(&w, &n, sizeof(n));
		hist_wbuf_put(&w, h->extra[i].v, n * sizeof(*h->extra[i].v));
	}
	segs_only = w.n;
	err = complete ? hist_calls_save(h, &w) : 0;
	if (!err && (w.nomem || !compress_body(&hd, &w, w.n, data, size)))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err && complete && *size > max) {
		free(*data);
		hd.flags &= ~INDEX_CALLS;
		if (!compress_body(&hd, &w, segs_only, data, size))
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	free(w.p);
	return err;
}

int hist_index_save(struct history *h, uint64_t key, size_t max,
		    bool complete, uint8_t **data, size_t *size)
{
	/* The call segments first: their pass decodes every segment, which
	 * completes those numbered from a table of PSBs. */
	int err = complete ? hist_calls_prepare(h, NULL) : 0;

	if (!err && complete)
		err = hist_learn_segments(h);
	return err ? err : save_index(h, key, max, complete, data, size);
}

/* Checks segment @s of a saved index, the one after @prev (NULL for the
 * first), for a trace of @trace_size bytes. */
static bool segment_ok(const struct hist_segment *s,
		       const struct hist_segment *prev, uint64_t trace_size)
{
	if (s->offset >= s->end_offset || s->end_offset > trace_size ||
	    !s->count || s->gaps > s->count)
		return false;
	if (!prev)
		return s->first == 1;
	return s->offset >= prev->end_offset &&
	       s->first == prev->first + prev->count;
}

/* Checks the extra runs @rs of segment @s: known kinds and classes, and
 * no more entries than the segment has. */
static bool runs_ok(const struct hist_runs *rs, const struct hist_segment *s)
{
	uint64_t n = 0;

	for (size_t j = 0; j < rs->n; j++) {
		const struct hist_run *r = &rs->v[j];

		/* A gap is one entry; instructions take a byte or more
		 * each, and a run is no longer than the cursor reads. */
		if ((r->kind == HIST_ENTRY_GAP && r->ninsn != 1) ||
		    (r->kind == HIST_ENTRY_INSN &&
		     (r->end_ip < r->ip || r->end_ip - r->ip >= 1u << 26 ||
		      r->ninsn > r->end_ip - r->ip + 1)) ||
		    (r->kind != HIST_ENTRY_INSN && r->kind != HIST_ENTRY_GAP) ||
		    r->iclass > HIST_IC_PTWRITE || !r->ninsn)
			return false;
		n += r->ninsn;
	}
	return n <= s->count;
}

/* Reads the segments of @h and their extra runs from @r. */
static bool read_segments(struct history *h, struct hist_rbuf *r,
			  const struct index_header *hd)
{
	uint64_t gaps = 0;

	if (hd->nsegs > r->n / sizeof(*h->segs))
		return false;
	h->segs = calloc(hd->nsegs + 1, sizeof(*h->segs));
	h->extra = calloc(hd->nsegs + 1, sizeof(*h->extra));
	if (!h->segs || !h->extra)
		return false;
	h->nsegs = hd->nsegs;
	hist_rbuf_get(r, h->segs, h->nsegs * sizeof(*h->segs));
	for (size_t i = 0; i < h->nsegs && !r->bad; i++) {
		struct hist_runs *rs = &h->extra[i];
		uint64_t n;

		if (!segment_ok(&h->segs[i], i ? &h->segs[i - 1] : NULL,
				hd->trace_size))
			return false;
		gaps += h->segs[i].gaps;
		hist_rbuf_get(r, &n, sizeof(n));
		if (n > r->n / sizeof(*rs->v))
			return false;
		if (n && !(rs->v = malloc(n * sizeof(*rs->v))))
			return false;
		rs->n = rs->cap = n;
		hist_rbuf_get(r, rs->v, n * sizeof(*rs->v));
		if (!runs_ok(rs, &h->segs[i]))
			return false;
	}
	if (r->bad)
		return false;
	if (!h->nsegs)
		return !hd->size && !hd->ninsn;
	return hd->size == h->segs[h->nsegs - 1].first +
			   h->segs[h->nsegs - 1].count - 1 &&
	       hd->ninsn == hd->size - gaps &&
	       hd->skipped_prefix <= h->segs[0].offset;
}

/* The state of a chunk of a body. */
enum { BODY_DEFLATED, BODY_INFLATED, BODY_BAD };

/* Inflates chunk @i of body @arg into its place, if it is not yet. */
static void inflate_chunk(void *arg, size_t i)
{
	struct hist_body *b = arg;
	size_t from = i * INDEX_CHUNK;
	size_t n = b->size - from < INDEX_CHUNK ? b->size - from : INDEX_CHUNK;
	uLongf out = (uLongf) n;
	uLong in = (uLong) (b->at[i + 1] - b->at[i]);

	if (b->state[i] != BODY_DEFLATED)
		return;
	b->state[i] = uncompress2(b->p + from, &out, b->in + b->at[i], &in) ==
		      Z_OK && out == n && in == b->at[i + 1] - b->at[i] ?
		      BODY_INFLATED : BODY_BAD;
}

/* Frees or unmaps the compressed file of @b. */
static void drop_file(struct hist_body *b)
{
	if (b->file && b->file_mapped)
		munmap(b->file, b->file_size);
	else
		free(b->file);
	b->file = NULL;
}

/* Chunks of a body from @first on, inflated on as many threads as
 * cores. */
struct fetch_job {
	struct hist_body *b;
	size_t first;
};

/* Inflates chunk @i of @arg's if it is not yet. */
static void fetch_one(void *arg, size_t i)
{
	struct fetch_job *job = arg;

	inflate_chunk(job->b, job->first + i);
}

bool hist_body_fetch(struct hist_body *b, size_t from, size_t n)
{
	size_t first, last, todo = 0;
	bool ok = true;

	if (n > b->size || from > b->size - n)
		return false;
	if (!n || !b->nchunks)
		return true;
	first = from / INDEX_CHUNK;
	last = (from + n - 1) / INDEX_CHUNK;
	for (size_t i = first; i <= last; i++)
		todo += b->state[i] == BODY_DEFLATED;
	if (todo == 1) {
		for (size_t i = first; i <= last; i++)
			inflate_chunk(b, i);
	} else if (todo) {
		struct fetch_job job = { b, first };

		hist_parallel_for(last - first + 1, fetch_one, &job);
	}
	for (size_t i = first; i <= last; i++)
		ok = ok && b->state[i] == BODY_INFLATED;
	return ok;
}

size_t hist_body_inflated(const struct hist_body *b)
{
	size_t n = 0;

	if (!b->nchunks)
		return b->size;
	for (size_t i = 0; i < b->nchunks; i++)
		if (b->state[i] == BODY_INFLATED)
			n += i + 1 < b->nchunks ? INDEX_CHUNK :
			     b->size - i * INDEX_CHUNK;
	return n;
}

void hist_body_free(struct hist_body *b)
{
	if (!b)
		return;
	if (b->mapped)
		munmap(b->p, b->size + 1);
	else
		free(b->p);
	drop_file(b);
	free(b->at);
	free(b->state);
	free(b);
}

struct hist_body *hist_body_whole(uint8_t *p, size_t size)
{
	struct hist_body *b = calloc(1, sizeof(*b));

	if (b) {
		b->p = p;
		b->size = size;
	}
	return b;
}

/* The body of the file of @size bytes at @data, behind header @hd, to
 * inflate a chunk at a time (the file is the body's from now on unless
 * the caller takes it back); NULL if its chunks do not add up to the
 * file (or out of memory). */
static struct hist_body *open_body(const struct index_header *hd,
				   uint8_t *data, size_t size, bool mapped)
{
	size_t left = size - sizeof(*hd), nchunks;
	struct hist_body *b;
	bool bad = false;
	void *p;

	if (hd->body_size >= SIZE_MAX / 2)
		return NULL;
	nchunks = chunk_count(hd->body_size);
	if (nchunks > left / sizeof(uint64_t))
		return NULL;
	left -= nchunks * sizeof(uint64_t);
	if (hd->body_size / INFLATE_RATIO_MAX > left ||
	    !(b = calloc(1, sizeof(*b))))
		return NULL;
	b->size = (size_t) hd->body_size;
	b->nchunks = nchunks;
	b->in = data + sizeof(*hd) + nchunks * sizeof(uint64_t);
	/* Pages of the body not inflated into are never touched. */
	p = mmap(NULL, b->size + 1, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b->p = p == MAP_FAILED ? NULL : p;
	b->mapped = true;
	b->at = malloc((nchunks + 1) * sizeof(*b->at));
	b->state = calloc(nchunks + 1, 1);
	if (!b->p || !b->at || !b->state) {
		b->mapped = b->p != NULL;
		hist_body_free(b);
		return NULL;
	}
	b->at[0] = 0;
	for (size_t i = 0; i < nchunks; i++) {
		uint64_t len;

		memcpy(&len, data + sizeof(*hd) + i * sizeof(len), sizeof(len));
		b->at[i + 1] = b->at[i] + len;
		if (len > left || b->at[i + 1] > left)
			bad = true;
	}
	if (bad || b->at[nchunks] != left) {
		hist_body_free(b);
		return NULL;
	}
	b->file = data;
	b->file_size = size;
	b->file_mapped = mapped;
	return b;
}

int hist_index_load(const struct hist_config *cfg, uint64_t key,
		    uint8_t *data, size_t size, bool mapped,
		    struct history **out)
{
	struct hist_rbuf r = { data, size, 0, false, NULL };
	struct index_header hd;
	struct hist_body *body;
	struct history *h;
	int err;

	hist_rbuf_get(&r, &hd, sizeof(hd));
	if (r.bad || memcmp(hd.magic, INDEX_MAGIC, sizeof(hd.magic)) ||
	    hd.layout != INDEX_LAYOUT || hd.key != key ||
	    hd.trace_size != cfg->size ||
	    (hd.flags & ~(INDEX_CALLS | INDEX_TABLE)))
		return ptrr_fail(PTRR_ERR_BUNDLE, "the saved index is of "
				 "another trace or another ptrr");
	if (!(body = open_body(&hd, data, size, mapped)))
		return ptrr_fail(PTRR_ERR_BUNDLE, "the saved index is "
				 "damaged (its chunks do not add up)");
	if (!(h = calloc(1, sizeof(*h)))) {
		body->file = NULL;
		hist_body_free(body);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	r = (struct hist_rbuf) { body->p, hd.body_size, 0, false, body };
	h->cfg = *cfg;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->ahead_done, NULL);
	h->size = hd.size;
	h->ninsn = hd.ninsn;
	h->skipped_prefix = hd.skipped_prefix;
	h->from_index = true;
	h->from_table = hd.flags & INDEX_TABLE;
	if (!read_segments(h, &r, &hd))
		err = ptrr_fail(PTRR_ERR_BUNDLE, "the saved index does not "
				"hold together");
	else
		err = hd.flags & INDEX_CALLS ? hist_calls_load(h, &r) : 0;
	if (!err && r.off != r.n)
		err = ptrr_fail(PTRR_ERR_BUNDLE, "the saved index has %zu "
				"bytes too many", r.n - r.off);
	if (err)
		body->file = NULL;	/* the caller's again */
	hist_body_free(r.body);	/* unless the call segments keep it */
	if (err) {
		hist_close(h);
		return err;
	}
	*out = h;
	return 0;
}
