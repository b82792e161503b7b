/* Watchpoints in a replay (issue 19): the nearest instruction, backward
 * or forward from a thread's position, that wrote watched memory — or
 * that may have, which is reported as such, never skipped.
 *
 * The model.  An instruction writes the memory its operands name
 * (history/effect.c: a store's destination, push's and call's stack
 * slot), at an address computed from the registers before it.  Those
 * registers come from the value recovery's walk (recover.c: the state
 * before each entry, walked back from the end), else from where the walk
 * resolves them, else — for an address made of rsp or rbp and a
 * displacement — from the frame proofs (known.c); a rip-relative or
 * absolute address needs none.  An instruction writes the watched bytes
 * if its write overlaps them: gdb's record full stops there whatever the
 * value written (gdb itself then says nothing and goes on when the value
 * did not change), and so does this.  It may have written them, and the
 * search stops there saying why, when:
 *   - the address of a write is not known;
 *   - it writes memory its operands do not bound (rep stos/movs, xsave,
 *     pushf);
 *   - it is a system call other than those that write no user memory
 *     (write, close, getpid, exit ...: safe_syscall()), or one whose
 *     number is not known;
 *   - it does not decode;
 *   - the trace has a gap after it, or tracing resumed after it where
 *     the state does not go on from it (known_resume_continues: a
 *     signal's handler, the kernel having written its frame; untraced
 *     code; a debugger's write).
 * Backward the stop is at the instruction (the state before it, its write
 * undone), forward after it (the next instruction), as record full stops.
 * Only the thread's own instructions are searched: another thread's
 * writes are not ordered against them (docs/replay.md says so).
 *
 * The search runs over the stretch the breakpoint search
 * (replay_continue_until) left, in chunks of CHUNK entries, each walked
 * from its top down (the walk goes backward only); forward, the lowest
 * hit of a chunk is the stop.  gdb's interrupt is asked between chunks. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "recover_internal.h"

/* Entries searched between two looks at the interrupt. */
#define CHUNK 4096

enum verdict {
	W_NONE,		/* writes none of the watched bytes */
	W_WRITES,	/* writes them */
	W_MAYBE,	/* cannot be ruled out: why says why */
};

/* One search. */
struct scan {
	struct replay *rp;
	size_t thr;
	const struct replay_watch *w;
	size_t nw;
	struct hist_cursor *cur;
	/* The hit: its entry, the watched address, why if not proven. */
	bool found;
	uint64_t q, addr;
	char why[160];
	/* Gaps passed: the lowest and highest entry of one. */
	uint64_t gap_lo, gap_hi;
	/* Stops gdb would have gone on from, passed over (silent()). */
	uint64_t passed;
};

/* True if [@a, @a + @n) overlaps a watch of @s; *@at the first byte of
 * the first it overlaps. */
static bool overlaps(const struct scan *s, uint64_t a, uint64_t n,
		     uint64_t *at)
{
	for (size_t i = 0; i < s->nw; i++) {
		uint64_t lo = a > s->w[i].addr ? a : s->w[i].addr;
		uint64_t end = s->w[i].addr + s->w[i].len;
		uint64_t hi = a + n < end ? a + n : end;

		if (lo < hi) {
			*at = lo;
			return true;
		}
	}
	return false;
}

/* True if x86-64 system call @nr writes no user memory (the kernel
 * reads what it is given, or nothing). */
static bool safe_syscall(uint64_t nr)
{
	static const uint16_t safe[] = {
		1,	/* write */
		3,	/* close */
		8,	/* lseek */
		10,	/* mprotect */
		18,	/* pwrite64 */
		20,	/* writev */
		24,	/* sched_yield */
		32, 33,	/* dup, dup2 */
		39,	/* getpid */
		60,	/* exit */
		74,	/* fsync */
		102, 104, 107, 108, 110,	/* getuid ... getppid */
		186,	/* gettid */
		231,	/* exit_group */
	};

	for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
		if (nr == safe[i])
			return true;
	return false;
}

/* Register @reg before entry @q: the walk's state @rc (NULL: none) or
 * what it resolves, else rsp or rbp from the frame proofs. */
static bool reg_before(struct scan *s, struct replay_recover *rc,
		       uint64_t q, int reg, uint64_t *v)
{
	uint64_t sp, bp;
	bool sp_ok, bp_ok;

	if (rc && recover_value(s->rp, rc, q, reg, v))
		return true;
	if (reg != HIST_RSP && reg != HIST_RBP)
		return false;
	known_frame_regs_at(s->rp, s->thr, q, reg == HIST_RSP, &sp, &sp_ok,
			    reg == HIST_RBP, &bp, &bp_ok);
	*v = reg == HIST_RSP ? sp : bp;
	return reg == HIST_RSP ? sp_ok : bp_ok;
}

/* The address of @m before entry @q into *@a: false if not known. */
static bool address_before(struct scan *s, struct replay_recover *rc,
			   uint64_t q, const struct hist_memref *m,
			   uint64_t *a)
{
	uint64_t x;

	if (rc && recover_address(s->rp, rc, q, m, a))
		return true;
	if (m->index >= 0 || m->seg >= 0)
		return false;
	*a = (uint64_t) m->disp;
	if (m->base < 0)
		return true;
	if (!reg_before(s, rc, q, m->base, &x))
		return false;
	*a += x;
	return true;
}

/* Whether instruction entry @e (the walk's state before it in @rc, NULL
 * if none), followed by entry @next (NULL: none), writes watched memory;
 * the address or the reason into @s. */
static enum verdict judge(struct scan *s, struct replay_recover *rc,
			  const struct hist_entry *e,
			  const struct hist_entry *next)
{
	struct replay_thread *t = &s->rp->t[s->thr];
	const struct hist_effect *fx;
	uint64_t a, nr;
	bool unknown = false;

	if (next && next->kind != HIST_ENTRY_INSN) {
		snprintf(s->why, sizeof(s->why), "the trace has a gap after "
			 "the instruction at %#" PRIx64 ": what ran there was "
			 "not recorded", e->ip);
		return W_MAYBE;
	}
	fx = t->recover ? recover_effect(s->rp, t->recover, e) : NULL;
	if (!fx) {
		snprintf(s->why, sizeof(s->why), "the instruction at %#" PRIx64
			 " does not decode", e->ip);
		return W_MAYBE;
	}
	if (next && !known_resume_continues(s->rp, e, next)) {
		snprintf(s->why, sizeof(s->why), "tracing resumed at %#"
			 PRIx64 " after the instruction at %#" PRIx64 ": a "
			 "signal's frame, untraced code or the debugger may "
			 "have written it", next->ip, e->ip);
		return W_MAYBE;
	}
	if (fx->kind == HIST_EFF_SYSCALL) {
		if (reg_before(s, rc, e->number, HIST_RAX, &nr) &&
		    safe_syscall(nr & 0xffffffff))
			return W_NONE;
		if (reg_before(s, rc, e->number, HIST_RAX, &nr))
			snprintf(s->why, sizeof(s->why), "system call %" PRIu64
				 " at %#" PRIx64 " may write it",
				 nr & 0xffffffff, e->ip);
		else
			snprintf(s->why, sizeof(s->why), "the system call at "
				 "%#" PRIx64 " (its number not known here) may "
				 "write it", e->ip);
		return W_MAYBE;
	}
	if (fx->mem_unbounded) {
		snprintf(s->why, sizeof(s->why), "the instruction at %#" PRIx64
			 " writes memory its operands do not bound (a rep "
			 "string, xsave)", e->ip);
		return W_MAYBE;
	}
	if (fx->kind == HIST_EFF_PUSH || fx->kind == HIST_EFF_PUSH_IMM ||
	    fx->kind == HIST_EFF_CALL) {
		if (!reg_before(s, rc, e->number, HIST_RSP, &a))
			unknown = true;
		else if (overlaps(s, a - 8, 8, &s->addr))
			return W_WRITES;
	}
	for (unsigned i = 0; i < fx->nwrites; i++) {
		if (!address_before(s, rc, e->number, &fx->writes[i], &a))
			unknown = true;
		else if (overlaps(s, a, fx->writes[i].size, &s->addr))
			return W_WRITES;
	}
	if (!unknown)
		return W_NONE;
	snprintf(s->why, sizeof(s->why), "the instruction at %#" PRIx64
		 " writes through an address not known there", e->ip);
	return W_MAYBE;
}

/* True if the bytes of watch @w are known at position @pos (before
 * entry @pos), so that gdb reads them there. */
static bool readable_at(struct scan *s, const struct replay_watch *w,
			uint64_t pos)
{
	struct hist_image *img = s->rp->rec ?
				 hist_recording_image(s->rp->rec) : NULL;
	uint8_t buf[64];

	if (w->len > sizeof(buf))
		return true;	/* not read here: never passed over */
	if (img && hist_image_read(img, w->addr, buf, w->len) ==
		   (ssize_t) w->len)
		return true;
	return replay_recover_read(s->rp, s->thr, pos, w->addr, buf,
				   w->len) == w->len;
}

/* True if a backward stop at entry @pos naming watched address @addr is
 * one gdb goes on from without a word: every watch containing @addr (the
 * ones gdb checks at that stop) had an unreadable value where the move
 * began and has one at @pos too, so gdb sees no change. */
static bool silent(struct scan *s, uint64_t addr, uint64_t pos)
{
	bool named = false;

	for (size_t i = 0; i < s->nw; i++) {
		const struct replay_watch *w = &s->w[i];

		if (addr - w->addr >= w->len)
			continue;
		if (!w->unreadable || readable_at(s, w, pos))
			return false;
		named = true;
	}
	return named;
}

/* Searches the instruction entries of [@lo, @hi), walking from @hi - 1
 * down: stops at the first hit when @dir < 0 (passing over the silent()
 * ones), else keeps the lowest. */
static int scan_down(struct scan *s, uint64_t lo, uint64_t hi, int dir)
{
	struct replay_thread *t = &s->rp->t[s->thr];
	struct hist_entry e, next;
	bool have_next = false;
	char why[sizeof(s->why)];
	uint64_t addr = 0;
	int err;

	if (hi <= t->last) {
		if ((err = hist_cursor_seek(s->cur, hi)))
			return err;
		next = *hist_cursor_entry(s->cur);
		have_next = true;
	}
	for (uint64_t n = hi - 1; n >= lo && n >= 1; n--) {
		struct replay_recover *rc;
		enum verdict v;

		if ((err = hist_cursor_seek(s->cur, n)))
			return err;
		e = *hist_cursor_entry(s->cur);
		if (e.kind != HIST_ENTRY_INSN) {
			if (!s->gap_lo || n < s->gap_lo)
				s->gap_lo = n;
			if (n > s->gap_hi)
				s->gap_hi = n;
			next = e;
			have_next = true;
			continue;
		}
		rc = recover_walk_to(s->rp, s->thr, n);
		s->why[0] = 0;
		v = judge(s, rc, &e, have_next ? &next : NULL);
		next = e;
		have_next = true;
		if (v == W_NONE)
			continue;
		if (v == W_MAYBE)
			s->addr = s->w[0].addr;
		if (dir < 0 && silent(s, s->addr, n)) {
			s->passed++;
			continue;
		}
		s->found = true;
		s->q = n;
		addr = s->addr;
		memcpy(why, s->why, sizeof(why));
		if (dir < 0)
			return 0;
	}
	if (s->found) {
		s->addr = addr;
		memcpy(s->why, why, sizeof(why));
	}
	ptrr_clear_error();
	return 0;
}

/* Searches the stretch between thread @s->thr's position @from and @to
 * (where the breakpoint search stopped) in direction @dir, chunk by
 * chunk; *@until the entry the search had come to when @stop said to
 * stop (0 if it did not). */
static int search(struct scan *s, uint64_t from, uint64_t to, int dir,
		  bool (*stop)(void *), void *arg, uint64_t *until)
{
	uint64_t a, b;
	int err = 0;

	*until = 0;
	if (dir < 0) {
		for (b = from; !err && !s->found && b > to; b = a) {
			a = b - to > CHUNK ? b - CHUNK : to;
			err = scan_down(s, a, b, dir);
			if (!err && !s->found && a > to && stop && stop(arg))
				*until = a;
			if (*until)
				break;
		}
		return err;
	}
	for (a = from; !err && !s->found && a < to; a = b) {
		b = to - a > CHUNK ? a + CHUNK : to;
		err = scan_down(s, a, b, dir);
		if (!err && !s->found && b < to && stop && stop(arg))
			*until = b;
		if (*until)
			break;
	}
	return err;
}

/* After thread @thr moved in direction @dir from entry @from to where
 * @res says: the nearest write to @watches on the way, if any, is where
 * it stops instead (see the top of the file). */
static int watch_between(struct replay *rp, size_t thr, int dir,
			 uint64_t from, const struct replay_watch *watches,
			 size_t nwatches, bool (*stop)(void *arg),
			 void *arg, struct replay_result *res)
{
	struct scan s = { .rp = rp, .thr = thr, .w = watches,
			  .nw = nwatches };
	uint64_t until = 0;
	int err;

	if (!nwatches || res->number == from ||
	    res->stop == REPLAY_STOP_INTERRUPT)
		return 0;
	/* The walk's state exists from here on (its cache of decoded
	 * instructions). */
	if (!rp->t[thr].recover)
		recover_walk_to(rp, thr, rp->t[thr].last);
	if ((err = hist_cursor_new(rp->t[thr].h, &s.cur)))
		return err;
	err = search(&s, from, res->number, dir, stop, arg, &until);
	hist_cursor_free(s.cur);
	ptrr_clear_error();
	res->passed = s.passed;
	if (err < 0 || (!s.found && !until))
		return err < 0 ? err : 0;
	err = replay_goto(rp, thr, until ? until :
			  dir < 0 ? s.q : s.q + 1);
	if (err < 0)
		return err;
	res->stop = until ? REPLAY_STOP_INTERRUPT : REPLAY_STOP_WATCH;
	res->number = replay_position(rp, thr);
	res->pc = replay_pc(rp, thr);
	res->crossed_gap = s.gap_hi && (dir < 0 || until ||
					s.gap_lo < res->number);
	res->watch_addr = s.addr;
	if (!until)
		memcpy(res->why, s.why, sizeof(res->why));
	return 0;
}

/* A step (@step) or a continue to @bps of thread @thr in direction @dir
 * that stops at the nearest write to @watches on the way. */
static int move_watch(struct replay *rp, size_t thr, int dir, bool step,
		      const uint64_t *bps, size_t nbps,
		      const struct replay_watch *watches, size_t nwatches,
		      bool (*stop)(void *arg), void *arg,
		      struct replay_result *res)
{
	uint64_t from;
	int err;

	res->why[0] = 0;
	if (!rp || thr >= rp->n)
		return PTRR_ERR_NOTFOUND;
	from = rp->t[thr].pos;
	err = step ? replay_step(rp, thr, dir, res) :
		     replay_continue_until(rp, thr, dir, bps, nbps, stop, arg,
					   res);
	if (err >= 0)
		err = watch_between(rp, thr, dir, from, watches, nwatches,
				    stop, arg, res);
	/* A write not proven is no stop of a step. */
	if (err >= 0 && step && res->stop == REPLAY_STOP_WATCH &&
	    res->why[0]) {
		res->stop = dir > 0 && res->number == rp->t[thr].last ?
			    REPLAY_STOP_END : REPLAY_STOP_STEP;
		res->why[0] = 0;
	}
	return err;
}

int replay_continue_watch(struct replay *rp, size_t thr, int dir,
			  const uint64_t *bps, size_t nbps,
			  const struct replay_watch *watches,
			  size_t nwatches, bool (*stop)(void *arg),
			  void *arg, struct replay_result *res)
{
	return move_watch(rp, thr, dir, false, bps, nbps, watches, nwatches,
			  stop, arg, res);
}

int replay_step_watch(struct replay *rp, size_t thr, int dir,
		      const struct replay_watch *watches, size_t nwatches,
		      struct replay_result *res)
{
	return move_watch(rp, thr, dir, true, NULL, 0, watches, nwatches,
			  NULL, NULL, res);
}
