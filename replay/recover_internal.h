/* Value recovery's state, shared by recover.c (the walk back from the
 * end) and forward.c (the window of passes both ways around a position
 * whose memory the walk does not give).  Private to replay/: known.c
 * asks through replay_internal.h. */
#ifndef PTRR_REPLAY_RECOVER_INTERNAL_H
#define PTRR_REPLAY_RECOVER_INTERNAL_H

#include "replay_internal.h"

/* The memory a proof read, in at most SPAN_MAX intervals [lo, hi):
 * a write over any of it since makes the proof void. */
#define SPAN_MAX 4
struct span {
	unsigned n;
	uint64_t lo[SPAN_MAX], hi[SPAN_MAX];
};

/* Ranges of the present's memory a state holds as unknown at most
 * (recover_mem_forget_range), and granules it notes as set since. */
#define HOLES_MAX 8
#define TOUCHED_MAX 256

/* A range [lo, hi) of the present's memory that is not known; @at: the
 * length of the log of granules set when it was last cleared, in log
 * epoch @epoch. */
struct hole {
	uint64_t lo, hi;
	unsigned at, epoch;
};

/* Returns passed by the walk whose calls it has not reached yet, kept
 * at most (saved.c): the innermost are kept when there are more. */
#define RETURNS_MAX 32

/* The callee-saved registers known right after a return the walk
 * stepped back over (saved.c): the entry of the return, its address and
 * the bytes it popped, rsp after it, and each of the registers of
 * hist_cfi_saved_reg known there (bit j of @known). */
struct ret_regs {
	uint64_t ret, ip, imm, rsp;
	uint64_t v[HIST_CFI_NSAVED];
	uint8_t known;
	/* The entry after the return, if the walk had just passed it. */
	bool after_ok;
	struct hist_entry after;
};

/* Those returns, the last passed (the earliest in the history) last. */
struct returns {
	struct ret_regs r[RETURNS_MAX];
	unsigned n;
};

/* The activation a state's front is in (saved.c's entry_of_front), for
 * the front @front: entered by call entry @call if @ok, with the call
 * frame information @cfi at the front. */
struct entry_slots {
	uint64_t front, call;
	bool ok;
	struct hist_cfi cfi;
};

/* Checkpoints of the walk kept at most. */
#define CHECKPOINTS 64

/* Eight bytes of memory: which are overridden (ov) and, of those, which
 * are known (kn); the others are the present's where it is known. */
struct granule {
	uint64_t key;		/* address / 8 + 1; 0: a free slot */
	uint8_t ov, kn;
	uint8_t val[8];
};

struct effect_slot {
	uint64_t ip;		/* 0: free */
	struct hist_effect fx;
};

/* forward.c's window: the entries [lo, hi] around a position, read once
 * (the passes and their look-ups ask for each several times). */
struct window {
	uint64_t lo, hi;
	struct hist_entry *e;	/* e[k - lo] */
	uint8_t *st;		/* st[k - lo]: WIN_* */
};

enum {
	WIN_READ = 1,		/* e[k - lo] is entry k */
	WIN_RESUMED = 2,	/* reached asynchronously: the entry before it
				 * does not lead to it (known_resume_continues) */
};

/* The walk's state before entry @front, as it was there. */
struct checkpoint {
	uint64_t front;
	uint64_t r[HIST_NREGS];
	uint8_t k[HIST_NREGS];
	bool base;
	struct hole holes[HOLES_MAX];
	unsigned nholes;
	struct granule *g;
	size_t nslots, used;
	uint64_t conflicts;
	struct returns rets;
};

struct replay_recover {
	struct hist_cursor *cur;
	struct hist_cursor *scan;	/* scan_back()'s */
	struct checkpoint cp[CHECKPOINTS];	/* fronts decreasing */
	size_t ncp;
	uint64_t cp_every;
	size_t cp_bytes;
	uint64_t front;		/* the state is before this entry */
	bool dead;		/* nothing is known before front */
	uint64_t r[HIST_NREGS];
	uint8_t k[HIST_NREGS];	/* the known bytes of each register */
	bool base;		/* memory not overridden is the present's */
	/* ... but in these ranges (writes whose address is bounded, not
	 * known); the granules set since a hole was cleared, logged (a
	 * full log starts a new epoch: holes clear by scanning all). */
	struct hole holes[HOLES_MAX];
	unsigned nholes;
	uint64_t touched[TOUCHED_MAX];
	unsigned ntouched, epoch;
	struct granule *g;	/* open addressing, a power of two */
	size_t nslots, used;
	struct effect_slot *fx;	/* EFFECT_SLOTS, by ip */
	uint64_t conflicts;
	struct returns rets;	/* saved.c */
	struct entry_slots es;	/* saved.c */
	/* The registers before the front while a step back changes r and
	 * k (recover_step_back), else NULL. */
	const uint64_t *front_r;
	const uint8_t *front_k;
	size_t thr;
	/* Steps before the frame proofs are asked again for rsp (0) and
	 * rbp (1) after they failed, and the wait after the next failure
	 * (recover_step_back). */
	uint32_t ask_wait[2], ask_backoff[2];
	/* Answering a question at the front, not walking: resolve()
	 * goes QUERY_DEPTH deep and loads may take what was stored before
	 * them (stored_before); too costly for every step of the walk. */
	bool query;
	/* resolve() reads RESOLVE_BACK_LONG entries back, not RESOLVE_BACK:
	 * for the address of a write that would otherwise make the
	 * present's memory unknown. */
	bool long_scan;
	/* forward.c: the window's cursor, and the state it gave before
	 * entry ans_pos (a copy sharing cur, scan and fx with this one). */
	struct hist_cursor *win;
	struct replay_recover *ans;
	uint64_t ans_pos;
	/* The window's entries while its passes run, for scan_back(). */
	const struct window *window;
	/* The entry scan_back() last returned the effect of. */
	struct hist_entry scanned;
	/* The entry recover_step_back() last undid (0: none). */
	struct hist_entry last;
};

/* The mask of the low @n bytes. */
static inline uint8_t recover_low(unsigned n)
{
	return n >= 8 ? 0xff : (uint8_t) ((1u << n) - 1);
}

/* The value a load of effect @fx gives its register from the @n bytes
 * @v read (zero-extended): sign-extended if it sign-extends, to its
 * width (a 32-bit register's upper half is zero). */
static inline uint64_t recover_loaded(const struct hist_effect *fx,
				      uint64_t v)
{
	unsigned n = fx->load.size;

	if (fx->sign && n < 8 && (v >> (8 * n - 1) & 1))
		v |= ~0ull << 8 * n;
	return fx->width == 4 ? (uint32_t) v : v;
}

/* The value register @fx->r1 holds after an instruction of kind
 * HIST_EFF_SET. */
static inline uint64_t recover_set_value(const struct hist_effect *fx)
{
	return fx->width == 4 ? (uint32_t) fx->imm : (uint64_t) fx->imm;
}

/* ---- recover.c: a state's memory and registers ---- */

/* The granule of address @addr, added (all bytes not overridden) if
 * @add; NULL if none or out of memory. */
struct granule *recover_granule(struct replay_recover *rc, uint64_t addr,
				bool add);
/* Forgets all memory of @rc. */
void recover_mem_poison(struct replay_recover *rc);
/* The byte at @addr into *@v: true if known. */
bool recover_mem_byte(struct replay *rp, struct replay_recover *rc,
		      uint64_t addr, uint8_t *v);
/* The @n bytes at @addr into @buf: true if all are known. */
bool recover_mem_get(struct replay *rp, struct replay_recover *rc,
		     uint64_t addr, size_t n, uint8_t *buf);
/* Makes the @n bytes at @addr unknown. */
void recover_mem_forget(struct replay_recover *rc, uint64_t addr, size_t n);
/* Makes memory [@lo, @hi) unknown (all of it if it cannot). */
void recover_mem_forget_range(struct replay_recover *rc, uint64_t lo,
			      uint64_t hi);
/* Fills what is unknown of the @n bytes at @addr with @buf; a byte known
 * to hold another value becomes unknown (a conflict). */
void recover_mem_learn(struct replay *rp, struct replay_recover *rc,
		       uint64_t addr, size_t n, const uint8_t *buf);
/* True if all bytes @mask of register @r are known. */
bool recover_reg_has(const struct replay_recover *rc, int r, uint8_t mask);
/* Fills what is unknown of bytes @mask of register @r with @v's; a known
 * byte of another value becomes unknown (a conflict). */
void recover_reg_learn(struct replay_recover *rc, int r, uint8_t mask,
		       uint64_t v);

/* ---- recover.c: memory a proof read ---- */

/* Adds [@a, @a + @n) to @sp (covering more when it is full). */
void span_add(struct span *sp, uint64_t a, uint64_t n);
/* Adds the intervals of @src to @dst. */
void span_join(struct span *dst, const struct span *src);
/* True if [@a, @a + @n) overlaps memory of @sp. */
bool span_hits(const struct span *sp, uint64_t a, uint64_t n);

/* ---- recover.c: the walk ---- */

/* The effect of the instruction of entry @e, decoded once per address;
 * NULL if it does not decode. */
const struct hist_effect *recover_effect(struct replay *rp,
					 struct replay_recover *rc,
					 const struct hist_entry *e);
/* What the instruction of effect @fx adds to rsp, into *@d: false if it
 * sets rsp otherwise (a load, leave, a register amount). */
bool recover_rsp_delta(const struct hist_effect *fx, int64_t *d);
/* The state before the instruction of entry @e from the state after it
 * (in @rc); false if nothing is known before it. */
bool recover_step_back(struct replay *rp, struct replay_recover *rc,
		       const struct hist_entry *e);
/* The byte at @addr before entry @at (@rc's state is there), unknown in
 * the state, from what the last write before stored there
 * (@wr0, @rsp_at, @depth: 0, NULL, 0 when asked from outside); the
 * memory of the state that took joins @msp if not NULL: the
 * caller checks it against the writes between @at and the state. */
bool recover_stored_before(struct replay *rp, struct replay_recover *rc,
			   uint64_t at, uint32_t wr0, const uint64_t *rsp_at,
			   unsigned depth, uint64_t addr, uint8_t *out,
			   struct span *msp);
/* The recovery of thread @thr walked back to entry @pos; NULL if
 * nothing is known there. */
struct replay_recover *recover_walk_to(struct replay *rp, size_t thr,
				       uint64_t pos);
/* The address of memory operand @m before entry @at, from @rc's state
 * there (the walk's, at @at) or from where its registers were set
 * (resolve()): false if not known. */
bool recover_address(struct replay *rp, struct replay_recover *rc,
		     uint64_t at, const struct hist_memref *m, uint64_t *a);
/* Register @reg before entry @at the same way. */
bool recover_value(struct replay *rp, struct replay_recover *rc,
		   uint64_t at, int reg, uint64_t *v);

/* ---- evidence.c: registers recorded on the way ---- */

/* The registers recorded before instruction entry @e of thread @thr (its
 * address checked against theirs); NULL if none. */
const struct hist_regsnap *recover_evidence_at(struct replay *rp, size_t thr,
					       const struct hist_entry *e);
/* The first entry at or after @pos of thread @thr before which registers
 * were recorded (not checked yet), or 0. */
uint64_t recover_evidence_from(struct replay *rp, size_t thr, uint64_t pos);
/* The sets of registers recorded in thread @thr that name an entry. */
size_t recover_evidence_sets(struct replay *rp, size_t thr);

/* ---- saved.c: callee-saved registers across a call that returned ---- */

/* Notes the callee-saved registers @after (known bytes @kafter) right
 * after return entry @e (effect @fx), stepped back over by @rc's walk. */
void recover_returns_note(struct replay_recover *rc,
			  const struct hist_entry *e,
			  const struct hist_effect *fx, const uint64_t *after,
			  const uint8_t *kafter);
/* Callee-saved register @reg before call entry *@call, into *@v: from
 * the slot the callee's prologue saved it in, which @rc's state knows,
 * its front in that callee's activation (saved.c's model). */
bool recover_entry_saved(struct replay *rp, struct replay_recover *rc,
			 int reg, uint64_t *call, uint64_t *v);
/* Learns into @rc, the state before call entry @e, the callee-saved
 * registers noted after the return of that call's activation, where
 * the history and the callee's call frame information say they are the
 * same (saved.c's model). */
void recover_returns_match(struct replay *rp, struct replay_recover *rc,
			   const struct hist_entry *e,
			   const struct hist_effect *fx);

/* The registers of hist_cfi_saved_reg (bit j each) that return entry
 * @ret of @rc's thread leaves as they were at the call whose activation
 * it ends, by saved.c's model but for rsp (not checked: the callee's
 * CFI says it balanced the stack); that call's entry into *@call.  0 if
 * none. */
uint8_t recover_kept_across(struct replay *rp, struct replay_recover *rc,
			    const struct hist_entry *ret, uint64_t *call);

/* ---- forward.c ---- */

/* The state before entry @pos of thread @thr from the passes both ways
 * over a window around it (see forward.c); NULL if there is none.  Kept
 * in @rc (thread @thr's walk) until asked about another position. */
struct replay_recover *recover_window(struct replay *rp,
				      struct replay_recover *rc, size_t thr,
				      uint64_t pos);
/* Frees what recover_window() kept in @rc. */
void recover_window_free(struct replay_recover *rc);

#endif
