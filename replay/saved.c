/* Value recovery: callee-saved registers across a call that returned
 * (issue 19; recover.c's walk back asks here at each return and call).
 *
 * The model.  A callee-saved register of the psABI (rbx, rbp, r12 to
 * r15) holds at a call instruction what it holds right after the call's
 * own return, when
 *
 *   - the history shows that return: the call ends a piece of its
 *     activation (history/calls.c), the next piece of the same
 *     activation begins right after a `ret` of the activation the call
 *     entered (the callee's own, not one reached by a tail call or found
 *     by a guess, HIST_CALL_UP_RETURN; it may be the callee's first
 *     instruction), at the call's return address, not where tracing
 *     resumed (a signal, a gap);
 *   - rsp right after the return is rsp before the call plus what the
 *     `ret` popped beyond the return address, where the walk knows both
 *     (where it does not know rsp before the call, it learns it so: the
 *     callee's CFI says it balanced its stack); a longjmp, an exception,
 *     a switch of stacks lands elsewhere or by a jump, which calls.c
 *     never makes a piece's start after a `ret`;
 *   - the callee's call frame information at that `ret` says the frame
 *     returns to CFA - 8 with CFA = rsp + 8, and gives the register the
 *     rule "same value" (or none, which gdb's unwinder and
 *     history/cfi.c take as the same), or says the caller's value is in
 *     a slot at CFA + off that the epilogue reloaded the register from
 *     (restored_from: gcc leaves that rule at the `ret`) — not
 *     "undefined", not any other rule.
 *
 * None of it while the call segments are far from ready (a live session
 * on QEMU just stopped: replay.c's decide_calls): the walk then does
 * without, and is made again when they come.
 *
 * Where the callee's `ret` is met by a look-up (recover.c's resolve())
 * rather than by the walk, the same conditions but rsp's say the call's
 * entry and that the register before it is the one after the return.
 *
 * What is trusted is what gdb's unwinder trusts when it shows a
 * caller's registers: that a function does what its call frame
 * information says.  A callee that breaks its own CFI (assembly that
 * changes rbx and says nothing, or says "same value" wrongly) would make
 * the value before the call wrong; nothing in the trace can tell.
 *
 * The other end: a callee-saved register holds before a call
 * instruction what the callee's prologue saved it in, where
 *
 *   - the walk's state (the state before its front entry) is in the
 *     activation the call entered, in the callee's own code, not one of
 *     its callees' (history/calls.c: the front's piece belongs to the
 *     activation whose first piece begins right after the call, not one
 *     entered by a tail call, a gap or a guessed return; the call is a
 *     call instruction and the entry after it not where tracing
 *     resumed);
 *   - the callee's call frame information at the front's address says
 *     the caller's register is in the slot at CFA + off (not "same
 *     value": not before the prologue saved it, nor after the epilogue
 *     reloaded it), the CFA from a register the state knows (as of the
 *     front: a step back of the walk asks with the registers before it
 *     began);
 *   - the state knows the slot's eight bytes.
 *
 * A call writes no callee-saved register, so the register is the slot's
 * value at the callee's entry and before the call, and at an earlier
 * entry from which no instruction up to the call writes it.  A look-up
 * (recover.c's resolve()) for such a register before such an entry
 * asks here (recover_entry_saved): bzip2's BZ2_bzWrite keeps its
 * argument in rbx (`mov %rsi,%rbx` at its entry,
 * `mov %r14,%rsi` before the call in compressStream), and its `push
 * %r14` saved compressStream's r14 in a slot the walk knows — from the
 * `pop %r14` of its epilogue, where the register is known right after
 * the return, or from the present's memory.  What is trusted is the
 * same as above: that nothing the callee did between its prologue and
 * the front wrote that slot, as its call frame information says and
 * gdb's unwinder takes; the writes the walk undid in between are not
 * what proves it (they include its callees', which a look-up does not
 * read).
 *
 * The walk goes back, so it meets the return first: it notes the
 * registers it knows right after it (recover_returns_note), and at the
 * call (recover_returns_match) learns them, as a load learns memory: a
 * register known otherwise with another value becomes unknown (a
 * conflict).  Notes wait on a stack of RETURNS_MAX, the innermost kept;
 * a call drops the notes of returns after its own that no call took
 * (their calls are before the history, or did not match).
 */
#include <config.h>

#include <string.h>

#include "recover_internal.h"

/* Entries of an epilogue restored_from() reads back from a return at
 * most. */
#define EPILOGUE_BACK 16

void recover_returns_note(struct replay_recover *rc,
			  const struct hist_entry *e,
			  const struct hist_effect *fx, const uint64_t *after,
			  const uint8_t *kafter)
{
	struct returns *q = &rc->rets;
	struct ret_regs n = { e->number, e->ip, (uint64_t) fx->imm,
			      after[HIST_RSP], { 0 }, 0,
			      rc->last.number == e->number + 1, rc->last };

	if (kafter[HIST_RSP] != 0xff)
		return;
	for (int j = 0; j < HIST_CFI_NSAVED; j++) {
		int r = hist_cfi_saved_reg[j];

		if (kafter[r] != 0xff)
			continue;
		n.v[j] = after[r];
		n.known |= (uint8_t) (1u << j);
	}
	if (!n.known)
		return;
	if (q->n == RETURNS_MAX) {
		memmove(&q->r[0], &q->r[1], (RETURNS_MAX - 1) * sizeof(q->r[0]));
		q->n--;
	}
	q->r[q->n++] = n;
}

/* Call entry @call and return entry @ret of thread @t: true if @ret is
 * the return of the activation @call entered, back to the piece of the
 * caller after it (the model's first condition).  Entry @call is *@c
 * and entry @ret + 1 *@after where the caller has them (else NULL: read
 * from the history, a seek each that the walk back need not make). */
static bool call_returned(struct replay_thread *t, uint64_t call,
			  const struct hist_entry *c, uint64_t ret,
			  const struct hist_entry *after)
{
	struct hist_call s, n, r, a;
	struct hist_entry cbuf, abuf;
	uint32_t id;

	return call < ret &&
	       !hist_call_find(t->h, call, &id) &&
	       !hist_call_get(t->h, id, &s) && s.last == call && s.next &&
	       !hist_call_get(t->h, s.next, &n) && n.first == ret + 1 &&
	       !(n.flags & (HIST_CALL_UP_RETURN | HIST_CALL_GAP)) &&
	       !hist_call_find(t->h, ret, &id) &&
	       !hist_call_get(t->h, id, &r) &&
	       !hist_call_get(t->h, r.inst, &a) && a.first == call + 1 &&
	       !(a.flags & (HIST_CALL_TAILCALL | HIST_CALL_GAP |
			    HIST_CALL_UP_RETURN)) &&
	       (c || (known_insn(t, call, &cbuf) && (c = &cbuf))) &&
	       c->iclass == HIST_IC_CALL &&
	       (after || (known_insn(t, ret + 1, &abuf) && (after = &abuf))) &&
	       !(after->flags & HIST_F_RESUMED) &&
	       after->ip == c->ip + c->size;
}

/* The call entry whose activation return entry @ret of thread @thr
 * ends (call_returned), into *@call. */
static bool call_of_return(struct replay *rp, size_t thr, uint64_t ret,
			   uint64_t *call)
{
	struct replay_thread *t = &rp->t[thr];
	struct hist_call r, a;
	uint32_t id;

	if (hist_call_find(t->h, ret, &id) || hist_call_get(t->h, id, &r) ||
	    hist_call_get(t->h, r.inst, &a) || a.first <= 1)
		return false;
	*call = a.first - 1;
	return call_returned(t, *call, NULL, ret, NULL);
}

/* What the call frame information at return address @ip says of the
 * caller's callee-saved registers: bit j of *@same where the rule is
 * "same value", of *@slot where it is the memory at CFA + @off[j];
 * false if the frame does not return through CFA - 8, CFA = rsp + 8. */
static bool cfi_at_return(struct replay *rp, uint64_t ip, uint8_t *same,
			  uint8_t *slot, int64_t off[HIST_CFI_NSAVED])
{
	struct hist_cfi c;

	*same = *slot = 0;
	if (!rp->rec ||
	    hist_cfi_at(hist_recording_symtab(rp->rec), ip, &c) ||
	    c.cfa_reg != HIST_RSP || c.cfa_off != 8 ||
	    c.ra.how != HIST_CFI_AT || c.ra.off != -8 || c.signal)
		return false;
	for (int j = 0; j < HIST_CFI_NSAVED; j++) {
		off[j] = c.saved[j].off;
		if (c.saved[j].how == HIST_CFI_SAME)
			*same |= (uint8_t) (1u << j);
		else if (c.saved[j].how == HIST_CFI_AT)
			*slot |= (uint8_t) (1u << j);
	}
	return true;
}

/* Where an epilogue read back from a return finds rsp and rbp: each
 * relative to rsp before the return, if known (@sp_ok, @bp_ok). */
struct epilogue {
	int64_t sp, bp;
	bool sp_ok, bp_ok;
};

/* The address (relative to rsp before the return) instruction @fx of an
 * epilogue (@ep: before it) reloads register @reg from, into *@a:
 * false if it sets @reg otherwise. */
static bool reload_slot(const struct hist_effect *fx,
			const struct epilogue *ep, int reg, int64_t *a)
{
	const struct hist_memref *m = &fx->load;

	switch (fx->kind) {
	case HIST_EFF_POP:
		*a = ep->sp;
		return fx->r1 == reg && ep->sp_ok;
	case HIST_EFF_LEAVE:
		*a = ep->bp;
		return reg == HIST_RBP && ep->bp_ok;
	case HIST_EFF_LOAD:
		if (fx->r1 != reg || fx->width != 8 || m->size != 8 ||
		    m->index >= 0 || m->seg >= 0 ||
		    (m->base == HIST_RSP ? !ep->sp_ok :
		     m->base == HIST_RBP ? !ep->bp_ok : true))
			return false;
		*a = (m->base == HIST_RSP ? ep->sp : ep->bp) + m->disp;
		return true;
	default:
		return false;
	}
}

/* True if callee-saved register @reg holds right after return entry @ret
 * what the call frame information there says its caller's is, the
 * memory at CFA + @off (CFA = rsp + 8 before the return): the last
 * instruction that set it, within EPILOGUE_BACK entries back, reloaded
 * it from there (pop, leave, a load off rsp or rbp), and nothing from
 * there to the return wrote memory or came asynchronously. */
static bool restored_from(struct replay *rp, struct replay_recover *rc,
			  uint64_t ret, int reg, int64_t off)
{
	struct replay_thread *t = &rp->t[rc->thr];
	struct epilogue ep = { 0, 0, true, false };
	struct hist_entry e, next;
	const struct hist_effect *fx;
	int64_t d, a;

	if (!known_insn(t, ret, &next))
		return false;
	for (uint64_t k = ret - 1; k >= 1 && ret - k <= EPILOGUE_BACK; k--) {
		struct epilogue after = ep;

		if ((next.flags & HIST_F_RESUMED) || !known_insn(t, k, &e) ||
		    !(fx = recover_effect(rp, rc, &e)) || fx->nwrites ||
		    fx->mem_unbounded || fx->kind == HIST_EFF_SYSCALL ||
		    fx->kind == HIST_EFF_CALL || fx->kind == HIST_EFF_PUSH ||
		    fx->kind == HIST_EFF_PUSH_IMM)
			return false;
		/* rsp and rbp before it */
		if (fx->kind == HIST_EFF_LEAVE) {
			ep.bp = after.sp - 8;
			ep.bp_ok = after.sp_ok;
			ep.sp_ok = false;
		} else {
			if (fx->regs[HIST_RBP])
				ep.bp_ok = false;
			if (recover_rsp_delta(fx, &d))
				ep.sp -= d;
			else
				ep.sp_ok = false;
		}
		if (fx->regs[reg])
			return reload_slot(fx, &ep, reg, &a) && a == 8 + off;
		next = e;
	}
	return false;
}

/* The registers of hist_cfi_saved_reg (bit j each) that return entry
 * @ret at @ip leaves as its caller's by its call frame information:
 * "same value", or in a slot the epilogue reloaded it from. */
static uint8_t kept_regs(struct replay *rp, struct replay_recover *rc,
			 uint64_t ret, uint64_t ip)
{
	int64_t off[HIST_CFI_NSAVED];
	uint8_t same, slot;

	if (!cfi_at_return(rp, ip, &same, &slot, off))
		return 0;
	for (int j = 0; j < HIST_CFI_NSAVED; j++)
		if ((slot & (1u << j)) &&
		    restored_from(rp, rc, ret, hist_cfi_saved_reg[j], off[j]))
			same |= (uint8_t) (1u << j);
	return same;
}

uint8_t recover_kept_across(struct replay *rp, struct replay_recover *rc,
			    const struct hist_entry *ret, uint64_t *call)
{
	uint8_t kept = 0;

	/* Not while the call segments are far from ready (replay.c:
	 * decide_calls): the walk does without them. */
	if (!rp->t[rc->thr].calls_off && ret->iclass == HIST_IC_RETURN &&
	    call_of_return(rp, rc->thr, ret->number, call))
		kept = kept_regs(rp, rc, ret->number, ret->ip);
	ptrr_clear_error();
	return kept;
}

void recover_returns_match(struct replay *rp, struct replay_recover *rc,
			   const struct hist_entry *e,
			   const struct hist_effect *fx)
{
	struct history *h = rp->t[rc->thr].h;
	struct returns *q = &rc->rets;
	const struct ret_regs *n;
	struct hist_call s, nx;
	uint32_t id;
	uint8_t kept;

	if (fx->kind != HIST_EFF_CALL || !q->n || rp->t[rc->thr].calls_off ||
	    hist_call_find(h, e->number, &id) || hist_call_get(h, id, &s) ||
	    s.last != e->number || !s.next || hist_call_get(h, s.next, &nx)) {
		ptrr_clear_error();
		return;
	}
	while (q->n && q->r[q->n - 1].ret + 1 < nx.first)
		q->n--;
	if (!q->n || q->r[q->n - 1].ret + 1 != nx.first)
		return;
	n = &q->r[--q->n];
	/* rsp before the call is rsp after the return less what the return
	 * popped past the return address: the same frame. */
	if ((rc->k[HIST_RSP] == 0xff && rc->r[HIST_RSP] + n->imm != n->rsp) ||
	    !call_returned(&rp->t[rc->thr], e->number, e, n->ret,
			   n->after_ok ? &n->after : NULL)) {
		ptrr_clear_error();
		return;
	}
	kept = kept_regs(rp, rc, n->ret, n->ip);
	ptrr_clear_error();
	if (!kept)
		return;
	recover_reg_learn(rc, HIST_RSP, 0xff, n->rsp - n->imm);
	for (int j = 0; j < HIST_CFI_NSAVED; j++)
		if (n->known & kept & (1u << j))
			recover_reg_learn(rc, hist_cfi_saved_reg[j], 0xff,
					  n->v[j]);
}

/* The call entry of the activation the front of @rc's state is in, into
 * @rc->es (and the CFI at the front): false if none, or the call or the
 * history do not say that activation was entered by it (saved.c's model
 * for recover_entry_saved). */
static bool entry_of_front(struct replay *rp, struct replay_recover *rc)
{
	struct replay_thread *t = &rp->t[rc->thr];
	struct entry_slots *es = &rc->es;
	struct hist_entry c, first, front;
	struct hist_call r, a = { 0 };
	uint32_t id;

	if (es->front == rc->front)
		return es->ok;
	es->front = rc->front;
	es->ok = !t->calls_off && rp->rec &&
		 !hist_call_find(t->h, rc->front, &id) &&
		 !hist_call_get(t->h, id, &r) &&
		 !hist_call_get(t->h, r.inst, &a) && a.first > 1 &&
		 a.first < rc->front &&
		 !(a.flags & (HIST_CALL_TAILCALL | HIST_CALL_GAP |
			      HIST_CALL_UP_RETURN)) &&
		 known_insn(t, a.first - 1, &c) && c.iclass == HIST_IC_CALL &&
		 known_insn(t, a.first, &first) &&
		 !(first.flags & HIST_F_RESUMED) &&
		 known_insn(t, rc->front, &front) &&
		 !hist_cfi_at(hist_recording_symtab(rp->rec), front.ip,
			      &es->cfi) &&
		 !es->cfi.signal;
	es->call = a.first - 1;
	ptrr_clear_error();
	return es->ok;
}

bool recover_entry_saved(struct replay *rp, struct replay_recover *rc,
			 int reg, uint64_t *call, uint64_t *v)
{
	const uint64_t *r = rc->front_r ? rc->front_r : rc->r;
	const uint8_t *k = rc->front_k ? rc->front_k : rc->k;
	const struct hist_cfi *cfi = &rc->es.cfi;
	uint64_t cfa;
	uint8_t buf[8];
	int j;

	for (j = 0; j < HIST_CFI_NSAVED && hist_cfi_saved_reg[j] != reg; j++)
		;
	if (j == HIST_CFI_NSAVED || !entry_of_front(rp, rc) ||
	    cfi->saved[j].how != HIST_CFI_AT || k[cfi->cfa_reg] != 0xff)
		return false;
	cfa = r[cfi->cfa_reg] + (uint64_t) cfi->cfa_off;
	if (!recover_mem_get(rp, rc, cfa + (uint64_t) cfi->saved[j].off, 8,
			     buf))
		return false;
	*call = rc->es.call;
	memcpy(v, buf, 8);
	return true;
}
