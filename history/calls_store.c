/* The compact storage of a history's function-call segments (calls.c
 * builds them): 24 bytes a segment, against 56 for a struct hist_call.
 *
 * A segment's id is its index + 1 and its last entry is the next one's
 * first - 1, so neither is stored.  Its first entry is kept as a 32-bit
 * offset from the first entry of its block of STRIDE segments (the block
 * bases also serve the binary search of call_store_find); an offset that
 * does not fit is kept in a side table.  Functions are numbered in a
 * table of their addresses, and the number shares a word with the flags.
 *
 * A mark (call_store_mark) records how many segments there are and, from
 * then on, the old value of every segment changed, so that
 * call_store_rollback can put the store back as it was at the mark: calls.c
 * marks where the entries hist_extend() may decode again begin. */
#include "history_internal.h"

#include <stdlib.h>
#include <string.h>

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

/* Rebuilds the hash slots of @s's functions at twice the size. */
static int rehash(struct call_store *s)
{
	size_t n = s->nslots ? 2 * s->nslots : 1024;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
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

/* Makes room in @s for segment index @i: a new chunk when it starts
 * one, not a copy of what is there. */
static int reserve(struct call_store *s, size_t i)
{
	size_t k = i >> CALL_CHUNK_BITS;
	int err;

	if (k < s->nchunks)
		return 0;
	if ((err = grow((void **) &s->chunks, &s->capchunks, k + 1,
			sizeof(*s->chunks))))
		return err;
	s->chunks[k] = malloc(sizeof(struct call_rec) << CALL_CHUNK_BITS);
	if (!s->chunks[k])
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	s->nchunks = k + 1;
	return 0;
}

int call_store_push(struct call_store *s, uint64_t first, uint64_t func,
		    uint32_t flags)
{
	size_t i = s->n;
	int64_t fn = func_number(s, func);
	uint64_t off;
	int err;

	if (fn < 0)
		return (int) fn;
	if (i >= UINT32_MAX - 1)
		return ptrr_fail(PTRR_ERR_NOMEM, "more than 4G call segments");
	if ((err = reserve(s, i)) ||
	    (err = grow((void **) &s->base, &s->capbase, i / CALL_STRIDE + 1,
			sizeof(*s->base))))
		return err;
	if (i % CALL_STRIDE == 0)
		s->base[i / CALL_STRIDE] = first;
	off = first - s->base[i / CALL_STRIDE];
	if (off >= UINT32_MAX) {
		if ((err = grow((void **) &s->far, &s->capfar, s->nfar + 1,
				sizeof(*s->far))))
			return err;
		s->far[s->nfar++] = (struct call_far) { i, first };
		off = UINT32_MAX;
	}
	*call_store_rec(s, i) = (struct call_rec) { .off = (uint32_t) off,
				      .fn = (uint32_t) fn |
					    flags << CALL_FN_BITS };
	s->n++;
	return 0;
}

uint64_t call_store_first(const struct call_store *s, size_t i)
{
	size_t lo = 0, hi = s->nfar;

	uint32_t off = call_store_rec(s, i)->off;

	if (off != UINT32_MAX)
		return s->base[i / CALL_STRIDE] + off;
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
	struct call_rec *r = call_store_rec(s, id - 1);

	if (s->marking && id <= s->mark_n) {
		if (grow((void **) &s->undo, &s->capundo, s->nundo + 1,
			 sizeof(*s->undo))) {
			s->undo_lost = true;
			return r;
		}
		s->undo[s->nundo++] = (struct call_undo) { id, *r };
	}
	return r;
}

size_t call_store_find(const struct call_store *s, uint64_t number)
{
	size_t lo = 0, hi = (s->n + CALL_STRIDE - 1) / CALL_STRIDE, i, end;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->base[mid] <= number)
			lo = mid;
		else
			hi = mid;
	}
	i = lo * CALL_STRIDE;
	end = i + CALL_STRIDE < s->n ? i + CALL_STRIDE : s->n;
	while (i + 1 < end && call_store_first(s, i + 1) <= number)
		i++;
	return i;
}

void call_store_mark(struct call_store *s)
{
	s->marking = true;
	s->undo_lost = false;
	s->nundo = 0;
	s->mark_n = s->n;
	s->mark_nfar = s->nfar;
}

int call_store_rollback(struct call_store *s)
{
	if (!s->marking || s->undo_lost)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory (the call "
				 "segments cannot be brought up to date)");
	while (s->nundo) {
		s->nundo--;
		*call_store_rec(s, s->undo[s->nundo].id - 1) =
			s->undo[s->nundo].rec;
	}
	s->n = s->mark_n;
	s->nfar = s->mark_nfar;
	s->marking = false;
	return 0;
}

size_t call_store_bytes(const struct call_store *s)
{
	return s->nchunks * (sizeof(struct call_rec) << CALL_CHUNK_BITS) +
	       s->capchunks * sizeof(*s->chunks) +
	       s->capbase * sizeof(*s->base) +
	       s->capfar * sizeof(*s->far) +
	       s->capfuncs * sizeof(*s->funcs) +
	       s->nslots * sizeof(*s->slots) +
	       s->capundo * sizeof(*s->undo);
}

void call_store_fini(struct call_store *s)
{
	for (size_t k = 0; k < s->nchunks; k++)
		free(s->chunks[k]);
	free(s->chunks);
	free(s->base);
	free(s->far);
	free(s->funcs);
	free(s->slots);
	free(s->undo);
	memset(s, 0, sizeof(*s));
}
