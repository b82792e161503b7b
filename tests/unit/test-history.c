/* Unit tests of the indexed history (index.c, segment.c, walk.c,
 * cursor.c, search.c) on synthetic traces.
 *
 * A small hand-assembled program is placed in the image; a reference
 * executor walks it along a path fixed by its semantics, and libipt's
 * encoder emits the packets a CPU would for that path.  Decoding must give
 * back exactly the path, whatever was done to the trace: PSB splits, a
 * ring wrap with garbage before the first PSB, an overflow, a corrupted
 * byte, missing code, a trace that ends before the final PC.
 */
#include "history_internal.h"
#include "test.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASE 0x401000ull

/* The program:
 *   401000: xor %eax,%eax        31 c0
 *   401002: inc %eax             ff c0      <- inner loop
 *   401004: cmp $10,%eax         83 f8 0a
 *   401007: jne 401002           75 f9
 *   401009: call 401020          e8 12 00 00 00
 *   40100e: call *%rbx           ff d3      (rbx = 401030)
 *   401010: jmp *%rcx            ff e1      (rcx = 401000)
 *   401020: nop; ret             90 c3
 *   401030: nop; ret             90 c3
 */
static const uint8_t code_main[] = {
	0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x0a, 0x75, 0xf9,
	0xe8, 0x12, 0x00, 0x00, 0x00, 0xff, 0xd3, 0xff, 0xe1,
};
static const uint8_t code_f[] = { 0x90, 0xc3 };

enum kind { K_OTHER, K_COND, K_CALL, K_ICALL, K_RET, K_IJMP };

struct step {
	uint64_t ip;
	enum kind kind;
};

/* The path: @outer iterations of the program, instruction by instruction,
 * ending with the address of the next instruction in @end. */
static size_t make_path(struct step *p, int outer, uint64_t *end)
{
	size_t n = 0;

	for (int o = 0; o < outer; o++) {
		p[n++] = (struct step) { 0x401000, K_OTHER };
		for (int i = 1; i <= 10; i++) {
			p[n++] = (struct step) { 0x401002, K_OTHER };
			p[n++] = (struct step) { 0x401004, K_OTHER };
			p[n++] = (struct step) { 0x401007, K_COND };
		}
		p[n++] = (struct step) { 0x401009, K_CALL };
		p[n++] = (struct step) { 0x401020, K_OTHER };
		p[n++] = (struct step) { 0x401021, K_RET };
		p[n++] = (struct step) { 0x40100e, K_ICALL };
		p[n++] = (struct step) { 0x401030, K_OTHER };
		p[n++] = (struct step) { 0x401031, K_RET };
		p[n++] = (struct step) { 0x401010, K_IJMP };
	}
	*end = 0x401000;
	return n;
}

/* A minimal PT writer for the path (the real emitter lives in
 * plugin/capture; this one only knows the program above). */
struct writer {
	struct pt_encoder *enc;
	uint8_t tnt;
	int ntnt;
	uint64_t retstack[64];
	int nret;
};

static void put(struct writer *w, struct pt_packet *pkt)
{
	CHECK(pt_enc_next(w->enc, pkt) >= 0);
}

static void put_ip(struct writer *w, enum pt_packet_type type, uint64_t ip,
		   enum pt_ip_compression ipc)
{
	struct pt_packet pkt = { .type = type };

	pkt.payload.ip.ipc = ipc;
	pkt.payload.ip.ip = ip;
	put(w, &pkt);
}

static void flush_tnt(struct writer *w)
{
	struct pt_packet pkt = { .type = ppt_tnt_8 };

	if (!w->ntnt)
		return;
	pkt.payload.tnt.bit_size = (uint8_t) w->ntnt;
	pkt.payload.tnt.payload = w->tnt;
	put(w, &pkt);
	w->tnt = 0;
	w->ntnt = 0;
}

static void tnt_bit(struct writer *w, int taken)
{
	w->tnt = (uint8_t) (w->tnt << 1 | (taken ? 1 : 0));
	if (++w->ntnt == 6)
		flush_tnt(w);
}

/* PSB+ at the instruction at @ip (@fup: tracing is on there). */
static void psb(struct writer *w, uint64_t ip, int fup)
{
	struct pt_packet pkt = { .type = ppt_psb };

	flush_tnt(w);
	put(w, &pkt);
	pkt = (struct pt_packet) { .type = ppt_mode };
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec.csl = 1;
	put(w, &pkt);
	if (fup)
		put_ip(w, ppt_fup, ip, pt_ipc_sext_48);
	pkt = (struct pt_packet) { .type = ppt_psbend };
	put(w, &pkt);
	w->nret = 0;
}

/* Emits the packets for step @s, whose successor is @next. */
static void emit_step(struct writer *w, const struct step *s, uint64_t next)
{
	switch (s->kind) {
	case K_COND:
		tnt_bit(w, next != s->ip + 2);
		break;
	case K_CALL:
	case K_ICALL:
		if (w->nret < 64)
			w->retstack[w->nret++] = s->ip +
						 (s->kind == K_CALL ? 5 : 2);
		if (s->kind == K_ICALL) {
			flush_tnt(w);
			put_ip(w, ppt_tip, next, pt_ipc_sext_48);
		}
		break;
	case K_IJMP:
		flush_tnt(w);
		put_ip(w, ppt_tip, next, pt_ipc_sext_48);
		break;
	case K_RET:
		if (w->nret && w->retstack[w->nret - 1] == next) {
			w->nret--;
			tnt_bit(w, 1);
		} else {
			flush_tnt(w);
			put_ip(w, ppt_tip, next, pt_ipc_sext_48);
		}
		break;
	default:
		break;
	}
}

struct trace {
	uint8_t buf[1 << 20];
	size_t size;
	size_t psb_at[4096];	/* path index of each PSB's FUP */
	uint64_t psb_off[4096];
	size_t npsb;
};

enum ending { END_ASYNC, END_PLAIN };

/* Writes the trace of @path: PSB+ every @period steps; an overflow that
 * drops steps [@ovf_from, @ovf_to) if @ovf_to > 0. */
static void write_trace(struct trace *t, const struct step *path, size_t n,
			uint64_t end, size_t period, size_t ovf_from,
			size_t ovf_to, enum ending ending)
{
	struct pt_config cfg;
	struct writer w = { 0 };
	uint64_t off;

	pt_config_init(&cfg);
	cfg.begin = t->buf;
	cfg.end = t->buf + sizeof(t->buf);
	w.enc = pt_alloc_encoder(&cfg);
	t->npsb = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t next;

		if (ovf_to && i == ovf_from) {
			struct pt_packet pkt = { .type = ppt_ovf };

			flush_tnt(&w);
			put(&w, &pkt);
			put_ip(&w, ppt_fup, path[ovf_to].ip, pt_ipc_sext_48);
			w.nret = 0;
			i = ovf_to;
		}
		if (i == 0 || i % period == 0) {
			pt_enc_get_offset(w.enc, &off);
			t->psb_off[t->npsb] = off;
			t->psb_at[t->npsb++] = i;
			psb(&w, path[i].ip, i != 0);
			if (i == 0)
				put_ip(&w, ppt_tip_pge, path[0].ip,
				       pt_ipc_sext_48);
		}
		next = i + 1 < n ? path[i + 1].ip : end;
		emit_step(&w, &path[i], next);
	}
	flush_tnt(&w);
	if (ending == END_ASYNC) {
		put_ip(&w, ppt_fup, end, pt_ipc_sext_48);
		put_ip(&w, ppt_tip_pgd, 0, pt_ipc_suppressed);
	}
	pt_enc_get_offset(w.enc, &off);
	t->size = off;
	pt_free_encoder(w.enc);
}

static char code_path[] = "/tmp/ptrr-test-history-XXXXXX";

static void remove_code_file(void)
{
	unlink(code_path);
}

/* Writes the main code to a file (libipt opens it by name when it first
 * decodes from it, so it stays until the test exits). */
static void make_code_file(void)
{
	int fd = mkstemp(code_path);

	CHECK(fd >= 0);
	CHECK(write(fd, code_main, sizeof(code_main)) ==
	      (ssize_t) sizeof(code_main));
	close(fd);
	atexit(remove_code_file);
}

/* The main code is a file section, so that libipt decodes it through its
 * image section cache and block cache, as it does for real modules; the
 * functions are copies served through the memory callback. */
static struct hist_image *make_image(int with_f2)
{
	struct hist_image *img;

	CHECK(hist_image_new(&img) == 0);
	CHECK(hist_image_add_file(img, code_path, 0, sizeof(code_main),
				  BASE) == 0);
	CHECK(hist_image_add_copy(img, 0x401020, code_f, sizeof(code_f)) == 0);
	if (with_f2)
		CHECK(hist_image_add_copy(img, 0x401030, code_f,
					  sizeof(code_f)) == 0);
	return img;
}

static struct history *open_history(const uint8_t *trace, size_t size,
				    struct hist_image *img, int have_end,
				    uint64_t end)
{
	struct hist_config cfg = {
		.trace = trace, .size = size, .image = img,
		.have_end_ip = have_end, .end_ip = end,
	};
	struct history *h = NULL;

	CHECK(hist_open(&cfg, &h) == 0);
	return h;
}

/* The class an entry at @ip must have. */
static enum hist_iclass class_at(uint64_t ip)
{
	switch (ip) {
	case 0x401007: return HIST_IC_COND_JUMP;
	case 0x401009: case 0x40100e: return HIST_IC_CALL;
	case 0x401010: return HIST_IC_JUMP;
	case 0x401021: case 0x401031: return HIST_IC_RETURN;
	default: return HIST_IC_OTHER;
	}
}

/* Reads every entry forward into @ips (gaps as 0); returns the count.
 * Checks each instruction's class on the way. */
static size_t read_all(struct history *h, uint64_t *ips, size_t max)
{
	struct hist_cursor *c;
	size_t n = 0;

	CHECK(hist_cursor_new(h, &c) == 0);
	if (hist_size(h) && hist_cursor_seek(c, 1) == 0) {
		do {
			const struct hist_entry *e = hist_cursor_entry(c);

			CHECK(e->number == n + 1);
			if (e->kind == HIST_ENTRY_INSN &&
			    e->iclass != class_at(e->ip) && e->number != hist_size(h))
				CHECK_EQ_U64(e->iclass, class_at(e->ip));
			if (n < max)
				ips[n] = e->kind == HIST_ENTRY_GAP ? 0 : e->ip;
			n++;
		} while (hist_cursor_next(c) == 0);
	}
	hist_cursor_free(c);
	return n;
}

static struct step path[100000];
static uint64_t got[100000];
static struct trace tr;

/* Straight decode across many PSB segments, ending at the final PC. */
static void test_basic(void)
{
	uint64_t end;
	size_t n = make_path(path, 200, &end);
	struct hist_image *img = make_image(1);
	struct history *h;
	size_t m;

	write_trace(&tr, path, n, end, 97, 0, 0, END_ASYNC);
	h = open_history(tr.buf, tr.size, img, 1, end);
	CHECK(hist_nsegments(h) == tr.npsb);
	CHECK_EQ_U64(hist_size(h), n + 1);
	CHECK_EQ_U64(hist_insn_count(h), n + 1);
	m = read_all(h, got, n + 1);
	CHECK_EQ_U64(m, n + 1);
	for (size_t i = 0; i < n; i++)
		if (got[i] != path[i].ip) {
			CHECK_EQ_U64(got[i], path[i].ip);
			break;
		}
	CHECK_EQ_U64(got[n], end);
	hist_close(h);
	hist_image_free(img);
}

/* Random access and backward iteration agree with the path. */
static void test_random_access(void)
{
	uint64_t end;
	size_t n = make_path(path, 300, &end);
	struct hist_image *img = make_image(1);
	struct hist_cursor *c;
	struct history *h;
	unsigned seed = 12345;
	size_t count = 0;

	write_trace(&tr, path, n, end, 61, 0, 0, END_ASYNC);
	h = open_history(tr.buf, tr.size, img, 1, end);
	CHECK(hist_cursor_new(h, &c) == 0);
	for (int k = 0; k < 2000; k++) {
		uint64_t num;

		seed = seed * 1103515245 + 12345;
		num = 1 + (seed >> 8) % n;
		CHECK(hist_cursor_seek(c, num) == 0);
		if (hist_cursor_entry(c)->ip != path[num - 1].ip) {
			CHECK_EQ_U64(hist_cursor_entry(c)->ip, path[num - 1].ip);
			break;
		}
		/* Stepping on from a seek (which may have decoded only a
		 * prefix of the segment) crosses into the rest of it. */
		for (int j = 1; j <= 70 && num + j <= n; j++) {
			CHECK(hist_cursor_next(c) == 0);
			CHECK_EQ_U64(hist_cursor_entry(c)->ip,
				     path[num + j - 1].ip);
		}
	}
	CHECK(hist_cursor_seek(c, hist_size(h)) == 0);
	CHECK(hist_cursor_next(c) == PTRR_ERR_RANGE);
	CHECK_EQ_U64(hist_cursor_entry(c)->number, hist_size(h));
	while (hist_cursor_prev(c) == 0) {
		const struct hist_entry *e = hist_cursor_entry(c);

		count++;
		if (e->ip != path[e->number - 1].ip) {
			CHECK_EQ_U64(e->ip, path[e->number - 1].ip);
			break;
		}
	}
	CHECK_EQ_U64(count, n);
	CHECK_EQ_U64(hist_cursor_entry(c)->number, 1);
	CHECK(hist_cursor_seek(c, 0) == PTRR_ERR_RANGE);
	CHECK(hist_cursor_seek(c, hist_size(h) + 1) == PTRR_ERR_RANGE);
	hist_cursor_free(c);
	hist_close(h);
	hist_image_free(img);
}

/* A ring-wrapped trace: garbage, then the rest from some PSB on. */
static void test_wrapped(void)
{
	static uint8_t wrapped[1 << 20];
	uint64_t end;
	size_t n = make_path(path, 100, &end), cut, k, m;
	struct hist_image *img = make_image(1);
	struct history *h;

	write_trace(&tr, path, n, end, 113, 0, 0, END_ASYNC);
	cut = (size_t) tr.psb_off[5] + 7;	/* mid-segment 5 */
	for (k = 0; k < tr.npsb && tr.psb_off[k] < cut; k++)
		;
	memcpy(wrapped, tr.buf + cut, tr.size - cut);
	h = open_history(wrapped, tr.size - cut, img, 1, end);
	m = read_all(h, got, n);
	CHECK_EQ_U64(m, n - tr.psb_at[k] + 1);
	for (size_t i = 0; i + 1 < m; i++)
		if (got[i] != path[tr.psb_at[k] + i].ip) {
			CHECK_EQ_U64(got[i], path[tr.psb_at[k] + i].ip);
			break;
		}
	hist_close(h);
	hist_image_free(img);
}

/* An overflow: a gap, then exactly the path from where tracing resumed.
 * What ran between the last packet and the overflow cannot be known (a
 * hardware decoder can't either), so the test overflows right after a
 * branch that produced a packet (not after a direct call). */
static void test_overflow(void)
{
	uint64_t end;
	size_t n = make_path(path, 50, &end), m, from = 400, to = 455;
	struct hist_image *img = make_image(1);
	struct history *h;

	while (path[from - 1].kind == K_OTHER || path[from - 1].kind == K_CALL)
		from--;

	write_trace(&tr, path, n, end, 1000000, from, to, END_ASYNC);
	h = open_history(tr.buf, tr.size, img, 1, end);
	m = read_all(h, got, n + 2);
	CHECK_EQ_U64(m, from + 1 + (n - to) + 1);
	for (size_t i = 0; i < from; i++)
		CHECK_EQ_U64(got[i], path[i].ip);
	CHECK_EQ_U64(got[from], 0);
	for (size_t i = to; i < n; i++)
		if (got[from + 1 + i - to] != path[i].ip) {
			CHECK_EQ_U64(got[from + 1 + i - to], path[i].ip);
			break;
		}
	CHECK_EQ_U64(hist_insn_count(h), m - 1);
	hist_close(h);
	hist_image_free(img);
}

/* A corrupted byte: decoding stops with a gap and resumes at the next PSB;
 * what was decoded before is a prefix of the path. */
static void test_corrupt(void)
{
	uint64_t end;
	size_t n = make_path(path, 100, &end), m, j, gap;
	struct hist_image *img = make_image(1);
	struct history *h;

	write_trace(&tr, path, n, end, 150, 0, 0, END_ASYNC);
	tr.buf[(tr.psb_off[4] + tr.psb_off[5]) / 2] = 0xd9;	/* bad opcode */
	h = open_history(tr.buf, tr.size, img, 1, end);
	m = read_all(h, got, n + 2);
	for (gap = 0; gap < m && got[gap]; gap++)
		;
	CHECK(gap > tr.psb_at[4] && gap < tr.psb_at[5]);
	for (j = 0; j < gap; j++)
		CHECK_EQ_U64(got[j], path[j].ip);
	CHECK_EQ_U64(m - gap - 1, n - tr.psb_at[5] + 1);
	for (j = gap + 1; j + 1 < m; j++)
		if (got[j] != path[tr.psb_at[5] + j - gap - 1].ip) {
			CHECK_EQ_U64(got[j], path[tr.psb_at[5] + j - gap - 1].ip);
			break;
		}
	hist_close(h);
	hist_image_free(img);
}

/* Missing code: every segment that runs into it ends in a gap, and each
 * decoded stretch is exactly the path from its PSB. */
static void test_missing_code(void)
{
	uint64_t end;
	size_t n = make_path(path, 20, &end), m, seg = 0, i = 0;
	struct hist_image *img = make_image(0);
	struct history *h;
	int gaps = 0;

	write_trace(&tr, path, n, end, 150, 0, 0, END_ASYNC);
	h = open_history(tr.buf, tr.size, img, 1, end);
	m = read_all(h, got, n + 200);
	while (i < m && seg < tr.npsb) {
		size_t at = tr.psb_at[seg];

		for (; i < m && got[i]; i++, at++)
			if (got[i] != path[at].ip)
				break;
		CHECK(i == m - 1 || got[i] == 0);
		if (i < m && got[i] == 0)
			gaps++;
		i++;
		seg++;
	}
	CHECK(gaps >= (int) tr.npsb - 1);
	hist_close(h);
	hist_image_free(img);
}

/* A trace that just stops (no disable packets): decoding ends at the last
 * branch, the instructions up to the final PC are walked. */
static void test_walk_to_end(void)
{
	uint64_t end;
	size_t n = make_path(path, 3, &end), m;
	struct hist_image *img = make_image(1);
	struct history *h;

	/* Stop inside the inner loop: after "jne" was taken for the 3rd time
	 * the thread ran inc, cmp and stopped at jne again. */
	n -= 38 - 1 - 3 * 3;
	end = path[n].ip;
	CHECK_EQ_U64(end, 0x401002);
	n += 2;
	end = 0x401007;
	write_trace(&tr, path, n, end, 1000, 0, 0, END_PLAIN);
	h = open_history(tr.buf, tr.size, img, 1, end);
	m = read_all(h, got, n + 10);
	CHECK_EQ_U64(m, n + 1);
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_U64(got[i], path[i].ip);
	CHECK_EQ_U64(got[n], end);
	hist_close(h);
	hist_image_free(img);
}

/* A trace that leads into a loop of direct branches and says nothing
 * more (damaged, or cut inside a `for (;;);`): decoding stops after a
 * million instructions on no packet, with an "endless" gap, where it
 * would have gone on for ever (fuzz-pt found such traces). */
static void test_endless(void)
{
	static const uint8_t spin[] = { 0x90, 0xeb, 0xfd };	/* nop; jmp -3 */
	struct writer w = { 0 };
	struct hist_image *img;
	struct history *h;
	struct hist_cursor *c;
	struct pt_config cfg;
	uint64_t off, n;

	pt_config_init(&cfg);
	cfg.begin = tr.buf;
	cfg.end = tr.buf + sizeof(tr.buf);
	w.enc = pt_alloc_encoder(&cfg);
	psb(&w, 0, 0);
	put_ip(&w, ppt_tip_pge, 0x402000, pt_ipc_sext_48);
	pt_enc_get_offset(w.enc, &off);
	pt_free_encoder(w.enc);
	CHECK(hist_image_new(&img) == 0);
	CHECK(hist_image_add_copy(img, 0x402000, spin, sizeof(spin)) == 0);
	h = open_history(tr.buf, (size_t) off, img, 0, 0);
	n = h ? hist_size(h) : 0;
	CHECK(n > HIST_NO_TRACE_LIMIT &&
	      n < HIST_NO_TRACE_LIMIT + HIST_NO_TRACE_LIMIT / 10);
	CHECK(h && hist_cursor_new(h, &c) == 0);
	if (h && hist_cursor_seek(c, n) == 0) {
		CHECK(hist_cursor_entry(c)->kind == HIST_ENTRY_GAP);
		CHECK_EQ_U64(hist_cursor_entry(c)->gap_code, HIST_GAP_ENDLESS);
		CHECK(hist_cursor_seek(c, n - 1) == 0);
		CHECK(hist_cursor_entry(c)->ip == 0x402000 ||
		      hist_cursor_entry(c)->ip == 0x402001);
	}
	if (h)
		hist_cursor_free(c);
	hist_close(h);
	hist_image_free(img);
}

/* The breakpoint search finds the nearest executions both ways. */
static void test_search(void)
{
	uint64_t end, found = 0, ips[2] = { 0x401030, 0x999999 };
	size_t n = make_path(path, 100, &end);
	struct hist_image *img = make_image(1);
	struct history *h;
	uint64_t last = 0, first = 0;

	write_trace(&tr, path, n, end, 89, 0, 0, END_ASYNC);
	for (size_t i = 0; i < n; i++)
		if (path[i].ip == 0x401030) {
			last = i + 1;
			if (!first)
				first = i + 1;
		}
	h = open_history(tr.buf, tr.size, img, 1, end);
	CHECK(hist_search_ips(h, hist_size(h), -1, ips, 2, &found) == 0);
	CHECK_EQ_U64(found, last);
	CHECK(hist_search_ips(h, found, -1, ips, 1, &found) == 0);
	CHECK_EQ_U64(found, last - 38);
	CHECK(hist_search_ips(h, 1, 1, ips, 1, &found) == 0);
	CHECK_EQ_U64(found, first);
	CHECK(hist_search_ips(h, first, -1, ips, 1, &found) ==
	      PTRR_ERR_NOTFOUND);
	CHECK(hist_search_ips(h, 1, 1, &ips[1], 1, &found) ==
	      PTRR_ERR_NOTFOUND);
	hist_close(h);
	hist_image_free(img);
}

/* An empty trace of a thread whose PC is known is that one entry. */
static void test_empty(void)
{
	struct hist_image *img = make_image(1);
	struct history *h = open_history(tr.buf, 0, img, 1, 0x401004);

	CHECK_EQ_U64(hist_size(h), 1);
	CHECK_EQ_U64(read_all(h, got, 2), 1);
	CHECK_EQ_U64(got[0], 0x401004);
	hist_close(h);
	h = open_history(tr.buf, 0, img, 0, 0);
	CHECK_EQ_U64(hist_size(h), 0);
	hist_close(h);
	hist_image_free(img);
}

/* The instruction lengths the image remembers (image.c) are forgotten
 * when code is added (the bytes at an address may change), and never
 * answered for another address. */
static void test_len_cache(void)
{
	static const uint8_t nop = 0x90, mov[3] = { 0x48, 0x89, 0xe5 };
	struct hist_image *img;

	CHECK(hist_image_new(&img) == 0);
	CHECK(hist_image_add_copy(img, 0x7000, &nop, 1) == 0);
	CHECK(hist_image_len_get(img, 0x7000) == 0);
	hist_image_len_put(img, 0x7000, 1);
	CHECK(hist_image_len_get(img, 0x7000) == 1);
	for (uint64_t a = 0x7001; a < 0x7000 + 4 * HIST_LEN_CACHE; a++)
		if (hist_image_len_get(img, a)) {
			CHECK_EQ_U64(hist_image_len_get(img, a), 0);
			break;
		}
	CHECK(hist_image_add_copy(img, 0x7000, mov, sizeof(mov)) == 0);
	CHECK(hist_image_len_get(img, 0x7000) == 0);
	hist_image_len_put(img, 0xffffffffff600000ull, 4);
	CHECK(hist_image_len_get(img, 0xffffffffff600000ull) == 0);
	hist_image_free(img);
}

int main(void)
{
	make_code_file();
	RUN(test_basic);
	RUN(test_random_access);
	RUN(test_wrapped);
	RUN(test_overflow);
	RUN(test_corrupt);
	RUN(test_missing_code);
	RUN(test_walk_to_end);
	RUN(test_endless);
	RUN(test_search);
	RUN(test_empty);
	RUN(test_len_cache);
	return test_summary();
}
