/* What is known at a position of a thread's history (replay.h).
 *
 * Intel PT records where the program went, not what it computed.  At the
 * end of a thread's history (its present) everything recorded is known:
 * the registers read when the recording stopped, memory as it is then.
 * At any earlier position a value is shown only when it is proven; this
 * file is the one place that decides what is:
 *
 *   - rip: the position itself;
 *   - memory that cannot have changed since: code and the read-only data
 *     of the modules (the image).  Writable memory may have been written
 *     after the position, so it is not known there;
 *   - the Canonical Frame Address (CFA: the caller's rsp before its call)
 *     of each activation on the stack, and from it rsp and rbp:
 *       * the activation the history begins in, where the recorder read
 *         the registers (hist_thread.start_regs): from the call frame
 *         information there (without any, at a function's first
 *         instruction such as the program's entry point, rsp + 8, as gdb
 *         itself unwinds it); its callees from rsp read there plus what
 *         it did since;
 *       * an activation still alive at the present has the CFA that
 *         unwinding the present state gives (the code's call frame
 *         information over the recorded registers and memory, as gdb
 *         unwinds); so has one alive at the exit system call a thread
 *         ended with, from the registers read as it left (last_regs())
 *         and the history's return addresses;
 *       * an activation entered by a call has the caller's rsp before the
 *         call instruction; a tail call's, the jumper's rsp before the
 *         jump plus 8; one whose entry the history did not see but that
 *         left by a plain ret, rsp after the ret less 8 less its own rsp
 *         before the ret (relative to its CFA);
 *       * rsp before an instruction of an activation whose CFA is known:
 *         CFA - n where the call frame information there says "CFA = rsp
 *         + n"; else from the instructions of the activation itself back
 *         to one that settles it (its first, where rsp = CFA - 8, or a
 *         `leave` / `mov %rbp,%rsp` where the call frame information says
 *         "CFA = rbp + n"), adding up what push, pop, sub and add did on
 *         the way (calls out of the activation are balanced: their callee
 *         returned to the next instruction); or, for an activation alive
 *         at the present, forward to it (rsp recorded there, or before
 *         the call it is in: its callee's CFA);
 *       * rbp where the call frame information says "CFA = rbp + n".
 *     Anything else that touches rsp (a load into it, sub %rax,%rsp) or
 *     an activation whose entry the history did not see (it began before
 *     the trace, after a gap, or asynchronously: a signal handler, the
 *     code after a sigreturn) leaves the value unknown.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

/* Frames of the present's stack unwound at most. */
#define MAX_END_FRAMES 256
/* Instructions and pieces a proof of rsp reads back at most. */
#define MAX_WALK 200000
/* Entries before one whose proof of rsp went MAX_WALK back for nothing
 * that are taken to fail too (rsp_back). */
#define FAR_REUSE 4096
/* Callers a proof of a CFA climbs at most. */
#define MAX_CHAIN 4096
/* ... and earlier callees it goes back through (rsp_after_return). */
#define MAX_SIBLINGS 16
/* The bytes of an instruction. */
#define INSN_MAX 15

/* A frame of the present state's stack. */
struct end_frame {
	uint32_t inst;		/* its activation in the history, 0 if none */
	uint64_t pc;
	uint64_t cfa;
};

/* What the proofs decoded of instructions, by address (a power of
 * two): the effect on rsp (effect_of) and the call-clobbered registers
 * written (clobbers), each once asked for. */
#define INSN_SLOTS 4096
#define SLOT_RSP_FX 0x1
#define SLOT_CLOB 0x2

struct insn_slot {
	uint64_t ip;		/* 0: free */
	uint8_t size;
	uint8_t have;		/* SLOT_* */
	uint16_t clob;		/* of replay_clobbered_reg's indexes */
	struct hist_rsp_effect fx;
};

/* Instructions read back from a position for a caller's call-clobbered
 * registers, at most. */
#define CLOBBER_SCAN 65536

/* What thread's CFA proofs learned, by activation. */
struct cfa_memo {
	uint32_t inst;		/* 0: free slot */
	bool known;
	bool walk_failed;	/* not proven while walking (weaker) */
	uint64_t cfa;		/* 1 if not proven at all */
};

struct replay_known {
	bool end_done;		/* end[] computed */
	struct end_frame end[MAX_END_FRAMES];
	size_t nend;		/* frames unwound */
	size_t nmatched;	/* the first nmatched are history frames */
	struct cfa_memo *memo;	/* open addressing, a power of two */
	size_t nslots, used;
	/* The last rsp_back() that failed: for activation fail_inst, from
	 * fail_hi back to fail_lo; one asked for an entry of the same
	 * activation in (fail_lo, fail_hi] takes the same path down and
	 * fails at the same place (the walk asks at every step), or after
	 * MAX_WALK steps, near it (see rsp_back). */
	uint32_t fail_inst;
	uint64_t fail_lo, fail_hi;
	/* The last rsp_back() that succeeded: rsp before entry ok_pos of
	 * activation ok_inst is ok_d from its CFA; one from a later entry
	 * of it that walks back to there ends there. */
	uint32_t ok_inst;
	uint64_t ok_pos;
	int64_t ok_d;
	/* The last rsp_to_present() whose walk to the present failed: for
	 * end frame pfail_j (activation pfail_inst) from pfail_pos.  One
	 * from an earlier entry of it walks through that one and fails the
	 * same way (a reverse step asks again at every entry). */
	bool pfail;
	size_t pfail_j;
	uint32_t pfail_inst;
	uint64_t pfail_pos;
	struct insn_slot *slots;	/* INSN_SLOTS, made when first used */
	/* For the value recovery's walk (known_frame_regs_at), asked at
	 * every step: no proof through earlier callees (rsp_after_return),
	 * so a CFA not proven then is remembered as unknown to the walk
	 * only. */
	bool walking;
};

void replay_known_reset(struct replay_thread *t)
{
	replay_recover_reset(t);
	replay_evidence_reset(t);
	if (t->known) {
		free(t->known->memo);
		free(t->known->slots);
	}
	free(t->known);
	t->known = NULL;
}

void replay_set_present(struct replay *rp, replay_present_fn fn, void *arg)
{
	rp->present = fn;
	rp->present_arg = arg;
}

/* Thread @thr of @rp, or NULL. */
static struct replay_thread *thread_of(struct replay *rp, size_t thr)
{
	return rp && thr < rp->n ? &rp->t[thr] : NULL;
}

/* True if thread @thr of @rp was still there when the recording stopped
 * (one that exited before has the end of its history in the past). */
static bool alive_at_end(const struct replay *rp, size_t thr)
{
	const struct hist_bundle *b;

	b = rp->rec ? hist_recording_bundle(rp->rec) : NULL;
	return !b || thr >= b->nthreads ||
	       b->threads[thr].stop.kind != HIST_STOP_EXITED;
}

/* True if thread @thr of @rp is at its present: at the end of its
 * history, and that end is when the recording stopped. */
static bool at_present(const struct replay *rp, size_t thr)
{
	return rp->t[thr].pos == rp->t[thr].last && alive_at_end(rp, thr);
}

bool replay_at_present(const struct replay *rp, size_t thr)
{
	return rp && thr < rp->n && at_present(rp, thr);
}

/* Memory as it is at the present: the live process's, else the
 * bundle's snapshot; the number of bytes read at @addr. */
static size_t present_read(struct replay *rp, uint64_t addr, uint8_t *buf,
			   size_t len)
{
	const struct hist_bundle *b;
	ssize_t n;

	if (rp->present) {
		n = rp->present(rp->present_arg, addr, buf, len);
		return n > 0 ? (size_t) n : 0;
	}
	b = rp->rec ? hist_recording_bundle(rp->rec) : NULL;
	for (size_t i = 0; b && i < b->nsnapshot; i++) {
		const struct hist_blob *m = &b->snapshot[i];
		size_t k;

		if (!m->data || addr < m->start || addr - m->start >= m->size)
			continue;
		k = m->size - (addr - m->start);
		k = k < len ? k : len;
		memcpy(buf, m->data + (addr - m->start), k);
		return k;
	}
	return 0;
}

/* What never changes: code, read-only data, copies of anonymous code. */
static size_t image_read(struct replay *rp, uint64_t addr, uint8_t *buf,
			 size_t len)
{
	ssize_t n;

	if (!rp->rec)
		return 0;
	n = hist_image_read(hist_recording_image(rp->rec), addr, buf, len);
	return n > 0 ? (size_t) n : 0;
}

size_t replay_read_memory(struct replay *rp, size_t thr, uint64_t addr,
			  uint8_t *buf, size_t len)
{
	size_t n;

	if (!thread_of(rp, thr) || !len)
		return 0;
	if (at_present(rp, thr)) {
		n = present_read(rp, addr, buf, len);
		if (n)
			return n;
	}
	n = image_read(rp, addr, buf, len);
	if (n || at_present(rp, thr))
		return n;
	/* Recovered from the end state and the instructions since. */
	return replay_recover_read(rp, thr, rp->t[thr].pos, addr, buf, len);
}

/* ---- The present state's stack ---- */

/* The 8 bytes at @addr at the present, into @v. */
static bool present_u64(struct replay *rp, uint64_t addr, uint64_t *v)
{
	uint8_t b[8];

	if (present_read(rp, addr, b, 8) != 8 &&
	    image_read(rp, addr, b, 8) != 8)
		return false;
	memcpy(v, b, 8);
	return true;
}

/* Instruction entry @number of thread @t, copied into @e; false if it is
 * a gap or not there. */
static bool insn(struct replay_thread *t, uint64_t number,
		 struct hist_entry *e)
{
	const struct hist_entry *x;

	if (!number || hist_cursor_seek(t->look, number))
		return false;
	x = hist_cursor_entry(t->look);
	*e = *x;
	return x->kind == HIST_ENTRY_INSN;
}

/* The registers thread @t had before the last instruction of its
 * history (@e), into @r, and which of them are known, into @rk; false if
 * the recorder read none there:
 *   - read with rip at that instruction (the thread was stopped before
 *     it): all of them;
 *   - read as the thread left, after that instruction, the exit or
 *     exit_group system call (PTRACE_EVENT_EXIT): all that `syscall`
 *     leaves alone — not rcx, r11 (it writes them) and the flags — with
 *     rax the call's number (orig_rax). */
static bool last_regs(struct replay *rp, struct replay_thread *t,
		      const struct hist_entry *e, uint64_t r[HIST_NREGS],
		      bool rk[HIST_NREGS])
{
	const uint64_t *end = t->end_regs.r;
	uint8_t code[2];

	if (!t->end_regs.valid)
		return false;
	memcpy(r, end, HIST_NREGS * sizeof(*r));
	for (int i = 0; i < HIST_NREGS; i++)
		rk[i] = true;
	if (end[HIST_RIP] == e->ip)
		return true;
	if (e->iclass != HIST_IC_FAR_CALL || e->size != 2 ||
	    end[HIST_RIP] != e->ip + 2 ||
	    image_read(rp, e->ip, code, 2) != 2 || code[0] != 0x0f ||
	    code[1] != 0x05 ||
	    (end[HIST_ORIG_RAX] != 60 && end[HIST_ORIG_RAX] != 231))
		return false;
	r[HIST_RIP] = e->ip;
	r[HIST_RAX] = end[HIST_ORIG_RAX];
	rk[HIST_RCX] = rk[HIST_R11] = rk[HIST_EFLAGS] = false;
	r[HIST_RCX] = r[HIST_R11] = r[HIST_EFLAGS] = 0;
	return true;
}

/* Unwinds the stack of the last position of a thread (registers @r,
 * known @rk; its history's frames there @hf[@m]) with the call frame
 * information into @k->end, matching the history's frames.  With @mem
 * (the thread is at its present) return addresses and saved registers
 * are read from the present's memory, which also reaches callers beyond
 * the history; without, the history's frames give the return addresses
 * and registers saved in memory are unknown. */
static void unwind_end(struct replay *rp, const uint64_t *r, const bool *rk,
		       const struct replay_frame *hf, size_t m, bool mem,
		       struct replay_known *k)
{
	struct hist_symtab *st = hist_recording_symtab(rp->rec);
	uint64_t pc = r[HIST_RIP], rsp = r[HIST_RSP], rbp = r[HIST_RBP];
	bool have_rbp = rk[HIST_RBP];

	k->nend = k->nmatched = 0;
	for (; rk[HIST_RSP] && pc && k->nend < MAX_END_FRAMES; k->nend++) {
		struct end_frame *f = &k->end[k->nend];
		struct hist_cfi c;
		uint64_t base, ra;

		if (hist_cfi_at(st, k->nend ? pc - 1 : pc, &c))
			break;
		if (c.cfa_reg == HIST_RBP && !have_rbp)
			break;
		base = c.cfa_reg == HIST_RSP ? rsp : rbp;
		*f = (struct end_frame) { 0, pc, base + (uint64_t) c.cfa_off };
		if (k->nmatched == k->nend && k->nend < m &&
		    hf[k->nend].pc == pc) {
			f->inst = hf[k->nend].instance;
			k->nmatched++;
		}
		if (c.ra.how != HIST_CFI_AT) {
			k->nend++;
			break;
		}
		if (mem ? !present_u64(rp, f->cfa + (uint64_t) c.ra.off, &ra)
			: k->nmatched != k->nend + 1 || k->nend + 1 >= m) {
			k->nend++;
			break;
		}
		if (!mem)
			ra = hf[k->nend + 1].pc;
		if (c.rbp.how == HIST_CFI_AT)
			have_rbp = mem && present_u64(rp, f->cfa +
						      (uint64_t) c.rbp.off,
						      &rbp);
		else if (c.rbp.how == HIST_CFI_VALUE)
			rbp = f->cfa + (uint64_t) c.rbp.off;
		else if (c.rbp.how != HIST_CFI_SAME)
			have_rbp = false;
		rsp = f->cfa;
		pc = ra;
	}
	ptrr_clear_error();
}

/* The registers known before thread @t's last instruction, at @ip, into
 * @r and @rk; false if there is none or it has none. */
static bool regs_at_last(struct replay *rp, struct replay_thread *t,
			 uint64_t *ip, uint64_t r[HIST_NREGS],
			 bool rk[HIST_NREGS])
{
	struct hist_entry e;

	if (!rp->rec || !t->last || !insn(t, t->last, &e) ||
	    !last_regs(rp, t, &e, r, rk))
		return false;
	*ip = e.ip;
	return true;
}

/* Fills @k->end for thread @thr of @rp if not yet: the stack at the last
 * position of its history where the registers there are known, the
 * frames of which the history also has knowing their activation. */
static void end_stack(struct replay *rp, size_t thr, struct replay_known *k)
{
	struct replay_thread *t = &rp->t[thr];
	struct replay_frame *hf;
	uint64_t r[HIST_NREGS], ip;
	bool rk[HIST_NREGS];
	size_t m = 0;

	if (k->end_done)
		return;
	k->end_done = true;
	if (!regs_at_last(rp, t, &ip, r, rk))
		return;
	hf = calloc(MAX_END_FRAMES, sizeof(*hf));
	if (!hf)
		return;
	if (!replay_frames_at(t, t->last, ip, hf, MAX_END_FRAMES, &m) &&
	    m && hf[0].pc == ip)
		unwind_end(rp, r, rk, hf, m, alive_at_end(rp, thr), k);
	ptrr_clear_error();
	free(hf);
}

size_t known_end_frames(struct replay *rp, size_t thr, uint64_t *pc,
			uint64_t *cfa, size_t max)
{
	struct replay_known *k;
	uint64_t r[HIST_NREGS], ip;
	bool rk[HIST_NREGS];
	size_t n = 0;

	if (!alive_at_end(rp, thr) ||
	    !regs_at_last(rp, &rp->t[thr], &ip, r, rk) ||
	    !(k = calloc(1, sizeof(*k))))
		return 0;
	unwind_end(rp, r, rk, NULL, 0, true, k);
	for (; n < k->nend && n < max; n++) {
		pc[n] = k->end[n].pc;
		cfa[n] = k->end[n].cfa;
	}
	free(k);
	ptrr_clear_error();
	return n;
}

/* ---- CFA proofs ---- */

/* What thread @thr has learned, made if new; NULL if out of memory. */
static struct replay_known *known_of(struct replay *rp, size_t thr)
{
	struct replay_thread *t = &rp->t[thr];

	/* Not while the call segments are far from ready (decide_calls). */
	if (t->calls_off)
		return NULL;
	if (!t->known)
		t->known = calloc(1, sizeof(*t->known));
	if (t->known)
		end_stack(rp, thr, t->known);
	return t->known;
}

/* The memo slot of activation @inst, added empty if new; NULL if out of
 * memory. */
static struct cfa_memo *memo_slot(struct replay_known *k, uint32_t inst)
{
	size_t i;

	if (2 * (k->used + 1) > k->nslots) {
		size_t n = k->nslots ? 2 * k->nslots : 256;
		struct cfa_memo *s = calloc(n, sizeof(*s));

		if (!s)
			return NULL;
		for (size_t j = 0; j < k->nslots; j++) {
			if (!k->memo[j].inst)
				continue;
			for (i = k->memo[j].inst * 0x9e3779b1u & (n - 1);
			     s[i].inst; i = (i + 1) & (n - 1))
				;
			s[i] = k->memo[j];
		}
		free(k->memo);
		k->memo = s;
		k->nslots = n;
	}
	for (i = inst * 0x9e3779b1u & (k->nslots - 1); k->memo[i].inst;
	     i = (i + 1) & (k->nslots - 1))
		if (k->memo[i].inst == inst)
			return &k->memo[i];
	k->used++;
	k->memo[i] = (struct cfa_memo) { .inst = inst };
	return &k->memo[i];
}

/* True if instruction @p is a direct call or jump (E8, E9, EB) to
 * @target: when tracing resumed at @target right after it (a live
 * session stopped there and ran on), @p is still how it got there. */
static bool direct_to(struct replay *rp, const struct hist_entry *p,
		      uint64_t target)
{
	uint8_t b[5];
	int64_t rel;

	if ((p->size != 5 && p->size != 2) ||
	    image_read(rp, p->ip, b, p->size) != p->size)
		return false;
	if (p->size == 5 && (b[0] == 0xe8 || b[0] == 0xe9))
		rel = (int32_t) ((uint32_t) b[1] | (uint32_t) b[2] << 8 |
				 (uint32_t) b[3] << 16 | (uint32_t) b[4] << 24);
	else if (p->size == 2 && b[0] == 0xeb)
		rel = (int8_t) b[1];
	else
		return false;
	return p->ip + p->size + (uint64_t) rel == target;
}

/* How activation @a (its first segment) was entered: 1 by a call, 2 by a
 * tail call (a jump), 0 otherwise or not seen (asynchronously, by a
 * return, at the start of the trace or after a gap; where tracing
 * resumed, unless the instruction before leads there by itself).  Its
 * entry in *@from: the call or jump. */
static int entered_by(struct replay *rp, struct replay_thread *t,
		      const struct hist_call *a, uint64_t *from)
{
	struct hist_entry first, p;

	if (a->first <= 1 || !insn(t, a->first, &first) ||
	    !insn(t, a->first - 1, &p) ||
	    ((first.flags & HIST_F_RESUMED) && !direct_to(rp, &p, first.ip)))
		return 0;
	*from = a->first - 1;
	if (p.iclass == HIST_IC_CALL && !(a->flags & HIST_CALL_TAILCALL))
		return 1;
	if ((p.iclass == HIST_IC_JUMP || p.iclass == HIST_IC_COND_JUMP) &&
	    (a->flags & HIST_CALL_TAILCALL))
		return 2;
	return 0;
}

/* True if the call frame information at @ip says CFA = @reg + *@off
 * (@reg HIST_RSP or HIST_RBP). */
static bool cfi_from(struct replay *rp, uint64_t ip, int reg, int64_t *off)
{
	struct hist_cfi c;

	if (hist_cfi_at(hist_recording_symtab(rp->rec), ip, &c) ||
	    c.cfa_reg != reg) {
		ptrr_clear_error();
		return false;
	}
	*off = c.cfa_off;
	return true;
}

/* cfi_from() rsp-based, and rbp-based. */
static bool cfi_rsp(struct replay *rp, uint64_t ip, int64_t *off)
{
	return cfi_from(rp, ip, HIST_RSP, off);
}

static bool cfi_rbp(struct replay *rp, uint64_t ip, int64_t *off)
{
	return cfi_from(rp, ip, HIST_RBP, off);
}

/* How activation @a was entered (entered_by(): 1 by a call, 2 by a
 * jump, its entry in *@from), with its CFA less rsp at its first
 * instruction in *@off: 8 after a call, the return address it pushed;
 * after a jump (a tail call), what the call frame information there
 * says, for the code that jumped may have pushed more than a return
 * address (ld.so's PLT0 pushes two words before it jumps to
 * _dl_runtime_resolve, whose CFI counts them).  0 if not known. */
static int entry_offset(struct replay *rp, struct replay_thread *t,
			const struct hist_call *a, uint64_t *from,
			int64_t *off)
{
	struct hist_entry e;
	int how = entered_by(rp, t, a, from);

	if (how == 1)
		*off = 8;
	else if (how != 2 || !insn(t, a->first, &e) ||
		 !cfi_rsp(rp, e.ip, off))
		return 0;
	return how;
}

/* The piece of activation @inst before piece @s (which must not be its
 * first), into @prev: the one that made the call whose callee returned
 * to @s's first instruction (through any tail calls it made). */
static bool previous_piece(struct replay_thread *t, uint32_t inst,
			   const struct hist_call *s, struct hist_call *prev)
{
	struct hist_call c, ca;
	uint64_t at = s->first - 1;
	uint32_t id;

	for (int hops = 0; hops < 64; hops++) {
		if (hist_call_find(t->h, at, &id) ||
		    hist_call_get(t->h, id, &c) ||
		    hist_call_get(t->h, c.inst, &ca))
			return false;
		if (!(ca.flags & HIST_CALL_TAILCALL))
			return ca.up && !hist_call_get(t->h, ca.up, prev) &&
			       prev->inst == inst && prev->last < s->first;
		if (ca.first <= 1)
			return false;
		at = ca.first - 1;
	}
	return false;
}

/* The effect on rsp of instruction entry @e, into @fx; false if it does
 * not decode. */
/* The slot of instruction entry @e in @t's table, emptied if it held
 * another instruction; NULL if there is no table (or memory for it). */
static struct insn_slot *insn_slot(struct replay_thread *t,
				   const struct hist_entry *e)
{
	struct replay_known *k = t->known;
	struct insn_slot *slot;

	if (!k)
		return NULL;
	if (!k->slots)
		k->slots = calloc(INSN_SLOTS, sizeof(*k->slots));
	if (!k->slots)
		return NULL;
	slot = &k->slots[(e->ip * 0x9e3779b97f4a7c15ull) >> 52 &
			 (INSN_SLOTS - 1)];
	if (slot->ip != e->ip || slot->size != e->size)
		*slot = (struct insn_slot) { .ip = e->ip, .size = e->size };
	return slot;
}

static bool effect_of(struct replay *rp, struct replay_thread *t,
		      const struct hist_entry *e, struct hist_rsp_effect *fx)
{
	struct insn_slot *slot = insn_slot(t, e);
	uint8_t code[INSN_MAX];
	size_t got;

	if (slot && (slot->have & SLOT_RSP_FX)) {
		*fx = slot->fx;
		return true;
	}
	got = image_read(rp, e->ip, code, e->size ? e->size : 1);
	if (!got || hist_rsp_effect(code, got, fx) < 0)
		return false;
	if (slot) {
		slot->fx = *fx;
		slot->have |= SLOT_RSP_FX;
	}
	return true;
}

/* What the own instructions of the activation entry @from is in did to
 * rsp from @from up to entry @to (later in it), into *@delta: constant
 * changes only, calls out of it balanced by their callee's return into
 * its next piece.  False otherwise. */
static bool own_delta(struct replay *rp, struct replay_thread *t,
		      uint64_t from, uint64_t to, int64_t *delta)
{
	struct hist_call s;
	struct hist_entry e;
	struct hist_rsp_effect fx;
	uint64_t q;
	uint32_t id;

	*delta = 0;
	if (to < from || hist_call_find(t->h, from, &id) ||
	    hist_call_get(t->h, id, &s))
		return false;
	for (q = from; q < to && q - from < MAX_WALK; q++) {
		if (!insn(t, q, &e) || !effect_of(rp, t, &e, &fx))
			return false;
		if (q == s.last) {
			/* A call out of the activation, balanced by its
			 * callee's return into the next piece. */
			if (e.iclass != HIST_IC_CALL || !s.next ||
			    hist_call_get(t->h, s.next, &s))
				return false;
			q = s.first - 1;
			continue;
		}
		if (fx.kind == HIST_RSP_DELTA)
			*delta += fx.delta;
		else if (fx.kind == HIST_RSP_CALL)
			*delta -= 8;
		else if (fx.kind != HIST_RSP_NONE)
			return false;
	}
	return q == to;
}

/* rsp before entry @pos of activation @inst (alive at the present,
 * frame @j of its stack), as an offset from its CFA, into *@d: from rsp
 * at its present (frame 0: the recorded rsp; an outer frame: before the
 * call it made, its callee's CFA), less what the activation's own
 * instructions did to rsp from @pos to there. */
static bool rsp_to_present(struct replay *rp, struct replay_thread *t,
			   size_t j, uint64_t pos, int64_t *d)
{
	struct replay_known *k = t->known;
	struct hist_call b, s;
	uint64_t anchor, rsp, from;
	int64_t delta, off;
	uint32_t id;
	int how;

	if (j == 0) {
		anchor = t->last;
		rsp = t->end_regs.r[HIST_RSP];
	} else {
		if (hist_call_get(t->h, k->end[j - 1].inst, &b) ||
		    !(how = entry_offset(rp, t, &b, &from, &off)))
			return false;
		/* rsp before the call or jump */
		anchor = from;
		rsp = k->end[j - 1].cfa - (uint64_t) off + (how == 1 ? 8 : 0);
	}
	if (hist_call_find(t->h, pos, &id) || hist_call_get(t->h, id, &s) ||
	    s.inst != k->end[j].inst)
		return false;
	if (k->pfail && k->pfail_j == j && k->pfail_inst == s.inst &&
	    pos <= k->pfail_pos)
		return false;
	if (!own_delta(rp, t, pos, anchor, &delta)) {
		k->pfail = true;
		k->pfail_j = j;
		k->pfail_inst = s.inst;
		k->pfail_pos = pos;
		return false;
	}
	*d = (int64_t) (rsp - k->end[j].cfa) - delta;
	return true;
}

/* The registers thread @thr of @rp had at the first instruction of its
 * history, if the recorder read them there; NULL otherwise. */
static const struct hist_regs *start_regs(const struct replay *rp,
					  size_t thr)
{
	const struct hist_bundle *b = rp->rec ? hist_recording_bundle(rp->rec)
					      : NULL;
	const struct replay_thread *t = &rp->t[thr];
	struct hist_entry e;

	if (!b || thr >= b->nthreads || !b->threads[thr].start_regs.valid ||
	    !t->first || !insn((struct replay_thread *) t, t->first, &e) ||
	    b->threads[thr].start_regs.r[HIST_RIP] != e.ip)
		return NULL;
	return &b->threads[thr].start_regs;
}

/* The activation the first instruction of thread @t's history is in. */
static uint32_t first_activation(struct replay_thread *t)
{
	struct hist_call s;
	uint32_t id;

	return t->first && !hist_call_find(t->h, t->first, &id) &&
	       !hist_call_get(t->h, id, &s) ? s.inst : 0;
}

static bool rsp_back(struct replay *rp, struct replay_thread *t,
		     uint32_t inst, uint64_t pos, int64_t *d);

/* The CFA of the activation the history begins in, from the registers
 * @r0 read there and the call frame information at that instruction;
 * without any, at a function's first instruction (the program's entry
 * point, which has none), rsp + 8: what a call would have left, and the
 * frame address gdb's own unwinding gives such a frame. */
static bool start_cfa(struct replay *rp, const struct hist_regs *r0,
		      uint64_t *cfa)
{
	struct hist_cfi c;
	struct hist_sym sym;

	if (hist_cfi_at(hist_recording_symtab(rp->rec), r0->r[HIST_RIP], &c)) {
		ptrr_clear_error();
		if (hist_sym_lookup(hist_recording_symtab(rp->rec),
				    r0->r[HIST_RIP], &sym) ||
		    sym.start != r0->r[HIST_RIP]) {
			ptrr_clear_error();
			return false;
		}
		*cfa = r0->r[HIST_RSP] + 8;
		return true;
	}
	*cfa = (c.cfa_reg == HIST_RSP ? r0->r[HIST_RSP] : r0->r[HIST_RBP]) +
	       (uint64_t) c.cfa_off;
	return true;
}

/* rsp before entry @pos of activation @inst, as an offset from its CFA,
 * into *@d (see the top of this file); false if not proven. */
static bool rsp_before(struct replay *rp, struct replay_thread *t,
		       uint32_t inst, uint64_t pos, int64_t *d)
{
	const struct hist_regs *r0 = start_regs(rp, (size_t) (t - rp->t));
	int64_t delta;
	uint64_t cfa;

	for (size_t j = 0; t->known && j < t->known->nmatched; j++)
		if (t->known->end[j].inst == inst &&
		    rsp_to_present(rp, t, j, pos, d))
			return true;
	if (rsp_back(rp, t, inst, pos, d))
		return true;
	/* Forward from the registers read as the history began. */
	if (r0 && inst == first_activation(t) &&
	    start_cfa(rp, r0, &cfa) &&
	    own_delta(rp, t, t->first, pos, &delta)) {
		*d = (int64_t) (r0->r[HIST_RSP] - cfa) + delta;
		return true;
	}
	return false;
}

/* rsp before entry @pos of activation @inst, as an offset from its CFA,
 * into *@d, from the call frame information at @pos or the activation's
 * instructions before it; false if not proven. */
static bool rsp_back(struct replay *rp, struct replay_thread *t,
		     uint32_t inst, uint64_t pos, int64_t *d)
{
	struct replay_known *k = t->known;
	struct hist_call s, a, prev;
	struct hist_entry e;
	int64_t delta = 0, off;
	uint64_t q, from;
	uint32_t id;
	size_t steps = 0;

	if (!insn(t, pos, &e))
		return false;
	if (cfi_rsp(rp, e.ip, &off)) {
		*d = -off;
		return true;
	}
	if (k && k->fail_inst == inst && pos > k->fail_lo && pos <= k->fail_hi)
		return false;
	if (hist_call_find(t->h, pos, &id) || hist_call_get(t->h, id, &s) ||
	    s.inst != inst || hist_call_get(t->h, inst, &a))
		return false;
	for (q = pos; steps++ < MAX_WALK;) {
		struct hist_rsp_effect fx;

		if (k && k->ok_inst == inst && q == k->ok_pos) {
			*d = delta + k->ok_d;
			goto ok;
		}
		if (q == s.first) {
			/* Before the piece's first instruction: after the
			 * return from the call that ends the piece before,
			 * where rsp is what it was before that call. */
			if (s.id == a.id)
				break;
			if (insn(t, q, &e) && cfi_rsp(rp, e.ip, &off)) {
				*d = delta - off;
				goto ok;
			}
			if (!previous_piece(t, inst, &s, &prev) ||
			    !insn(t, prev.last, &e) ||
			    e.iclass != HIST_IC_CALL)
				goto fail;
			s = prev;
			q = s.last;
			continue;
		}
		q--;
		if (!insn(t, q, &e) || !effect_of(rp, t, &e, &fx))
			goto fail;
		switch (fx.kind) {
		case HIST_RSP_NONE:
			break;
		case HIST_RSP_DELTA:
			delta += fx.delta;
			break;
		case HIST_RSP_CALL:
			delta -= 8;	/* a call that did not leave */
			break;
		case HIST_RSP_FROM_RBP:
			if (!cfi_rbp(rp, e.ip, &off))
				goto fail;
			*d = delta - off + fx.delta;
			goto ok;
		default:
			goto fail;
		}
	}
	/* Too far.  Remembered as a failure for the FAR_REUSE entries
	 * before @pos only: a walk from one of them would read a little
	 * further (at most FAR_REUSE steps), so it is as if the bound were
	 * that much shorter there; without it, a reverse step in a loop of
	 * short calls read MAX_WALK instructions at every entry (half a
	 * second each). */
	if (steps >= MAX_WALK) {
		if (k) {
			k->fail_inst = inst;
			k->fail_lo = pos > FAR_REUSE && pos - FAR_REUSE > q ?
				     pos - FAR_REUSE : q;
			k->fail_hi = pos;
		}
		return false;
	}
	/* Before the activation's first instruction. */
	if (entry_offset(rp, t, &a, &from, &off) ||
	    (insn(t, a.first, &e) && cfi_rsp(rp, e.ip, &off))) {
		*d = delta - off;
		goto ok;
	}
fail:
	if (k) {
		k->fail_inst = inst;
		k->fail_lo = q;
		k->fail_hi = pos;
	}
	return false;
ok:
	if (k) {
		k->ok_inst = inst;
		k->ok_pos = pos;
		k->ok_d = *d;
	}
	return true;
}

static bool act_cfa(struct replay *rp, size_t thr, uint32_t inst,
		    unsigned depth, uint64_t *cfa);

/* True if entry @at of @t is a plain `ret` (0xc3: rsp after it is rsp
 * before it plus 8). */
static bool plain_ret(struct replay *rp, struct replay_thread *t,
		      uint64_t at)
{
	struct hist_entry e;
	uint8_t op;

	return insn(t, at, &e) && e.iclass == HIST_IC_RETURN &&
	       image_read(rp, e.ip, &op, 1) == 1 && op == 0xc3;
}

/* The CFA of activation @a (its first segment) of thread @thr from its
 * return, for one whose entry the history did not see: its last piece
 * ends with a plain `ret` into another activation, so rsp after it, in
 * the activation returned to, is rsp before the ret plus 8. */
static bool cfa_by_return(struct replay *rp, size_t thr,
			  const struct hist_call *a, unsigned depth,
			  uint64_t *cfa)
{
	struct replay_thread *t = &rp->t[thr];
	struct hist_call s = *a, c;
	uint64_t to_cfa;
	int64_t d_to, d_ret;
	uint32_t id;

	for (size_t n = 0; s.next && n < MAX_WALK; n++)
		if (hist_call_get(t->h, s.next, &s))
			return false;
	if (s.next || !plain_ret(rp, t, s.last) ||
	    hist_call_find(t->h, s.last + 1, &id) ||
	    hist_call_get(t->h, id, &c) || c.first != s.last + 1 ||
	    c.inst == a->inst)
		return false;
	if (!act_cfa(rp, thr, c.inst, depth + 1, &to_cfa) ||
	    !rsp_before(rp, t, c.inst, s.last + 1, &d_to) ||
	    !rsp_before(rp, t, a->inst, s.last, &d_ret))
		return false;
	*cfa = to_cfa + (uint64_t) d_to - (uint64_t) d_ret - 8;
	return true;
}

/* rsp before entry @pos of thread @thr into *@rsp, from a callee that
 * returned earlier in the same piece of @pos's activation: the piece
 * begins after a plain `ret`, which left rsp at the returning
 * activation's CFA; then what the activation's own instructions did
 * since.  For an activation whose own CFA is not known (it began before
 * the trace), e.g. a loop calling a function the history began in. */
static bool rsp_after_return(struct replay *rp, size_t thr, uint64_t pos,
			     unsigned depth, uint64_t *rsp)
{
	struct replay_thread *t = &rp->t[thr];
	struct hist_call s, y;
	struct hist_entry first;
	uint64_t cfa;
	int64_t d;
	uint32_t id;

	if (depth >= MAX_SIBLINGS || (t->known && t->known->walking) ||
	    hist_call_find(t->h, pos, &id) ||
	    hist_call_get(t->h, id, &s) || s.first <= 1 ||
	    !insn(t, s.first, &first) || (first.flags & HIST_F_RESUMED) ||
	    !plain_ret(rp, t, s.first - 1) ||
	    hist_call_find(t->h, s.first - 1, &id) ||
	    hist_call_get(t->h, id, &y) || y.inst == s.inst ||
	    !act_cfa(rp, thr, y.inst, depth + 1, &cfa) ||
	    !own_delta(rp, t, s.first, pos, &d))
		return false;
	*rsp = cfa + (uint64_t) d;
	return true;
}

/* The CFA of activation @inst of thread @thr into *@cfa; false if it is
 * not proven.  @depth bounds the callers climbed. */
static bool act_cfa(struct replay *rp, size_t thr, uint32_t inst,
		    unsigned depth, uint64_t *cfa)
{
	struct replay_thread *t = &rp->t[thr];
	struct replay_known *k = t->known;
	struct cfa_memo *m;
	struct hist_call a, c, ca;
	uint64_t from, caller_cfa, x;
	uint32_t id;
	int64_t d, eoff = 8;
	int how = 0;
	bool ok = false;

	if (!inst || !k || depth > MAX_CHAIN)
		return false;
	for (size_t i = 0; i < k->nmatched; i++)
		if (k->end[i].inst == inst) {
			*cfa = k->end[i].cfa;
			return true;
		}
	m = memo_slot(k, inst);
	if (m && m->inst == inst &&
	    (m->known || m->cfa == 1 || (k->walking && m->walk_failed))) {
		*cfa = m->cfa;
		return m->known;
	}
	if (hist_call_get(t->h, inst, &a))
		ok = false;
	else if (inst == first_activation(t) && start_regs(rp, thr))
		return start_cfa(rp, start_regs(rp, thr), cfa);
	else if ((how = entry_offset(rp, t, &a, &from, &eoff)) &&
		 !hist_call_find(t->h, from, &id) &&
		 !hist_call_get(t->h, id, &c)) {
		/* Called from where the history began: rsp there is the
		 * one read then, plus what the caller did since, whether or
		 * not its own CFA is known. */
		if (c.inst == first_activation(t) && start_regs(rp, thr) &&
		    own_delta(rp, t, t->first, from, &d)) {
			caller_cfa = start_regs(rp, thr)->r[HIST_RSP];
			ok = true;
		} else {
			ok = act_cfa(rp, thr, c.inst, depth + 1, &caller_cfa) &&
			     rsp_before(rp, t, c.inst, from, &d);
		}
		/* A caller whose own entry the history did not see (it
		 * began before the trace): from an earlier callee's return. */
		if (!ok && !hist_call_get(t->h, c.inst, &ca) &&
		    !entered_by(rp, t, &ca, &x) &&
		    rsp_after_return(rp, thr, from, depth, &caller_cfa)) {
			d = 0;
			ok = true;
		}
	}
	/* rsp before the call or jump, then at the first instruction */
	if (ok)
		*cfa = caller_cfa + (uint64_t) d - (how == 1 ? 8 : 0) +
		       (uint64_t) eoff;
	else
		ok = cfa_by_return(rp, thr, &a, depth, cfa);
	ptrr_clear_error();
	/* The table may have moved while callers were proven. */
	m = memo_slot(k, inst);
	if (m && !ok && k->walking) {
		m->walk_failed = true;
	} else if (m) {
		m->known = ok;
		m->cfa = ok ? *cfa : 1;
	}
	return ok;
}

/* The activation thread @t's position is in; 0 if none. */
static uint32_t position_activation(struct replay_thread *t)
{
	struct hist_call s;
	uint32_t id;

	if (!t->last || hist_call_find(t->h, t->pos, &id) ||
	    hist_call_get(t->h, id, &s))
		return 0;
	return s.inst;
}

/* replay_regs() from the frame proofs alone. */
static void proven_regs(struct replay *rp, size_t thr,
			uint64_t regs[HIST_NREGS], bool known[HIST_NREGS])
{
	struct replay_thread *t = thread_of(rp, thr);
	struct hist_entry e;
	uint64_t cfa;
	int64_t d, off;

	memset(regs, 0, HIST_NREGS * sizeof(*regs));
	memset(known, 0, HIST_NREGS * sizeof(*known));
	if (!t || !t->last)
		return;
	if (t->pos == t->last && insn(t, t->last, &e) &&
	    last_regs(rp, t, &e, regs, known))
		return;
	memset(regs, 0, HIST_NREGS * sizeof(*regs));
	memset(known, 0, HIST_NREGS * sizeof(*known));
	regs[HIST_RIP] = t->pc;
	known[HIST_RIP] = true;
	if (!rp->rec || !known_of(rp, thr) ||
	    !act_cfa(rp, thr, position_activation(t), 0, &cfa))
		return;
	if (rsp_before(rp, t, position_activation(t), t->pos, &d)) {
		regs[HIST_RSP] = cfa + (uint64_t) d;
		known[HIST_RSP] = true;
	}
	if (cfi_rbp(rp, t->pc, &off)) {
		regs[HIST_RBP] = cfa - (uint64_t) off;
		known[HIST_RBP] = true;
	}
	ptrr_clear_error();
}

/* Adds to @regs and @known the registers recovered before entry @pos of
 * thread @thr (recover.c); one the frame proofs gave another value is
 * not known (never shown: one of the two is wrong). */
static void add_recovered(struct replay *rp, size_t thr, uint64_t pos,
			  uint64_t regs[HIST_NREGS], bool known[HIST_NREGS])
{
	uint64_t r[HIST_NREGS];
	uint8_t k[HIST_NREGS];

	replay_recover_regs(rp, thr, pos, r, k);
	for (int i = 0; i < HIST_NREGS; i++) {
		if (k[i] != 0xff || i == HIST_RIP)
			continue;
		if (known[i] && regs[i] != r[i]) {
			known[i] = false;
			regs[i] = 0;
			continue;
		}
		regs[i] = r[i];
		known[i] = true;
	}
}

void replay_regs(struct replay *rp, size_t thr, uint64_t regs[HIST_NREGS],
		 bool known[HIST_NREGS])
{
	struct replay_thread *t = thread_of(rp, thr);

	proven_regs(rp, thr, regs, known);
	if (t && t->last && rp->rec)
		add_recovered(rp, thr, t->pos, regs, known);
}

/* The CFA of frame @i of @frames (thread @thr at its position), for one
 * whose activation's CFA the proofs above do not give: frame 0's from rsp
 * or rbp at the position (recover.c may prove them where the frame proofs
 * cannot, e.g. after an alloca) and the call frame information there; an
 * outer frame's from its callee's CFA (its rsp after the return) where the
 * call frame information at the return address is rsp-based. */
static bool cfa_from_regs(struct replay *rp, const uint64_t *regs,
			  const bool *known, const struct replay_frame *frames,
			  size_t i, uint64_t *cfa)
{
	int64_t off;

	if (i) {
		if (!frames[i - 1].cfa_known || !frames[i].pc ||
		    !cfi_rsp(rp, frames[i].pc - 1, &off))
			return false;
		*cfa = frames[i - 1].cfa + (uint64_t) off;
		return true;
	}
	if (known[HIST_RSP] && cfi_rsp(rp, frames[0].pc, &off)) {
		*cfa = regs[HIST_RSP] + (uint64_t) off;
		return true;
	}
	if (known[HIST_RBP] && cfi_rbp(rp, frames[0].pc, &off)) {
		*cfa = regs[HIST_RBP] + (uint64_t) off;
		return true;
	}
	return false;
}

/* The callee-saved registers of @frames[0..@n) (replay_frame.saved):
 * frame 0's those known at the position; a caller's, where its callee's
 * call frame information (at the callee's pc, or its return address
 * less one) says the callee left the register unchanged, the callee's
 * value, or where it says the callee saved it at its CFA + off, that
 * memory, if known at the position. */
static void saved_regs(struct replay *rp, size_t thr, const uint64_t *regs,
		       const bool *known, struct replay_frame *frames,
		       size_t n)
{
	struct hist_symtab *st = hist_recording_symtab(rp->rec);

	if (!n)
		return;
	frames[0].saved_known = 0;
	for (int j = 0; j < HIST_CFI_NSAVED; j++) {
		frames[0].saved[j] = regs[hist_cfi_saved_reg[j]];
		if (known[hist_cfi_saved_reg[j]])
			frames[0].saved_known |= (uint8_t) (1u << j);
	}
	for (size_t i = 0; i + 1 < n; i++) {
		struct replay_frame *f = &frames[i], *up = &frames[i + 1];
		struct hist_cfi c;
		uint8_t b[8];

		up->saved_known = 0;
		if (!f->saved_known && !f->cfa_known)
			continue;
		if (hist_cfi_at(st, i ? f->pc - 1 : f->pc, &c)) {
			ptrr_clear_error();
			continue;
		}
		for (int j = 0; j < HIST_CFI_NSAVED; j++) {
			if (c.saved[j].how == HIST_CFI_SAME &&
			    (f->saved_known & (1u << j))) {
				up->saved[j] = f->saved[j];
			} else if (c.saved[j].how == HIST_CFI_AT &&
				   f->cfa_known &&
				   replay_read_memory(rp, thr, f->cfa +
						      (uint64_t) c.saved[j].off,
						      b, 8) == 8) {
				memcpy(&up->saved[j], b, 8);
			} else {
				continue;
			}
			up->saved_known |= (uint8_t) (1u << j);
		}
	}
	ptrr_clear_error();
}

/* The call-clobbered registers (replay_frame.clobbered). */
const int replay_clobbered_reg[REPLAY_NCLOBBERED] = {
	HIST_RAX, HIST_RDX, HIST_RCX, HIST_RSI, HIST_RDI,
	HIST_R8, HIST_R9, HIST_R10, HIST_R11,
};

/* The registers of replay_clobbered_reg the instruction entry @e
 * writes, as a mask of their indexes into *@mask; false if it does not
 * decode. */
static bool clobbers(struct replay *rp, struct replay_thread *t,
		     const struct hist_entry *e, uint16_t *mask)
{
	struct insn_slot *slot = insn_slot(t, e);
	struct hist_effect fx;
	uint8_t code[INSN_MAX];
	size_t got;

	if (slot && (slot->have & SLOT_CLOB)) {
		*mask = slot->clob;
		return true;
	}
	got = image_read(rp, e->ip, code, e->size ? e->size : INSN_MAX);
	if (!got || hist_effect_of(code, got, e->ip, &fx) < 0)
		return false;
	*mask = 0;
	for (int j = 0; j < REPLAY_NCLOBBERED; j++)
		if (fx.regs[replay_clobbered_reg[j]] ||
		    (fx.kind == HIST_EFF_SYSCALL &&
		     (replay_clobbered_reg[j] == HIST_RAX ||
		      replay_clobbered_reg[j] == HIST_RCX ||
		      replay_clobbered_reg[j] == HIST_R11)))
			*mask |= (uint16_t) (1u << j);
	if (slot) {
		slot->clob = *mask;
		slot->have |= SLOT_CLOB;
	}
	return true;
}

/* The call-clobbered registers of @frames[1..@n) (replay_frame
 * .clobbered), where a caller may keep its variables at a call (rax,
 * rdx, rcx, rsi, rdi, r8-r11): the ABI lets the callee change them, so
 * the call frame information says nothing of them and gdb's
 * own unwinding takes the callee's values (as `record full` shows
 * them).  Here a caller's is proven where nothing from its call to the
 * position wrote the register: it is then the position's, if that is
 * known.  The instructions between are read back from the position,
 * CLOBBER_SCAN at most; a gap or an entry reached asynchronously ends
 * the proof (a signal's handler returns with all registers as they were,
 * but while it runs the kernel has set some without an instruction). */
static void clobbered_regs(struct replay *rp, struct replay_thread *t,
			   const uint64_t *regs, const bool *known,
			   struct replay_frame *frames, size_t n)
{
	uint64_t calls[64], q;
	struct hist_cursor *c = NULL;
	struct hist_call a;
	uint16_t written = 0, mask, at_pos = 0;
	size_t m = 0, i = 0;

	for (size_t j = 0; j < n; j++)
		frames[j].clobbered_known = 0;
	for (int j = 0; j < REPLAY_NCLOBBERED; j++)
		if (known[replay_clobbered_reg[j]])
			at_pos |= (uint16_t) (1u << j);
	/* The calls that entered frames 0, 1, ...: latest first. */
	for (; m + 1 < n && m < 64; m++) {
		uint64_t from;
		uint32_t inst = m ? frames[m].instance : position_activation(t);

		if (!inst || hist_call_get(t->h, inst, &a) ||
		    entered_by(rp, t, &a, &from) != 1 ||
		    (m && from >= calls[m - 1]) || from >= t->pos)
			break;
		calls[m] = from;
	}
	if (!at_pos || !m || t->pos - calls[m - 1] > CLOBBER_SCAN ||
	    hist_cursor_new(t->h, &c) || hist_cursor_seek(c, t->pos)) {
		hist_cursor_free(c);
		ptrr_clear_error();
		return;
	}
	/* Back from the position; at each call, what nothing since wrote. */
	for (q = t->pos; i < m;) {
		const struct hist_entry *e = hist_cursor_entry(c);

		if ((e->flags & HIST_F_RESUMED) || hist_cursor_prev(c))
			break;
		e = hist_cursor_entry(c);
		q--;
		if (q == calls[i]) {
			struct replay_frame *up = &frames[i + 1];

			up->clobbered_known = at_pos & (uint16_t) ~written;
			for (int j = 0; j < REPLAY_NCLOBBERED; j++)
				up->clobbered[j] = regs[replay_clobbered_reg[j]];
			i++;
		}
		if (e->kind != HIST_ENTRY_INSN || !clobbers(rp, t, e, &mask))
			break;
		written |= mask;
	}
	hist_cursor_free(c);
	ptrr_clear_error();
}

int replay_frames_known(struct replay *rp, size_t thr,
			struct replay_frame *frames, size_t max, size_t *n)
{
	struct replay_thread *t = thread_of(rp, thr);
	struct replay_known *k;
	int err;

	/* While the call segments are far from ready (decide_calls), the
	 * stack read back from the end's; where it cannot be, the call
	 * segments after all, waiting for them. */
	*n = 0;
	if (t && t->calls_off) {
		if (replay_frames_local(rp, thr, frames, max, n))
			return 0;
		replay_calls_on(t);
	}
	err = replay_frames(rp, thr, frames, max, n);
	uint64_t regs[HIST_NREGS];
	bool known[HIST_NREGS];

	if (err || !*n || !rp->rec || !(k = known_of(rp, thr)))
		return err;
	replay_regs(rp, thr, regs, known);
	for (size_t i = 0; i < *n; i++) {
		frames[i].cfa_known = act_cfa(rp, thr, i ? frames[i].instance :
					      position_activation(t), 0,
					      &frames[i].cfa);
		if (!frames[i].cfa_known)
			frames[i].cfa_known = cfa_from_regs(rp, regs, known,
							    frames, i,
							    &frames[i].cfa);
	}
	saved_regs(rp, thr, regs, known, frames, *n);
	clobbered_regs(rp, t, regs, known, frames, *n);
	/* The callers of the outermost frame, if it lives at the present. */
	for (size_t j = 0; j < k->nmatched; j++) {
		struct hist_sym sym;
		int32_t level = frames[*n - 1].level;

		if (k->end[j].inst != frames[*n - 1].instance)
			continue;
		for (size_t i = j + 1; i < k->nend && *n < max; i++) {
			uint64_t pc = k->end[i].pc;

			frames[*n] = (struct replay_frame) {
				.pc = pc, .func = pc, .level = --level,
				.cfa = k->end[i].cfa, .cfa_known = true,
			};
			if (!hist_sym_lookup(hist_recording_symtab(rp->rec),
					     pc - 1, &sym))
				frames[*n].func = sym.start;
			(*n)++;
		}
		break;
	}
	ptrr_clear_error();
	return 0;
}

/* ---- For recover.c ---- */

size_t known_present_read(struct replay *rp, uint64_t addr, uint8_t *buf,
			  size_t len)
{
	return present_read(rp, addr, buf, len);
}

size_t known_image_read(struct replay *rp, uint64_t addr, uint8_t *buf,
			size_t len)
{
	return image_read(rp, addr, buf, len);
}

void replay_set_outside_writes(struct replay *rp)
{
	if (rp->outside_writes)
		return;
	rp->outside_writes = true;
	for (size_t i = 0; i < rp->n; i++)
		replay_known_reset(&rp->t[i]);
}

bool known_resume_continues(const struct replay *rp,
			    const struct hist_entry *prev,
			    const struct hist_entry *e)
{
	const struct hist_bundle *b;
	struct hist_effect fx;
	uint8_t code[16];
	size_t n;

	if (!(e->flags & HIST_F_RESUMED))
		return true;
	b = rp->rec ? hist_recording_bundle(rp->rec) : NULL;
	if (!b || b->pt.nfilters || rp->outside_writes ||
	    prev->kind != HIST_ENTRY_INSN || e->kind != HIST_ENTRY_INSN)
		return false;
	/* The next instruction, but after a call (its callee ran). */
	if (prev->iclass != HIST_IC_CALL && prev->size &&
	    e->ip == prev->ip + prev->size)
		return true;
	/* A direct jump's or call's destination. */
	if (prev->iclass != HIST_IC_CALL && prev->iclass != HIST_IC_JUMP &&
	    prev->iclass != HIST_IC_COND_JUMP)
		return false;
	n = known_image_read((struct replay *) rp, prev->ip, code,
			     prev->size ? prev->size : sizeof(code));
	return n && hist_effect_of(code, n, prev->ip, &fx) == 0 &&
	       fx.target && fx.target == e->ip;
}

bool known_insn(struct replay_thread *t, uint64_t number,
		struct hist_entry *e)
{
	return insn(t, number, e);
}

bool known_last_regs(struct replay *rp, struct replay_thread *t,
		     const struct hist_entry *e, uint64_t r[HIST_NREGS],
		     bool rk[HIST_NREGS])
{
	return last_regs(rp, t, e, r, rk);
}

void known_frame_regs_at(struct replay *rp, size_t thr, uint64_t pos,
			 bool want_rsp, uint64_t *rsp, bool *rsp_ok,
			 bool want_rbp, uint64_t *rbp, bool *rbp_ok)
{
	struct replay_thread *t = &rp->t[thr];
	struct hist_entry e;
	struct hist_call s;
	uint64_t cfa;
	int64_t d, off = 0;
	uint32_t id;
	bool ok;

	*rsp_ok = *rbp_ok = false;
	if (!rp->rec || !insn(t, pos, &e)) {
		ptrr_clear_error();
		return;
	}
	/* rbp from the CFA only where the CFI says how. */
	want_rbp = want_rbp && cfi_rbp(rp, e.ip, &off);
	if ((!want_rsp && !want_rbp) || !known_of(rp, thr) ||
	    hist_call_find(t->h, pos, &id) || hist_call_get(t->h, id, &s)) {
		ptrr_clear_error();
		return;
	}
	t->known->walking = true;
	ok = act_cfa(rp, thr, s.inst, 0, &cfa);
	t->known->walking = false;
	if (!ok) {
		ptrr_clear_error();
		return;
	}
	if (want_rsp && rsp_before(rp, t, s.inst, pos, &d)) {
		*rsp = cfa + (uint64_t) d;
		*rsp_ok = true;
	}
	if (want_rbp) {
		*rbp = cfa - (uint64_t) off;
		*rbp_ok = true;
	}
	ptrr_clear_error();
}

bool replay_thread_has_regs(struct replay *rp, size_t thr)
{
	struct replay_thread *t = thread_of(rp, thr);

	return t && (t->end_regs.valid || start_regs(rp, thr));
}

bool known_alive_at_end(const struct replay *rp, size_t thr)
{
	return alive_at_end(rp, thr);
}
