/* Unit tests of the software PT emitter (plugin/capture/emit.c) and its
 * ring (ring.c), with libipt's block decoder as the judge.
 *
 * Small programs are assembled into a memory image; a reference executor
 * walks them instruction by instruction (branch outcomes and indirect
 * targets come from a script), and the emitter is fed that path.
 * Decoding the trace against the image must give the path back: whole,
 * or the exact suffix after a ring wrap, or the path with a gap after an
 * overflow.
 */
#include "capture/emit.h"
#include "capture/insn.h"
#include "capture/ring.h"
#include "test.h"

#include <intel-pt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#define BASE 0x400000ull
#define GAP UINT64_MAX		/* marks an overflow in a decoded path */
#define MAXPATH 20000

/* ------------------------------------------------------------------ */
/* A tiny assembler                                                   */
/* ------------------------------------------------------------------ */

static uint8_t image[0x1000];

/* Places @n bytes at address @at; returns the address after them. */
static uint64_t put_bytes(uint64_t at, const uint8_t *b, size_t n)
{
	memcpy(image + (at - BASE), b, n);
	return at + n;
}

#define ASM(at, ...) put_bytes(at, (const uint8_t[]) { __VA_ARGS__ }, \
			       sizeof((const uint8_t[]) { __VA_ARGS__ }))

/* Places a rel32 branch (@op is its 1 or 2 opcode bytes) to @target. */
static uint64_t branch(uint64_t at, const uint8_t *op, size_t nop,
		       uint64_t target)
{
	int32_t rel = (int32_t) (target - (at + nop + 4));

	at = put_bytes(at, op, nop);
	return put_bytes(at, (const uint8_t *) &rel, 4);
}

static uint64_t call_to(uint64_t at, uint64_t t)
{
	return branch(at, (const uint8_t[]) { 0xe8 }, 1, t);
}

static uint64_t jnz_to(uint64_t at, uint64_t t)
{
	return branch(at, (const uint8_t[]) { 0x0f, 0x85 }, 2, t);
}

#define NOP 0x90
#define RET 0xc3
#define HLT 0xf4
#define SYSCALL 0x0f, 0x05
#define CALL_RAX 0xff, 0xd0
#define JMP_RBX 0xff, 0xe3
#define DEC_ECX 0xff, 0xc9

/* ------------------------------------------------------------------ */
/* The reference executor                                             */
/* ------------------------------------------------------------------ */

/* Outcomes for the executor: conditional branches take cond[i] in turn;
 * indirect jumps and calls go to ind[i] in turn, and so do returns if
 * @rets_in_ind (otherwise they go back to their call). */
struct script {
	const bool *cond;
	size_t ncond;
	const uint64_t *ind;
	size_t nind;
	bool rets_in_ind;
};

struct path {
	uint64_t ip[MAXPATH];
	size_t n;
	uint64_t end;		/* where execution stopped (a hlt) */
	uint64_t stack[256];	/* the executor's real call stack */
	int sp;
};

/* The direct branch target of the instruction at @ip. */
static uint64_t direct_target(uint64_t ip)
{
	ZydisDecoder d;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZyanU64 t = 0;

	ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisDecoderDecodeFull(&d, image + (ip - BASE), 16, &zi, ops);
	ZydisCalcAbsoluteAddress(&zi, &ops[0], ip, &t);
	return t;
}

/* The successor of the instruction @insn at @ip under script @s
 * (positions @ci, @ii), keeping @p's call stack. */
static uint64_t successor(struct path *p, uint64_t ip,
			  const struct cap_insn *insn, const struct script *s,
			  size_t *ci, size_t *ii)
{
	uint64_t fall = ip + insn->len, next = fall;

	switch (insn->iclass) {
	case CAP_IC_COND:
		CHECK(*ci < s->ncond);
		if (*ci < s->ncond && s->cond[(*ci)++])
			next = direct_target(ip);
		break;
	case CAP_IC_JUMP:
	case CAP_IC_CALL:
		next = direct_target(ip);
		break;
	case CAP_IC_RET:
		if (!s->rets_in_ind) {
			next = p->stack[--p->sp];
			break;
		}
		/* fall through */
	case CAP_IC_JUMP_IND:
	case CAP_IC_CALL_IND:
		CHECK(*ii < s->nind);
		next = *ii < s->nind ? s->ind[(*ii)++] : fall;
		break;
	}
	if (insn->iclass == CAP_IC_CALL || insn->iclass == CAP_IC_CALL_IND)
		p->stack[p->sp++] = fall;
	return next;
}

/* Executes from @ip under @s until a hlt, appending to @p. */
static void run(struct path *p, uint64_t ip, const struct script *s)
{
	size_t ci = 0, ii = 0;
	struct cap_insn insn;

	while (image[ip - BASE] != HLT && p->n < MAXPATH) {
		CHECK(cap_insn_decode(image + (ip - BASE), 16, &insn) > 0);
		p->ip[p->n++] = ip;
		ip = successor(p, ip, &insn, s, &ci, &ii);
	}
	p->end = ip;
}

/* Feeds path entries [from, to) to @e; entry @to (or p->end) follows. */
static void feed(struct cap_emit *e, const struct path *p, size_t from,
		 size_t to)
{
	for (size_t i = from; i < to; i++) {
		uint64_t next = i + 1 < p->n ? p->ip[i + 1] : p->end;

		CHECK(cap_emit_insn(e, p->ip[i], image + (p->ip[i] - BASE),
				    16, next) == 0);
	}
}

/* ------------------------------------------------------------------ */
/* Decoding with libipt                                               */
/* ------------------------------------------------------------------ */

/* libipt's memory callback: the image. */
static int read_image(uint8_t *buf, size_t size, const struct pt_asid *asid,
		      uint64_t ip, void *ctx)
{
	(void) asid;
	(void) ctx;
	if (ip < BASE || ip >= BASE + sizeof(image))
		return -pte_nomap;
	if (size > BASE + sizeof(image) - ip)
		size = BASE + sizeof(image) - ip;
	memcpy(buf, image + (ip - BASE), size);
	return (int) size;
}

/* Appends the instructions of @blk to @out.  They executed one after
 * the other, following direct jumps and calls. */
static void add_block(struct path *out, const struct pt_block *blk)
{
	uint64_t ip = blk->ip;
	struct cap_insn insn;

	for (uint16_t k = 0; k < blk->ninsn && out->n < MAXPATH; k++) {
		out->ip[out->n++] = ip;
		if (cap_insn_decode(image + (ip - BASE), 16, &insn) < 0)
			break;
		if (insn.iclass == CAP_IC_JUMP || insn.iclass == CAP_IC_CALL)
			ip = direct_target(ip);
		else
			ip += insn.len;
	}
}

/* Drains pending events; an overflow becomes a GAP entry. */
static int drain_events(struct pt_block_decoder *d, int status,
			struct path *out)
{
	struct pt_event ev;

	while (status >= 0 && (status & pts_event_pending)) {
		status = pt_blk_event(d, &ev, sizeof(ev));
		if (status >= 0 && ev.type == ptev_overflow)
			out->ip[out->n++] = GAP;
	}
	return status;
}

/* Decodes @size bytes of trace from its first PSB into @out; returns the
 * last status (-pte_eos when the trace ended cleanly). */
static int decode(const uint8_t *trace, size_t size, struct path *out)
{
	struct pt_config cfg;
	struct pt_block_decoder *d;
	struct pt_block blk;
	int status;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *) trace;
	cfg.end = (uint8_t *) trace + size;
	d = pt_blk_alloc_decoder(&cfg);
	pt_image_set_callback(pt_blk_get_image(d), read_image, NULL);
	out->n = 0;
	status = pt_blk_sync_forward(d);
	while (status >= 0) {
		status = drain_events(d, status, out);
		if (status < 0)
			break;
		status = pt_blk_next(d, &blk, sizeof(blk));
		add_block(out, &blk);
	}
	pt_blk_free_decoder(d);
	return status;
}

/* Decodes ring @r. */
static int decode_ring(const struct cap_ring *r, struct path *out)
{
	uint8_t *buf = malloc(cap_ring_size(r) + 1);
	int status;

	cap_ring_copy(r, buf);
	status = decode(buf, cap_ring_size(r), out);
	free(buf);
	return status;
}

/* Checks that @got equals entries [from, n) of @want. */
static void check_suffix(const struct path *got, const struct path *want,
			 size_t from)
{
	CHECK_EQ_U64(got->n, want->n - from);
	for (size_t i = 0; i < got->n && from + i < want->n; i++)
		if (got->ip[i] != want->ip[from + i]) {
			CHECK_EQ_U64(got->ip[i], want->ip[from + i]);
			fprintf(stderr, "  at decoded entry %zu\n", i);
			break;
		}
}

/* ------------------------------------------------------------------ */
/* Recording helpers                                                  */
/* ------------------------------------------------------------------ */

static struct path want, got;

/* Sets up @e over a fresh growing ring @r with @cfg (or the defaults). */
static void start(struct cap_emit *e, struct cap_ring *r,
		  const struct cap_emit_config *cfg, size_t wrap)
{
	struct cap_emit_config def;

	cap_emit_config_default(&def);
	CHECK(cap_ring_init(r, wrap) == 0);
	CHECK(cap_emit_init(e, r, cfg ? cfg : &def) == 0);
}

/* Feeds all of @p to @e a block at a time, as the QEMU plugin does
 * (cap_emit_block_begin_fast, cap_emit_block_end_fast): a block ends
 * with any instruction that may change the flow. */
static void feed_blocks(struct cap_emit *e, const struct path *p)
{
	struct cap_insn insn;
	size_t first = 0;

	for (size_t i = 0; i < p->n; i++) {
		uint64_t next = i + 1 < p->n ? p->ip[i + 1] : p->end;

		CHECK(cap_insn_decode(image + (p->ip[i] - BASE), 16,
				      &insn) > 0);
		if (insn.iclass == CAP_IC_OTHER && i + 1 < p->n)
			continue;
		CHECK(cap_emit_block_begin_fast(e, p->ip[first]) == 0);
		CHECK(cap_emit_block_end_fast(e, p->ip[i], &insn, next,
					      (uint32_t) (i + 1 - first)) ==
		      0);
		first = i + 1;
	}
}

/* Sets @r up as ring kind @kind: 0 growing, 1 the caller's buffer @buf
 * (@size bytes, growing up to it: the QEMU plugin's full mode), 2
 * overwriting, @size bytes. */
static void ring_of_kind(struct cap_ring *r, int kind, uint8_t *buf,
			 size_t size)
{
	if (kind == 1)
		cap_ring_init_fixed(r, buf, size, 0);
	else
		CHECK(cap_ring_init(r, kind == 2 ? size : 0) == 0);
}

/* All of @want fed an instruction at a time and a block at a time into
 * rings of kind @kind (ring_of_kind()) of @size bytes: the same bytes
 * held, the same ring and emitter state.  The block fast paths write
 * into the ring directly (cap_ring_at/room/advance), and fall back to
 * cap_emit_block_end() where a packet does not fit before the end of an
 * overwriting ring's buffer. */
static void compare_fed(const struct cap_emit_config *cfg, int kind,
			size_t size)
{
	struct cap_emit e, eb;
	struct cap_ring r, rb;
	uint8_t *fixed = malloc(size + 1), *fixedb = malloc(size + 1);
	uint8_t *p, *pb;

	ring_of_kind(&r, kind, fixed, size);
	ring_of_kind(&rb, kind, fixedb, size);
	CHECK(cap_emit_init(&e, &r, cfg) == 0);
	CHECK(cap_emit_init(&eb, &rb, cfg) == 0);
	CHECK(cap_emit_enable(&e, want.ip[0]) == 0);
	feed(&e, &want, 0, want.n);
	CHECK(cap_emit_disable(&e, want.end) == 0);
	CHECK(cap_emit_enable(&eb, want.ip[0]) == 0);
	feed_blocks(&eb, &want);
	CHECK(cap_emit_disable(&eb, want.end) == 0);
	CHECK_EQ_U64(cap_ring_size(&rb), cap_ring_size(&r));
	CHECK_EQ_U64(cap_ring_total(&rb), cap_ring_total(&r));
	CHECK_EQ_U64(rb.head, r.head);
	p = malloc(cap_ring_size(&r) + 1);
	pb = malloc(cap_ring_size(&rb) + 1);
	if (p && pb && cap_ring_size(&rb) == cap_ring_size(&r)) {
		cap_ring_copy(&r, p);
		cap_ring_copy(&rb, pb);
		CHECK(!memcmp(p, pb, cap_ring_size(&r)));
	}
	CHECK(!memcmp(&eb.stats, &e.stats, sizeof(e.stats)));
	free(p);
	free(pb);
	cap_emit_fini(&eb);
	cap_ring_fini(&rb);
	cap_emit_fini(&e);
	cap_ring_fini(&r);
	free(fixed);
	free(fixedb);
}

/* Records all of @want with @cfg, ends with a disable, and decodes.  The
 * same fed a block at a time must give the same bytes, into a growing
 * ring, into a buffer of the caller's, and into overwriting rings whose
 * end packets reach at every offset (sizes 37 and 61: prime, smaller
 * and larger than a PSB+). */
static void record_and_decode(const struct cap_emit_config *cfg,
			      struct cap_emit_stats *stats)
{
	struct cap_emit_config def;
	struct cap_emit e;
	struct cap_ring r;

	start(&e, &r, cfg, 0);
	CHECK(cap_emit_enable(&e, want.ip[0]) == 0);
	feed(&e, &want, 0, want.n);
	CHECK(cap_emit_disable(&e, want.end) == 0);
	CHECK(decode_ring(&r, &got) == -pte_eos);
	if (stats)
		*stats = e.stats;
	cap_emit_fini(&e);
	cap_ring_fini(&r);

	cap_emit_config_default(&def);
	compare_fed(cfg ? cfg : &def, 0, 0);
	compare_fed(cfg ? cfg : &def, 1, 1 << 20);
	compare_fed(cfg ? cfg : &def, 2, 37);
	compare_fed(cfg ? cfg : &def, 2, 61);
}

/* Resets the image (all hlt) and the paths. */
static void reset(void)
{
	memset(image, HLT, sizeof(image));
	memset(&want, 0, sizeof(want));
	memset(&got, 0, sizeof(got));
}

/* ------------------------------------------------------------------ */
/* The tests                                                          */
/* ------------------------------------------------------------------ */

/* Straight-line code: nothing but the enable and the disable. */
static void test_straight(void)
{
	uint64_t at = BASE;
	struct cap_emit_stats st;

	reset();
	for (int i = 0; i < 20; i++)
		at = ASM(at, NOP);
	run(&want, BASE, &(struct script) { 0 });
	record_and_decode(NULL, &st);
	check_suffix(&got, &want, 0);
	CHECK_EQ_U64(st.tnt_bits + st.tips, 0);
}

/* A counted loop (jnz taken 9 times, then not) followed by a chain of
 * conditional branches with mixed outcomes: more than 6 bits, so several
 * TNT packets. */
static void test_conditional(void)
{
	static const bool cond[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
				     1, 0, 0, 1, 0, 1, 1 };
	uint64_t at, loop;
	struct cap_emit_stats st;

	reset();
	at = ASM(BASE, 0xb9, 10, 0, 0, 0);		/* mov $10,%ecx */
	loop = at;
	at = ASM(at, DEC_ECX);
	at = jnz_to(at, loop);
	for (int i = 0; i < 7; i++) {		/* jnz +1: over a nop */
		at = jnz_to(at, at + 6 + 1);
		at = ASM(at, NOP);
	}
	run(&want, BASE, &(struct script) { cond, 17, NULL, 0, false });
	record_and_decode(NULL, &st);
	check_suffix(&got, &want, 0);
	CHECK_EQ_U64(st.tnt_bits, 17);
	CHECK_EQ_U64(st.tips, 0);
}

/* main calls f three times in a loop; f calls g; every return goes back
 * to its call.  With return compression each return is a TNT bit; without,
 * a TIP. */
static void assemble_calls(void)
{
	uint64_t f = BASE + 0x100, g = BASE + 0x200, at, loop;

	reset();
	at = ASM(BASE, 0xb9, 3, 0, 0, 0);
	loop = at;
	at = call_to(at, f);
	at = ASM(at, DEC_ECX);
	jnz_to(at, loop);
	at = call_to(f, g);
	ASM(at, RET);
	ASM(g, NOP, RET);
}

static void test_calls(void)
{
	static const bool cond[] = { 1, 1, 0 };
	struct cap_emit_config cfg;
	struct cap_emit_stats st;

	assemble_calls();
	run(&want, BASE, &(struct script) { cond, 3, NULL, 0, false });
	record_and_decode(NULL, &st);
	check_suffix(&got, &want, 0);
	CHECK_EQ_U64(st.compressed_rets, 6);
	CHECK_EQ_U64(st.tips, 0);

	cap_emit_config_default(&cfg);
	cfg.ret_compression = false;
	record_and_decode(&cfg, &st);
	check_suffix(&got, &want, 0);
	CHECK_EQ_U64(st.compressed_rets, 0);
	CHECK_EQ_U64(st.tips, 6);
}

/* A return that does not go back to its call (like longjmp) must be a
 * TIP, and must not confuse later compressed returns. */
static void test_ret_mismatch(void)
{
	uint64_t f = BASE + 0x100, g = BASE + 0x200, at;
	static const uint64_t ind[] = { BASE + 0x20, BASE + 0x25 };
	struct cap_emit_stats st;

	reset();
	at = call_to(BASE, f);
	ASM(at, HLT);
	at = call_to(BASE + 0x20, g);	/* f returns here, not to BASE+5 */
	ASM(f, RET);
	ASM(g, NOP, RET);
	run(&want, BASE, &(struct script) { NULL, 0, ind, 2, true });
	record_and_decode(NULL, &st);
	check_suffix(&got, &want, 0);
	CHECK_EQ_U64(st.tips, 1);
	CHECK_EQ_U64(st.compressed_rets, 1);
}

/* Recursion deeper than the 64-entry return stack: the innermost 64
 * returns compress, the outer ones need TIPs, like the hardware. */
static void test_deep_recursion(void)
{
	uint64_t r = BASE + 0x100, at;
	bool cond[100];
	struct cap_emit_stats st;

	reset();
	at = call_to(BASE, r);
	ASM(at, HLT);
	at = ASM(r, DEC_ECX);			/* r: if (--ecx) r(); */
	at = jnz_to(at, at + 6 + 1);
	at = ASM(at, RET);
	at = call_to(at, r);
	ASM(at, RET);
	for (int i = 0; i < 100; i++)
		cond[i] = i < 99;	/* 99 taken: recurse, then stop */
	run(&want, BASE, &(struct script) { cond, 100, NULL, 0, false });
	record_and_decode(NULL, &st);
	check_suffix(&got, &want, 0);
	CHECK_EQ_U64(st.compressed_rets, CAP_RETSTACK_DEPTH);
	CHECK_EQ_U64(st.tips, 100 - CAP_RETSTACK_DEPTH);
}

/* Indirect calls and jumps: TIPs with their targets. */
static void test_indirect(void)
{
	uint64_t f = BASE + 0x100, g = BASE + 0x200, at, t2 = BASE + 0x40;
	const uint64_t ind[] = { f, t2, g, BASE + 0x300, f };
	struct cap_emit_stats st;

	reset();
	at = ASM(BASE, CALL_RAX);		/* -> f */
	ASM(at, JMP_RBX);			/* -> t2 */
	at = ASM(t2, CALL_RAX);			/* -> g */
	ASM(at, JMP_RBX);			/* -> far away */
	ASM(f, NOP, RET);
	ASM(g, NOP, NOP, RET);
	ASM(BASE + 0x300, 0xff, 0x15, 0x10, 0, 0, 0, NOP);  /* call *x(%rip) */
	run(&want, BASE, &(struct script) { NULL, 0, ind, 5, false });
	record_and_decode(NULL, &st);
	check_suffix(&got, &want, 0);
	CHECK_EQ_U64(st.tips, 5);
}

/* A system call: TIP.PGD (IP suppressed), then TIP.PGE at the next user
 * instruction; the decoder resumes there. */
static void test_syscall(void)
{
	struct cap_emit_stats st;

	reset();
	ASM(BASE, NOP, SYSCALL, NOP, NOP, SYSCALL, SYSCALL, NOP);
	run(&want, BASE, &(struct script) { 0 });
	record_and_decode(NULL, &st);
	check_suffix(&got, &want, 0);
	CHECK_EQ_U64(st.disables, 4);	/* 3 syscalls and the end */
}

/* A signal: FUP + TIP.PGD before the interrupted instruction, the
 * handler (ending in rt_sigreturn, a syscall), then the interrupted
 * code again from the interrupted instruction. */
static void test_async(void)
{
	static const bool cond[] = { 1, 1, 0 };
	const uint64_t h = BASE + 0x300;
	const uint64_t handler[] = { h, h + 1, h + 2 };
	struct cap_emit e;
	struct cap_ring r;
	size_t cut;

	assemble_calls();
	ASM(h, NOP, NOP, SYSCALL);
	run(&want, BASE, &(struct script) { cond, 3, NULL, 0, false });
	cut = want.n / 2;
	start(&e, &r, NULL, 0);
	CHECK(cap_emit_enable(&e, want.ip[0]) == 0);
	feed(&e, &want, 0, cut);
	CHECK(cap_emit_async(&e, want.ip[cut]) == 0);
	for (size_t i = 0; i < 3; i++)
		CHECK(cap_emit_insn(&e, handler[i], image + (handler[i] - BASE),
				    16, i < 2 ? handler[i + 1]
					      : want.ip[cut]) == 0);
	feed(&e, &want, cut, want.n);
	CHECK(cap_emit_disable(&e, want.end) == 0);
	CHECK(decode_ring(&r, &got) == -pte_eos);
	/* expected: the first part, the handler, the rest */
	memmove(&want.ip[cut + 3], &want.ip[cut],
		(want.n - cut) * sizeof(want.ip[0]));
	memcpy(&want.ip[cut], handler, sizeof(handler));
	want.n += 3;
	check_suffix(&got, &want, 0);
	cap_emit_fini(&e);
	cap_ring_fini(&r);
}

/* The offset of the @k-th PSB (from 1) in @buf, or 0 if there is none. */
static size_t nth_psb(const uint8_t *buf, size_t size, int k)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};

	for (size_t off = 0; off + sizeof(psb) <= size; off++) {
		if (memcmp(buf + off, psb, sizeof(psb)))
			continue;
		if (--k == 0)
			return off;
		off += sizeof(psb) - 1;
	}
	return 0;
}

/* The calls loop, @iters times round. */
static void run_long_loop(int iters)
{
	static bool cond[1000];

	assemble_calls();
	ASM(BASE, 0xb9, (uint8_t) iters, (uint8_t) (iters >> 8), 0, 0);
	for (int i = 0; i < iters; i++)
		cond[i] = i < iters - 1;
	run(&want, BASE, &(struct script) { cond, (size_t) iters, NULL, 0,
					    false });
}

/* A loop long enough for many PSBs at a small period, with compressed
 * returns whose calls lie before a PSB: decoding from the start gives
 * the whole path; decoding from a later PSB gives exactly the rest. */
static void test_psb(void)
{
	struct cap_emit_config cfg;
	struct cap_emit e;
	struct cap_ring r;
	uint8_t *buf;
	size_t later;

	run_long_loop(300);
	cap_emit_config_default(&cfg);
	cfg.psb_period = 32;
	start(&e, &r, &cfg, 0);
	CHECK(cap_emit_enable(&e, want.ip[0]) == 0);
	feed(&e, &want, 0, want.n);
	CHECK(cap_emit_disable(&e, want.end) == 0);
	CHECK(e.stats.psbs > 5);
	CHECK(decode_ring(&r, &got) == -pte_eos);
	check_suffix(&got, &want, 0);

	buf = malloc(cap_ring_size(&r));
	cap_ring_copy(&r, buf);
	later = nth_psb(buf, cap_ring_size(&r), 3);
	CHECK(later > 0);
	CHECK(decode(buf + later, cap_ring_size(&r) - later, &got) ==
	      -pte_eos);
	CHECK(got.n > 0 && got.n < want.n);
	check_suffix(&got, &want, want.n - got.n);
	free(buf);
	cap_emit_fini(&e);
	cap_ring_fini(&r);
}

/* An overwriting ring smaller than the trace: decoding syncs at the
 * first PSB left and gives the exact suffix of the path. */
static void test_wrap(void)
{
	struct cap_emit_config cfg;
	struct cap_emit e;
	struct cap_ring r;

	run_long_loop(300);
	cap_emit_config_default(&cfg);
	cfg.psb_period = 256;
	cfg.ret_compression = false;
	start(&e, &r, &cfg, 1000);
	CHECK(cap_emit_enable(&e, want.ip[0]) == 0);
	feed(&e, &want, 0, want.n);
	CHECK(cap_emit_disable(&e, want.end) == 0);
	CHECK_EQ_U64(cap_ring_size(&r), 1000);
	CHECK(cap_ring_lost(&r) > 0);
	CHECK_EQ_U64(cap_ring_lost(&r) + cap_ring_size(&r),
		     cap_ring_total(&r));
	CHECK(decode_ring(&r, &got) == -pte_eos);
	CHECK(got.n > 0 && got.n < want.n);
	check_suffix(&got, &want, want.n - got.n);
	cap_emit_fini(&e);
	cap_ring_fini(&r);
}

/* The index of the last instruction before @a in @p that produced a
 * TNT bit or a TIP, or 0. */
static size_t last_traced(const struct path *p, size_t a)
{
	struct cap_insn insn;
	size_t last = 0;

	for (size_t i = 0; i < a; i++) {
		cap_insn_decode(image + (p->ip[i] - BASE), 16, &insn);
		if (insn.iclass == CAP_IC_COND || insn.iclass == CAP_IC_RET ||
		    insn.iclass == CAP_IC_JUMP_IND ||
		    insn.iclass == CAP_IC_CALL_IND)
			last = i;
	}
	return last;
}

/* An overflow: instructions [a, b) are lost.  Decoding gives a prefix of
 * the path up to at least the last instruction whose packet was written
 * before the OVF (the straight-line code after it is lost with the
 * overflow, as on hardware), then a gap, then exactly [b, n). */
static void test_overflow(void)
{
	static const bool cond[] = { 1, 1, 0 };
	struct cap_emit e;
	struct cap_ring r;
	size_t a, b, g;

	assemble_calls();
	run(&want, BASE, &(struct script) { cond, 3, NULL, 0, false });
	a = want.n / 3;
	b = 2 * want.n / 3;
	start(&e, &r, NULL, 0);
	CHECK(cap_emit_enable(&e, want.ip[0]) == 0);
	feed(&e, &want, 0, a);
	CHECK(cap_emit_overflow(&e, want.ip[b]) == 0);
	feed(&e, &want, b, want.n);
	CHECK(cap_emit_disable(&e, want.end) == 0);
	CHECK(decode_ring(&r, &got) == -pte_eos);
	for (g = 0; g < got.n && got.ip[g] != GAP; g++)
		if (g < want.n)
			CHECK_EQ_U64(got.ip[g], want.ip[g]);
	CHECK(g > last_traced(&want, a) && g < got.n);
	memmove(&got.ip[0], &got.ip[g + 1],
		(got.n - g - 1) * sizeof(got.ip[0]));
	got.n -= g + 1;
	check_suffix(&got, &want, b);
	cap_emit_fini(&e);
	cap_ring_fini(&r);
}

/* An IP filter around main only: f and g are left by a taken branch
 * (TIP.PGD) and re-entered by a return (TIP.PGE); the decoded path is
 * the path without them. */
static void test_filter(void)
{
	static const bool cond[] = { 1, 1, 0 };
	struct cap_emit_config cfg;
	struct cap_emit_stats st;
	size_t n = 0;

	assemble_calls();
	run(&want, BASE, &(struct script) { cond, 3, NULL, 0, false });
	cap_emit_config_default(&cfg);
	cfg.nfilters = 1;
	cfg.filters[0] = (struct cap_filter) { BASE, 0x100 };
	record_and_decode(&cfg, &st);
	CHECK_EQ_U64(st.disables, 4);	/* 3 calls out, and the end */
	for (size_t i = 0; i < want.n; i++)
		if (want.ip[i] < BASE + 0x100)
			want.ip[n++] = want.ip[i];
	want.n = n;
	check_suffix(&got, &want, 0);
}

/* The classes of SDM table 33-1, encoding by encoding. */
static void test_classify(void)
{
	static const struct {
		uint8_t code[8];
		enum cap_iclass iclass;
		bool rep, logs_call;
	} t[] = {
		{ { 0x75, 0x00 }, CAP_IC_COND, 0, 0 },		/* jnz */
		{ { 0xe3, 0x00 }, CAP_IC_COND, 0, 0 },		/* jrcxz */
		{ { 0xe2, 0xfe }, CAP_IC_COND, 0, 0 },		/* loop */
		{ { 0xeb, 0xfe }, CAP_IC_JUMP, 0, 0 },		/* jmp . */
		{ { 0xe8, 1, 0, 0, 0 }, CAP_IC_CALL, 0, 1 },
		{ { 0xe8, 0, 0, 0, 0 }, CAP_IC_CALL, 0, 0 },	/* PIC idiom */
		{ { 0xff, 0xd0 }, CAP_IC_CALL_IND, 0, 1 },	/* call *%rax */
		{ { 0xff, 0x15, 1, 0, 0, 0 }, CAP_IC_CALL_IND, 0, 1 },
		{ { 0xff, 0x25, 1, 0, 0, 0 }, CAP_IC_JUMP_IND, 0, 0 },
		{ { 0x3e, 0xff, 0xe0 }, CAP_IC_JUMP_IND, 0, 0 },	/* notrack */
		{ { 0xc3 }, CAP_IC_RET, 0, 0 },
		{ { 0xf3, 0xc3 }, CAP_IC_RET, 0, 0 },		/* rep ret */
		{ { 0xc2, 8, 0 }, CAP_IC_RET, 0, 0 },
		{ { 0xcb }, CAP_IC_FAR, 0, 0 },			/* lret */
		{ { 0x48, 0xcf }, CAP_IC_FAR, 0, 0 },		/* iretq */
		{ { 0xff, 0x18 }, CAP_IC_FAR, 0, 0 },		/* lcall *(%rax) */
		{ { 0x0f, 0x05 }, CAP_IC_KERNEL, 0, 0 },	/* syscall */
		{ { 0xcd, 0x80 }, CAP_IC_KERNEL, 0, 0 },	/* int $0x80 */
		{ { 0xcc }, CAP_IC_KERNEL, 0, 0 },		/* int3 */
		{ { 0xf3, 0xa4 }, CAP_IC_OTHER, 1, 0 },		/* rep movsb */
		{ { 0xf2, 0xae }, CAP_IC_OTHER, 1, 0 },		/* repne scasb */
		{ { 0xa4 }, CAP_IC_OTHER, 0, 0 },		/* movsb */
		{ { 0xf3, 0x90 }, CAP_IC_OTHER, 0, 0 },		/* pause */
		{ { 0x48, 0x8b, 0x05, 1, 0, 0, 0 }, CAP_IC_OTHER, 0, 0 },
	};
	struct cap_insn insn;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK(cap_insn_decode(t[i].code, sizeof(t[i].code), &insn) > 0);
		CHECK_EQ_U64(insn.iclass, t[i].iclass);
		CHECK_EQ_U64(insn.rep_string, t[i].rep);
		CHECK_EQ_U64(insn.logs_call, t[i].logs_call);
	}
}

/* An instruction that does not follow from the one before (a transfer
 * the recorder did not report) is traced as an asynchronous event, so
 * decoding still matches. */
static void test_resync(void)
{
	struct cap_emit e;
	struct cap_ring r;

	reset();
	ASM(BASE, NOP, NOP, NOP, NOP);
	ASM(BASE + 0x80, NOP, NOP);
	start(&e, &r, NULL, 0);
	CHECK(cap_emit_enable(&e, BASE) == 0);
	CHECK(cap_emit_insn(&e, BASE, image, 16, BASE + 1) == 0);
	CHECK(cap_emit_insn(&e, BASE + 0x80, image + 0x80, 16,
			    BASE + 0x81) == 0);
	CHECK(cap_emit_disable(&e, BASE + 0x81) == 0);
	CHECK_EQ_U64(e.stats.resyncs, 1);
	CHECK(decode_ring(&r, &got) == -pte_eos);
	want.ip[0] = BASE;
	want.ip[1] = BASE + 0x80;
	want.n = 2;
	check_suffix(&got, &want, 0);
	cap_emit_fini(&e);
	cap_ring_fini(&r);
}

/* The overwriting ring keeps the last bytes in order, across writes of
 * any size, including one larger than the ring. */
static void test_ring(void)
{
	struct cap_ring r;
	uint8_t data[100], out[16];

	for (int i = 0; i < 100; i++)
		data[i] = (uint8_t) i;
	CHECK(cap_ring_init(&r, 16) == 0);
	CHECK(cap_ring_write(&r, data, 10) == 0);
	CHECK_EQ_U64(cap_ring_size(&r), 10);
	CHECK(cap_ring_write(&r, data + 10, 13) == 0);
	cap_ring_copy(&r, out);
	CHECK(!memcmp(out, data + 7, 16));
	CHECK(cap_ring_write(&r, data + 23, 40) == 0);
	cap_ring_copy(&r, out);
	CHECK(!memcmp(out, data + 47, 16));
	CHECK_EQ_U64(cap_ring_lost(&r), 63 - 16);
	cap_ring_fini(&r);
}

int main(void)
{
	RUN(test_ring);
	RUN(test_classify);
	RUN(test_straight);
	RUN(test_conditional);
	RUN(test_calls);
	RUN(test_ret_mismatch);
	RUN(test_deep_recursion);
	RUN(test_indirect);
	RUN(test_syscall);
	RUN(test_async);
	RUN(test_psb);
	RUN(test_wrap);
	RUN(test_overflow);
	RUN(test_filter);
	RUN(test_resync);
	return test_summary();
}
