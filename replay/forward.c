/* Value recovery's window: passes both ways over the entries around a
 * position, for the memory the walk back from the end (recover.c) does
 * not give there (issue 19; REPT's forward pass).
 *
 * The model.  The walk back loses a value where an instruction after the
 * position overwrote it without reading it first: a heap field set by a
 * plain store, a stack slot a later call reused.  What was stored there
 * before the position is often known, though: the walk knows the
 * registers at the store.  So, over the entries [lo, hi] around the
 * position (WINDOW_BEFORE before it, WINDOW_AFTER after), in a process
 * of one thread (another thread's writes are not ordered against this
 * one's):
 *
 *   1. backward: the walk's state before hi, walked back to lo by
 *      recover.c's rules (recover_step_back), keeping the registers
 *      known before each entry;
 *   2. forward: from that state before lo, each instruction executed as
 *      far as its inputs are known (effect.c's kinds: add, mov, lea, a
 *      load, a store, push, pop, call, ret, leave...), memory it writes
 *      at a known address set to the value written (or unknown), and
 *      all memory unknown after a write whose address is not known, a
 *      write the operands do not bound, a system call; everything
 *      unknown after a gap or a signal's entry.  Before each entry the
 *      registers the backward pass knew there are added;
 *   3. backward again, adding before each entry the registers the
 *      forward pass knew there (an add undone needs the operand the
 *      forward pass computed), then forward again.
 *
 * Every fact in each pass is proven from facts of the others, so
 * combining them proves.  Where two passes give a register byte
 * different values at an entry (the model or the recorded state is
 * wrong there), the byte is unknown at that entry in every later pass;
 * at the position, a memory byte the last backward and forward passes
 * know with different values is unknown.  Both count as conflicts
 * (replay_recover_conflicts), never shown.  The state so made at the
 * position is kept until another position is asked about.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "recover_internal.h"

/* Entries before and after the position the window covers, and the
 * forward passes it makes (each after a backward one). */
#define WINDOW_BEFORE 4096
#define WINDOW_AFTER 256
#define WINDOW_PASSES 2

/* The registers of a state before one entry of the window. */
struct regsnap {
	uint64_t r[HIST_NREGS];
	uint8_t k[HIST_NREGS];
};

/* A copy of @src's state (registers and memory) sharing its cursors
 * and decoded instructions; NULL if out of memory. */
static struct replay_recover *scratch_of(const struct replay_recover *src)
{
	struct replay_recover *s = malloc(sizeof(*s));
	size_t bytes = src->nslots * sizeof(*src->g);

	if (!s)
		return NULL;
	*s = *src;
	s->ncp = 0;
	s->win = NULL;
	s->ans = NULL;
	s->g = bytes ? malloc(bytes) : NULL;
	if (bytes && !s->g) {
		free(s);
		return NULL;
	}
	if (bytes)
		memcpy(s->g, src->g, bytes);
	return s;
}

static void scratch_free(struct replay_recover *s)
{
	if (s) {
		free(s->g);
		free(s);
	}
}

void recover_window_free(struct replay_recover *rc)
{
	scratch_free(rc->ans);
	rc->ans = NULL;
	rc->ans_pos = 0;
	hist_cursor_free(rc->win);
	rc->win = NULL;
}

/* 0x80 in each byte of @x that is not zero, else 0. */
static inline uint64_t nonzero_high(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;

	return (((x & low7) + low7) | x) & ~low7;
}

/* Bit b of the result: byte b of @x is not zero. */
static inline uint8_t nonzero_bytes(uint64_t x)
{
	return (uint8_t) (((nonzero_high(x) >> 7) *
			   0x0102040810204080ull) >> 56);
}

/* Byte b of the result is 0xff where bit b of @bits is set, else 0. */
static inline uint64_t byte_mask(uint8_t bits)
{
	uint64_t spread = (bits * 0x0101010101010101ull) &
			  0x8040201008040201ull;

	return (nonzero_high(spread) >> 7) * 0xff;
}

/* Adds to @s's registers what @snap knows but the bytes of @bad, which
 * become unknown in @s; a byte both know with different values becomes
 * unknown and joins @bad.  (A byte at a time, this was a third of a
 * window's cost: 27 registers of 8 bytes at each entry of each pass.) */
static void merge_regs(struct replay_recover *s, const struct regsnap *snap,
		       uint8_t bad[HIST_NREGS])
{
	for (int i = 0; i < HIST_NREGS; i++) {
		uint8_t k, add = snap->k[i] & (uint8_t) ~bad[i], clash;
		uint64_t m;

		if (i == HIST_RIP || (!add && !bad[i]))
			continue;	/* rip: the position's, not the state's */
		k = s->k[i] & (uint8_t) ~bad[i];
		s->k[i] = k;
		if (!add)
			continue;
		clash = add & k & nonzero_bytes(s->r[i] ^ snap->r[i]);
		add &= (uint8_t) ~k;
		m = byte_mask(add);
		s->r[i] = (s->r[i] & ~m) | (snap->r[i] & m);
		s->k[i] = (uint8_t) ((k | add) & ~clash);
		if (clash) {
			bad[i] |= clash;
			s->conflicts += (uint64_t) __builtin_popcount(clash);
		}
	}
}

static void record(struct regsnap *snap, const struct replay_recover *s)
{
	memcpy(snap->r, s->r, sizeof(snap->r));
	memcpy(snap->k, s->k, sizeof(snap->k));
}

/* Nothing is known of @s any more. */
static void forget_all(struct replay_recover *s)
{
	recover_mem_poison(s);
	memset(s->k, 0, sizeof(s->k));
}

/* Reads the entries [@w->lo, @w->hi] through @rc's window cursor: those
 * from the first it cannot read on are not WIN_READ, and resumed.
 * False if out of memory. */
static bool window_read(struct replay *rp, struct replay_recover *rc,
			struct window *w)
{
	size_t n = w->hi - w->lo + 1;
	bool ok = !hist_cursor_seek(rc->win, w->lo);

	w->e = malloc(n * sizeof(*w->e));
	w->st = malloc(n);
	if (!w->e || !w->st)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (i && ok)
			ok = !hist_cursor_next(rc->win);
		if (!ok) {
			w->st[i] = WIN_RESUMED;
			continue;
		}
		w->e[i] = *hist_cursor_entry(rc->win);
		w->st[i] = WIN_READ;
		/* Entry k was reached asynchronously (a signal, after a
		 * gap) if the entry before it does not lead to it
		 * (known_resume_continues); the first's is not asked. */
		if (!i || ((w->e[i].flags & HIST_F_RESUMED) &&
			   (!(w->st[i - 1] & WIN_READ) ||
			    !known_resume_continues(rp, &w->e[i - 1],
						    &w->e[i]))))
			w->st[i] |= WIN_RESUMED;
	}
	ptrr_clear_error();
	return true;
}

static void window_free(struct window *w)
{
	free(w->e);
	free(w->st);
}

/* The entry @k into *@e; false if it was not read or is not an
 * instruction. */
static bool window_insn(const struct window *w, uint64_t k,
			struct hist_entry *e)
{
	if (k < w->lo || k > w->hi || !(w->st[k - w->lo] & WIN_READ))
		return false;
	*e = w->e[k - w->lo];
	return e->kind == HIST_ENTRY_INSN;
}

/* True if entry @k was reached asynchronously. */
static bool window_resumed(const struct window *w, uint64_t k)
{
	return k < w->lo || k > w->hi || (w->st[k - w->lo] & WIN_RESUMED);
}

/* Walks @s, the state before entry @hi, back to entry @lo, recording
 * the registers before each entry k in @b[k - base] (with those of @f
 * added, if not NULL); a copy of the state before @pos into *@at.
 * Returns the lowest entry reached: @s is the state before it, and
 * nothing is recorded below it. */
static uint64_t back_pass(struct replay *rp, const struct window *w,
			  struct replay_recover *s, uint64_t lo, uint64_t base,
			  uint64_t hi, uint64_t pos, struct regsnap *b,
			  const struct regsnap *f, uint8_t (*bad)[HIST_NREGS],
			  struct replay_recover **at)
{
	struct hist_entry e;
	uint64_t k = hi;

	for (;;) {
		/* The state is before entry k (saved.c's look-up asks). */
		s->front = k;
		if (f)
			merge_regs(s, &f[k - base], bad[k - base]);
		record(&b[k - base], s);
		if (k == pos) {
			scratch_free(*at);
			*at = scratch_of(s);
		}
		if (k == lo || window_resumed(w, k) ||
		    !window_insn(w, k - 1, &e) ||
		    !recover_step_back(rp, s, &e))
			break;
		k--;
	}
	for (uint64_t j = base; j < k; j++)
		memset(b[j - base].k, 0, sizeof(b[j - base].k));
	return k;
}

/* The address of @m from @s's registers into *@a; false if one it needs
 * is not known. */
static bool fwd_address(const struct replay_recover *s,
			const struct hist_memref *m, uint64_t *a)
{
	*a = (uint64_t) m->disp;
	if (m->base >= 0) {
		if (!recover_reg_has(s, m->base, 0xff))
			return false;
		*a += s->r[m->base];
	}
	if (m->index >= 0) {
		if (!recover_reg_has(s, m->index, 0xff))
			return false;
		*a += s->r[m->index] * m->scale;
	}
	if (m->seg >= 0) {
		if (!recover_reg_has(s, m->seg, 0xff))
			return false;
		*a += s->r[m->seg];
	}
	return true;
}

/* Sets the low @n bytes at @a of @s to @v's. */
static void mem_set(struct replay_recover *s, uint64_t a, unsigned n,
		    uint64_t v)
{
	for (unsigned i = 0; i < n; i++) {
		struct granule *g = recover_granule(s, a + i, true);
		uint8_t bit = (uint8_t) (1u << ((a + i) & 7));

		if (!g) {
			recover_mem_poison(s);
			return;
		}
		g->ov |= bit;
		g->kn |= bit;
		g->val[(a + i) & 7] = (uint8_t) (v >> 8 * i);
	}
}

/* The @n (at most 8) bytes at @a of @s into *@v, zero-extended. */
static bool mem_value(struct replay *rp, struct replay_recover *s,
		      uint64_t a, unsigned n, uint64_t *v)
{
	uint8_t buf[8] = { 0 };

	if (n > 8 || !recover_mem_get(rp, s, a, n, buf))
		return false;
	memcpy(v, buf, 8);
	return true;
}

/* Sets register @r of @s to @v as an operation of @width bytes writes
 * it: 8 and 4 (zero-extending) the whole register, 2 and 1 the low
 * bytes. */
static void reg_set(struct replay_recover *s, int r, unsigned width,
		    uint64_t v)
{
	uint64_t m = width >= 8 ? ~0ull : (1ull << 8 * width) - 1;

	if (width == 4) {
		s->r[r] = (uint32_t) v;
		s->k[r] = 0xff;
		return;
	}
	s->r[r] = (s->r[r] & ~m) | (v & m);
	s->k[r] |= recover_low(width);
}

/* The value an instruction of kind STORE, STORE_IMM or ADD_MEM writes
 * to its operand at @a, from the registers @br/@bk before it. */
static bool stored_value(struct replay *rp, struct replay_recover *s,
			 const struct hist_effect *fx, uint64_t a,
			 const uint64_t *br, const uint8_t *bk, uint64_t *v)
{
	unsigned n = fx->writes[0].size;
	uint64_t x = (uint64_t) fx->imm;

	if (n > 8)
		return false;
	switch (fx->kind) {
	case HIST_EFF_STORE:
		*v = br[fx->r2];
		return (bk[fx->r2] & recover_low(n)) == recover_low(n);
	case HIST_EFF_STORE_IMM:
		*v = x;
		return true;
	case HIST_EFF_ADD_MEM:
		if (fx->r2 >= 0) {
			if ((bk[fx->r2] & recover_low(n)) != recover_low(n))
				return false;
			x = br[fx->r2];
		}
		if (!mem_value(rp, s, a, n, v))
			return false;
		*v += (uint64_t) fx->sign * x;
		return true;
	default:
		return false;
	}
}

/* Memory of @s after the instruction of @fx (registers before it in
 * @br/@bk and in @s). */
static void fwd_memory(struct replay *rp, struct replay_recover *s,
		       const struct hist_effect *fx, const uint64_t *br,
		       const uint8_t *bk)
{
	uint64_t a, v;

	if (fx->mem_unbounded || fx->kind == HIST_EFF_SYSCALL) {
		recover_mem_poison(s);
		return;
	}
	if (fx->kind == HIST_EFF_PUSH || fx->kind == HIST_EFF_PUSH_IMM ||
	    fx->kind == HIST_EFF_CALL) {
		if (bk[HIST_RSP] != 0xff) {
			recover_mem_poison(s);
			return;
		}
		a = br[HIST_RSP] - 8;
		if (fx->kind != HIST_EFF_PUSH)
			mem_set(s, a, 8, (uint64_t) fx->imm);
		else if (fx->r2 >= 0 && bk[fx->r2] == 0xff)
			mem_set(s, a, 8, br[fx->r2]);
		else
			recover_mem_forget(s, a, 8);
	}
	for (unsigned i = 0; i < fx->nwrites; i++) {
		const struct hist_memref *m = &fx->writes[i];

		if (!fwd_address(s, m, &a)) {
			recover_mem_poison(s);
			return;
		}
		if (fx->nwrites == 1 && stored_value(rp, s, fx, a, br, bk, &v))
			mem_set(s, a, m->size, v);
		else
			recover_mem_forget(s, a, m->size);
	}
}

/* The value of register @fx->r1 after the instruction of @fx, from the
 * registers before it (@br, @bk) and @s's memory; false if unknown. */
static bool fwd_value(struct replay *rp, struct replay_recover *s,
		      const struct hist_effect *fx, const uint64_t *br,
		      const uint8_t *bk, uint64_t *v)
{
	uint8_t need = recover_low(fx->width);
	int r1 = fx->r1, r2 = fx->r2;
	uint64_t a;

	switch (fx->kind) {
	case HIST_EFF_SET:
		*v = recover_set_value(fx);
		return true;
	case HIST_EFF_ADD:
		*v = br[r1] + (uint64_t) fx->imm;
		return (bk[r1] & need) == need;
	case HIST_EFF_MOV:
		*v = br[r2];
		return (bk[r2] & need) == need;
	case HIST_EFF_LEA:
		*v = br[r2] + (uint64_t) fx->imm;
		return (bk[r2] & need) == need;
	case HIST_EFF_ADD_REG:
		*v = br[r1] + br[r2] * (uint64_t) fx->imm;
		return (bk[r1] & need) == need && (bk[r2] & need) == need;
	case HIST_EFF_MUL:
		*v = br[r2] * (fx->imm ? (uint64_t) fx->imm : br[r1]);
		return (bk[r2] & need) == need &&
		       (fx->imm || (bk[r1] & need) == need);
	case HIST_EFF_MOVSX:
		a = br[r2];
		*v = fx->imm == 4 ? (uint64_t) (int64_t) (int32_t) a :
		     fx->imm == 2 ? (uint64_t) (int64_t) (int16_t) a :
		     (uint64_t) (int64_t) (int8_t) a;
		need = recover_low((unsigned) fx->imm);
		return (bk[r2] & need) == need;
	case HIST_EFF_LOAD:
		/* s's registers are still those before it. */
		if (!fwd_address(s, &fx->load, &a) ||
		    !mem_value(rp, s, a, fx->load.size, v))
			return false;
		*v = recover_loaded(fx, *v);
		return true;
	case HIST_EFF_POP:
		return bk[HIST_RSP] == 0xff &&
		       mem_value(rp, s, br[HIST_RSP], 8, v);
	default:
		return false;
	}
}

/* The state after the instruction of @fx from @s, the state before it;
 * @after: the registers another pass knows after it. */
static void step_forward(struct replay *rp, struct replay_recover *s,
			 const struct hist_effect *fx,
			 const struct regsnap *after)
{
	uint64_t br[HIST_NREGS], v = 0, a = 0, rbp = 0;
	uint8_t bk[HIST_NREGS];
	bool has_v, has_a = false, has_rbp;

	memcpy(br, s->r, sizeof(br));
	memcpy(bk, s->k, sizeof(bk));
	has_v = fx->r1 >= 0 && fwd_value(rp, s, fx, br, bk, &v);
	if (fx->kind == HIST_EFF_LOAD)
		has_a = fwd_address(s, &fx->load, &a);
	has_rbp = fx->kind == HIST_EFF_LEAVE && bk[HIST_RBP] == 0xff &&
		  mem_value(rp, s, br[HIST_RBP], 8, &rbp);
	fwd_memory(rp, s, fx, br, bk);

	/* Registers: what it writes is unknown but what follows. */
	for (int i = 0; i < HIST_NREGS; i++) {
		if ((i >= HIST_ORIG_RAX && i != HIST_RSP &&
		     i != HIST_FS_BASE && i != HIST_GS_BASE) ||
		    ((i == HIST_FS_BASE || i == HIST_GS_BASE) &&
		     (fx->mem_unbounded || fx->kind == HIST_EFF_SYSCALL))) {
			s->k[i] = 0;
			continue;
		}
		s->k[i] &= (uint8_t) ~fx->regs[i];
		if (fx->zext >> i & 1) {
			s->r[i] &= 0xffffffffull;
			s->k[i] |= 0xf0;
		}
	}
	switch (fx->kind) {
	case HIST_EFF_PUSH:
	case HIST_EFF_PUSH_IMM:
	case HIST_EFF_CALL:
	case HIST_EFF_POP:
	case HIST_EFF_RET:
		s->k[HIST_RSP] = bk[HIST_RSP];
		s->r[HIST_RSP] = br[HIST_RSP] +
			(fx->kind == HIST_EFF_POP ? 8 :
			 fx->kind == HIST_EFF_RET ? 8 + (uint64_t) fx->imm :
			 (uint64_t) -8);
		break;
	case HIST_EFF_LEAVE:
		s->k[HIST_RSP] = bk[HIST_RBP];
		s->r[HIST_RSP] = br[HIST_RBP] + 8;
		s->k[HIST_RBP] = has_rbp ? 0xff : 0;
		s->r[HIST_RBP] = rbp;
		break;
	case HIST_EFF_XCHG:
		s->r[fx->r1] = br[fx->r2];
		s->k[fx->r1] = bk[fx->r2];
		s->r[fx->r2] = br[fx->r1];
		s->k[fx->r2] = bk[fx->r1];
		break;
	default:
		break;
	}
	if (has_v)
		reg_set(s, fx->r1, fx->kind == HIST_EFF_POP ? 8 : fx->width, v);
	/* A load whose result the other pass knows tells what memory
	 * held (the same after it). */
	if (fx->kind == HIST_EFF_LOAD && !has_v && has_a &&
	    fx->load.size <= 8 &&
	    (after->k[fx->r1] & recover_low(fx->load.size)) ==
	    recover_low(fx->load.size)) {
		uint8_t buf[8];

		memcpy(buf, &after->r[fx->r1], 8);
		recover_mem_learn(rp, s, a, fx->load.size, buf);
	}
}

/* Runs @s, the state before entry @lo, forward to entry @hi, adding
 * before each entry k the registers of @b[k - base] and recording the
 * result in @f[k - base]; a copy of the state before @pos into *@at. */
static void fwd_pass(struct replay *rp, const struct window *w,
		     struct replay_recover *s, uint64_t lo, uint64_t base,
		     uint64_t hi, uint64_t pos, const struct regsnap *b,
		     struct regsnap *f, uint8_t (*bad)[HIST_NREGS],
		     struct replay_recover **at)
{
	struct hist_entry e;

	for (uint64_t k = lo;; k++) {
		const struct hist_effect *fx;

		s->front = k;
		merge_regs(s, &b[k - base], bad[k - base]);
		record(&f[k - base], s);
		if (k == pos) {
			scratch_free(*at);
			*at = scratch_of(s);
		}
		if (k == hi)
			break;
		if (!window_insn(w, k, &e) ||
		    !(fx = recover_effect(rp, s, &e))) {
			forget_all(s);
			continue;
		}
		step_forward(rp, s, fx, &b[k + 1 - base]);
		if (window_resumed(w, k + 1))
			forget_all(s);
	}
}

/* Adds to @ans what @fp knows of memory (a byte they know with different
 * values becomes unknown). */
static void merge_memory(struct replay *rp, struct replay_recover *ans,
			 const struct replay_recover *fp)
{
	for (size_t i = 0; i < fp->nslots; i++) {
		const struct granule *g = &fp->g[i];

		for (unsigned j = 0; g->key && j < 8; j++)
			if (g->ov & g->kn & (1u << j))
				recover_mem_learn(rp, ans,
						  ((g->key - 1) << 3) + j, 1,
						  &g->val[j]);
	}
}

/* The passes over [lo, hi] (see the top of the file) from @main, the
 * walk's state before @hi: the state before @pos, or NULL. */
static struct replay_recover *passes(struct replay *rp,
				     struct replay_recover *main,
				     const struct window *w, uint64_t pos)
{
	uint64_t lo = w->lo, hi = w->hi;
	size_t n = hi - lo + 1;
	struct regsnap *b = malloc(n * sizeof(*b));
	struct regsnap *f = malloc(n * sizeof(*f));
	uint8_t (*bad)[HIST_NREGS] = calloc(n, sizeof(*bad));
	struct replay_recover *s = scratch_of(main), *bp = NULL, *fp = NULL;
	uint64_t low_end = lo;

	for (unsigned pass = 0; b && f && bad && s; pass++) {
		uint64_t k = back_pass(rp, w, s, low_end, lo, hi, pos, b,
				       pass ? f : NULL, bad, &bp);

		if (!pass)
			low_end = k;
		if (!bp)
			break;
		fwd_pass(rp, w, s, low_end, lo, hi, pos, b, f, bad, &fp);
		scratch_free(s);
		s = NULL;
		if (!fp || pass + 1 == WINDOW_PASSES)
			break;
		s = scratch_of(main);
	}
	scratch_free(s);
	if (bp && fp) {
		merge_regs(bp, &f[pos - lo], bad[pos - lo]);
		merge_memory(rp, bp, fp);
	} else {
		scratch_free(bp);
		bp = NULL;
	}
	scratch_free(fp);
	free(b);
	free(f);
	free(bad);
	return bp;
}

struct replay_recover *recover_window(struct replay *rp,
				      struct replay_recover *rc, size_t thr,
				      uint64_t pos)
{
	struct replay_thread *t = &rp->t[thr];
	struct replay_recover *main;
	struct hist_entry e;
	struct window w = { 0 };

	if (rc->ans && rc->ans_pos == pos)
		return rc->ans;
	scratch_free(rc->ans);
	rc->ans = NULL;
	if (rp->n != 1 || !pos || pos > t->last ||
	    (!rc->win && hist_cursor_new(t->h, &rc->win)))
		return NULL;
	w.lo = pos > WINDOW_BEFORE ? pos - WINDOW_BEFORE : 1;
	w.hi = t->last - pos > WINDOW_AFTER ? pos + WINDOW_AFTER : t->last;
	if (!(main = recover_walk_to(rp, thr, w.hi)))
		return NULL;
	/* The decoded instructions the copies share, allocated here. */
	if (window_read(rp, rc, &w) && window_insn(&w, pos, &e) &&
	    recover_effect(rp, main, &e)) {
		main->window = &w;	/* the copies' scan_back() */
		rc->ans = passes(rp, main, &w, pos);
		main->window = NULL;
		if (rc->ans)
			rc->ans->window = NULL;
		rc->ans_pos = pos;
	}
	window_free(&w);
	ptrr_clear_error();
	return rc->ans;
}
