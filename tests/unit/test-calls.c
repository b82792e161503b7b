/* Unit tests of function-call segments (history/calls.c) on a synthetic
 * trace of small functions assembled into this test program, named by
 * the test program's own symbol table.
 *
 * The trace starts inside tc_inner, which returns to tc_outer (a caller
 * it never saw); tc_outer then calls tc_f, tc_g (which tail-jumps to
 * tc_h), tc_pic (a call to the next instruction), tc_lj (which jumps
 * back into tc_outer like longjmp) and tc_f twice more, the last time
 * across an overflow.
 */
#include "history_internal.h"
#include "test.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl tc_outer\n"
	"	.type tc_outer, @function\n"
	"tc_outer:\n"
	"	call tc_inner\n"		/* +0 */
	"	call tc_f\n"			/* +5 */
	"	call tc_g\n"			/* +10 */
	"	call tc_pic\n"			/* +15 */
	"	lea 1f(%rip), %rax\n"		/* +20 */
	"	call tc_lj\n"			/* +27 */
	"1:	nop\n"				/* +32 */
	"	call tc_f\n"			/* +33 */
	"	nop\n"				/* +38 */
	"	call tc_f\n"			/* +39 */
	"	nop\n"				/* +44 */
	"	call tc_f\n"			/* +45 */
	"	nop\n"				/* +50 */
	"	nop\n"				/* +51 */
	"	ret\n"
	"	.size tc_outer, . - tc_outer\n"
	"	.type tc_inner, @function\n"
	"tc_inner: nop; ret\n"
	"	.size tc_inner, . - tc_inner\n"
	"	.type tc_f, @function\n"
	"tc_f:	nop; ret\n"
	"	.size tc_f, . - tc_f\n"
	"	.type tc_g, @function\n"
	"tc_g:	jmp tc_h\n"
	"	.size tc_g, . - tc_g\n"
	"	.type tc_h, @function\n"
	"tc_h:	nop; ret\n"
	"	.size tc_h, . - tc_h\n"
	"	.type tc_pic, @function\n"
	"tc_pic: call 2f\n"
	"2:	pop %rax; ret\n"
	"	.size tc_pic, . - tc_pic\n"
	"	.type tc_lj, @function\n"
	"tc_lj:	nop; jmp *%rax\n"
	"	.size tc_lj, . - tc_lj\n"
	"	.type tc_loop, @function\n"
	"tc_loop: nop\n"			/* +0 */
	"3:	call tc_f\n"			/* +1 */
	"	jmp 3b\n"			/* +6 */
	"	.size tc_loop, . - tc_loop\n"
	"4:	call tc_j\n"			/* tc_j - 8, no symbol */
	"	nop\n"
	"5:	nop; ret\n"			/* tc_j - 2, no symbol */
	"	.type tc_j, @function\n"
	"tc_j:	jmp 5b\n"
	"	.size tc_j, . - tc_j\n"
	"	.type tc_many, @function\n"
	"tc_many: nop\n"			/* +0 */
	"6:	call tc_f\n"			/* +1 */
	"	test %eax, %eax\n"		/* +6 */
	"	jnz 6b\n"			/* +8 */
	"	ret\n"				/* +10 */
	"	.size tc_many, . - tc_many\n");

extern const uint8_t tc_outer[], tc_inner[], tc_f[], tc_loop[], tc_j[],
	tc_many[];

#define OUTER ((uint64_t) (uintptr_t) tc_outer)
#define CODE_SIZE 128

static void put(struct pt_encoder *enc, struct pt_packet pkt)
{
	CHECK(pt_enc_next(enc, &pkt) >= 0);
}

static void put_ip(struct pt_encoder *enc, enum pt_packet_type type,
		   uint64_t ip)
{
	struct pt_packet pkt = { .type = type };

	pkt.payload.ip.ipc = ip ? pt_ipc_sext_48 : pt_ipc_suppressed;
	pkt.payload.ip.ip = ip;
	put(enc, pkt);
}

/* An encoder into @buf, with PSB+ written and tracing enabled at @ip. */
static struct pt_encoder *start_trace(uint8_t *buf, size_t size, uint64_t ip)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet mode = { .type = ppt_mode };

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	enc = pt_alloc_encoder(&cfg);
	mode.payload.mode.leaf = pt_mol_exec;
	mode.payload.mode.bits.exec.csl = 1;
	put(enc, (struct pt_packet) { .type = ppt_psb });
	put(enc, mode);
	put(enc, (struct pt_packet) { .type = ppt_psbend });
	put_ip(enc, ppt_tip_pge, ip);
	return enc;
}

/* Ends the trace of @enc with tracing stopped at @ip; returns its size. */
static size_t end_trace(struct pt_encoder *enc, uint64_t ip)
{
	uint64_t off = 0;

	put_ip(enc, ppt_fup, ip);
	put_ip(enc, ppt_tip_pgd, 0);
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	return off;
}

/* Writes the trace described above into @buf; returns its size. */
static size_t write_trace(uint8_t *buf, size_t size)
{
	struct pt_encoder *enc = start_trace(buf, size,
					     (uintptr_t) tc_inner);

	put_ip(enc, ppt_tip, OUTER + 5);	/* tc_inner returns */
	put_ip(enc, ppt_tip, OUTER + 10);	/* tc_f returns */
	put_ip(enc, ppt_tip, OUTER + 15);	/* tc_h returns */
	put_ip(enc, ppt_tip, OUTER + 20);	/* tc_pic returns */
	put_ip(enc, ppt_tip, OUTER + 32);	/* tc_lj jumps back */
	put_ip(enc, ppt_tip, OUTER + 38);	/* tc_f returns */
	put_ip(enc, ppt_tip, OUTER + 44);	/* tc_f returns */
	put(enc, (struct pt_packet) { .type = ppt_ovf });	/* loses +44 */
	put_ip(enc, ppt_fup, (uintptr_t) tc_f + 1);	/* to tc_f's ret */
	put_ip(enc, ppt_tip, OUTER + 50);	/* tc_f returns */
	return end_trace(enc, OUTER + 51);
}

/* A symtab of this program, from its mapping in /proc/self/maps. */
static struct hist_symtab *self_symtab(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	struct hist_symtab *st = NULL;
	char line[4096], path[4096];

	CHECK(f && hist_symtab_new(&st) == 0);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &start,
			   &end, &off, path) == 4 && start <= OUTER &&
		    OUTER < end)
			CHECK(hist_symtab_add_mapping(st, path, start,
						      end - start, off) == 0);
	}
	if (f)
		fclose(f);
	return st;
}

struct expect {
	const char *func;	/* NULL for a gap */
	int32_t level;
	uint32_t up, prev, next, flags;
	uint64_t count;		/* entries */
};

static const struct expect want[] = {
	/* 1 */ { "tc_inner", 1, 2, 0, 0, HIST_CALL_UP_RETURN, 2 },
	/* 2 */ { "tc_outer", 0, 0, 0, 4, 0, 1 },
	/* 3 */ { "tc_f", 1, 2, 0, 0, 0, 2 },
	/* 4 */ { "tc_outer", 0, 0, 2, 7, 0, 1 },
	/* 5 */ { "tc_g", 1, 4, 0, 0, 0, 1 },
	/* 6 */ { "tc_h", 2, 5, 0, 0, HIST_CALL_TAILCALL, 2 },
	/* 7 */ { "tc_outer", 0, 0, 4, 9, 0, 1 },
	/* 8 */ { "tc_pic", 1, 7, 0, 0, 0, 3 },
	/* 9 */ { "tc_outer", 0, 0, 7, 11, 0, 2 },
	/* 10 */ { "tc_lj", 1, 9, 0, 0, 0, 2 },
	/* 11 */ { "tc_outer", 0, 0, 9, 13, 0, 2 },
	/* 12 */ { "tc_f", 1, 11, 0, 0, 0, 2 },
	/* 13 */ { "tc_outer", 0, 0, 11, 0, 0, 2 },
	/* 14 */ { "tc_f", 1, 13, 0, 0, 0, 2 },
	/* 15 */ { NULL, 1, 0, 0, 0, HIST_CALL_GAP, 1 },
	/* 16 */ { "tc_f", 1, 17, 0, 0, HIST_CALL_UP_RETURN, 1 },
	/* 17 */ { "tc_outer", 0, 0, 0, 0, 0, 2 },
};

/* The first segment of the instance of want[@i]: prev followed back. */
static uint32_t want_inst(size_t i)
{
	while (want[i].prev)
		i = want[i].prev - 1;
	return (uint32_t) i + 1;
}

/* Checks call segment @c against want[@i]. */
static void check_call(struct hist_symtab *st, const struct hist_call *c,
		       size_t i)
{
	const struct expect *w = &want[i];
	struct hist_sym sym = { .name = "?" };

	if (w->func)
		CHECK(hist_sym_lookup(st, c->func, &sym) == 0 &&
		      sym.start == c->func);
	if ((w->func && strcmp(sym.name, w->func)) || c->level != w->level ||
	    c->up != w->up || c->inst != want_inst(i) || c->next != w->next ||
	    c->flags != w->flags || c->last - c->first + 1 != w->count) {
		fprintf(stderr, "call %u: %s level %d up %u inst %u next %u "
			"flags %u entries %llu\n", c->id, sym.name, c->level,
			c->up, c->inst, c->next, c->flags,
			(unsigned long long) (c->last - c->first + 1));
		CHECK(!"call segment as expected");
	}
}

/* All call segments of @h (hist_call_get of each), into @n; free()
 * them.  NULL (a check failed) if they cannot be read. */
static struct hist_call *load_calls(struct history *h, size_t *n)
{
	struct hist_call *v = NULL;
	bool ok = hist_calls_count(h, n) == 0 &&
		  (v = calloc(*n ? *n : 1, sizeof(*v)));

	for (size_t i = 0; ok && i < *n; i++)
		ok = hist_call_get(h, (uint32_t) i + 1, &v[i]) == 0;
	CHECK(ok);
	if (!ok) {
		free(v);
		*n = 0;
		return NULL;
	}
	return v;
}

static uint8_t trace[4096];

/* The history of the trace write_trace() makes, over a copy of the code
 * in *@img, its functions named by @st (or unnamed if NULL); its
 * configuration into *@cfg. */
static struct history *open_synthetic(struct hist_symtab *st,
				      struct hist_config *cfg,
				      struct hist_image **img)
{
	struct history *h = NULL;

	*cfg = (struct hist_config) {
		.trace = trace, .size = write_trace(trace, sizeof(trace)),
		.symtab = st, .have_end_ip = true, .end_ip = OUTER + 51,
	};
	*img = NULL;
	CHECK(hist_image_new(img) == 0);
	CHECK(hist_image_add_copy(*img, OUTER, tc_outer, CODE_SIZE) == 0);
	cfg->image = *img;
	CHECK(hist_open(cfg, &h) == 0);
	return h;
}

static void test_calls(void)
{
	struct hist_symtab *st = self_symtab();
	struct hist_image *img;
	struct hist_config cfg;
	struct history *h = open_synthetic(st, &cfg, &img);
	struct hist_call *calls;
	uint32_t id = 0;
	size_t n;

	calls = load_calls(h, &n);
	CHECK_EQ_U64(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK_EQ_U64(calls[i].id, i + 1);
		CHECK(i == 0 || calls[i].first == calls[i - 1].last + 1);
		check_call(st, &calls[i], i);
	}
	if (n)
		CHECK_EQ_U64(calls[n - 1].last, hist_size(h));
	for (size_t i = 0; i < n; i++) {
		CHECK(hist_call_find(h, calls[i].first, &id) == 0 &&
		      id == i + 1);
		CHECK(hist_call_find(h, calls[i].last, &id) == 0 &&
		      id == i + 1);
	}
	CHECK(hist_call_find(h, 0, &id) == PTRR_ERR_RANGE);
	CHECK(hist_call_find(h, hist_size(h) + 1, &id) == PTRR_ERR_RANGE);
	CHECK(hist_call_get(h, 0, &calls[0]) == PTRR_ERR_RANGE);
	CHECK(hist_call_get(h, (uint32_t) n + 1, &calls[0]) == PTRR_ERR_RANGE);
	free(calls);
	hist_close(h);
	hist_image_free(img);
	hist_symtab_free(st);
}

/* hist_index_load() of a copy of the @len bytes at @data, which the
 * history keeps on success. */
static int load_index(const struct hist_config *cfg, uint64_t key,
		      const uint8_t *data, size_t len, struct history **out)
{
	uint8_t *copy = malloc(len);
	int err;

	if (!copy)
		return PTRR_ERR_NOMEM;
	memcpy(copy, data, len);
	err = hist_index_load(cfg, key, copy, len, false, out);
	if (err)
		free(copy);
	return err;
}

/* The saved index (index_file.c) of the history above, with its call
 * segments and, under a bound they would exceed or in the form saved
 * without them (not complete), without them: read back, the same call
 * segments, from the file or computed by the pass; a damaged body is
 * refused. */
static void test_saved_index(void)
{
	struct hist_symtab *st = self_symtab();
	struct hist_image *img;
	struct hist_config cfg;
	struct history *h = open_synthetic(st, &cfg, &img);
	struct hist_call *calls;
	size_t n, len[3] = { 0, 0, 0 };

	calls = load_calls(h, &n);
	for (int form = 0; form < 3 && calls; form++) {
		struct history *back = NULL;
		struct hist_call *got;
		uint8_t *data = NULL;
		size_t m;
		int with = form == 1;

		/* 0: over the bound; 1: with; 2: not complete */
		CHECK(hist_index_save(h, 42, form ? SIZE_MAX : 0, form < 2,
				      &data, &len[form]) == 0);
		CHECK(load_index(&cfg, 43, data, len[form], &back) ==
		      PTRR_ERR_BUNDLE);
		CHECK(load_index(&cfg, 42, data, len[form], &back) == 0);
		CHECK(hist_size(back) == hist_size(h));
		CHECK(hist_calls_from_index(back) == (bool) with);
		got = load_calls(back, &m);
		CHECK_EQ_U64(m, n);
		for (size_t i = 0; got && i < m && i < n; i++)
			CHECK(!memcmp(&got[i], &calls[i], sizeof(*got)));
		CHECK(hist_calls_from_index(back) == (bool) with);
		free(got);
		hist_close(back);
		/* a bit of the checksum that ends the compressed body, or
		 * bytes in its middle (a single bit there may fall in the
		 * code of a symbol never used: no damage) */
		data[len[form] - 1] ^= 0x40;
		CHECK(load_index(&cfg, 42, data, len[form], &back) ==
		      PTRR_ERR_BUNDLE);
		data[len[form] - 1] ^= 0x40;
		memset(data + len[form] - (len[form] - 88) / 2, 0xff, 8);
		CHECK(load_index(&cfg, 42, data, len[form], &back) ==
		      PTRR_ERR_BUNDLE);
		free(data);
	}
	CHECK(len[0] < len[1]);
	CHECK_EQ_U64(len[2], len[0]);
	free(calls);
	hist_close(h);
	hist_image_free(img);
	hist_symtab_free(st);
}

/* Without symbols, calls and returns still nest; nothing is a tail call
 * or a switch, and segments name their first instruction. */
static void test_no_symbols(void)
{
	struct hist_image *img;
	struct hist_config cfg;
	struct history *h = open_synthetic(NULL, &cfg, &img);
	struct hist_call *calls;
	size_t n;

	calls = load_calls(h, &n);
	CHECK(n > 2);
	if (n > 2) {
		CHECK_EQ_U64(calls[0].func, (uintptr_t) tc_inner);
		CHECK_EQ_U64(calls[1].func, OUTER + 5);
		CHECK(calls[0].level == 1 && calls[1].level == 0);
	}
	for (size_t i = 0; i < n; i++)
		CHECK(!(calls[i].flags & HIST_CALL_TAILCALL));
	free(calls);
	hist_close(h);
	hist_image_free(img);
}

/* Many calls: hist_call_find agrees with the segments' ranges, and the
 * pieces of tc_loop's instance are chained in order. */
static void test_many_calls(void)
{
	uint64_t loop = (uintptr_t) tc_loop;
	struct pt_encoder *enc = start_trace(trace, sizeof(trace), loop);
	struct hist_symtab *st = self_symtab();
	struct hist_image *img = NULL;
	struct hist_config cfg = {
		.trace = trace, .symtab = st, .have_end_ip = true,
		.end_ip = loop + 1,
	};
	struct hist_call *calls;
	struct history *h = NULL;
	size_t n;

	for (int i = 0; i < 300; i++)
		put_ip(enc, ppt_tip, loop + 6);	/* tc_f returns */
	cfg.size = end_trace(enc, loop + 1);
	CHECK(hist_image_new(&img) == 0);
	CHECK(hist_image_add_copy(img, OUTER, tc_outer,
				  loop + 16 - OUTER) == 0);
	cfg.image = img;
	CHECK(hist_open(&cfg, &h) == 0);
	calls = load_calls(h, &n);
	CHECK_EQ_U64(n, 601);
	for (size_t i = 0; i < n; i++) {
		CHECK(calls[i].level == (int32_t) (i % 2));
		CHECK(calls[i].up == (i % 2 ? i : 0));
		CHECK(calls[i].inst == (i % 2 ? i + 1 : 1));
		CHECK(calls[i].next == (i % 2 || i + 1 == n ? 0 : i + 3));
		for (uint64_t e = calls[i].first; e <= calls[i].last; e++) {
			uint32_t id = 0;

			CHECK(hist_call_find(h, e, &id) == 0 && id == i + 1);
		}
	}
	free(calls);
	hist_close(h);
	hist_image_free(img);
	hist_symtab_free(st);
}

/* A long history, thousands of blocks of call segments: the trace
 * starts in tc_many, which calls tc_f LONG_CALLS times, then returns to
 * tc_outer, a caller it never saw: that return fixes the up link and
 * flags of every piece of tc_many's instance, most of them in blocks the
 * store encoded long before.  Every segment and hist_call_find of every
 * entry must be as the trace says. */
#define LONG_CALLS 300000

/* True if the @m call segments @got are the @n of @c. */
static bool same_calls(const struct hist_call *got, size_t m,
		       const struct hist_call *c, size_t n)
{
	if (!got || m != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (memcmp(&got[i], &c[i], sizeof(*got)))
			return false;
	return true;
}

/* The index @data (@len bytes) of the history whose @n call segments
 * are @c, read back with a byte in the middle of its chunk @k (counted
 * from 0) damaged: a chunk of call segments' code only, inflated when
 * they are first read, so opening it succeeds; reading them finds the
 * damage and gives the pass's segments instead, the same. */
static void damaged_chunk(const struct hist_config *cfg, uint8_t *data,
			  size_t len, size_t k, const struct hist_call *c,
			  size_t n)
{
	struct history *back = NULL;
	struct hist_call *got;
	uint64_t body_size, at = 0, clen = 0;
	size_t nchunks, m = 0;

	memcpy(&body_size, data + 64, sizeof(body_size));
	nchunks = (body_size + HIST_INDEX_CHUNK - 1) / HIST_INDEX_CHUNK;
	for (size_t i = 0; i <= k; i++) {
		at += clen;
		memcpy(&clen, data + 80 + i * 8, sizeof(clen));
	}
	at += 80 + nchunks * 8 + clen / 2;
	data[at] ^= 0x5a;
	CHECK(load_index(cfg, 7, data, len, &back) == 0);
	if (back) {
		CHECK(hist_calls_from_index(back));
		got = load_calls(back, &m);
		CHECK(same_calls(got, m, c, n));
		CHECK(!hist_calls_from_index(back));
		free(got);
		hist_close(back);
	}
	data[at] ^= 0x5a;
}

/* The saved index of @h, whose @n call segments are @c: a body of
 * several chunks (HIST_INDEX_CHUNK, compressed on several threads) read
 * back to the same segments, inflating at first only what opening needs
 * (the segment table, the call segments' table and the last block) and
 * the rest when it is read; damage in its last chunk, or a chunk size
 * that does not add up, is refused; damage in another chunk of call
 * segments is found when they are read. */
static void saved_long(struct history *h, const struct hist_config *cfg,
		       const struct hist_call *c, size_t n)
{
	struct history *back = NULL;
	struct hist_call *got;
	uint8_t *data = NULL;
	uint64_t body_size = 0, len0;
	size_t len = 0, m = 0;

	CHECK(hist_index_save(h, 7, SIZE_MAX, true, &data, &len) == 0);
	if (!data)
		return;
	memcpy(&body_size, data + 64, sizeof(body_size));
	CHECK(body_size > 3 * HIST_INDEX_CHUNK);	/* four chunks or more */
	CHECK(load_index(cfg, 7, data, len, &back) == 0);
	CHECK(hist_calls_from_index(back));
	CHECK(hist_index_inflated(back) <= 2 * HIST_INDEX_CHUNK);
	got = load_calls(back, &m);
	CHECK(same_calls(got, m, c, n));
	CHECK_EQ_U64(hist_index_inflated(back), body_size);
	CHECK(hist_calls_from_index(back));
	free(got);
	hist_close(back);
	damaged_chunk(cfg, data, len, body_size / HIST_INDEX_CHUNK - 1, c, n);
	memcpy(&len0, data + 80, sizeof(len0));
	len0++;
	memcpy(data + 80, &len0, sizeof(len0));
	CHECK(load_index(cfg, 7, data, len, &back) == PTRR_ERR_BUNDLE);
	len0--;
	memcpy(data + 80, &len0, sizeof(len0));
	data[len - 1] ^= 0x40;		/* the last chunk's checksum */
	CHECK(load_index(cfg, 7, data, len, &back) == PTRR_ERR_BUNDLE);
	free(data);
}

static void test_long_history(void)
{
	uint64_t many = (uintptr_t) tc_many, e;
	size_t cap = LONG_CALLS * 16 + 4096, n, bad = 0, badfind = 0;
	uint8_t *buf = malloc(cap);
	struct pt_encoder *enc = start_trace(buf, cap, many);
	struct pt_packet tnt = { .type = ppt_tnt_8 };
	struct hist_symtab *st = self_symtab();
	struct hist_image *img = NULL;
	struct hist_config cfg = {
		.trace = buf, .symtab = st, .have_end_ip = true,
		.end_ip = OUTER + 5,
	};
	struct hist_call *c;
	struct history *h = NULL;
	uint32_t id;

	tnt.payload.tnt.bit_size = 1;
	for (int i = 0; i < LONG_CALLS; i++) {
		put_ip(enc, ppt_tip, many + 6);		/* tc_f returns */
		tnt.payload.tnt.payload = i + 1 < LONG_CALLS;	/* jnz */
		put(enc, tnt);
	}
	put_ip(enc, ppt_tip, OUTER + 5);	/* tc_many returns */
	cfg.size = end_trace(enc, OUTER + 5);
	CHECK(hist_image_new(&img) == 0);
	CHECK(hist_image_add_copy(img, OUTER, tc_outer,
				  many + 11 - OUTER) == 0);
	cfg.image = img;
	CHECK(hist_open(&cfg, &h) == 0);
	c = load_calls(h, &n);
	CHECK_EQ_U64(n, 2 * LONG_CALLS + 2);
	for (size_t i = 0; i + 1 < n; i++) {
		bool piece = i % 2 == 0;	/* of tc_many, else tc_f */

		if (piece ? c[i].func != many || c[i].level != 1 ||
			    c[i].up != n || c[i].inst != 1 ||
			    c[i].next != (i + 2 < n ? i + 3 : 0) ||
			    c[i].flags != HIST_CALL_UP_RETURN :
			    c[i].func != (uintptr_t) tc_f || c[i].level != 2 ||
			    c[i].up != i || c[i].inst != i + 1 ||
			    c[i].next || c[i].flags)
			bad++;
		for (e = c[i].first; e <= c[i].last; e++)
			if (hist_call_find(h, e, &id) || id != i + 1)
				badfind++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(badfind, 0);
	if (n)
		CHECK(c[n - 1].func == OUTER && c[n - 1].level == 0 &&
		      c[n - 1].up == 0 && c[n - 1].inst == n);
	saved_long(h, &cfg, c, n);
	free(c);
	hist_close(h);
	hist_image_free(img);
	hist_symtab_free(st);
	free(buf);
}

/* Code without a symbol calls tc_j, which jumps into other code without
 * a symbol: a tail call, not a return to the caller (whose function is
 * just as unknown). */
static void test_jump_to_unknown_code(void)
{
	uint64_t j = (uintptr_t) tc_j;
	struct pt_encoder *enc = start_trace(trace, sizeof(trace), j - 8);
	struct hist_symtab *st = self_symtab();
	struct hist_image *img = NULL;
	struct hist_config cfg = {
		.trace = trace, .symtab = st, .have_end_ip = true,
		.end_ip = j - 3,
	};
	struct hist_call *c;
	struct history *h = NULL;
	size_t n = 0;

	put_ip(enc, ppt_tip, j - 3);	/* the ret at j - 1 */
	cfg.size = end_trace(enc, j - 3);
	CHECK(hist_image_new(&img) == 0);
	CHECK(hist_image_add_copy(img, j - 8,
				  (const uint8_t *) (uintptr_t) (j - 8), 10) == 0);
	cfg.image = img;
	CHECK(hist_open(&cfg, &h) == 0);
	c = load_calls(h, &n);
	CHECK_EQ_U64(n, 4);
	if (n == 4) {
		CHECK(c[2].func == j - 2 && c[2].up == 2 && c[2].level == 2 &&
		      c[2].flags == HIST_CALL_TAILCALL);
		CHECK(c[3].func == j - 3 && c[3].inst == 1 && c[3].level == 0);
	}
	free(c);
	hist_close(h);
	hist_image_free(img);
	hist_symtab_free(st);
}

int main(void)
{
	RUN(test_calls);
	RUN(test_saved_index);
	RUN(test_no_symbols);
	RUN(test_many_calls);
	RUN(test_jump_to_unknown_code);
	RUN(test_long_history);
	return test_summary();
}
