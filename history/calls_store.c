/* The compact storage of a history's function-call segments (calls.c
 * builds them): about 5 bytes a segment on gdb-like traces, against 24
 * for the struct call_rec calls.c works on and 56 for a struct hist_call.
 *
 * Segments are kept in blocks of CALL_STRIDE, each block encoded as one
 * byte string.  A segment's id is its index + 1 and its last entry is the
 * next one's first - 1, so neither is stored.  Each segment is two bytes
 * and a few varints.  The first byte holds its flags and its level's
 * change from the segment before (a varint follows when the change is
 * beyond +-3).  The second says which links have their usual value: up
 * the segment before (a call), inst itself (a new instance), no next;
 * and holds its first entry's offset from the segment before's if small
 * (a varint follows if not).  The other links follow as varints of their
 * distance from the segment's own id (link_code), and then the number of
 * its function.  Functions are numbered in a table of their addresses.
 * A first entry more than 4G entries after its block's (call_rec.off) is
 * kept in a side table.
 *
 * calls.c reads and changes segments decoded: an LRU cache of
 * CALL_CACHE_SLOTS decoded blocks holds the pass's working set (the
 * newest blocks, and its callers' up the stack), and a block that was
 * changed is encoded again when it leaves the cache or when the pass
 * ends (call_store_flush).  Reading a flushed store never allocates.
 *
 * A mark (call_store_mark) records how many segments there are and, from
 * then on, the old value of every segment changed, so that
 * call_store_rollback can put the store back as it was at the mark: calls.c
 * marks where the entries hist_extend() may decode again begin. */
#include "history_internal.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(CALL_CACHE_SLOTS <= 127, "call_block.slot is an int8_t");

/* The most bytes one segment takes encoded: two bytes, 5 for each of the
 * level change, the offset and the three links (each less than 2^35), 4
 * for the function number. */
#define REC_CODE_MAX 31
#define BLOCK_CODE_MAX (CALL_STRIDE * REC_CODE_MAX)
_Static_assert(BLOCK_CODE_MAX <= UINT16_MAX, "call_block.len is 16 bits");

/* The level change in the flags byte: LEVEL_BIAS + the change, or
 * LEVEL_ESCAPE and a varint. */
#define LEVEL_SHIFT 5
#define LEVEL_BIAS 3
#define LEVEL_ESCAPE 7

/* The second byte: links with their usual value (not stored), and the
 * first entry's offset from the segment before's, or OFF_ESCAPE and a
 * varint. */
#define SHAPE_UP_PREV	0x1	/* up is the segment before */
#define SHAPE_INST_SELF	0x2	/* inst is the segment itself */
#define SHAPE_NO_NEXT	0x4	/* next is 0 */
#define OFF_SHIFT 3
#define OFF_ESCAPE 31

/* A grown array: *@v (elements of @size bytes) made room for @need. */
static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 256;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*v, c * size);
	if (!p)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	*v = p;
	*cap = c;
	return 0;
}

/* A hash of function address @a. */
static size_t func_hash(uint64_t a)
{
	return (size_t) ((a * 0x9e3779b97f4a7c15ull) >> 32);
}

/* Rebuilds the hash slots of @s's functions at twice the size, or more
 * until they are at most half full. */
static int rehash(struct call_store *s)
{
	size_t n = s->nslots ? 2 * s->nslots : 1024;
	uint32_t *slots;

	while (n < 2 * (s->nfuncs + 1))
		n *= 2;
	if (!(slots = calloc(n, sizeof(*slots))))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < s->nfuncs; i++) {
		size_t k = func_hash(s->funcs[i]) & (n - 1);

		while (slots[k])
			k = (k + 1) & (n - 1);
		slots[k] = (uint32_t) i + 1;
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = n;
	return 0;
}

/* The number of function address @a in @s, added if new; or a negative
 * error. */
static int64_t func_number(struct call_store *s, uint64_t a)
{
	size_t k;
	int err;

	if (2 * (s->nfuncs + 1) > s->nslots && (err = rehash(s)))
		return err;
	for (k = func_hash(a) & (s->nslots - 1); s->slots[k];
	     k = (k + 1) & (s->nslots - 1))
		if (s->funcs[s->slots[k] - 1] == a)
			return s->slots[k] - 1;
	if (s->nfuncs > CALL_FN_MASK)
		return ptrr_fail(PTRR_ERR_NOMEM, "more than %u functions in "
				 "the call segments", CALL_FN_MASK + 1);
	if ((err = grow((void **) &s->funcs, &s->capfuncs, s->nfuncs + 1,
			sizeof(*s->funcs))))
		return err;
	s->funcs[s->nfuncs] = a;
	s->slots[k] = (uint32_t) ++s->nfuncs;
	return s->nfuncs - 1;
}

/* ---- encoding ---- */

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (uint8_t) (v | 0x80);
	*p++ = (uint8_t) v;
	return p;
}

/* The varint at @p, ending before @end, into *@v; returns its end, or
 * NULL if it runs past @end or beyond 64 bits (only a saved index read
 * back can hold such bytes). */
static const uint8_t *get_varint(const uint8_t *p, const uint8_t *end,
				 uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;

	for (; p < end && *p & 0x80 && shift < 63; shift += 7)
		x |= (uint64_t) (*p++ & 0x7f) << shift;
	if (p == end || *p & 0x80)
		return NULL;
	*v = x | (uint64_t) *p++ << shift;
	return p;
}

/* @v with its sign in the low bit: small magnitudes stay small. */
static uint64_t zigzag(int64_t v)
{
	return v < 0 ? ~((uint64_t) v << 1) : (uint64_t) v << 1;
}

static int64_t unzigzag(uint64_t u)
{
	return u & 1 ? -(int64_t) (u >> 1) - 1 : (int64_t) (u >> 1);
}

/* Link @v (a segment id, 0 for none) of segment @id, as a small number:
 * 0 for none, 1 for @id itself, else the zigzag distance + 1. */
static uint64_t link_code(uint32_t id, uint32_t v)
{
	return v ? zigzag((int64_t) id - v) + 1 : 0;
}

/* The inverse of link_code(), in unsigned arithmetic: a saved index read
 * back may hold any distance, and what is not a segment id is refused
 * later (block_ok()). */
static uint32_t link_of(uint32_t id, uint64_t code)
{
	return code ? (uint32_t) (id - (uint64_t) unzigzag(code - 1)) : 0;
}

/* Encodes segment @r, of id @id and following @prev in its block, at @p;
 * returns the end of its code. */
static uint8_t *encode_rec(uint8_t *p, const struct call_rec *r,
			   const struct call_rec *prev, uint32_t id)
{
	int64_t dl = (int64_t) r->level - prev->level;
	unsigned lc = dl >= -LEVEL_BIAS && dl <= LEVEL_BIAS ?
		      (unsigned) (dl + LEVEL_BIAS) : LEVEL_ESCAPE;
	uint32_t off = r->off - prev->off;
	unsigned shape = (r->up == id - 1 ? SHAPE_UP_PREV : 0) |
			 (r->inst == id ? SHAPE_INST_SELF : 0) |
			 (r->next ? 0 : SHAPE_NO_NEXT) |
			 (off < OFF_ESCAPE ? off : OFF_ESCAPE) << OFF_SHIFT;

	*p++ = (uint8_t) (r->fn >> CALL_FN_BITS | lc << LEVEL_SHIFT);
	*p++ = (uint8_t) shape;
	if (lc == LEVEL_ESCAPE)
		p = put_varint(p, zigzag(dl));
	if (off >= OFF_ESCAPE)
		p = put_varint(p, off);
	if (!(shape & SHAPE_UP_PREV))
		p = put_varint(p, link_code(id, r->up));
	if (!(shape & SHAPE_INST_SELF))
		p = put_varint(p, link_code(id, r->inst));
	if (!(shape & SHAPE_NO_NEXT))
		p = put_varint(p, link_code(id, r->next));
	return put_varint(p, r->fn & CALL_FN_MASK);
}

/* The varint at *@p, moving *@p past it; 0 and *@p NULL if it runs
 * past @end. */
static uint64_t varint_at(const uint8_t **p, const uint8_t *end)
{
	uint64_t x = 0;

	if (*p)
		*p = get_varint(*p, end, &x);
	return x;
}

/* Decodes the segment of id @id following @prev at @p (its code ends
 * before @end) into @r; returns the end of its code, or NULL if it runs
 * past @end. */
static const uint8_t *decode_rec(const uint8_t *p, const uint8_t *end,
				 struct call_rec *r,
				 const struct call_rec *prev, uint32_t id)
{
	unsigned lc, shape, off;
	uint32_t flags;

	if (end - p < 2)
		return NULL;
	lc = p[0] >> LEVEL_SHIFT;
	shape = p[1];
	flags = p[0] & ((1u << LEVEL_SHIFT) - 1);
	off = shape >> OFF_SHIFT;
	p += 2;
	r->level = (int32_t) ((uint64_t) (int64_t) prev->level +
			      (uint64_t) (lc == LEVEL_ESCAPE ?
					  unzigzag(varint_at(&p, end)) :
					  (int64_t) lc - LEVEL_BIAS));
	r->off = prev->off + (uint32_t) (off == OFF_ESCAPE ?
					  varint_at(&p, end) : off);
	r->up = shape & SHAPE_UP_PREV ? id - 1 :
		link_of(id, varint_at(&p, end));
	r->inst = shape & SHAPE_INST_SELF ? id :
		  link_of(id, varint_at(&p, end));
	r->next = shape & SHAPE_NO_NEXT ? 0 :
		  link_of(id, varint_at(&p, end));
	r->fn = (uint32_t) varint_at(&p, end) | flags << CALL_FN_BITS;
	return p;
}

/* ---- the cache of decoded blocks ---- */

/* The number of segments in block @k of @s. */
static size_t block_count(const struct call_store *s, size_t k)
{
	size_t n = s->n - k * CALL_STRIDE;

	return n < CALL_STRIDE ? n : CALL_STRIDE;
}

/* True if @code lies in the body @s was read from (call_store_load):
 * not to be freed or reallocated on its own. */
static bool code_saved(const struct call_store *s, const uint8_t *code)
{
	return code && s->body && code >= s->body->p &&
	       code < s->body->p + s->body->size;
}

/* Frees the code of block @b unless it is in the saved buffer. */
static void code_free(const struct call_store *s, struct call_block *b)
{
	if (!code_saved(s, b->code))
		free(b->code);
	b->code = NULL;
}

/* Encodes the block in cache slot @c again if it changed.  Out of
 * memory, the block keeps its old code and s->lost says so. */
static void write_back(struct call_store *s, struct call_slot *c)
{
	struct call_block *b = &s->blocks[c->block];
	size_t n = block_count(s, c->block), len;
	uint32_t id = (uint32_t) (c->block * CALL_STRIDE) + 1;
	static const struct call_rec none;
	uint8_t buf[BLOCK_CODE_MAX], *end = buf, *code;

	if (!c->dirty)
		return;
	c->dirty = false;
	for (size_t j = 0; j < n; j++)
		end = encode_rec(end, &c->rec[j], j ? &c->rec[j - 1] : &none,
				 id + (uint32_t) j);
	len = (size_t) (end - buf);
	code = code_saved(s, b->code) ? malloc(len) : realloc(b->code, len);
	if (!code) {
		s->lost = true;
		return;
	}
	memcpy(code, buf, len);
	s->code_bytes += len - b->len;
	b->code = code;
	b->len = (uint16_t) len;
	b->ncode = (uint8_t) n;
}

/* Decodes block @k of @s into cache slot @c (segments beyond its code,
 * which only a lost write_back leaves, read as zeros: no links). */
static void read_block(struct call_store *s, size_t k, struct call_slot *c)
{
	const struct call_block *b = &s->blocks[k];
	const uint8_t *p = b->code, *end = p ? p + b->len : p;
	uint32_t id = (uint32_t) (k * CALL_STRIDE) + 1;
	static const struct call_rec none;

	/* The code is ours, or was checked when read back (call_store_load):
	 * p never becomes NULL. */
	for (size_t j = 0; j < b->ncode; j++)
		p = decode_rec(p, end, &c->rec[j], j ? &c->rec[j - 1] : &none,
			       id + (uint32_t) j);
	memset(c->rec + b->ncode, 0,
	       (CALL_STRIDE - b->ncode) * sizeof(*c->rec));
	c->block = k;
	c->dirty = false;
}

static bool block_ok(const struct call_store *s, size_t k);

/* Inflates and checks block @k of @s, read back and not used until now:
 * a block that fails reads as no segments, and s->damaged says so. */
static void fetch_block(struct call_store *s, size_t k)
{
	struct call_block *b = &s->blocks[k];

	b->lazy = false;
	if (!hist_body_fetch(s->body, (size_t) (b->code - s->body->p),
			     b->len) || !block_ok(s, k)) {
		s->damaged = true;
		b->ncode = 0;
	}
}

/* The slot to reuse: a free one, else the least recently used. */
static struct call_slot *victim(struct call_store *s)
{
	struct call_slot *v = &s->cache[0];

	for (size_t j = 0; j < CALL_CACHE_SLOTS; j++) {
		struct call_slot *c = &s->cache[j];

		if (c->block == SIZE_MAX)
			return c;
		if (c->use < v->use)
			v = c;
	}
	return v;
}

/* The cache slot holding block @k of @s, decoded now if it was not. */
static struct call_slot *slot_of(struct call_store *s, size_t k)
{
	struct call_block *b = &s->blocks[k];
	struct call_slot *c;

	if (b->slot >= 0) {
		c = &s->cache[b->slot];
	} else {
		if (b->lazy)
			fetch_block(s, k);
		c = victim(s);
		if (c->block != SIZE_MAX) {
			write_back(s, c);
			s->blocks[c->block].slot = -1;
		}
		read_block(s, k, c);
		b->slot = (int8_t) (c - s->cache);
	}
	c->use = ++s->clock;
	return c;
}

/* Empties cache slot @c, dropping what it holds. */
static void slot_drop(struct call_store *s, struct call_slot *c)
{
	if (c->block != SIZE_MAX)
		s->blocks[c->block].slot = -1;
	c->block = SIZE_MAX;
	c->dirty = false;
}

/* The cache of @s, made empty the first time. */
static int make_cache(struct call_store *s)
{
	if (s->cache)
		return 0;
	s->cache = malloc(CALL_CACHE_SLOTS * sizeof(*s->cache));
	if (!s->cache)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t j = 0; j < CALL_CACHE_SLOTS; j++)
		s->cache[j] = (struct call_slot) { .block = SIZE_MAX };
	return 0;
}

/* ---- segments ---- */

/* Starts block @k of @s at entry @first. */
static int new_block(struct call_store *s, size_t k, uint64_t first)
{
	int err = grow((void **) &s->blocks, &s->capblocks, k + 1,
		       sizeof(*s->blocks));

	if (!err)
		s->blocks[k] = (struct call_block) { .first = first,
						     .slot = -1 };
	return err;
}

int call_store_push(struct call_store *s, uint64_t first, uint64_t func,
		    uint32_t flags)
{
	size_t i = s->n, k = i / CALL_STRIDE;
	int64_t fn = func_number(s, func);
	struct call_slot *c;
	uint64_t off;
	int err;

	if (fn < 0)
		return (int) fn;
	if (i >= UINT32_MAX - 1)
		return ptrr_fail(PTRR_ERR_NOMEM, "more than 4G call segments");
	if ((err = make_cache(s)) ||
	    (i % CALL_STRIDE == 0 && (err = new_block(s, k, first))))
		return err;
	off = first - s->blocks[k].first;
	if (off >= UINT32_MAX) {
		if ((err = grow((void **) &s->far, &s->capfar, s->nfar + 1,
				sizeof(*s->far))))
			return err;
		s->far[s->nfar++] = (struct call_far) { i, first };
		off = UINT32_MAX;
	}
	c = slot_of(s, k);
	c->rec[i % CALL_STRIDE] = (struct call_rec) {
		.off = (uint32_t) off, .fn = (uint32_t) fn |
					      flags << CALL_FN_BITS };
	c->dirty = true;
	s->n++;
	return 0;
}

struct call_rec call_store_get(struct call_store *s, uint32_t id)
{
	return slot_of(s, (id - 1) / CALL_STRIDE)->rec[(id - 1) %
						       CALL_STRIDE];
}

uint64_t call_store_first(struct call_store *s, uint32_t id)
{
	size_t i = id - 1, lo = 0, hi = s->nfar;
	uint32_t off = call_store_get(s, id).off;

	if (off != UINT32_MAX)
		return s->blocks[i / CALL_STRIDE].first + off;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->far[mid].i <= i)
			lo = mid;
		else
			hi = mid;
	}
	return s->far[lo].first;
}

uint64_t call_store_func(const struct call_store *s, const struct call_rec *r)
{
	return s->funcs[r->fn & CALL_FN_MASK];
}

struct call_rec *call_store_mut(struct call_store *s, uint32_t id)
{
	struct call_slot *c = slot_of(s, (id - 1) / CALL_STRIDE);
	struct call_rec *r = &c->rec[(id - 1) % CALL_STRIDE];

	if (s->marking && id <= s->mark_n) {
		if (grow((void **) &s->undo, &s->capundo, s->nundo + 1,
			 sizeof(*s->undo)))
			s->undo_lost = true;
		else
			s->undo[s->nundo++] = (struct call_undo) { id, *r };
	}
	c->dirty = true;
	return r;
}

uint32_t call_store_find(struct call_store *s, uint64_t number)
{
	size_t lo = 0, hi = (s->n + CALL_STRIDE - 1) / CALL_STRIDE, i, end;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->blocks[mid].first <= number)
			lo = mid;
		else
			hi = mid;
	}
	i = lo * CALL_STRIDE;
	end = i + block_count(s, lo);
	while (i + 1 < end && call_store_first(s, (uint32_t) i + 2) <= number)
		i++;
	return (uint32_t) i + 1;
}

int call_store_flush(struct call_store *s)
{
	for (size_t j = 0; s->cache && j < CALL_CACHE_SLOTS; j++)
		if (s->cache[j].block != SIZE_MAX)
			write_back(s, &s->cache[j]);
	if (s->lost)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return 0;
}

void call_store_mark(struct call_store *s)
{
	s->marking = true;
	s->undo_lost = false;
	s->nundo = 0;
	s->mark_n = s->n;
	s->mark_nfar = s->nfar;
}

/* Drops the segments of @s from index @n on (the code of the block that
 * keeps some may hold more: they are not read, and pushes replace
 * them). */
static void truncate_to(struct call_store *s, size_t n)
{
	size_t keep = (n + CALL_STRIDE - 1) / CALL_STRIDE;

	for (size_t k = keep; k * CALL_STRIDE < s->n; k++) {
		struct call_block *b = &s->blocks[k];

		if (b->slot >= 0)
			slot_drop(s, &s->cache[b->slot]);
		s->code_bytes -= b->len;
		code_free(s, b);
	}
	s->n = n;
}

int call_store_rollback(struct call_store *s)
{
	if (!s->marking || s->undo_lost || s->lost)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory (the call "
				 "segments cannot be brought up to date)");
	while (s->nundo) {
		const struct call_undo *u = &s->undo[--s->nundo];
		struct call_slot *c = slot_of(s, (u->id - 1) / CALL_STRIDE);

		c->rec[(u->id - 1) % CALL_STRIDE] = u->rec;
		c->dirty = true;
	}
	truncate_to(s, s->mark_n);
	s->nfar = s->mark_nfar;
	s->marking = false;
	return call_store_flush(s);
}

size_t call_store_bytes(const struct call_store *s)
{
	return s->code_bytes +
	       s->capblocks * sizeof(*s->blocks) +
	       (s->cache ? CALL_CACHE_SLOTS * sizeof(*s->cache) : 0) +
	       s->capfar * sizeof(*s->far) +
	       s->capfuncs * sizeof(*s->funcs) +
	       s->nslots * sizeof(*s->slots) +
	       s->capundo * sizeof(*s->undo);
}

void call_store_fini(struct call_store *s)
{
	for (size_t k = 0; k * CALL_STRIDE < s->n; k++)
		code_free(s, &s->blocks[k]);
	hist_body_free(s->body);
	free(s->blocks);
	free(s->cache);
	free(s->far);
	free(s->funcs);
	free(s->slots);
	free(s->undo);
	memset(s, 0, sizeof(*s));
}

/* ---- saved with the index (index_file.c) ---- */

/* A block as saved: its first entry, then the lengths of its code. */
struct saved_block {
	uint64_t first;
	uint32_t len;
	uint32_t ncode;
};

int call_store_save(struct call_store *s, int32_t min_level,
		    struct hist_wbuf *w)
{
	size_t nblocks = (s->n + CALL_STRIDE - 1) / CALL_STRIDE;
	uint64_t counts[4] = { s->n, s->nfuncs, s->nfar,
			       (uint64_t) (int64_t) min_level };

	/* A store read back has its code inflated now, on all cores. */
	if (s->body)
		hist_body_fetch(s->body, 0, s->body->size);
	for (size_t k = 0; k < nblocks; k++)
		if (s->blocks[k].lazy)
			fetch_block(s, k);
	if (s->damaged)
		return ptrr_fail(PTRR_ERR_BUNDLE, "the saved call segments "
				 "are damaged");
	hist_wbuf_put(w, counts, sizeof(counts));
	hist_wbuf_put(w, s->funcs, s->nfuncs * sizeof(*s->funcs));
	for (size_t i = 0; i < s->nfar; i++) {
		uint64_t far[2] = { s->far[i].i, s->far[i].first };

		hist_wbuf_put(w, far, sizeof(far));
	}
	for (size_t k = 0; k < nblocks; k++) {
		struct saved_block sb = { s->blocks[k].first, s->blocks[k].len,
					  s->blocks[k].ncode };

		hist_wbuf_put(w, &sb, sizeof(sb));
	}
	for (size_t k = 0; k < nblocks; k++)
		hist_wbuf_put(w, s->blocks[k].code, s->blocks[k].len);
	return 0;
}

/* The index in @s's far table of the first entry for segment index @i
 * or a later one (the table goes up, checked as it is read). */
static size_t far_from(const struct call_store *s, size_t i)
{
	size_t lo = 0, hi = s->nfar;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->far[mid].i < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first entry of segment @i (0-based) of block @k, whose record is
 * @r, from the far table of @s (*@far: the next entry of it to use); 0
 * if @r says the far table has it and it does not. */
static uint64_t first_read(const struct call_store *s, size_t k, size_t i,
			   const struct call_rec *r, size_t *far)
{
	if (r->off != UINT32_MAX)
		return s->blocks[k].first + r->off;
	if (*far >= s->nfar || s->far[*far].i != i)
		return 0;
	return s->far[(*far)++].first;
}

/* Checks block @k of @s, read back, its code inflated: the code decodes
 * to exactly its segments, whose links and function numbers lie in the
 * store, whose levels are not below the lowest saved, and whose first
 * entries go up from the block's own first (the table's) to before the
 * next block's (the table was checked to go up: so they go up across
 * all blocks) or at most to the history's last entry; the far table's
 * entries for its segments are all used. */
static bool block_ok(const struct call_store *s, size_t k)
{
	const struct call_block *b = &s->blocks[k];
	const uint8_t *p = b->code, *end = p ? p + b->len : p;
	size_t far = far_from(s, k * CALL_STRIDE);
	uint64_t limit = (k + 1) * CALL_STRIDE < s->n ?
			 s->blocks[k + 1].first - 1 : s->entries, f = 0;
	struct call_rec r[CALL_STRIDE];
	static const struct call_rec none;

	if (b->ncode != block_count(s, k))
		return false;
	for (size_t j = 0; j < b->ncode; j++) {
		size_t i = k * CALL_STRIDE + j;
		uint64_t prev = f;

		p = decode_rec(p, end, &r[j], j ? &r[j - 1] : &none,
			       (uint32_t) i + 1);
		if (!p || (r[j].fn & CALL_FN_MASK) >= s->nfuncs ||
		    r[j].up > s->n || r[j].next > s->n || !r[j].inst ||
		    r[j].inst > s->n || r[j].level < s->min_level)
			return false;
		f = first_read(s, k, i, &r[j], &far);
		if ((j ? f <= prev : f != b->first) || f > limit)
			return false;
	}
	return p == end && far == far_from(s, (k + 1) * CALL_STRIDE);
}

/* Reads the table of @nblocks blocks of @s from @r: their first entries
 * go up from 1 to at most the history's last, and their lengths fit. */
static bool read_blocks(struct call_store *s, struct hist_rbuf *r,
			size_t nblocks)
{
	const uint8_t *t = hist_rbuf_take(r, nblocks *
					     sizeof(struct saved_block));

	for (size_t k = 0; t && k < nblocks; k++) {
		struct saved_block sb;

		memcpy(&sb, t + k * sizeof(sb), sizeof(sb));
		if (sb.len > BLOCK_CODE_MAX || sb.ncode != block_count(s, k) ||
		    (k ? sb.first <= s->blocks[k - 1].first : sb.first != 1) ||
		    sb.first > s->entries)
			return false;
		s->blocks[k] = (struct call_block) { .first = sb.first,
			.len = (uint16_t) sb.len, .ncode = (uint8_t) sb.ncode,
			.slot = -1, .lazy = true };
	}
	return t != NULL;
}

int call_store_load(struct call_store *s, struct hist_rbuf *r,
		    uint64_t entries, int32_t *min_level)
{
	uint64_t counts[4];
	size_t nblocks;
	int err = 0;

	memset(s, 0, sizeof(*s));
	hist_rbuf_get(r, counts, sizeof(counts));
	if (r->bad || !r->body || counts[0] >= UINT32_MAX - 1 ||
	    counts[0] > entries || counts[1] > CALL_FN_MASK + 1ull ||
	    counts[1] > r->n / 8 || counts[2] > counts[0] ||
	    counts[2] > r->n / 16 || (int64_t) counts[3] > 0 ||
	    (int64_t) counts[3] < INT32_MIN)
		return ptrr_fail(PTRR_ERR_BUNDLE, "bad call segment counts");
	nblocks = (counts[0] + CALL_STRIDE - 1) / CALL_STRIDE;
	if (nblocks > r->n / sizeof(struct saved_block))
		return ptrr_fail(PTRR_ERR_BUNDLE, "bad call segment counts");
	s->n = counts[0];
	s->entries = entries;
	s->min_level = (int32_t) (int64_t) counts[3];
	if ((err = grow((void **) &s->funcs, &s->capfuncs, counts[1] + 1,
			sizeof(*s->funcs))) ||
	    (err = grow((void **) &s->far, &s->capfar, counts[2] + 1,
			sizeof(*s->far))) ||
	    (err = grow((void **) &s->blocks, &s->capblocks, nblocks + 1,
			sizeof(*s->blocks))) ||
	    (err = make_cache(s)))
		goto fail;
	s->nfuncs = counts[1];
	hist_rbuf_get(r, s->funcs, s->nfuncs * sizeof(*s->funcs));
	for (size_t i = 0; i < counts[2]; i++) {
		uint64_t v[2];

		hist_rbuf_get(r, v, sizeof(v));
		if (v[0] >= s->n || (i && v[0] <= s->far[i - 1].i))
			r->bad = true;
		s->far[s->nfar++] = (struct call_far) { v[0], v[1] };
	}
	if (!r->bad && !read_blocks(s, r, nblocks))
		r->bad = true;
	/* The blocks' code stays where it lies in the body, inflated when
	 * first read: hundreds of megabytes in a long recording. */
	for (size_t k = 0; k < nblocks && !r->bad; k++) {
		s->blocks[k].code = (uint8_t *) hist_rbuf_skip(r,
							s->blocks[k].len);
		s->code_bytes += s->blocks[k].len;
	}
	s->body = r->body;
	/* The last block now: a question about the end comes first. */
	if (!r->bad && nblocks)
		fetch_block(s, nblocks - 1);
	if (!r->bad && !s->damaged && !(err = rehash(s))) {
		r->body = NULL;
		*min_level = s->min_level;
		return 0;
	}
	if (!err)
		err = ptrr_fail(PTRR_ERR_BUNDLE, "the call segments do not "
				"hold together");
fail:
	s->body = NULL;		/* still the reader's */
	s->n = 0;
	call_store_fini(s);
	return err;
}

size_t call_store_inflated(const struct call_store *s)
{
	return s->body ? hist_body_inflated(s->body) : 0;
}
