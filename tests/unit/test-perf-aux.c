/* Unit tests of reading the trace out of the perf backend's AUX area
 * (plugin/capture/aux.c, perf_pt.c) against a fake kernel (fake_perf.c)
 * whose AUX ring follows the kernel's head/tail rules in snapshot and
 * full-trace mode.
 *
 * The fake's "CPU" is the software PT emitter walking a small program
 * whose path is known: the real PT bytes it writes go into the fake AUX
 * ring in pieces of odd sizes, wrapping it or filling it up.  What the
 * backend reads back must be the right bytes in the right order, and the
 * history library, decoding them against the program's image, must give
 * back exactly the expected part of the path.
 */
#include "capture/emit.h"
#include "capture/perf_pt.h"
#include "fake_perf.h"
#include "history.h"
#include "test.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE 0x400000ull
#define GAP UINT64_MAX		/* a gap entry in a decoded path */

static char sysroot[64];	/* the fake sysfs root */
static struct fake_perf fake;
static struct cap_perf_ops fops;

/* ------------------------------------------------------------------ */
/* The program, its path, and the CPU that traces it                  */
/* ------------------------------------------------------------------ */

/* The program: a loop calling, through %rax, one of three functions.
 *   L0 400000: call *%rax   ff d0
 *   L1 400002: dec %ecx     ff c9
 *   L2 400004: jnz L0       0f 85 f6 ff ff ff
 *   L3 40000a: hlt          f4
 *   F0 400100: nop; ret     F1 400200: 2 nops; ret   F2 400300: 3 nops; ret
 */
static uint8_t image[0x400];
static const uint64_t L0 = BASE, L1 = BASE + 2, L2 = BASE + 4;
static const uint64_t L3 = BASE + 10;

/* Assembles the program into image[]. */
static void make_image(void)
{
	static const uint8_t loop[] = { 0xff, 0xd0, 0xff, 0xc9, 0x0f, 0x85,
					0xf6, 0xff, 0xff, 0xff, 0xf4 };

	memset(image, 0xf4, sizeof(image));
	memcpy(image, loop, sizeof(loop));
	for (int k = 0; k < 3; k++) {
		memset(image + 0x100 * (k + 1), 0x90, (size_t) k + 1);
		image[0x100 * (k + 1) + k + 1] = 0xc3;
	}
}

/* The instructions the program executes, in order. */
struct path {
	uint64_t *ip;
	size_t n;
};

/* Fills @p with the path of @iters iterations; which function each
 * calls comes from a fixed pseudo-random sequence, so no stretch of the
 * path repeats. */
static void make_path(struct path *p, size_t iters)
{
	uint32_t x = 12345;

	p->ip = malloc((iters * 7 + 1) * sizeof(*p->ip));
	p->n = 0;
	for (size_t i = 0; i < iters; i++) {
		int k;

		x = x * 1103515245 + 12345;
		k = (int) (x >> 16) % 3;
		p->ip[p->n++] = L0;
		for (int j = 0; j <= k + 1; j++)
			p->ip[p->n++] = BASE + 0x100 * (k + 1) + (uint64_t) j;
		p->ip[p->n++] = L1;
		p->ip[p->n++] = L2;
	}
}

/* The next instruction after path entry @i. */
static uint64_t next_of(const struct path *p, size_t i)
{
	return i + 1 < p->n ? p->ip[i + 1] : L3;
}

#define MAXPSB 4096

/* The CPU: runs the path through the emitter (PSB every 4 KiB, return
 * compression) and hands the trace to the fake in odd-sized pieces.
 * Every PSB it wrote is remembered with the path entry it precedes. */
struct cpu {
	const struct path *path;
	struct cap_ring stream;
	struct cap_emit em;
	size_t fed;		/* path entries executed */
	uint64_t sent;		/* stream bytes handed to the fake */
	uint32_t rnd;
	size_t npsb;
	struct { uint64_t off; size_t at; } psb[MAXPSB];
};

/* Remembers a PSB just written, before path entry @at. */
static void note_psb(struct cpu *c, size_t at)
{
	if (c->npsb < MAXPSB) {
		c->psb[c->npsb].off = c->em.psb_at;
		c->psb[c->npsb++].at = at;
	}
}

/* Starts the CPU on path @p: tracing enabled at its first entry. */
static void cpu_start(struct cpu *c, const struct path *p)
{
	struct cap_emit_config cfg;

	memset(c, 0, sizeof(*c));
	c->path = p;
	c->rnd = 777;
	cap_emit_config_default(&cfg);
	CHECK(cap_ring_init(&c->stream, 0) == 0);
	CHECK(cap_emit_init(&c->em, &c->stream, &cfg) == 0);
	CHECK(cap_emit_enable(&c->em, p->ip[0]) == 0);
	note_psb(c, 0);
}

/* Hands what the CPU wrote since last time to @f, in pieces of 1 to 700
 * bytes. */
static void cpu_flush(struct cpu *c, struct fake_perf *f)
{
	uint64_t total = cap_ring_total(&c->stream);

	while (c->sent < total) {
		uint64_t piece;

		c->rnd = c->rnd * 1103515245 + 12345;
		piece = 1 + (c->rnd >> 16) % 700;
		if (piece > total - c->sent)
			piece = total - c->sent;
		fake_perf_write(f, c->stream.buf + c->sent, piece);
		c->sent += piece;
	}
}

/* Executes @count more path entries, then the thread stops in the
 * kernel (the trace ends with FUP + TIP.PGD), and the trace reaches @f. */
static void cpu_run(struct cpu *c, size_t count, struct fake_perf *f)
{
	size_t end = c->fed + count < c->path->n ? c->fed + count
						 : c->path->n;

	for (; c->fed < end; c->fed++) {
		uint64_t psbs = c->em.stats.psbs, ip = c->path->ip[c->fed];

		CHECK(cap_emit_insn(&c->em, ip, image + (ip - BASE), 16,
				    next_of(c->path, c->fed)) == 0);
		if (c->em.stats.psbs != psbs)
			note_psb(c, c->fed);
	}
	CHECK(cap_emit_disable(&c->em, next_of(c->path, c->fed - 1)) == 0);
	cpu_flush(c, f);
}

/* The thread runs again after a stop: tracing restarts with PSB+. */
static void cpu_resume(struct cpu *c)
{
	CHECK(cap_emit_enable(&c->em, c->path->ip[c->fed]) == 0);
	note_psb(c, c->fed);
}

/* The path entry at the first PSB at or after stream offset @from, or
 * the end of what ran if there is none. */
static size_t first_psb_entry(const struct cpu *c, uint64_t from)
{
	for (size_t i = 0; i < c->npsb; i++)
		if (c->psb[i].off >= from)
			return c->psb[i].at;
	return c->fed;
}

/* Frees what the CPU holds. */
static void cpu_fini(struct cpu *c)
{
	cap_emit_fini(&c->em);
	cap_ring_fini(&c->stream);
}

/* ------------------------------------------------------------------ */
/* Decoding through history/                                          */
/* ------------------------------------------------------------------ */

/* Decodes @size bytes of @trace with the history library against the
 * program's image into @out (GAP for a gap entry); returns the count. */
static size_t decode(const uint8_t *trace, size_t size, uint64_t *out,
		     size_t max)
{
	struct hist_config cfg = { .trace = trace, .size = size };
	struct hist_cursor *cur;
	struct history *h;
	size_t n = 0;

	CHECK(hist_image_new(&cfg.image) == 0);
	CHECK(hist_image_add_copy(cfg.image, BASE, image, sizeof(image)) == 0);
	CHECK(hist_open(&cfg, &h) == 0);
	CHECK(hist_cursor_new(h, &cur) == 0);
	for (int rc = hist_cursor_seek(cur, 1); rc == 0 && n < max;
	     rc = hist_cursor_next(cur)) {
		const struct hist_entry *e = hist_cursor_entry(cur);

		out[n++] = e->kind == HIST_ENTRY_GAP ? GAP : e->ip;
	}
	hist_cursor_free(cur);
	hist_close(h);
	hist_image_free(cfg.image);
	return n;
}

/* Checks that @got (@n entries) is exactly path entries [from, to). */
static void check_part(const uint64_t *got, size_t n, const struct path *p,
		       size_t from, size_t to)
{
	CHECK_EQ_U64(n, to - from);
	for (size_t i = 0; i < n && from + i < to; i++)
		if (got[i] != p->ip[from + i]) {
			CHECK_EQ_U64(got[i], p->ip[from + i]);
			fprintf(stderr, "  at decoded entry %zu of %zu\n", i, n);
			return;
		}
}

/* Decodes ring @r and checks it gives path entries [from, to). */
static void check_decodes(const struct cap_ring *r, const struct path *p,
			  size_t from, size_t to)
{
	uint64_t *got = malloc((p->n + 16) * sizeof(*got));
	size_t n = decode(r->buf, cap_ring_size(r), got, p->n + 16);

	check_part(got, n, p, from, to);
	free(got);
}

/* ------------------------------------------------------------------ */
/* Checks                                                             */
/* ------------------------------------------------------------------ */

/* Checks that @out holds exactly the last min(sent, @aux) bytes the CPU
 * wrote, in order. */
static void check_last_bytes(const struct cap_ring *out, const struct cpu *c,
			     uint64_t aux)
{
	uint64_t want = c->sent < aux ? c->sent : aux;

	CHECK_EQ_U64(cap_ring_size(out), want);
	CHECK(cap_ring_size(out) == want &&
	      !memcmp(out->buf, c->stream.buf + c->sent - want, want));
}

/* A path, a CPU and an event on the fake, for one test. */
struct rig {
	struct path path;
	struct cpu *cpu;
	struct cap_perf p;
	struct cap_ring out;
	uint64_t aux;
};

/* Sets @r up: @iters iterations, @mode, an AUX area of @aux bytes. */
static void rig_start(struct rig *r, size_t iters, enum cap_perf_mode mode,
		      uint64_t aux)
{
	struct cap_perf_options o = fake_options(sysroot, mode, aux);

	make_path(&r->path, iters);
	r->cpu = malloc(sizeof(*r->cpu));
	r->aux = aux;
	CHECK(fake_perf_start(&fake, &fops, &r->p, &o) == 0);
	CHECK_EQ_U64(fake.aux_len, aux);
	CHECK(cap_ring_init(&r->out, 0) == 0);
	cpu_start(r->cpu, &r->path);
}

/* Closes the event (checking the fake got everything back) and frees
 * @r. */
static void rig_finish(struct rig *r)
{
	CHECK(fake_perf_stop(&fake, &r->p));
	cpu_fini(r->cpu);
	free(r->cpu);
	free(r->path.ip);
	cap_ring_fini(&r->out);
}

/* ------------------------------------------------------------------ */
/* Snapshot mode                                                      */
/* ------------------------------------------------------------------ */

/* Bytes straight into the area: before a wrap, exactly one area (the
 * head back at 0), and past it; the snapshot is always the last bytes,
 * in order. */
static void test_snapshot_bytes(void)
{
	struct cap_perf_options o = fake_options(sysroot, CAP_PERF_SNAPSHOT,
						 8192);
	static uint8_t data[3 * 8192];
	static const size_t total[] = { 100, 8192, 8192 + 5, 3 * 8192 - 1 };
	struct cap_aux_read rd;
	struct cap_perf p;
	struct cap_ring out;
	size_t done = 0;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t) (i % 251 + 1);
	CHECK(fake_perf_start(&fake, &fops, &p, &o) == 0);
	CHECK(cap_ring_init(&out, 0) == 0);
	for (size_t t = 0; t < sizeof(total) / sizeof(total[0]); t++) {
		size_t keep = total[t] < 8192 ? total[t] : 8192;

		fake_perf_write(&fake, data + done, total[t] - done);
		done = total[t];
		CHECK(cap_perf_read(&p, &out, true, &rd) == 0);
		CHECK_EQ_U64(rd.wrapped, total[t] >= 8192);
		CHECK_EQ_U64(cap_ring_size(&out), keep);
		CHECK(!memcmp(out.buf, data + done - keep, keep));
	}
	CHECK_EQ_U64(fake.disables, 4);
	CHECK_EQ_U64(fake.enables, 5);
	CHECK(p.aux.stats.aux_records >= 4);	/* one per stretch */
	CHECK(fake_perf_stop(&fake, &p));
	cap_ring_fini(&out);
}

/* Runs the whole path, reads the snapshot once and checks the bytes and
 * what they decode to; the stream must cover at least @areas areas. */
static void snapshot_once(size_t iters, uint64_t aux, unsigned areas)
{
	struct cap_aux_read rd;
	struct rig r;
	uint64_t from;

	rig_start(&r, iters, CAP_PERF_SNAPSHOT, aux);
	cpu_run(r.cpu, r.path.n, &fake);
	CHECK(r.cpu->sent >= areas * aux);
	CHECK(areas || r.cpu->sent < aux);
	CHECK(cap_perf_read(&r.p, &r.out, false, &rd) == 0);
	CHECK_EQ_U64(rd.wrapped, areas > 0);
	CHECK(!r.p.enabled);
	check_last_bytes(&r.out, r.cpu, aux);
	from = r.cpu->sent - cap_ring_size(&r.out);
	check_decodes(&r.out, &r.path, first_psb_entry(r.cpu, from), r.path.n);
	CHECK_EQ_U64(fake.dropped, 0);
	rig_finish(&r);
}

/* Before the area wraps: all of it, from the enable's PSB. */
static void test_snapshot_before_wrap(void)
{
	snapshot_once(4000, 64 << 10, 0);
}

/* After one wrap: the last area-full, decoded from its first PSB. */
static void test_snapshot_one_wrap(void)
{
	snapshot_once(6000, 16 << 10, 1);
}

/* After many wraps. */
static void test_snapshot_many_wraps(void)
{
	snapshot_once(60000, 8 << 10, 20);
}

/* A snapshot at every stop of the thread, tracing resumed after each:
 * each is the last area-full so far, and decodes to the path up to the
 * stop from its first PSB. */
static void test_snapshot_every_stop(void)
{
	static const size_t runs[] = { 50, 3000, 7, 20000, 1, 12000 };
	struct cap_aux_read rd;
	struct rig r;

	rig_start(&r, 40000, CAP_PERF_SNAPSHOT, 8 << 10);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		if (i)
			cpu_resume(r.cpu);
		cpu_run(r.cpu, runs[i], &fake);
		CHECK(cap_perf_read(&r.p, &r.out, true, &rd) == 0);
		CHECK(r.p.enabled);
		check_last_bytes(&r.out, r.cpu, r.aux);
		check_decodes(&r.out, &r.path, first_psb_entry(r.cpu,
			      r.cpu->sent - cap_ring_size(&r.out)),
			      r.cpu->fed);
	}
	CHECK(r.p.wrapped > 0 && r.p.wrapped < r.p.reads);
	rig_finish(&r);
}

/* ------------------------------------------------------------------ */
/* Full-trace mode                                                    */
/* ------------------------------------------------------------------ */

/* The consumer keeps up (every stretch between stops fits in the area):
 * everything arrives, in order, and decodes to the whole path. */
static void test_full_keeping_up(void)
{
	struct cap_aux_read rd;
	struct rig r;
	size_t i = 0;

	rig_start(&r, 20000, CAP_PERF_FULL, 8 << 10);
	while (r.cpu->fed < r.path.n) {
		if (i++)
			cpu_resume(r.cpu);
		cpu_run(r.cpu, 1500 + i * 37, &fake);
		CHECK(cap_perf_read(&r.p, &r.out, r.cpu->fed < r.path.n,
				    &rd) == 0);
		CHECK_EQ_U64(rd.truncations, 0);
	}
	CHECK(i > 20);
	CHECK_EQ_U64(fake.dropped, 0);
	CHECK_EQ_U64(cap_ring_size(&r.out), r.cpu->sent);
	CHECK(!memcmp(r.out.buf, r.cpu->stream.buf, r.cpu->sent));
	check_decodes(&r.out, &r.path, 0, r.path.n);
	CHECK_EQ_U64(r.p.truncations, 0);
	rig_finish(&r);
}

/* Index of the first (@last false) or last gap in @got, or @n. */
static size_t find_gap(const uint64_t *got, size_t n, bool last)
{
	size_t g = n;

	for (size_t i = 0; i < n; i++)
		if (got[i] == GAP && (last || g == n))
			g = i;
	return g;
}

/* Checks a trace cut once: a prefix of the path up to at least @min,
 * gaps, then exactly the path from @resume on. */
static void check_cut_decode(const struct cap_ring *out,
			     const struct path *p, size_t min, size_t resume)
{
	uint64_t *got = malloc((p->n + 16) * sizeof(*got));
	size_t n = decode(out->buf, cap_ring_size(out), got, p->n + 16);
	size_t g1 = find_gap(got, n, false), g2 = find_gap(got, n, true);

	CHECK(g1 < n);
	CHECK(g1 >= min && g1 <= resume);
	check_part(got, g1 < n ? g1 : 0, p, 0, g1 < n ? g1 : 0);
	if (g2 < n)
		check_part(got + g2 + 1, n - g2 - 1, p, resume, p->n);
	free(got);
}

/* The consumer falls behind: the CPU stops at aux_tail, the kernel says
 * TRUNCATED and disables the event until the next read enables it.
 * The cut is reported where it is in the stream; what was read still
 * decodes: the part before is a prefix of the path, then a gap, then
 * the path from the PSB that restarted tracing. */
static void test_full_falling_behind(void)
{
	struct cap_aux_read rd;
	struct rig r;
	size_t first, resume;
	uint64_t kept;

	rig_start(&r, 11500, CAP_PERF_FULL, 8 << 10);
	cpu_run(r.cpu, 600, &fake);
	CHECK(cap_perf_read(&r.p, &r.out, true, &rd) == 0);
	first = r.cpu->fed;
	cpu_resume(r.cpu);
	cpu_run(r.cpu, 60000, &fake);		/* several areas' worth */
	CHECK(fake.dropped > 0 && fake.stopped);
	CHECK(cap_perf_read(&r.p, &r.out, true, &rd) == 0);
	CHECK_EQ_U64(rd.truncations, 1);
	kept = cap_ring_size(&r.out);
	CHECK_EQ_U64(rd.cut_at, kept);
	CHECK_EQ_U64(r.p.first_cut, kept);
	CHECK(r.p.enabled && fake.enabled && !fake.stopped);
	CHECK(!memcmp(r.out.buf, r.cpu->stream.buf, kept));

	resume = r.cpu->fed;
	cpu_resume(r.cpu);
	cpu_run(r.cpu, r.path.n, &fake);
	CHECK(cap_perf_read(&r.p, &r.out, false, &rd) == 0);
	CHECK_EQ_U64(rd.truncations, 0);
	CHECK_EQ_U64(r.p.truncations, 1);
	CHECK_EQ_U64(cap_ring_size(&r.out) - kept,
		     r.cpu->sent - (fake.dropped + kept));
	check_cut_decode(&r.out, &r.path, first, resume);
	rig_finish(&r);
}

/* Draining while the thread runs: when the area passes its watermark the
 * fd polls readable; a drain frees the space without disabling, and
 * after a truncation enables the event again. */
static void test_full_drain_running(void)
{
	struct cap_aux_read rd;
	struct rig r;

	rig_start(&r, 20000, CAP_PERF_FULL, 8 << 10);
	CHECK(fops.poll(fops.ctx, r.p.fd, 0) == 0);
	cpu_run(r.cpu, 6000, &fake);
	CHECK(r.cpu->sent >= r.aux / 4 && r.cpu->sent < r.aux);
	CHECK(fops.poll(fops.ctx, r.p.fd, 0) > 0);
	CHECK(cap_perf_drain(&r.p, &r.out, &rd) == 0);
	CHECK_EQ_U64(fake.disables, 0);
	CHECK_EQ_U64(cap_ring_size(&r.out), r.cpu->sent);
	CHECK(fops.poll(fops.ctx, r.p.fd, 0) == 0);
	cpu_resume(r.cpu);
	cpu_run(r.cpu, 60000, &fake);
	CHECK(cap_perf_drain(&r.p, &r.out, &rd) == 0);
	CHECK_EQ_U64(rd.truncations, 1);
	CHECK(fake.enabled && fake.enables == 2);
	rig_finish(&r);
}

/* ------------------------------------------------------------------ */
/* The data ring's records                                            */
/* ------------------------------------------------------------------ */

/* Writes a record of @type with @body at data position @pos of @pc,
 * wrapping; returns the position after it. */
static uint64_t put_record(struct perf_event_mmap_page *pc, uint64_t pos,
			   uint32_t type, const uint64_t *body, size_t nbody)
{
	struct perf_event_header h = { type, 0,
		(uint16_t) (sizeof(h) + nbody * 8) };
	uint8_t rec[64], *data = (uint8_t *) pc + pc->data_offset;

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), body, nbody * 8);
	for (size_t i = 0; i < h.size; i++)
		data[(pos + i) % pc->data_size] = rec[i];
	return pos + h.size;
}

/* Records that wrap around the end of the data ring are read whole;
 * the flags and the lost count are added up; the space is given back. */
static void test_records(void)
{
	static uint64_t mem[3 * 4096 / 8];
	static uint8_t area[4096];
	struct perf_event_mmap_page *pc = (void *) mem;
	const uint64_t trunc[] = { 0, 100, PERF_AUX_FLAG_TRUNCATED };
	const uint64_t partial[] = { 100, 50, PERF_AUX_FLAG_PARTIAL |
					      PERF_AUX_FLAG_COLLISION };
	const uint64_t lost[] = { 1, 7 }, start[] = { 42 };
	struct cap_aux a;
	uint64_t pos = 3 * 8192 - 20;

	pc->data_offset = 4096;
	pc->data_size = 8192;
	pc->aux_size = sizeof(area);
	pc->data_tail = pos;
	pos = put_record(pc, pos, PERF_RECORD_ITRACE_START, start, 1);
	pos = put_record(pc, pos, PERF_RECORD_AUX, trunc, 3);
	pos = put_record(pc, pos, PERF_RECORD_LOST, lost, 2);
	pos = put_record(pc, pos, PERF_RECORD_AUX, partial, 3);
	pos = put_record(pc, pos, 9999, start, 1);	/* unknown: skipped */
	pc->data_head = pos;
	cap_aux_init(&a, pc, area, false);
	cap_aux_records(&a, NULL);
	CHECK_EQ_U64(a.stats.itrace_starts, 1);
	CHECK_EQ_U64(a.stats.aux_records, 2);
	CHECK_EQ_U64(a.stats.truncated, 1);
	CHECK_EQ_U64(a.stats.partial, 1);
	CHECK_EQ_U64(a.stats.collisions, 1);
	CHECK_EQ_U64(a.stats.lost_records, 7);
	CHECK_EQ_U64(pc->data_tail, pos);
}

int main(void)
{
	make_image();
	fake_pmu_make(sysroot, sizeof(sysroot));
	RUN(test_snapshot_bytes);
	RUN(test_snapshot_before_wrap);
	RUN(test_snapshot_one_wrap);
	RUN(test_snapshot_many_wraps);
	RUN(test_snapshot_every_stop);
	RUN(test_full_keeping_up);
	RUN(test_full_falling_behind);
	RUN(test_full_drain_running);
	RUN(test_records);
	fake_pmu_destroy(sysroot);
	return test_summary();
}
