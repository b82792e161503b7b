/* Value recovery: registers and memory at a past position, proven from
 * the state at the end of a thread's history and the instructions it
 * executed since (issue 19; known.c serves what this proves).
 *
 * The model.  The state before an instruction entry is its registers
 * and memory, each byte of which is either known (with its value) or not.
 * Before the last entry of a thread's history it is the recorded end
 * (known.c's last_regs: all registers at a crash or stop, most of them
 * at an exit system call; memory at the present: the crash snapshot or
 * the live process, in a process of one thread only, since another
 * thread's writes are not ordered against this one's).  Walking back
 * over one instruction (history/effect.c says what it did) gives the
 * state before it:
 *
 *   - a register byte the instruction does not write is what it was
 *     after; one it writes is unknown before, unless the instruction can
 *     be undone: r += imm (add, sub, inc, dec, lea r,[r+d]: before is
 *     after - imm), push, pop, call and ret on rsp, leave (rbp before is
 *     rsp after - 8), xchg;
 *   - memory it writes is unknown before, at addresses computed from the
 *     registers before it; a write whose base is known and whose index
 *     is not but is bounded by how it was last set (index_bounds: a
 *     32-bit write, a sign extension, a narrower load) makes that range
 *     unknown (a hole in the present's memory; what was learned there is
 *     forgotten); any other write whose address is not known (a register
 *     in it unknown), one the operands do not bound (rep stos, xsave) and
 *     a system call (the kernel may write anything) make all memory
 *     unknown before them;
 *   - what an instruction ties together fills in what is unknown on
 *     either side: a load r = [m] says what [m] held (before and after:
 *     a load writes no memory); a store [m] = r says what r held (the
 *     stored value, known after); r1 = r2 says what r2 held; pop r says
 *     what the stack slot held.  Where such a fill meets a byte already
 *     known to hold something else, the byte becomes unknown (a
 *     conflict: the recorded state or the model is wrong there; counted
 *     in recover_conflicts, never shown as a value).  Memory is learned
 *     so only in a process of one thread: another thread's writes fall
 *     anywhere between two of this one's instructions.
 *
 * Registers recorded on the way (the software backend's sets,
 * evidence.c) are known points too: before an entry where a set was
 * recorded the walk learns every register of it, as from the end.
 *
 * The walk stops, and nothing is known before, at a gap, at an entry
 * reached asynchronously (a signal, after a gap), at an instruction that
 * does not decode, and after RECOVER_MAX_BACK instructions — unless a
 * set of registers was recorded before it: the walk then starts again
 * from the first set at or after the position asked about (memory
 * unknown there, as it is not recorded), and the same for a position
 * more than RECOVER_MAX_BACK before the end.  It is lazy:
 * the state is kept at the position last asked about, so asking further
 * back continues the walk; asking later goes on from the nearest
 * checkpoint after it — a copy of the state the walk leaves every
 * CHECKPOINT_EVERY entries of new ground (fewer, further apart, as they
 * fill) — or from the end if there is none.  The walk from a checkpoint
 * is the walk from the end: the state there is the same.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "recover_internal.h"

/* Instructions walked back from the end at most. */
#define RECOVER_MAX_BACK 2000000
/* Decoded instructions kept (a power of two). */
#define EFFECT_SLOTS 65536
/* Entries between checkpoints at first; at most CHECKPOINTS of them
 * (then every other one goes and the interval doubles), holding at most
 * CHECKPOINT_BYTES of memory state. */
#define CHECKPOINT_EVERY 4096
#define CHECKPOINT_BYTES ((size_t) 64 << 20)
/* Granule slots a table forgetting all memory keeps (cleared). */
#define POISON_KEEP_SLOTS 1024

void replay_recover_reset(struct replay_thread *t)
{
	if (!t->recover)
		return;
	for (size_t i = 0; i < t->recover->ncp; i++)
		free(t->recover->cp[i].g);
	recover_window_free(t->recover);
	hist_cursor_free(t->recover->cur);
	hist_cursor_free(t->recover->scan);
	free(t->recover->g);
	free(t->recover->fx);
	free(t->recover);
	t->recover = NULL;
}

/* ---- Memory ---- */

/* Notes granule @g as set (for the holes to clear it); returns it. */
static struct granule *note_touched(struct replay_recover *rc,
				    struct granule *g)
{
	if (rc->ntouched && rc->touched[rc->ntouched - 1] == g->key)
		return g;
	if (rc->ntouched == TOUCHED_MAX) {
		rc->ntouched = 0;
		rc->epoch++;
	}
	rc->touched[rc->ntouched++] = g->key;
	return g;
}

/* The granule of address @addr, added (all bytes not overridden) if
 * @add; NULL if none or out of memory. */
struct granule *recover_granule(struct replay_recover *rc, uint64_t addr,
			       bool add)
{
	uint64_t key = (addr >> 3) + 1;
	size_t i;

	if (add && 2 * (rc->used + 1) > rc->nslots) {
		size_t n = rc->nslots ? 2 * rc->nslots : 1024;
		struct granule *s = calloc(n, sizeof(*s));

		if (!s)
			return NULL;
		for (size_t j = 0; j < rc->nslots; j++) {
			if (!rc->g[j].key)
				continue;
			for (i = rc->g[j].key * 0x9e3779b97f4a7c15ull >> 20 &
				 (n - 1);
			     s[i].key; i = (i + 1) & (n - 1))
				;
			s[i] = rc->g[j];
		}
		free(rc->g);
		rc->g = s;
		rc->nslots = n;
	}
	if (!rc->nslots)
		return NULL;
	for (i = key * 0x9e3779b97f4a7c15ull >> 20 & (rc->nslots - 1);
	     rc->g[i].key; i = (i + 1) & (rc->nslots - 1))
		if (rc->g[i].key == key)
			return add ? note_touched(rc, &rc->g[i]) : &rc->g[i];
	if (!add)
		return NULL;
	rc->used++;
	rc->g[i] = (struct granule) { .key = key };
	return note_touched(rc, &rc->g[i]);
}

/* Forgets all memory: nothing is known before the walk's front. */
void recover_mem_poison(struct replay_recover *rc)
{
	/* A large table goes (the next granule makes a small one): the
	 * window's passes forget all memory at every system call, and
	 * clearing was an eighth of their cost. */
	if (rc->nslots > POISON_KEEP_SLOTS) {
		free(rc->g);
		rc->g = NULL;
		rc->nslots = 0;
	} else if (rc->g && rc->used) {
		memset(rc->g, 0, rc->nslots * sizeof(*rc->g));
	}
	rc->used = 0;
	rc->base = false;
	rc->nholes = 0;
	rc->ntouched = 0;
	rc->epoch++;
}

/* True if the present's byte at @addr is not to be taken (a hole). */
static bool in_hole(const struct replay_recover *rc, uint64_t addr)
{
	for (unsigned i = 0; i < rc->nholes; i++)
		if (rc->holes[i].lo <= addr && addr < rc->holes[i].hi)
			return true;
	return false;
}

/* Makes the bytes of granule @g within [@lo, @hi) unknown. */
static void clear_granule(struct granule *g, uint64_t lo, uint64_t hi)
{
	uint64_t a = (g->key - 1) << 3;

	for (unsigned j = 0; j < 8; j++)
		if (a + j >= lo && a + j < hi) {
			g->ov |= (uint8_t) (1u << j);
			g->kn &= (uint8_t) ~(1u << j);
		}
}

/* Makes memory [@lo, @hi) unknown: the present's through a hole (a
 * new one, or one covering it), and what is known of it otherwise —
 * every granule when the hole is new or the log of those set since it
 * was cleared is lost, else those of the log.  All memory when the
 * holes are full. */
void recover_mem_forget_range(struct replay_recover *rc, uint64_t lo,
			      uint64_t hi)
{
	struct hole *h = NULL;

	for (unsigned i = 0; i < rc->nholes && !h; i++)
		if (rc->holes[i].lo <= lo && hi <= rc->holes[i].hi)
			h = &rc->holes[i];
	if (h && h->epoch == rc->epoch) {
		for (unsigned i = h->at; i < rc->ntouched; i++) {
			struct granule *g = recover_granule(rc,
					(rc->touched[i] - 1) << 3, false);

			if (g)
				clear_granule(g, lo, hi);
		}
	} else {
		if (!h && rc->nholes == HOLES_MAX) {
			recover_mem_poison(rc);
			return;
		}
		if (!h) {
			h = &rc->holes[rc->nholes++];
			h->lo = lo;
			h->hi = hi;
		}
		for (size_t i = 0; i < rc->nslots; i++)
			if (rc->g[i].key)
				clear_granule(&rc->g[i], lo, hi);
	}
	h->at = rc->ntouched;
	h->epoch = rc->epoch;
}

/* The byte at @addr into *@v: true if known. */
bool recover_mem_byte(struct replay *rp, struct replay_recover *rc,
		     uint64_t addr, uint8_t *v)
{
	struct granule *g = recover_granule(rc, addr, false);
	unsigned bit = 1u << (addr & 7);
	uint8_t buf[8];
	size_t n;

	if (g && (g->ov & bit)) {
		*v = g->val[addr & 7];
		return g->kn & bit;
	}
	if (!rc->base || in_hole(rc, addr))
		return false;
	/* The present's granule, kept (it does not change). */
	n = known_present_read(rp, addr & ~7ull, buf, 8);
	g = recover_granule(rc, addr, true);
	if (!g)
		return false;
	for (size_t i = 0; i < 8; i++) {
		if (g->ov & (1u << i))
			continue;
		g->ov |= (uint8_t) (1u << i);
		if (i < n && !in_hole(rc, (addr & ~7ull) + i)) {
			g->kn |= (uint8_t) (1u << i);
			g->val[i] = buf[i];
		}
	}
	*v = g->val[addr & 7];
	return g->kn & bit;
}

/* The @n bytes at @addr into @buf: true if all are known. */
bool recover_mem_get(struct replay *rp, struct replay_recover *rc,
		    uint64_t addr, size_t n, uint8_t *buf)
{
	for (size_t i = 0; i < n; i++)
		if (!recover_mem_byte(rp, rc, addr + i, &buf[i]))
			return false;
	return true;
}

/* Makes the @n bytes at @addr unknown. */
void recover_mem_forget(struct replay_recover *rc, uint64_t addr, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct granule *g = recover_granule(rc, addr + i, true);
		unsigned bit = 1u << ((addr + i) & 7);

		if (!g) {
			recover_mem_poison(rc);
			return;
		}
		g->ov |= (uint8_t) bit;
		g->kn &= (uint8_t) ~bit;
	}
}

/* Fills what is unknown of the @n bytes at @addr with @buf; a byte known
 * to hold another value becomes unknown (a conflict).  Nothing in a
 * process of several threads: what memory held at one instruction says
 * nothing about it at an earlier one, since another thread may have
 * written it in between (a load after such a write would otherwise
 * give an earlier load of the same address the later value). */
void recover_mem_learn(struct replay *rp, struct replay_recover *rc,
		      uint64_t addr, size_t n, const uint8_t *buf)
{
	if (rp->n != 1)
		return;
	for (size_t i = 0; i < n; i++) {
		uint8_t v;
		bool known = recover_mem_byte(rp, rc, addr + i, &v);
		struct granule *g = recover_granule(rc, addr + i, true);
		unsigned bit = 1u << ((addr + i) & 7);

		if (!g)
			return;
		g->ov |= (uint8_t) bit;
		if (known && v != buf[i]) {
			g->kn &= (uint8_t) ~bit;
			rc->conflicts++;
		} else if (!known) {
			g->kn |= (uint8_t) bit;
			g->val[(addr + i) & 7] = buf[i];
		}
	}
}

/* ---- Registers ---- */

/* True if all bytes @mask of register @r are known. */
bool recover_reg_has(const struct replay_recover *rc, int r, uint8_t mask)
{
	return r >= 0 && (rc->k[r] & mask) == mask;
}

/* Fills what is unknown of bytes @mask of register @r with @v's; a known
 * byte of another value becomes unknown (a conflict). */
void recover_reg_learn(struct replay_recover *rc, int r, uint8_t mask,
		      uint64_t v)
{
	for (int i = 0; r >= 0 && i < 8; i++) {
		uint64_t m = 0xffull << (8 * i);

		if (!(mask & (1u << i)))
			continue;
		if (!(rc->k[r] & (1u << i))) {
			rc->r[r] = (rc->r[r] & ~m) | (v & m);
			rc->k[r] |= (uint8_t) (1u << i);
		} else if ((rc->r[r] & m) != (v & m)) {
			rc->k[r] &= (uint8_t) ~(1u << i);
			rc->conflicts++;
		}
	}
}

/* ---- The walk ---- */

/* The effect of the instruction of entry @e, decoded once per address;
 * NULL if it does not decode. */
const struct hist_effect *recover_effect(struct replay *rp,
					struct replay_recover *rc,
					const struct hist_entry *e)
{
	size_t i = e->ip * 0x9e3779b97f4a7c15ull >> 40 & (EFFECT_SLOTS - 1);
	struct effect_slot *s;
	uint8_t code[16];
	size_t n;

	if (!rc->fx && !(rc->fx = calloc(EFFECT_SLOTS, sizeof(*rc->fx))))
		return NULL;
	s = &rc->fx[i];
	if (s->ip == e->ip && e->ip)
		return &s->fx;
	n = known_image_read(rp, e->ip, code, e->size ? e->size : 15);
	if (!n || hist_effect_of(code, n, e->ip, &s->fx) < 0 ||
	    (e->size && s->fx.length != e->size)) {
		s->ip = 0;
		return NULL;
	}
	s->ip = e->ip;
	return &s->fx;
}

/* ---- Memory a proof read ---- */

/* Adds [@a, @a + @n) to @sp; when full, the interval nearest it grows
 * to cover it (a span may cover more than was read, never less). */
void span_add(struct span *sp, uint64_t a, uint64_t n)
{
	uint64_t hi = a + n, best = UINT64_MAX;
	unsigned j = 0, i;

	if (!n)
		return;
	for (i = 0; i < sp->n; i++)
		if (a <= sp->hi[i] && sp->lo[i] <= hi)
			break;
	if (i < sp->n) {
		j = i;
	} else if (sp->n < SPAN_MAX) {
		sp->lo[sp->n] = a;
		sp->hi[sp->n++] = hi;
		return;
	} else {
		for (i = 0; i < sp->n; i++) {
			uint64_t d = hi < sp->lo[i] ? sp->lo[i] - hi :
				     a - sp->hi[i];

			if (d < best) {
				best = d;
				j = i;
			}
		}
	}
	if (a < sp->lo[j])
		sp->lo[j] = a;
	if (hi > sp->hi[j])
		sp->hi[j] = hi;
}

/* Adds the intervals of @src to @dst. */
void span_join(struct span *dst, const struct span *src)
{
	for (unsigned i = 0; i < src->n; i++)
		span_add(dst, src->lo[i], src->hi[i] - src->lo[i]);
}

/* True if [@a, @a + @n) overlaps memory of @sp. */
bool span_hits(const struct span *sp, uint64_t a, uint64_t n)
{
	for (unsigned i = 0; i < sp->n; i++)
		if (a < sp->hi[i] && sp->lo[i] < a + n)
			return true;
	return false;
}

/* Instructions resolve() reads back at most, and definitions it
 * follows. */
#define RESOLVE_BACK 48
/* ... for the address of a write that would otherwise make the present's
 * memory unknown (replay_recover.long_scan). */
#define RESOLVE_BACK_LONG 4096
#define RESOLVE_DEPTH 8
/* ... and when answering a question about a position (not walking). */
#define QUERY_DEPTH 8

/* Writes a resolve() scan remembers, to check what the definition it
 * finds read against them. */
#define SCAN_WRITES 32

/* The written memory of an instruction within a resolve() scan. */
struct scan_write {
	struct hist_memref m;	/* from the registers before it */
	uint64_t at;		/* its entry */
	uint32_t wr;		/* registers written after it, before @at */
	bool rsp_ok;		/* rsp before it is rsp: */
	uint64_t rsp;
};

static bool resolve(struct replay *rp, struct replay_recover *rc,
		    uint64_t at, int reg, uint8_t need, uint32_t wr0,
		    const uint64_t *rsp_at, unsigned depth, uint64_t *v,
		    struct span *sp);

bool recover_rsp_delta(const struct hist_effect *fx, int64_t *d)
{
	*d = 0;
	if (!fx->regs[HIST_RSP])
		return true;
	switch (fx->kind) {
	case HIST_EFF_PUSH:
	case HIST_EFF_PUSH_IMM:
	case HIST_EFF_CALL:
		*d = -8;
		return true;
	case HIST_EFF_POP:
		*d = fx->r1 == HIST_RSP ? 0 : 8;
		return fx->r1 != HIST_RSP;
	case HIST_EFF_RET:
		*d = 8 + fx->imm;
		return true;
	case HIST_EFF_ADD:
		*d = fx->imm;
		return fx->r1 == HIST_RSP && fx->width == 8;
	default:
		return false;
	}
}

/* Moves cursor @c one entry back, into *@e: false if it cannot, or if
 * the entry it left does not follow from *@e (tracing resumed
 * elsewhere: known_resume_continues). */
static bool back_to(struct replay *rp, struct hist_cursor *c,
		    struct hist_entry *e)
{
	struct hist_entry after = *hist_cursor_entry(c);

	if (hist_cursor_prev(c))
		return false;
	*e = *hist_cursor_entry(c);
	return known_resume_continues(rp, e, &after);
}

/* The effect of entry @k for a scan back from a later entry, with rsp
 * before it in *@rsp while every step back was a constant (*@rsp_ok):
 * NULL where a scan must stop (an entry resumed after it — a signal —,
 * not an instruction, one that writes memory unbounded or is a system
 * call). */
static const struct hist_effect *scan_back(struct replay *rp,
					   struct replay_recover *rc,
					   uint64_t k, bool *rsp_ok,
					   uint64_t *rsp)
{
	const struct window *w = rc->window;
	const struct hist_effect *fx;
	struct hist_entry e;
	int64_t d = 0;

	/* In forward.c's window, its entries: no seeks. */
	if (w && k >= w->lo && k < w->hi) {
		if (!(w->st[k - w->lo] & WIN_READ) ||
		    (w->st[k + 1 - w->lo] & WIN_RESUMED))
			return NULL;
		e = w->e[k - w->lo];
	} else if (hist_cursor_seek(rc->scan, k + 1) ||
		   !back_to(rp, rc->scan, &e)) {
		return NULL;
	}
	rc->scanned = e;
	if (e.kind != HIST_ENTRY_INSN || !(fx = recover_effect(rp, rc, &e)) ||
	    fx->mem_unbounded || fx->kind == HIST_EFF_SYSCALL)
		return NULL;
	*rsp_ok = *rsp_ok && recover_rsp_delta(fx, &d);
	*rsp -= (uint64_t) d;
	return fx;
}

/* The value before entry @k of register @x: the state's if no entry from
 * @k to the state's (@wr: the registers they write) writes it, rsp from
 * *@rsp_k (rsp before @k) if not NULL, else resolved further back.  Of
 * the state's, only the bytes @need must be known (the low ones a
 * 32-bit operation reads; the others of *@v are then not to be used). */
static bool value_before(struct replay *rp, struct replay_recover *rc,
			 uint64_t at, uint64_t k, int x, uint8_t need,
			 uint32_t wr, unsigned depth, const uint64_t *rsp_k,
			 uint64_t *v, struct span *sp)
{
	if (x < 0)
		return false;
	if (x == HIST_RSP && rsp_k) {
		*v = *rsp_k;
		return true;
	}
	if (!(wr & (1u << x)) && recover_reg_has(rc, x, need)) {
		*v = rc->r[x];
		return true;
	}
	(void) at;
	return resolve(rp, rc, k, x, need, wr, rsp_k, depth + 1, v, sp);
}

/* The address of @m at entry @k from registers unwritten from @k to
 * @at - 1 (@wr), into *@a; rsp before entry @k is *@rsp if @rsp is not
 * NULL. */
static bool address_rsp(struct replay *rp, struct replay_recover *rc,
			uint64_t at, uint64_t k, const struct hist_memref *m,
			uint32_t wr, unsigned depth, const uint64_t *rsp,
			uint64_t *a, struct span *sp)
{
	uint64_t x;

	*a = (uint64_t) m->disp;
	if (m->base >= 0) {
		if (!value_before(rp, rc, at, k, m->base, 0xff, wr, depth, rsp, &x, sp))
			return false;
		*a += x;
	}
	if (m->index >= 0) {
		if (!value_before(rp, rc, at, k, m->index, 0xff, wr, depth, rsp, &x, sp))
			return false;
		*a += x * m->scale;
	}
	if (m->seg >= 0) {
		if (!recover_reg_has(rc, m->seg, 0xff))
			return false;
		*a += rc->r[m->seg];
	}
	return true;
}

/* address_rsp() with rsp, if a register of @m, as the others. */
static bool address_before(struct replay *rp, struct replay_recover *rc,
			   uint64_t at, uint64_t k, const struct hist_memref *m,
			   uint32_t wr, unsigned depth, uint64_t *a,
			   struct span *sp)
{
	return address_rsp(rp, rc, at, k, m, wr, depth, NULL, a, sp);
}

/* The value of register @reg after entry @k (effect @fx), which set it,
 * into *@v: from a load (memory before @at: nothing between may write
 * it, resolve() checks), a copy, r += imm, a sign extension. */
static bool defined_by(struct replay *rp, struct replay_recover *rc,
		       uint64_t at, uint64_t k, const struct hist_effect *fx,
		       int reg, uint32_t wr, unsigned depth,
		       const uint64_t *rsp_k, uint64_t *v, struct span *sp)
{
	uint8_t buf[8];
	uint64_t a, x;

	switch (fx->kind) {
	case HIST_EFF_SET:
		if (fx->r1 != reg)
			return false;
		*v = recover_set_value(fx);
		return true;
	case HIST_EFF_LOAD:
		if (fx->r1 != reg || fx->width < 4 ||
		    (fx->regs[reg] & 0xff) != 0xff ||
		    !address_rsp(rp, rc, at, k, &fx->load, wr, depth, rsp_k, &a, sp))
			return false;
		memset(buf, 0, sizeof(buf));
		if (!recover_mem_get(rp, rc, a, fx->load.size, buf)) {
			/* Else what was last stored there before entry k
			 * (known as of k: nothing after it matters). */
			for (unsigned i = 0; i < fx->load.size && i < 8; i++)
				if (!recover_stored_before(rp, rc, k, wr, rsp_k,
						   depth + 1, a + i, &buf[i], sp))
					return false;
			memcpy(v, buf, 8);
			*v = recover_loaded(fx, *v);
			return true;
		}
		memcpy(v, buf, 8);
		*v = recover_loaded(fx, *v);
		span_add(sp, a, fx->load.size);
		return true;
	case HIST_EFF_MOV:
		if (fx->r1 != reg ||
		    !value_before(rp, rc, at, k, fx->r2, recover_low(fx->width),
				  wr, depth, rsp_k, &x, sp))
			return false;
		*v = fx->width == 4 ? (uint32_t) x : x;
		return true;
	case HIST_EFF_MUL:
		if (fx->r1 != reg ||
		    !value_before(rp, rc, at, k, fx->r2, recover_low(fx->width),
				  wr, depth, rsp_k, &a, sp))
			return false;
		if (fx->imm)
			x = (uint64_t) fx->imm;
		else if (fx->r2 == reg ? (x = a, false) :
			 !resolve(rp, rc, k, reg, recover_low(fx->width), wr,
				  rsp_k, depth + 1, &x, sp))
			return false;
		*v = x * a;
		if (fx->width == 4)
			*v = (uint32_t) *v;
		return true;
	case HIST_EFF_ADD:
		/* A 32-bit add zero-extends. */
		if (fx->r1 != reg || (fx->width != 8 && fx->width != 4) ||
		    !resolve(rp, rc, k, reg, recover_low(fx->width), wr, rsp_k,
			     depth + 1, &x, sp))
			return false;
		*v = x + (uint64_t) fx->imm;
		if (fx->width == 4)
			*v = (uint32_t) *v;
		return true;
	case HIST_EFF_ADD_REG:
		if (fx->r1 != reg ||
		    !resolve(rp, rc, k, reg, recover_low(fx->width), wr, rsp_k,
			     depth + 1, &x, sp) ||
		    !value_before(rp, rc, at, k, fx->r2, recover_low(fx->width),
				  wr, depth, rsp_k, &a, sp))
			return false;
		*v = x + a * (uint64_t) fx->imm;
		if (fx->width == 4)
			*v = (uint32_t) *v;
		return true;
	case HIST_EFF_LEA:
		if (fx->r1 != reg ||
		    !value_before(rp, rc, at, k, fx->r2, recover_low(fx->width),
				  wr, depth, rsp_k, &x, sp))
			return false;
		*v = x + (uint64_t) fx->imm;
		if (fx->width == 4)
			*v = (uint32_t) *v;
		return true;
	case HIST_EFF_MOVSX:
		if (fx->r1 != reg || fx->width != 8)
			return false;
		if (fx->r2 == reg ?
		    !resolve(rp, rc, k, reg, recover_low((unsigned) fx->imm),
			     wr, rsp_k, depth + 1, &x, sp) :
		    !value_before(rp, rc, at, k, fx->r2,
				  recover_low((unsigned) fx->imm),
				  wr, depth, rsp_k, &x, sp))
			return false;
		*v = fx->imm == 4 ? (uint64_t) (int64_t) (int32_t) x :
		     fx->imm == 2 ? (uint64_t) (int64_t) (int16_t) x :
		     (uint64_t) (int64_t) (int8_t) x;
		return true;
	default:
		return false;
	}
}

/* The value of register @reg (bytes @need) stored by entry @k (effect
 * @fx, a store of it), into *@v: the memory it wrote, as the state holds
 * it, if none of the @nw writes @w after it (before @at) may overlap it
 * or the memory its address took.  The register is unchanged from @k to
 * @at (resolve() found no write of it). */
static bool stored_from(struct replay *rp, struct replay_recover *rc,
			uint64_t at, uint64_t k, const struct hist_effect *fx,
			uint8_t need, uint32_t wr, unsigned depth,
			const uint64_t *rsp_k, const struct scan_write *w,
			unsigned nw, uint64_t *v, struct span *sp)
{
	const struct hist_memref *m = &fx->writes[0];
	struct span rd = { 0 };
	uint8_t buf[8] = { 0 };
	uint64_t a, t;

	if (fx->nwrites != 1 || m->size > 8 ||
	    (recover_low(m->size) & need) != need ||
	    !address_rsp(rp, rc, at, k, m, wr, depth, rsp_k, &a, &rd) ||
	    span_hits(&rd, a, m->size) ||
	    !recover_mem_get(rp, rc, a, m->size, buf))
		return false;
	span_add(&rd, a, m->size);
	for (unsigned i = 0; i < nw; i++)
		if (!address_rsp(rp, rc, at, w[i].at, &w[i].m, w[i].wr, depth,
				 w[i].rsp_ok ? &w[i].rsp : NULL, &t, &rd) ||
		    span_hits(&rd, t, w[i].m.size))
			return false;
	memcpy(v, buf, 8);
	span_join(sp, &rd);
	return true;
}

/* For resolve(), at a return entry (the scan's cursor there; rsp
 * before it @rsp if @rsp_ok) looking for callee-saved register @reg
 * (bytes @need; @wr: the registers written after it): true if it ends a
 * call that leaves @reg as it was (saved.c) and @reg is found before
 * that call without reading memory (the callee's writes are not
 * checked), into *@v.  rsp before the call is rsp before the return
 * + 8: the callee's CFI says it balanced the stack. */
static bool across_callee(struct replay *rp, struct replay_recover *rc,
			  int reg, uint8_t need, uint32_t wr,
			  bool rsp_ok, uint64_t rsp, unsigned depth,
			  uint64_t *v)
{
	struct span sp = { 0 };
	struct hist_entry ret;
	uint64_t call, x, rsp_call = rsp + 8;
	uint32_t keep = 0;
	uint8_t kept;
	int j;

	for (j = 0; j < HIST_CFI_NSAVED && hist_cfi_saved_reg[j] != reg; j++)
		;
	if (j == HIST_CFI_NSAVED)
		return false;
	ret = rc->scanned;	/* a nested look-up scans on */
	kept = recover_kept_across(rp, rc, &ret, &call);
	if (!(kept & (1u << j)))
		return false;
	for (j = 0; j < HIST_CFI_NSAVED; j++)
		if (kept & (1u << j))
			keep |= 1u << hist_cfi_saved_reg[j];
	wr |= ((1u << HIST_NREGS) - 1) & ~keep;
	if (!resolve(rp, rc, call, reg, need, wr, rsp_ok ? &rsp_call : NULL,
		     depth + 1, &x, &sp) || sp.n)
		return false;
	*v = x;
	return true;
}

/* For resolve(): callee-saved register @reg before entry @at from the
 * slot the prologue of the function the state is in saved it in
 * (saved.c), into *@v, if @at is at most @back entries before that
 * function's call (@rsp: rsp before @at if @rsp_ok) and none of the
 * entries from @at to the call writes @reg. */
static bool entry_ahead(struct replay *rp, struct replay_recover *rc,
			uint64_t at, int reg, uint64_t back, bool rsp_ok,
			uint64_t rsp, uint64_t *v)
{
	uint64_t call, x;

	if (!recover_entry_saved(rp, rc, reg, &call, &x) || at > call + 1 ||
	    call + 1 - at > back || call + 1 - at > RESOLVE_BACK)
		return false;
	/* The entries from @at to the call, back from it (scan_back:
	 * each follows from the one before, none is a system call). */
	for (uint64_t k = call; k >= at && k >= 1; k--) {
		const struct hist_effect *fx = scan_back(rp, rc, k, &rsp_ok,
							 &rsp);

		if (!fx || fx->regs[reg] ||
		    (k == call && fx->kind != HIST_EFF_CALL))
			return false;
	}
	*v = x;
	return true;
}

/* The value of register @reg before entry @at, unknown in the state
 * there, from the instruction that last set it within RESOLVE_BACK
 * entries: a load from memory nothing wrote since (the state's memory),
 * a copy of another register, r += imm; a callee-saved one from where
 * the prologue of the function the state is in saved it (saved.c).
 * The memory it read from widens @sp: a caller whose own write may
 * overlap it must check. */
static bool resolve(struct replay *rp, struct replay_recover *rc,
		    uint64_t at, int reg, uint8_t need, uint32_t wr0,
		    const uint64_t *rsp_at, unsigned depth, uint64_t *v,
		    struct span *sp)
{
	struct scan_write w[SCAN_WRITES];
	unsigned nw = 0;
	/* More writes than w holds: what the definition read from memory
	 * cannot be checked against them. */
	bool many = false;
	uint32_t wr = wr0;
	uint64_t k, back, rsp = rsp_at ? *rsp_at : rc->r[HIST_RSP];
	bool rsp_ok = rsp_at || (recover_reg_has(rc, HIST_RSP, 0xff) &&
				 !(wr0 & (1u << HIST_RSP)));
	/* A return was met: looked past once, from the first. */
	bool skipped = false;

	if (depth > (rc->query ? QUERY_DEPTH : RESOLVE_DEPTH) || reg < 0 ||
	    at <= 1)
		return false;
	back = rc->long_scan ? RESOLVE_BACK_LONG : RESOLVE_BACK;
	if (entry_ahead(rp, rc, at, reg, back, rsp_ok, rsp, v))
		return true;
	for (k = at - 1; k >= 1 && at - k <= back; k--) {
		const struct hist_effect *fx;

		if (!(fx = scan_back(rp, rc, k, &rsp_ok, &rsp)))
			return false;
		/* A callee-saved register past a callee, from its call. */
		if (fx->kind == HIST_EFF_RET && !skipped &&
		    across_callee(rp, rc, reg, need, wr, rsp_ok, rsp, depth, v))
			return true;
		skipped = skipped || fx->kind == HIST_EFF_RET;
		if (!fx->regs[reg] && fx->kind == HIST_EFF_STORE &&
		    fx->r2 == reg && !many &&
		    stored_from(rp, rc, at, k, fx, need, wr, depth,
				rsp_ok ? &rsp : NULL, w, nw, v, sp))
			return true;
		if (!fx->regs[reg]) {
			/* Its memory writes, to check against the source. */
			if (fx->kind == HIST_EFF_PUSH ||
			    fx->kind == HIST_EFF_PUSH_IMM ||
			    fx->kind == HIST_EFF_CALL) {
				if (!rsp_ok)
					return false;
				/* The slot is at rsp before it, less 8. */
				if (nw == SCAN_WRITES)
					many = true;
				else
					w[nw++] = (struct scan_write) {
						.m = { .base = HIST_RSP,
						       .index = -1, .seg = -1,
						       .size = 8, .disp = -8 },
						.at = k, .wr = wr,
						.rsp_ok = true, .rsp = rsp };
			}
			for (unsigned i = 0; i < fx->nwrites; i++) {
				const struct hist_memref *m = &fx->writes[i];

				if ((m->base >= 0 && fx->regs[m->base]) ||
				    (m->index >= 0 && fx->regs[m->index]))
					return false;
				if (nw == SCAN_WRITES) {
					many = true;
					continue;
				}
				w[nw].m = *m;
				w[nw].at = k;
				w[nw].rsp_ok = rsp_ok;
				w[nw].rsp = rsp;
				w[nw++].wr = wr;
			}
			wr |= fx->wrote;
			continue;
		}
		/* Entry k set the register: what it reads of the register
		 * is the value before it, not the state's (its own address
		 * register, mov (%rdi),%edi). */
		wr |= fx->wrote;
		if (!defined_by(rp, rc, at, k, fx, reg, wr, depth,
				rsp_ok ? &rsp : NULL, v, sp) ||
		    (many && sp->n))
			return false;
		/* Nothing written since may overlap what it read. */
		for (unsigned i = 0; i < nw && sp->n; i++) {
			uint64_t t;

			if (!address_rsp(rp, rc, at, w[i].at, &w[i].m,
					 w[i].wr, depth,
					 w[i].rsp_ok ? &w[i].rsp : NULL, &t, sp) ||
			    span_hits(sp, t, w[i].m.size))
				return false;
		}
		return true;
	}
	return false;
}

/* Instructions recover_stored_before() reads back at most, and how deep
 * it may be called, in a question and in the walk (at every step:
 * cheaper). */
#define STORE_BACK 256
#define STORE_BACK_WALK 64
#define STORE_DEPTH_WALK 8
/* Writes passed over that recover_stored_before() remembers. */
#define STORE_SEEN 32

/* True if memory @sp, read in the state (as of the walk's front),
 * may have been written by one of the @n writes @seen (or by more, if
 * @many) that came after the entry it was read for: what it held there
 * is then not known. */
static bool written_since(uint64_t (*seen)[2], unsigned n, bool many,
			  const struct span *sp)
{
	if (!sp->n)
		return false;
	if (many)
		return true;
	for (unsigned j = 0; j < n; j++)
		if (span_hits(sp, seen[j][0], seen[j][1] - seen[j][0]))
			return true;
	return false;
}

/* The byte at @addr before entry @at (the walk's front), unknown in the
 * state there, into *@out: what the instruction that last wrote it
 * within STORE_BACK entries stored there — a register or an immediate
 * (mov), a push, a call's return address — provided every write in
 * between has an address that is known and misses it.  A system call, a
 * signal, an unbounded write or one whose address is unknown ends the
 * search: the byte stays unknown.  Only in a process of one thread
 * (another's writes are not ordered against this one's). */
bool recover_stored_before(struct replay *rp, struct replay_recover *rc,
			  uint64_t at, uint32_t wr0, const uint64_t *rsp_at,
			  unsigned depth, uint64_t addr, uint8_t *out,
			  struct span *msp)
{
	uint32_t wr = wr0;
	uint64_t rsp = rsp_at ? *rsp_at : rc->r[HIST_RSP];
	bool rsp_ok = rsp_at || (recover_reg_has(rc, HIST_RSP, 0xff) &&
				 !(wr0 & (1u << HIST_RSP)));
	/* The writes passed over, [lo, hi) each: memory the stored value is
	 * resolved from (read in the state, as of @at) must be none of
	 * them. */
	uint64_t seen[STORE_SEEN][2];
	unsigned nseen = 0;
	bool many = false;

	uint64_t back = rc->query ? STORE_BACK : STORE_BACK_WALK;

	if (rp->n != 1 || at <= 1 ||
	    depth > (rc->query ? QUERY_DEPTH : STORE_DEPTH_WALK))
		return false;
	for (uint64_t k = at - 1; k >= 1 && at - k <= back; k--) {
		const struct hist_effect *fx;
		struct hist_memref slot[HIST_EFFECT_MAXW + 1];
		unsigned n = 0;

		if (!(fx = scan_back(rp, rc, k, &rsp_ok, &rsp)))
			return false;
		if (fx->kind == HIST_EFF_PUSH || fx->kind == HIST_EFF_PUSH_IMM ||
		    fx->kind == HIST_EFF_CALL) {
			/* The slot is at rsp before it, less 8. */
			if (!rsp_ok)
				return false;
			slot[n++] = (struct hist_memref) {
				.base = HIST_RSP, .index = -1, .seg = -1,
				.size = 8, .disp = -8 };
		}
		for (unsigned i = 0; i < fx->nwrites; i++) {
			const struct hist_memref *m = &fx->writes[i];

			/* Its address from registers it writes itself. */
			if ((m->base >= 0 && fx->regs[m->base]) ||
			    (m->index >= 0 && fx->regs[m->index]))
				return false;
			slot[n++] = *m;
		}
		for (unsigned i = 0; i < n; i++) {
			uint64_t a, v;
			uint32_t w = wr;
			struct span sp = { 0 };

			if (!address_rsp(rp, rc, at, k, &slot[i], w, depth,
					 rsp_ok ? &rsp : NULL, &a, &sp) ||
			    written_since(seen, nseen, many, &sp))
				return false;
			if (addr < a || addr >= a + slot[i].size) {
				if (nseen == STORE_SEEN)
					many = true;
				else
					seen[nseen][0] = a,
					seen[nseen++][1] = a + slot[i].size;
				continue;
			}
			/* Entry k wrote the byte last. */
			w |= fx->wrote;
			switch (fx->kind) {
			case HIST_EFF_STORE:
			case HIST_EFF_PUSH:
				if (fx->r2 < 0 || fx->regs[fx->r2] ||
				    !value_before(rp, rc, at, k, fx->r2,
						  recover_low(slot[i].size), w,
						  depth, rsp_ok ? &rsp : NULL,
						  &v, &sp))
					return false;
				break;
			case HIST_EFF_STORE_IMM:
			case HIST_EFF_PUSH_IMM:
			case HIST_EFF_CALL:
				v = (uint64_t) fx->imm;
				break;
			default:
				return false;
			}
			if (written_since(seen, nseen, many, &sp) ||
			    addr - a >= 8)
				return false;
			/* What it read, for the caller's own check (writes
			 * between @at and the state's front). */
			if (msp)
				span_join(msp, &sp);
			*out = (uint8_t) (v >> 8 * (addr - a));
			return true;
		}
		wr |= fx->wrote;
	}
	return false;
}

/* The address of @m before entry @at from the state there, resolving
 * unknown registers (resolve()); @sp the memory that took. */
static bool address_at(struct replay *rp, struct replay_recover *rc,
		       uint64_t at, const struct hist_memref *m, uint64_t *a,
		       struct span *sp)
{
	sp->n = 0;
	return address_before(rp, rc, at, at, m, 0, 0, a, sp);
}

/* The value of register @reg before entry @at into *@v, from the state
 * there or resolved (resolve()); @sp the memory that took. */
static bool reg_at(struct replay *rp, struct replay_recover *rc,
		   uint64_t at, int reg, uint64_t *v, struct span *sp)
{
	sp->n = 0;
	return value_before(rp, rc, at, at, reg, 0xff, 0, 0, NULL, v, sp);
}

/* The bounds of register @reg before entry @at as a signed number, into
 * [*@min, *@max], from the last instruction that wrote it (within
 * RESOLVE_BACK): a 32-bit write zero-extends, a sign extension (movslq,
 * cltq) and a load of fewer bytes than the register extend theirs. */
static bool index_bounds(struct replay *rp, struct replay_recover *rc,
			 uint64_t at, int reg, int64_t *min, int64_t *max)
{
	uint64_t rsp = 0;
	bool rsp_ok = false;

	for (uint64_t k = at - 1; k >= 1 && at - k <= RESOLVE_BACK; k--) {
		const struct hist_effect *fx = scan_back(rp, rc, k, &rsp_ok,
							 &rsp);
		unsigned n;

		if (!fx)
			return false;
		if (!fx->regs[reg])
			continue;
		if (fx->zext >> reg & 1) {
			*min = 0;
			*max = UINT32_MAX;
			return true;
		}
		if (fx->r1 != reg || fx->width != 8)
			return false;
		if (fx->kind == HIST_EFF_MOVSX)
			n = (unsigned) fx->imm;
		else if (fx->kind == HIST_EFF_LOAD && fx->load.size < 8)
			n = fx->load.size;
		else
			return false;
		if (n < 1 || n > 4)
			return false;
		if (fx->kind == HIST_EFF_LOAD && !fx->sign) {
			*min = 0;
			*max = ((int64_t) 1 << 8 * n) - 1;
		} else {
			*min = -((int64_t) 1 << (8 * n - 1));
			*max = ((int64_t) 1 << (8 * n - 1)) - 1;
		}
		return true;
	}
	return false;
}

/* The memory [*@lo, *@hi) a write @m before entry @at may touch whose
 * address is not known: its base register known (or resolved), its
 * index not but bounded (index_bounds); false if it cannot be bounded
 * (the base not known, or read from memory the range covers). */
static bool write_range(struct replay *rp, struct replay_recover *rc,
			uint64_t at, const struct hist_memref *m, uint64_t *lo,
			uint64_t *hi)
{
	int64_t min, max, off_lo, off_hi;
	struct span sp;
	uint64_t b;

	if (m->base < 0 || m->index < 0 || m->index == m->base ||
	    !reg_at(rp, rc, at, m->base, &b, &sp) ||
	    !index_bounds(rp, rc, at, m->index, &min, &max))
		return false;
	if (m->seg >= 0) {
		if (!recover_reg_has(rc, m->seg, 0xff))
			return false;
		b += rc->r[m->seg];
	}
	/* |disp| < 2^31, scale <= 8, |index| <= 2^32: no overflow. */
	off_lo = m->disp + (int64_t) m->scale * min;
	off_hi = m->disp + (int64_t) m->scale * max + (int64_t) m->size;
	if ((off_lo < 0 && b < (uint64_t) -off_lo) ||
	    (off_hi > 0 && b > UINT64_MAX - (uint64_t) off_hi))
		return false;
	*lo = b + (uint64_t) off_lo;
	*hi = b + (uint64_t) off_hi;
	return !span_hits(&sp, *lo, *hi - *lo);
}

/* What the instruction ties together, from the state after it (see the
 * top of the file): fills unknown registers and memory. */
static void learn_after(struct replay *rp, struct replay_recover *rc,
			uint64_t q, const struct hist_effect *fx)
{
	uint8_t buf[8];
	uint64_t a, v;
	struct span sp;

	switch (fx->kind) {
	case HIST_EFF_MOV:
		if (recover_reg_has(rc, fx->r1, recover_low(fx->width)))
			recover_reg_learn(rc, fx->r2, recover_low(fx->width),
					  rc->r[fx->r1]);
		if (recover_reg_has(rc, fx->r2, recover_low(fx->width)) &&
		    fx->r1 != fx->r2)
			recover_reg_learn(rc, fx->r1, recover_low(fx->width),
					  rc->r[fx->r2]);
		break;
	case HIST_EFF_STORE:
		if (fx->nwrites == 1 &&
		    address_at(rp, rc, q, &fx->writes[0], &a, &sp) &&
		    !span_hits(&sp, a, fx->writes[0].size) &&
		    fx->writes[0].size <= 8 &&
		    recover_mem_get(rp, rc, a, fx->writes[0].size, buf)) {
			v = 0;
			memcpy(&v, buf, fx->writes[0].size);
			recover_reg_learn(rc, fx->r2,
					  recover_low(fx->writes[0].size), v);
		}
		break;
	case HIST_EFF_PUSH:
		if (fx->r2 >= 0 && recover_reg_has(rc, HIST_RSP, 0xff) &&
		    recover_mem_get(rp, rc, rc->r[HIST_RSP], 8, buf)) {
			memcpy(&v, buf, 8);
			recover_reg_learn(rc, fx->r2, 0xff, v);
		}
		break;
	case HIST_EFF_LEA:
		if (recover_reg_has(rc, fx->r1, recover_low(fx->width)))
			recover_reg_learn(rc, fx->r2, recover_low(fx->width),
				  rc->r[fx->r1] - (uint64_t) fx->imm);
		break;
	case HIST_EFF_MOVSX:
		if (fx->r1 != fx->r2 &&
		    recover_reg_has(rc, fx->r1,
				    recover_low((unsigned) fx->imm)))
			recover_reg_learn(rc, fx->r2,
					  recover_low((unsigned) fx->imm),
				  rc->r[fx->r1]);
		break;
	case HIST_EFF_XCHG:
		/* Undone with the registers: nothing to fill. */
		break;
	case HIST_EFF_SET:
		recover_reg_learn(rc, fx->r1, 0xff, recover_set_value(fx));
		break;
	default:
		break;
	}
}

/* True if the frame proofs may be asked for register @i (0: rsp, 1:
 * rbp) at this step: no wait left from a failed ask. */
static bool ask_due(struct replay_recover *rc, int i)
{
	if (!rc->ask_wait[i])
		return true;
	rc->ask_wait[i]--;
	return false;
}

/* Notes how an ask for register @i went: @ok resets the wait, a failure
 * doubles it (64 to 4096 steps). */
static void ask_done(struct replay_recover *rc, int i, bool ok)
{
	if (ok) {
		rc->ask_backoff[i] = 0;
		return;
	}
	rc->ask_backoff[i] = !rc->ask_backoff[i] ? 64 :
			     rc->ask_backoff[i] >= 4096 ? 4096 :
			     rc->ask_backoff[i] * 2;
	rc->ask_wait[i] = rc->ask_backoff[i];
}

/* The registers recorded before entry @e (evidence.c), learned: what
 * the walk knew otherwise of one becomes unknown (a conflict). */
static void take_evidence(struct replay *rp, struct replay_recover *rc,
			  const struct hist_entry *e)
{
	const struct hist_regsnap *s = recover_evidence_at(rp, rc->thr, e);

	for (int i = 0; s && i < HIST_NREGS; i++)
		if (i != HIST_ORIG_RAX && i != HIST_RIP)
			recover_reg_learn(rc, i, 0xff, s->r[i]);
}

/* Learns into @rc, the state before entry @e (effect @fx), the base and
 * index registers of its memory operand @m the state does not know, as
 * resolve() finds them from where they were set: what a later step back
 * needs again (a store's address register set long before, the
 * function's argument).  A search whose value was read from memory is
 * learned only if the instruction writes nothing but its operand, and
 * that not over it (the state's memory is as of after it).  @wide: the
 * long search (RESOLVE_BACK_LONG). */
static void learn_operand(struct replay *rp, struct replay_recover *rc,
			  const struct hist_entry *e,
			  const struct hist_effect *fx,
			  const struct hist_memref *m, bool wide)
{
	int regs[2] = { m->base, m->index };
	uint64_t v[2], a;
	struct span sp[2];
	bool got[2] = { false, false };

	if (fx->mem_unbounded || fx->kind == HIST_EFF_SYSCALL ||
	    fx->kind == HIST_EFF_PUSH || fx->kind == HIST_EFF_PUSH_IMM ||
	    fx->kind == HIST_EFF_CALL || fx->nwrites > 1)
		return;
	for (int i = 0; i < 2; i++) {
		if (regs[i] < 0 || recover_reg_has(rc, regs[i], 0xff))
			continue;
		rc->long_scan = wide;
		got[i] = reg_at(rp, rc, e->number, regs[i], &v[i], &sp[i]);
		rc->long_scan = false;
	}
	for (int i = 0; i < 2; i++) {
		if (!got[i])
			continue;
		if (sp[i].n && fx->nwrites) {
			const struct hist_memref *w = &fx->writes[0];
			bool ok = true;

			/* Its address, with the other register too. */
			a = (uint64_t) w->disp;
			for (int j = 0; j < 2 && ok; j++) {
				int r = j ? w->index : w->base;
				uint64_t x = 0;

				if (r < 0)
					continue;
				if (r == regs[0] && got[0])
					x = v[0];
				else if (r == regs[1] && got[1])
					x = v[1];
				else if (recover_reg_has(rc, r, 0xff))
					x = rc->r[r];
				else
					ok = false;
				a += j ? x * w->scale : x;
			}
			if (w->seg >= 0) {
				ok = ok && recover_reg_has(rc, w->seg, 0xff);
				a += rc->r[w->seg];
			}
			if (!ok || span_hits(&sp[i], a, w->size))
				continue;
		}
		recover_reg_learn(rc, regs[i], 0xff, v[i]);
	}
}

/* The state before the instruction of entry @e from the state after it
 * (in @rc); false if nothing is known before it. */
static bool step_back(struct replay *rp, struct replay_recover *rc,
		      const struct hist_entry *e)
{
	const struct hist_effect *fx = recover_effect(rp, rc, e);
	uint64_t after[HIST_NREGS], a, v, add_at = 0;
	struct span rd;
	uint8_t kafter[HIST_NREGS], buf[8];
	bool add_mem = false, want_sp, want_bp;
	int r1;

	if (!fx)
		return false;
	learn_after(rp, rc, e->number, fx);
	memcpy(after, rc->r, sizeof(after));
	memcpy(kafter, rc->k, sizeof(kafter));
	r1 = fx->r1;

	/* Registers: not tracked past one instruction but the general
	 * ones and the segment bases (until a system call). */
	for (int i = 0; i < HIST_NREGS; i++) {
		if (i == HIST_FS_BASE || i == HIST_GS_BASE || i == HIST_RIP)
			continue;
		if ((i >= HIST_ORIG_RAX && i != HIST_RSP) ||
		    i == HIST_EFLAGS) {
			rc->k[i] = 0;
			continue;
		}
		rc->k[i] &= (uint8_t) ~fx->regs[i];
	}
	switch (fx->kind) {
	case HIST_EFF_ADD:
		if (fx->width == 8 && (kafter[r1] == 0xff)) {
			rc->r[r1] = after[r1] - (uint64_t) fx->imm;
			rc->k[r1] = 0xff;
		} else if (fx->width == 4 && (kafter[r1] & 0x0f) == 0x0f) {
			v = (uint32_t) (after[r1] - (uint64_t) fx->imm);
			rc->r[r1] = (rc->r[r1] & ~0xffffffffull) | v;
			rc->k[r1] = 0x0f;
		}
		break;
	case HIST_EFF_ADD_REG:
		/* r1 before = r1 after -/+ r2 (r2 unchanged). */
		if (kafter[fx->r2] != 0xff &&
		    reg_at(rp, rc, e->number, fx->r2, &v, &rd)) {
			after[fx->r2] = v;
			kafter[fx->r2] = 0xff;
			recover_reg_learn(rc, fx->r2, 0xff, v);
		}
		if (fx->width == 8 && kafter[r1] == 0xff &&
		    kafter[fx->r2] == 0xff) {
			rc->r[r1] = after[r1] - after[fx->r2] *
				    (uint64_t) fx->imm;
			rc->k[r1] = 0xff;
		} else if (fx->width == 4 && (kafter[r1] & 0x0f) == 0x0f &&
			   (kafter[fx->r2] & 0x0f) == 0x0f) {
			v = (uint32_t) (after[r1] - after[fx->r2] *
					(uint64_t) fx->imm);
			rc->r[r1] = (rc->r[r1] & ~0xffffffffull) | v;
			rc->k[r1] = 0x0f;
		}
		break;
	case HIST_EFF_XCHG:
		rc->r[fx->r1] = after[fx->r2];
		rc->k[fx->r1] = kafter[fx->r2];
		rc->r[fx->r2] = after[fx->r1];
		rc->k[fx->r2] = kafter[fx->r1];
		break;
	case HIST_EFF_PUSH:
	case HIST_EFF_PUSH_IMM:
	case HIST_EFF_CALL:
		if (kafter[HIST_RSP] == 0xff) {
			a = after[HIST_RSP];
			rc->r[HIST_RSP] = a + 8;
			rc->k[HIST_RSP] = 0xff;
			recover_mem_forget(rc, a, 8);
		} else {
			recover_mem_poison(rc);
		}
		if (fx->kind == HIST_EFF_PUSH && fx->r2 >= 0)
			/* push %rsp pushes rsp before. */
			rc->k[fx->r2] = fx->r2 == HIST_RSP ? rc->k[HIST_RSP] :
					kafter[fx->r2];
		break;
	case HIST_EFF_POP:
		if (kafter[HIST_RSP] == 0xff) {
			rc->r[HIST_RSP] = after[HIST_RSP] - 8;
			rc->k[HIST_RSP] = 0xff;
			if (kafter[r1] == 0xff) {
				memcpy(buf, &after[r1], 8);
				recover_mem_learn(rp, rc, rc->r[HIST_RSP], 8,
						  buf);
			}
		}
		break;
	case HIST_EFF_RET:
		if (kafter[HIST_RSP] == 0xff) {
			rc->r[HIST_RSP] = after[HIST_RSP] - 8 -
					  (uint64_t) fx->imm;
			rc->k[HIST_RSP] = 0xff;
		}
		break;
	case HIST_EFF_LEAVE:
		if (kafter[HIST_RSP] == 0xff) {
			rc->r[HIST_RBP] = after[HIST_RSP] - 8;
			rc->k[HIST_RBP] = 0xff;
			if (kafter[HIST_RBP] == 0xff) {
				memcpy(buf, &after[HIST_RBP], 8);
				recover_mem_learn(rp, rc, rc->r[HIST_RBP], 8,
						  buf);
			}
		}
		break;
	case HIST_EFF_SYSCALL:
		rc->k[HIST_FS_BASE] = rc->k[HIST_GS_BASE] = 0;
		recover_mem_poison(rc);
		break;
	default:
		break;
	}

	/* rsp and rbp the frame proofs give (known.c), where unknown.  An
	 * ask may read the activation back a long way, so after one that
	 * fails the next waits, 64 steps and twice as long after each
	 * further failure, up to 4096 (asked at every step of a long
	 * stretch where rsp stays unknown, C++ exception unwinding for
	 * one, the walk was quadratic: minutes for a 1.2 M entry history).
	 * Asking less often only leaves a register unknown for longer. */
	want_sp = rc->k[HIST_RSP] != 0xff && ask_due(rc, 0);
	want_bp = rc->k[HIST_RBP] != 0xff && ask_due(rc, 1);
	if (want_sp || want_bp) {
		uint64_t sp, bp;
		bool sp_ok, bp_ok;

		known_frame_regs_at(rp, rc->thr, e->number, want_sp, &sp,
				    &sp_ok, want_bp, &bp, &bp_ok);
		if (want_sp)
			ask_done(rc, 0, sp_ok);
		if (want_bp)
			ask_done(rc, 1, bp_ok);
		if (sp_ok)
			recover_reg_learn(rc, HIST_RSP, 0xff, sp);
		if (bp_ok)
			recover_reg_learn(rc, HIST_RBP, 0xff, bp);
	}

	/* [m] += x: [m] before is [m] after - x. */
	if (fx->kind == HIST_EFF_ADD_MEM && fx->nwrites == 1 &&
	    fx->writes[0].size <= 8 &&
	    address_at(rp, rc, e->number, &fx->writes[0], &a, &rd) &&
	    !span_hits(&rd, a, fx->writes[0].size) &&
	    recover_mem_get(rp, rc, a, fx->writes[0].size, buf)) {
		uint64_t x = (uint64_t) fx->imm;

		/* The memory here is after the instruction: x must not come
		 * from what it wrote (x += x through memory). */
		add_mem = fx->r2 < 0 ||
			  (reg_at(rp, rc, e->number, fx->r2, &x, &rd) &&
			   !span_hits(&rd, a, fx->writes[0].size));
		v = 0;
		memcpy(&v, buf, fx->writes[0].size);
		v -= (uint64_t) fx->sign * x;
		memcpy(buf, &v, 8);
		add_at = a;
	}

	/* The registers of its memory operands, where searches find them. */
	if (fx->nwrites == 1)
		learn_operand(rp, rc, e, fx, &fx->writes[0], rc->base);
	if (fx->kind == HIST_EFF_LOAD)
		learn_operand(rp, rc, e, fx, &fx->load, false);

	/* Memory the instruction wrote is unknown before it. */
	if (fx->mem_unbounded)
		recover_mem_poison(rc);
	for (unsigned i = 0; i < fx->nwrites; i++) {
		const struct hist_memref *m = &fx->writes[i];
		bool found;

		/* The present's memory is worth a longer search. */
		rc->long_scan = rc->base;
		found = address_at(rp, rc, e->number, m, &a, &rd);
		rc->long_scan = false;
		if (!found || span_hits(&rd, a, m->size)) {
			uint64_t wlo, whi;

			/* An index not known but bounded: that range. */
			if (!found && write_range(rp, rc, e->number, m, &wlo,
						  &whi)) {
				recover_mem_forget_range(rc, wlo, whi);
				continue;
			}
			recover_mem_poison(rc);
			break;
		}
		recover_mem_forget(rc, a, m->size);
	}
	if (add_mem && !fx->mem_unbounded)
		recover_mem_learn(rp, rc, add_at, fx->writes[0].size, buf);
	/* A load tells what memory held (the same before and after). */
	if (fx->kind == HIST_EFF_LOAD && fx->load.size <= 8 &&
	    (kafter[r1] & recover_low(fx->load.size)) ==
	    recover_low(fx->load.size) &&
	    address_at(rp, rc, e->number, &fx->load, &a, &rd)) {
		memcpy(buf, &after[r1], 8);
		recover_mem_learn(rp, rc, a, fx->load.size, buf);
	}
	/* Callee-saved registers across a call that returned (saved.c). */
	if (fx->kind == HIST_EFF_RET)
		recover_returns_note(rc, e, fx, after, kafter);
	else if (fx->kind == HIST_EFF_CALL)
		recover_returns_match(rp, rc, e, fx);
	take_evidence(rp, rc, e);
	rc->last = *e;
	return true;
}

bool recover_step_back(struct replay *rp, struct replay_recover *rc,
		      const struct hist_entry *e)
{
	uint64_t r[HIST_NREGS];
	uint8_t k[HIST_NREGS];
	bool ok;

	/* The registers at the front, for saved.c's slots while the step
	 * changes them. */
	memcpy(r, rc->r, sizeof(r));
	memcpy(k, rc->k, sizeof(k));
	rc->front_r = r;
	rc->front_k = k;
	ok = step_back(rp, rc, e);
	rc->front_r = NULL;
	rc->front_k = NULL;
	return ok;
}

/* The recovery of thread @thr, set at the end of its history: NULL if
 * out of memory or nothing is known there. */
static struct replay_recover *start(struct replay *rp, size_t thr)
{
	struct replay_thread *t = &rp->t[thr];
	struct replay_recover *rc = t->recover;
	struct hist_entry e;
	bool known[HIST_NREGS];

	if (!rc) {
		rc = calloc(1, sizeof(*rc));
		if (!rc || hist_cursor_new(t->h, &rc->cur)) {
			free(rc);
			return NULL;
		}
		if (hist_cursor_new(t->h, &rc->scan)) {
			hist_cursor_free(rc->cur);
			free(rc);
			return NULL;
		}
		rc->cp_every = CHECKPOINT_EVERY;
		t->recover = rc;
	}
	recover_mem_poison(rc);
	rc->rets.n = 0;
	rc->es.front = 0;
	memset(rc->ask_wait, 0, sizeof(rc->ask_wait));
	memset(rc->ask_backoff, 0, sizeof(rc->ask_backoff));
	rc->thr = thr;
	rc->front = t->last;
	rc->dead = true;
	if (!t->last || !known_insn(t, t->last, &e) ||
	    !known_last_regs(rp, t, &e, rc->r, known)) {
		return rc;
	}
	for (int i = 0; i < HIST_NREGS; i++)
		rc->k[i] = known[i] ? 0xff : 0;
	/* Registers recorded before the last instruction too (exit_group's
	 * `syscall`, after which the end's lack rcx, r11 and the flags). */
	take_evidence(rp, rc, &e);
	rc->base = rp->n == 1 && known_alive_at_end(rp, thr);
	rc->dead = false;
	return rc;
}

/* Copies the walk's state into a new checkpoint, if it is new ground
 * (before the last one by the interval) and there is room. */
static void checkpoint_save(struct replay_recover *rc, uint64_t last)
{
	struct checkpoint *c;
	size_t bytes = rc->nslots * sizeof(*rc->g);
	uint64_t above = rc->ncp ? rc->cp[rc->ncp - 1].front : last;

	if (rc->front + rc->cp_every > above ||
	    rc->cp_bytes + bytes > CHECKPOINT_BYTES)
		return;
	if (rc->ncp == CHECKPOINTS) {
		/* Every other one goes, and they are made further apart. */
		size_t n = 0;

		rc->cp_bytes = 0;
		for (size_t i = 0; i < rc->ncp; i++) {
			if (i % 2) {
				free(rc->cp[i].g);
				continue;
			}
			rc->cp[n] = rc->cp[i];
			rc->cp_bytes += rc->cp[n].nslots * sizeof(*rc->g);
			n++;
		}
		rc->ncp = n;
		rc->cp_every *= 2;
		return;
	}
	c = &rc->cp[rc->ncp];
	c->g = bytes ? malloc(bytes) : NULL;
	if (bytes && !c->g)
		return;
	if (bytes)
		memcpy(c->g, rc->g, bytes);
	c->front = rc->front;
	memcpy(c->r, rc->r, sizeof(c->r));
	memcpy(c->k, rc->k, sizeof(c->k));
	c->base = rc->base;
	memcpy(c->holes, rc->holes, sizeof(c->holes));
	c->nholes = rc->nholes;
	c->nslots = rc->nslots;
	c->used = rc->used;
	c->conflicts = rc->conflicts;
	c->rets = rc->rets;
	rc->cp_bytes += bytes;
	rc->ncp++;
}

/* The walk's state from the nearest checkpoint at or after @pos; false
 * if there is none (or no memory for it). */
static bool checkpoint_restore(struct replay_recover *rc, uint64_t pos)
{
	const struct checkpoint *c = NULL;
	size_t bytes;

	for (size_t i = 0; i < rc->ncp && rc->cp[i].front >= pos; i++)
		c = &rc->cp[i];
	if (!c)
		return false;
	bytes = c->nslots * sizeof(*rc->g);
	if (c->nslots != rc->nslots) {
		struct granule *g = bytes ? malloc(bytes) : NULL;

		if (bytes && !g)
			return false;
		free(rc->g);
		rc->g = g;
	}
	if (bytes)
		memcpy(rc->g, c->g, bytes);
	rc->nslots = c->nslots;
	rc->used = c->used;
	rc->front = c->front;
	rc->dead = false;
	memcpy(rc->r, c->r, sizeof(rc->r));
	memcpy(rc->k, c->k, sizeof(rc->k));
	rc->base = c->base;
	memcpy(rc->holes, c->holes, sizeof(rc->holes));
	rc->nholes = c->nholes;
	/* The log of granules set is another state's: every hole clears
	 * by a full scan next. */
	rc->ntouched = 0;
	rc->epoch++;
	rc->conflicts = c->conflicts;
	rc->rets = c->rets;
	return true;
}

/* Starts @rc's walk again before the first entry in [@pos, @below)
 * where registers were recorded (evidence.c): those registers, memory
 * unknown, as from the end.  False if there is none. */
static bool restart(struct replay *rp, struct replay_recover *rc,
		    uint64_t pos, uint64_t below)
{
	const struct hist_regsnap *s = NULL;
	struct hist_entry e;
	uint64_t n;

	for (n = pos; !s; n++) {
		n = recover_evidence_from(rp, rc->thr, n);
		if (!n || n >= below)
			return false;
		if (known_insn(&rp->t[rc->thr], n, &e))
			s = recover_evidence_at(rp, rc->thr, &e);
	}
	recover_mem_poison(rc);
	memset(rc->k, 0, sizeof(rc->k));
	rc->rets.n = 0;
	rc->es.front = 0;
	rc->front = e.number;
	rc->dead = false;
	memset(rc->ask_wait, 0, sizeof(rc->ask_wait));
	memset(rc->ask_backoff, 0, sizeof(rc->ask_backoff));
	take_evidence(rp, rc, &e);
	return true;
}

/* The recovery of thread @thr walked back to entry @pos; NULL if
 * nothing is known there. */
struct replay_recover *recover_walk_to(struct replay *rp, size_t thr,
				      uint64_t pos)
{
	struct replay_thread *t = &rp->t[thr];
	struct replay_recover *rc = t->recover;
	struct hist_entry e;

	if (!pos || pos > t->last ||
	    (t->last - pos > RECOVER_MAX_BACK &&
	     !recover_evidence_from(rp, thr, pos)))
		return NULL;
	if (!rc || pos > rc->front)
		if (!rc || !checkpoint_restore(rc, pos))
			rc = start(rp, thr);
	if (!rc)
		return NULL;
	/* Too far from where the walk is: from registers recorded nearer,
	 * or not at all. */
	if (rc->front - pos > RECOVER_MAX_BACK &&
	    !restart(rp, rc, pos, pos + RECOVER_MAX_BACK + 1)) {
		ptrr_clear_error();
		return NULL;
	}
	for (;;) {
		/* The entry after each instruction must follow from it. */
		if (!rc->dead && rc->front > pos &&
		    hist_cursor_seek(rc->cur, rc->front))
			rc->dead = true;
		while (!rc->dead && rc->front > pos) {
			if (!back_to(rp, rc->cur, &e) ||
			    e.kind != HIST_ENTRY_INSN ||
			    !recover_step_back(rp, rc, &e)) {
				rc->dead = true;
				break;
			}
			rc->front--;
			checkpoint_save(rc, t->last);
		}
		/* A walk that stopped stops there again: nothing is known
		 * before its front but from registers recorded below. */
		if (!rc->dead || pos >= rc->front ||
		    !restart(rp, rc, pos, rc->front))
			break;
	}
	/* What the instruction before ties to the state here. */
	if (rc && !rc->dead && pos > 1 &&
	    !hist_cursor_seek(rc->cur, pos) && back_to(rp, rc->cur, &e) &&
	    e.kind == HIST_ENTRY_INSN) {
		const struct hist_effect *fx;

		if ((fx = recover_effect(rp, rc, &e)))
			learn_after(rp, rc, e.number, fx);
	}
	ptrr_clear_error();
	return rc && !rc->dead && rc->front == pos ? rc : NULL;
}

/* True if the upper four bytes of register @reg are zero before entry
 * @pos: the last instruction before it (within RESOLVE_BACK) that wrote
 * the register wrote it as a 32-bit register, which zero-extends.  The
 * walk back does not see this: a 32-bit add undone gives the low half
 * before it, and the half above was zeroed by an earlier write. */
static bool upper_zero(struct replay *rp, struct replay_recover *rc,
		       uint64_t pos, int reg)
{
	uint64_t rsp = 0;
	bool rsp_ok = false;

	for (uint64_t k = pos - 1; k >= 1 && pos - k <= RESOLVE_BACK; k--) {
		const struct hist_effect *fx = scan_back(rp, rc, k, &rsp_ok,
							 &rsp);

		if (!fx)
			return false;
		if (fx->regs[reg])
			return fx->zext >> reg & 1;
	}
	return false;
}

/* Adds to @regs and @known the register bytes the window's state (made
 * at the same position) knows; a byte known with two values is not. */
static void add_window_regs(struct replay_recover *rc,
			    uint64_t regs[HIST_NREGS],
				    uint8_t known[HIST_NREGS])
{
	const struct replay_recover *ans = rc->ans;

	for (int i = 0; i < HIST_NREGS; i++) {
		for (int b = 0; b < 8 && i != HIST_RIP; b++) {
			uint64_t m = 0xffull << 8 * b;
			uint8_t bit = (uint8_t) (1u << b);

			if (!(ans->k[i] & bit))
				continue;
			if (!(known[i] & bit)) {
				regs[i] = (regs[i] & ~m) | (ans->r[i] & m);
				known[i] |= bit;
			} else if ((regs[i] ^ ans->r[i]) & m) {
				known[i] &= (uint8_t) ~bit;
				rc->conflicts++;
			}
		}
	}
}

void replay_recover_regs(struct replay *rp, size_t thr, uint64_t pos,
			 uint64_t regs[HIST_NREGS], uint8_t known[HIST_NREGS])
{
	struct replay_recover *rc = recover_walk_to(rp, thr, pos);

	memset(known, 0, HIST_NREGS);
	if (!rc)
		return;
	memcpy(regs, rc->r, HIST_NREGS * sizeof(*regs));
	memcpy(known, rc->k, HIST_NREGS);
	/* What the walk back does not know, from the instruction that last
	 * set it (forward from values known before it). */
	rc->query = true;
	for (int i = 0; i < HIST_NREGS && !rc->dead; i++) {
		uint64_t v, mask = 0;
		struct span sp;

		if (known[i] == 0x0f && i < HIST_ORIG_RAX &&
		    upper_zero(rp, rc, pos, i)) {
			regs[i] &= 0xffffffffull;
			known[i] = 0xff;
			continue;
		}

		if (known[i] == 0xff || i == HIST_RIP ||
		    !reg_at(rp, rc, pos, i, &v, &sp))
			continue;
		for (int b = 0; b < 8; b++)
			if (known[i] & (1u << b))
				mask |= 0xffull << 8 * b;
		if ((v & mask) != (regs[i] & mask)) {
			rc->conflicts++;
			continue;
		}
		regs[i] = v;
		known[i] = 0xff;
	}
	rc->query = false;
	if (rc->ans && rc->ans_pos == pos)
		add_window_regs(rc, regs, known);
}

/* The bytes at @addr known in state @rc before entry @pos (its own or
 * stored before it), from the @n-th on: the number of bytes known. */
static size_t read_state(struct replay *rp, struct replay_recover *rc,
			 uint64_t pos, uint64_t addr, uint8_t *buf, size_t n,
			 size_t len)
{
	rc->query = true;
	while (n < len && (recover_mem_byte(rp, rc, addr + n, &buf[n]) ||
			   recover_stored_before(rp, rc, pos, 0, NULL, 0,
						 addr + n, &buf[n], NULL)))
		n++;
	rc->query = false;
	return n;
}

size_t replay_recover_read(struct replay *rp, size_t thr, uint64_t pos,
			   uint64_t addr, uint8_t *buf, size_t len)
{
	struct replay_recover *rc = rp->t[thr].recover, *ans;
	size_t n = 0;

	/* The window's state, if made here: it knows all the walk does. */
	if (rc && rc->ans && rc->ans_pos == pos)
		return read_state(rp, rc->ans, pos, addr, buf, 0, len);
	if (!(rc = recover_walk_to(rp, thr, pos)))
		return 0;
	n = read_state(rp, rc, pos, addr, buf, 0, len);
	if (n < len && (ans = recover_window(rp, rc, thr, pos)))
		n = read_state(rp, ans, pos, addr, buf, n, len);
	return n;
}

void replay_recovery_summary(struct replay *rp, size_t thr,
			     struct replay_recovery_summary *s)
{
	struct replay_recover *rc;

	memset(s, 0, sizeof(*s));
	if (!rp || thr >= rp->n)
		return;
	rc = recover_walk_to(rp, thr, rp->t[thr].pos);
	s->sets = recover_evidence_sets(rp, thr);
	s->next_set = recover_evidence_from(rp, thr, rp->t[thr].pos);
	s->conflicts = replay_recover_conflicts(rp, thr);
	if (!rc)
		return;
	s->walked = true;
	s->present = rc->base;
	for (size_t i = 0; i < rc->nslots; i++)
		if (rc->g[i].key)
			s->bytes += (uint64_t) __builtin_popcount(rc->g[i].ov &
								  rc->g[i].kn);
}

uint64_t replay_recover_conflicts(const struct replay *rp, size_t thr)
{
	return rp && thr < rp->n && rp->t[thr].recover ?
	       rp->t[thr].recover->conflicts : 0;
}

bool recover_address(struct replay *rp, struct replay_recover *rc,
		     uint64_t at, const struct hist_memref *m, uint64_t *a)
{
	struct span sp;

	return address_at(rp, rc, at, m, a, &sp);
}

bool recover_value(struct replay *rp, struct replay_recover *rc,
		   uint64_t at, int reg, uint64_t *v)
{
	struct span sp;

	return reg_at(rp, rc, at, reg, v, &sp);
}
