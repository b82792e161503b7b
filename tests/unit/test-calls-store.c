/* Unit tests of the compact storage of call segments
 * (history/calls_store.c): a long store, thousands of blocks, built and
 * changed the way calls.c does, read back segment by segment against a
 * reference kept the old way, as a plain array of struct call_rec.
 *
 * The segments mimic a real pass (levels that go up and down by one,
 * callers and instance pieces nearby, a few functions called often) with
 * the rare cases mixed in: links far back and forward, big level jumps,
 * first entries more than 4G apart, many functions.  Old segments are
 * changed late (a return that fixes the links of segments made long
 * before) while the cache holds other blocks, and a mark and rollback
 * must put back both old segments and the count.
 */
#include "history_internal.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* The reference: what the store must read back. */
struct ref {
	struct call_rec *v;	/* by index */
	uint64_t *first;	/* first entry, by index */
	uint64_t *func;		/* function address, by index */
	size_t n;
};

static uint64_t rnd_state = 88172645463325252ull;

/* A xorshift step. */
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* True with probability @per_mille / 1000. */
static bool chance(unsigned per_mille)
{
	return rnd() % 1000 < per_mille;
}

/* An id among the first @n segments, most of the time one of the 40
 * before @id. */
static uint32_t some_id(uint32_t id, size_t n)
{
	if (chance(900) && id > 1)
		return id - 1 - (uint32_t) (rnd() % (id - 1 < 40 ? id - 1 :
						     40));
	return (uint32_t) (1 + rnd() % n);
}

/* The next segment's fields after @r's last, as calls.c would set them;
 * @first and @func of the new segment. */
static struct call_rec next_rec(const struct ref *r, uint64_t *first,
				uint64_t *func)
{
	uint32_t id = (uint32_t) r->n + 1;
	const struct call_rec *p = r->n ? &r->v[r->n - 1] : NULL;
	struct call_rec c = { .inst = id };

	*first = (r->n ? r->first[r->n - 1] : 1) + 1 + rnd() % 40;
	if (chance(2))
		*first += (uint64_t) 5 << 30;	/* past 4G entries */
	*func = 0x400000 + 16 * (chance(950) ? rnd() % 50 : rnd() % 5000);
	c.level = p ? p->level + (int32_t) (rnd() % 3) - 1 : 0;
	if (chance(50))
		c.level += (int32_t) (rnd() % 11) - 5;
	if (chance(5))
		c.level += (int32_t) (rnd() % 2000) - 1000;
	if (p && chance(800))
		c.up = some_id(id, r->n);
	if (p && chance(200))
		c.inst = some_id(id, r->n);
	if (p && chance(5))
		c.up = id + 1 + (uint32_t) (rnd() % 100);	/* UP_RETURN */
	c.fn = (uint32_t) (rnd() % 32) << CALL_FN_BITS;
	return c;
}

/* Pushes one segment to @s and @r, setting its fields as calls.c does
 * (call_store_push, then call_store_mut). */
static void push_one(struct call_store *s, struct ref *r)
{
	uint64_t first, func;
	struct call_rec c = next_rec(r, &first, &func), *m;
	uint32_t id = (uint32_t) r->n + 1;
	uint32_t flags = c.fn >> CALL_FN_BITS;

	CHECK(call_store_push(s, first, func, flags) == 0);
	m = call_store_mut(s, id);
	c.off = m->off;
	c.fn = m->fn;
	m->level = c.level;
	m->up = c.up;
	m->inst = c.inst;
	r->v[r->n] = c;
	r->first[r->n] = first;
	r->func[r->n] = func;
	r->n++;
}

/* Changes segment @id in @s and @r (a late fix-up): a new next link, a
 * new up link or flags. */
static void change_one(struct call_store *s, struct ref *r, uint32_t id)
{
	struct call_rec *m = call_store_mut(s, id), *c = &r->v[id - 1];

	switch (rnd() % 3) {
	case 0:
		c->next = (uint32_t) (1 + rnd() % r->n);
		break;
	case 1:
		c->up = (uint32_t) (1 + rnd() % r->n);
		break;
	default:
		c->fn ^= (uint32_t) (1 + rnd() % 31) << CALL_FN_BITS;
		break;
	}
	*m = *c;
}

/* True if segment @id of @s reads back as @r has it. */
static bool same(struct call_store *s, const struct ref *r, uint32_t id)
{
	const struct call_rec *w = &r->v[id - 1];
	struct call_rec g = call_store_get(s, id);

	return g.level == w->level && g.up == w->up && g.inst == w->inst &&
	       g.next == w->next && g.fn == w->fn &&
	       call_store_first(s, id) == r->first[id - 1] &&
	       call_store_func(s, &g) == r->func[id - 1];
}

/* Checks every segment of @s against @r, and call_store_find on the
 * first and last entry of every segment. */
static void check_all(struct call_store *s, const struct ref *r)
{
	size_t bad = 0, badfind = 0;

	CHECK_EQ_U64(s->n, r->n);
	for (uint32_t id = 1; id <= r->n; id++) {
		uint64_t last = id < r->n ? r->first[id] - 1 :
			r->first[id - 1] + 5;

		if (!same(s, r, id))
			bad++;
		if (call_store_find(s, r->first[id - 1]) != id ||
		    call_store_find(s, last) != id)
			badfind++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(badfind, 0);
}

static void ref_init(struct ref *r, size_t cap)
{
	r->v = calloc(cap, sizeof(*r->v));
	r->first = calloc(cap, sizeof(*r->first));
	r->func = calloc(cap, sizeof(*r->func));
	r->n = 0;
}

static void ref_fini(struct ref *r)
{
	free(r->v);
	free(r->first);
	free(r->func);
}

#define NSEGS (3000 * CALL_STRIDE + 17)

/* Thousands of blocks, pushed and changed in random order, read back
 * after each phase (the reads themselves go through the cache too). */
static void test_long_store(void)
{
	struct call_store s = { 0 };
	struct ref r;

	ref_init(&r, NSEGS);
	while (r.n < NSEGS) {
		push_one(&s, &r);
		if (r.n > 1000 && chance(30))
			change_one(&s, &r, (uint32_t) (1 + rnd() % r.n));
		if (chance(1))
			(void) call_store_get(&s, (uint32_t) (1 + rnd() % r.n));
	}
	check_all(&s, &r);
	CHECK(call_store_flush(&s) == 0);
	check_all(&s, &r);
	/* Old segments changed long after: every block decoded, changed and
	 * encoded again. */
	for (uint32_t id = 1; id <= r.n; id += 7)
		change_one(&s, &r, id);
	CHECK(call_store_flush(&s) == 0);
	check_all(&s, &r);
	ref_fini(&r);
	call_store_fini(&s);
}

/* A mark, then pushes and changes of segments before and after it; the
 * rollback puts back the segments as they were at the mark and their
 * count, and pushing goes on from there. */
static void test_rollback(void)
{
	struct call_store s = { 0 };
	struct ref r, at_mark;
	size_t mark_n;

	ref_init(&r, NSEGS);
	ref_init(&at_mark, NSEGS);
	while (r.n < NSEGS / 2 + 5)
		push_one(&s, &r);
	CHECK(call_store_flush(&s) == 0);
	call_store_mark(&s);
	mark_n = r.n;
	memcpy(at_mark.v, r.v, r.n * sizeof(*r.v));
	memcpy(at_mark.first, r.first, r.n * sizeof(*r.first));
	memcpy(at_mark.func, r.func, r.n * sizeof(*r.func));
	at_mark.n = r.n;
	while (r.n < NSEGS) {
		push_one(&s, &r);
		if (chance(50))
			change_one(&s, &r, (uint32_t) (1 + rnd() % r.n));
		if (chance(20))	/* the same old segment twice */
			change_one(&s, &r, (uint32_t) (1 + rnd() % 100));
	}
	CHECK(call_store_flush(&s) == 0);
	check_all(&s, &r);
	CHECK(call_store_rollback(&s) == 0);
	CHECK_EQ_U64(s.n, mark_n);
	check_all(&s, &at_mark);
	while (at_mark.n < NSEGS)
		push_one(&s, &at_mark);
	check_all(&s, &at_mark);
	/* No mark any more: a second rollback fails. */
	CHECK(call_store_rollback(&s) < 0);
	ref_fini(&r);
	ref_fini(&at_mark);
	call_store_fini(&s);
}

/* A rollback to a mark at a block boundary, and to a mark on an empty
 * store. */
static void test_rollback_edges(void)
{
	struct call_store s = { 0 };
	struct call_rec keep;
	struct ref r;

	ref_init(&r, 4 * CALL_STRIDE);
	call_store_mark(&s);
	while (r.n < 2 * CALL_STRIDE)
		push_one(&s, &r);
	CHECK(call_store_rollback(&s) == 0);
	CHECK_EQ_U64(s.n, 0);
	r.n = 0;
	while (r.n < 2 * CALL_STRIDE)
		push_one(&s, &r);
	call_store_mark(&s);
	while (r.n < 4 * CALL_STRIDE - 3)
		push_one(&s, &r);
	keep = r.v[0];
	change_one(&s, &r, 1);
	CHECK(call_store_rollback(&s) == 0);
	r.n = 2 * CALL_STRIDE;
	r.v[0] = keep;
	check_all(&s, &r);
	ref_fini(&r);
	call_store_fini(&s);
}

/* Segments like a real pass's take a few bytes each. */
static void test_compact(void)
{
	struct call_store s = { 0 };
	struct ref r;
	size_t bytes;

	ref_init(&r, NSEGS);
	while (r.n < NSEGS)
		push_one(&s, &r);
	CHECK(call_store_flush(&s) == 0);
	bytes = call_store_bytes(&s);
	printf("%zu segments in %zu bytes: %.1f bytes each\n", r.n, bytes,
	       (double) bytes / (double) r.n);
	CHECK(bytes < 10 * r.n);
	ref_fini(&r);
	call_store_fini(&s);
}

#define NLOAD (5000 * CALL_STRIDE + 9)

/* Pushes @n segments that hold together as a pass leaves them (the first
 * at entry 1, links backward, levels going up and down), to @s and @r. */
static void push_loadable(struct call_store *s, struct ref *r, size_t n)
{
	int32_t level = 0;

	for (uint32_t id = 1; id <= n; id++) {
		uint64_t first = id == 1 ? 1 : r->first[id - 2] + 1 +
					       rnd() % 40;
		uint64_t func = 0x400000 + 16 * (rnd() % 50);
		struct call_rec *m;

		if (chance(2))
			first += (uint64_t) 5 << 30;	/* past 4G entries */
		level += (int32_t) (rnd() % 3) - 1;
		CHECK(call_store_push(s, first, func, 0) == 0);
		m = call_store_mut(s, id);
		m->level = level;
		m->inst = id;
		if (id > 1 && chance(800))
			m->up = some_id(id, id - 1);
		r->v[id - 1] = *m;
		r->first[id - 1] = first;
		r->func[id - 1] = func;
		r->n = id;
	}
}

/* Loads the saved store @data (@n bytes, a copy made here) into @s:
 * the result of call_store_load, which keeps the copy on success. */
static int load_copy(struct call_store *s, const uint8_t *data, size_t n,
		     uint64_t entries, int32_t *min_level)
{
	uint8_t *copy = malloc(n);
	struct hist_rbuf rb = { copy, n, 0, false, hist_body_whole(copy, n) };
	int err;

	memcpy(copy, data, n);
	err = call_store_load(s, &rb, entries, min_level);
	CHECK(err || rb.off == n);
	hist_body_free(rb.body);
	return err;
}

/* True if every segment of @s, read back, reads as @r says and no
 * block of it was found damaged. */
static bool reads_back(struct call_store *s, const struct ref *r)
{
	bool ok = s->n == r->n;

	for (uint32_t id = 1; ok && id <= r->n; id++)
		ok = same(s, r, id);
	return ok && !s->damaged;
}

/* The saved store @w of the segments @r (@nblocks blocks, @entries
 * entries, lowest level @min) read back with a block in its middle
 * damaged, its first segment's first entry one after the block's in
 * the table: the store opens, and reading that block marks it damaged
 * (the block reads as no segments: their first entries are the
 * block's). */
static void damaged_block(struct hist_wbuf *w, const struct ref *r,
			  size_t nblocks, uint64_t entries, int32_t min)
{
	size_t k = nblocks / 2, at = 4 * sizeof(uint64_t), code = 0;
	struct call_store t;
	uint64_t nfuncs, nfar;
	uint8_t *shape;
	int32_t got;

	memcpy(&nfuncs, w->p + sizeof(uint64_t), sizeof(nfuncs));
	memcpy(&nfar, w->p + 2 * sizeof(uint64_t), sizeof(nfar));
	at += nfuncs * sizeof(uint64_t) + nfar * 2 * sizeof(uint64_t);
	for (size_t j = 0; j < k; j++) {
		uint32_t len;

		memcpy(&len, w->p + at + j * 16 + 8, sizeof(len));
		code += len;
	}
	/* The first segment's second byte: its offset from the block's
	 * first entry, 0, in the bits from 3 up. */
	shape = w->p + at + nblocks * 16 + code + 1;
	*shape ^= 1 << 3;
	CHECK(load_copy(&t, w->p, w->n, entries, &got) == 0);
	CHECK(got == min && !t.damaged);
	CHECK(call_store_first(&t, (uint32_t) (k * CALL_STRIDE) + 2) ==
	      r->first[k * CALL_STRIDE]);
	CHECK(t.damaged);
	call_store_fini(&t);
	*shape ^= 1 << 3;
	CHECK(load_copy(&t, w->p, w->n, entries, &got) == 0);
	CHECK(reads_back(&t, r));
	call_store_fini(&t);
}

/* A store of thousands of blocks saved and read back (call_store_load
 * checks its table of blocks and its last block, the others when first
 * read): the same segments and lowest level; changed afterwards, its
 * blocks leave the buffer they were read from.  A first entry in the
 * table that goes down anywhere is refused; one in a block's code, or a
 * level below the lowest saved, marks the store damaged when that block
 * is read. */
static void test_save_load(void)
{
	struct call_store s = { 0 }, t;
	struct hist_wbuf w = { 0 };
	struct ref r;
	int32_t min = 0, got;
	size_t nblocks = (NLOAD + CALL_STRIDE - 1) / CALL_STRIDE, at;
	uint64_t entries;

	ref_init(&r, NLOAD);
	push_loadable(&s, &r, NLOAD);
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].level < min)
			min = r.v[i].level;
	entries = r.first[r.n - 1] + 5;
	CHECK(call_store_flush(&s) == 0);
	CHECK(call_store_save(&s, min, &w) == 0);
	CHECK(!w.nomem);
	CHECK(load_copy(&t, w.p, w.n, entries, &got) == 0);
	CHECK_EQ_U64(got, min);
	CHECK(reads_back(&t, &r));
	check_all(&t, &r);
	damaged_block(&w, &r, nblocks, entries, min);
	for (uint32_t id = 1; id <= r.n; id += 5)
		change_one(&t, &r, id);
	CHECK(call_store_flush(&t) == 0);
	check_all(&t, &r);
	call_store_fini(&t);
	CHECK(load_copy(&t, w.p, w.n, r.first[r.n - 1] - 1, &got) != 0);
	at = 4 * sizeof(uint64_t) + s.nfuncs * sizeof(uint64_t) +
	     s.nfar * 2 * sizeof(uint64_t);
	for (size_t d = 2; d <= 5; d++) {
		size_t k = nblocks / d;
		uint64_t first, old;

		/* Block k's first entry at or before block k-1's. */
		memcpy(&old, w.p + at + k * 16, sizeof(old));
		memcpy(&first, w.p + at + (k - 1) * 16, sizeof(first));
		memcpy(w.p + at + k * 16, &first, sizeof(first));
		CHECK(load_copy(&t, w.p, w.n, entries, &got) != 0);
		memcpy(w.p + at + k * 16, &old, sizeof(old));
	}
	CHECK(load_copy(&t, w.p, w.n, entries, &got) == 0);
	call_store_fini(&t);
	free(w.p);
	ref_fini(&r);
	call_store_fini(&s);
}

int main(void)
{
	RUN(test_long_store);
	RUN(test_rollback);
	RUN(test_rollback_edges);
	RUN(test_compact);
	RUN(test_save_load);
	return test_summary();
}
