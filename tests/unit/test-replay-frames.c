/* replay_frames against a simulation of the stack over the instruction
 * sequence, done here without the call segments, from the instructions'
 * classes and addresses and the symbols:
 *  - a call pushes its return address (ip + size) and a new activation;
 *    a return pops one (a new activation if it lands in another function
 *    than the call, as gdb then sees a frame of another function); a
 *    return with nothing to pop makes the address it returns to an outer
 *    frame of every position before it;
 *  - a jump to a function's first instruction (or from code with a symbol
 *    into code without) is a tail call: a new activation in the same
 *    frame; an indirect jump into the middle of a function that has a
 *    frame on the stack (longjmp) goes back to that frame; a jump into
 *    the middle of the function the frame ran before the tail calls that
 *    led here (main -> main.cold -> main), back to that activation; any
 *    other into another function (a direct one never leaves the frame,
 *    even if the function has frames further up: a recursion in a cold
 *    part), a new activation in place of the current one;
 *  - a signal handler (tracing resumed elsewhere than after the system
 *    call or interrupted instruction) pushes a frame that ends the stack:
 *    the call segments do not know what it interrupted; positions after
 *    it returned are not compared (the call segments start over there)
 *    until the next gap, which forgets everything.
 *
 * At each position (all of them, or a sample of a long history) the PCs
 * of the frames must be the simulated ones, levels must decrease
 * outward, each frame's function must be the symbol around its PC (the
 * return address - 1 for the callers of calls seen; the address returned
 * to for frames learned from returns), and instances must match the
 * simulated activations one to one. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "test-replay.h"

#define MAX_FRAMES 512
#define MAX_POSITIONS 300000

/* A pushed return address: a node of a persistent stack. */
struct node {
	uint64_t ret;
	uint32_t act;		/* the activation it returns to */
	int64_t inc;		/* and its frame's incarnations */
	int64_t parent;		/* -1 at the bottom */
};

/* A function a frame has run: a frame that jumps back into a function it
 * ran before (main -> main.cold -> main) is that function's activation
 * again, as gdb's frame id (stack address, function) is. */
struct incarnation {
	uint64_t func;		/* function start, 0 if no symbol */
	uint32_t act;
	int64_t prev;		/* the frame's previous one, or -1 */
};

/* A return with nothing to pop: an outer frame of the positions before. */
struct underflow {
	uint64_t at;		/* index of the return */
	uint64_t target;
	uint32_t act;
};

struct sim {
	struct hist_symtab *st;
	struct hist_image *img;
	struct node *nodes;
	size_t nnodes;
	struct underflow *uf;
	size_t nuf;
	struct incarnation *incs;
	size_t nincs;
	int64_t *top;		/* per entry: top node, -1 if none */
	uint32_t *act;		/* per entry: its activation */
	uint64_t *stretch;	/* per entry: gaps and signal returns before
				 * it (underflows count within one) */
	bool *unchecked;	/* per entry: after a signal handler returned
				 * (call segments then start over) */
	uint32_t nacts;
	int64_t cur_top;
	uint32_t cur_act;
	int64_t cur_inc;
	uint64_t epoch;		/* the current stretch */
	bool post;		/* a signal handler returned in this stretch */
};

/* The start and end of the function symbol around @ip; false if none. */
static bool func_around(struct sim *s, uint64_t ip, uint64_t *start,
			uint64_t *end)
{
	struct hist_sym sym;

	if (hist_sym_lookup(s->st, ip, &sym))
		return false;
	*start = sym.start;
	*end = sym.start + sym.size;
	return true;
}

/* True if @a and @b lie in the same function (by the symbols), or both
 * in none. */
static bool same_func(struct sim *s, uint64_t a, uint64_t b)
{
	uint64_t sa, sb, end;
	bool ha = func_around(s, a, &sa, &end);
	bool hb = func_around(s, b, &sb, &end);

	return ha == hb && (!ha || sa == sb);
}

/* The function start at @ip, 0 if no symbol covers it. */
static uint64_t func_start(struct sim *s, uint64_t ip)
{
	uint64_t start, end;

	return func_around(s, ip, &start, &end) ? start : 0;
}

/* The current frame now runs the function at @ip as a new activation,
 * after incarnation @prev (-1 if none). */
static void incarnate(struct sim *s, uint64_t ip, int64_t prev)
{
	s->cur_act = s->nacts++;
	s->incs[s->nincs] = (struct incarnation) { func_start(s, ip),
						   s->cur_act, prev };
	s->cur_inc = (int64_t) s->nincs++;
}

/* The incarnation of function @func the current frame reached it from
 * (by tail calls), or -1. */
static int64_t earlier_incarnation(const struct sim *s, uint64_t func)
{
	int64_t k = s->cur_inc;

	for (int i = 0; k >= 0 && i < 64; i++, k = s->incs[k].prev)
		if (s->incs[k].func == func)
			return k;
	return -1;
}

/* True if jump @p is indirect: its disassembly reads its destination
 * ("jmp    *%rax"), or cannot be read. */
static bool indirect_jump(struct sim *s, const struct hist_entry *p)
{
	uint8_t code[16];
	char text[256];
	ssize_t n = hist_image_read(s->img, p->ip, code, sizeof(code));

	return p->iclass != HIST_IC_COND_JUMP &&
	       (n <= 0 || hist_disasm(code, (size_t) n, p->ip, NULL, text,
				      sizeof(text)) < 0 || strchr(text, '*'));
}

/* A jump from @p to @e that is neither a call nor a return: to the first
 * instruction of a function (or into code without a symbol), a tail call:
 * a new activation in the same frame, which remembers the one it
 * replaced; an indirect one into the middle of a function with a frame on
 * the stack, back to that frame; into the middle of a function the frame
 * was in before the tail calls that led here, back to that activation;
 * into another function, a new activation in place of the current one. */
static void sim_jump(struct sim *s, const struct hist_entry *p,
		     const struct hist_entry *e)
{
	uint64_t start, end, pstart = 0, pend;
	bool psym = func_around(s, p->ip, &pstart, &pend);
	bool indirect = indirect_jump(s, p);
	int64_t k;

	if (!func_around(s, e->ip, &start, &end)) {
		if (psym)
			incarnate(s, e->ip, s->cur_inc);
		return;
	}
	if (e->ip != start && psym && pstart == start)
		return;
	for (k = s->cur_top; indirect && e->ip != start && k >= 0;
	     k = s->nodes[k].parent) {
		if (s->nodes[k].ret >= start && s->nodes[k].ret < end) {
			s->cur_act = s->nodes[k].act;
			s->cur_inc = s->nodes[k].inc;
			s->cur_top = s->nodes[k].parent;
			return;
		}
	}
	k = e->ip == start ? -1 : earlier_incarnation(s, start);
	if (e->ip == start)
		incarnate(s, e->ip, s->cur_inc);
	else if (k >= 0)
		s->cur_act = s->incs[s->cur_inc = k].act;
	else
		incarnate(s, e->ip, s->incs[s->cur_inc].prev);
}

/* Pushes return address @ret (0 for a signal frame) and a new frame
 * running the function at @ip. */
static void sim_push(struct sim *s, uint64_t ret, uint64_t ip)
{
	s->nodes[s->nnodes] = (struct node) { ret, s->cur_act, s->cur_inc,
					      s->cur_top };
	s->cur_top = (int64_t) s->nnodes++;
	incarnate(s, ip, -1);
}

/* Pops the top frame, returning to @ip: the caller's activation if @ip is
 * in the function of the call, else a new one. */
static void sim_pop(struct sim *s, uint64_t ip)
{
	const struct node *top = &s->nodes[s->cur_top];

	s->cur_top = top->parent;
	s->cur_inc = top->inc;
	s->cur_act = top->act;
	if (!top->ret || !same_func(s, ip, top->ret - 1))
		incarnate(s, ip, -1);
}

/* True if the transfer from @p to @e is asynchronous: tracing resumed
 * elsewhere than after the system call or interrupted instruction @p (a
 * signal delivered, or sigreturn). */
static bool async_transfer(const struct hist_entry *p,
			   const struct hist_entry *e)
{
	return (p->iclass == HIST_IC_FAR_CALL ||
		(p->flags & HIST_F_INTERRUPTED)) &&
	       (e->flags & HIST_F_RESUMED) && e->ip != p->ip + p->size;
}

/* The transfer from instruction @p (entry index @i - 1) to @e. */
static void sim_transfer(struct sim *s, const struct hist_entry *p,
			const struct hist_entry *e, uint64_t i)
{
	bool taken = e->ip != p->ip + p->size;

	if (async_transfer(p, e) && !s->post) {
		sim_push(s, 0, e->ip);
	} else if (async_transfer(p, e)) {
		incarnate(s, e->ip, -1);
	} else if (p->iclass == HIST_IC_RETURN && s->cur_top >= 0 &&
		   !s->nodes[s->cur_top].ret) {
		sim_pop(s, e->ip);
		s->post = true;
		s->epoch++;
	} else if (p->iclass == HIST_IC_CALL && taken) {
		sim_push(s, p->ip + p->size, e->ip);
	} else if (p->iclass == HIST_IC_RETURN && s->cur_top >= 0) {
		sim_pop(s, e->ip);
	} else if (p->iclass == HIST_IC_RETURN) {
		incarnate(s, e->ip, -1);
		s->uf[s->nuf++] = (struct underflow) { i - 1, e->ip,
						       s->cur_act };
	} else if (taken) {
		sim_jump(s, p, e);
	}
}

/* Runs the simulation over the entries of @tc. */
static int simulate(struct sim *s, const struct tcase *tc)
{
	const struct hist_entry *p = NULL;

	s->nodes = malloc((tc->n + 1) * sizeof(*s->nodes));
	s->uf = malloc((tc->n + 1) * sizeof(*s->uf));
	s->top = malloc((tc->n + 1) * sizeof(*s->top));
	s->act = malloc((tc->n + 1) * sizeof(*s->act));
	s->stretch = malloc((tc->n + 1) * sizeof(*s->stretch));
	s->unchecked = malloc((tc->n + 1) * sizeof(*s->unchecked));
	s->incs = malloc((2 * tc->n + 1) * sizeof(*s->incs));
	if (!s->nodes || !s->uf || !s->top || !s->act || !s->stretch ||
	    !s->unchecked || !s->incs)
		return -1;
	s->cur_top = -1;
	if (tc->n)
		incarnate(s, tc->e[0].ip, -1);
	for (uint64_t i = 0; i < tc->n; i++) {
		const struct hist_entry *e = &tc->e[i];

		if (e->kind == HIST_ENTRY_GAP) {
			s->epoch++;
			s->post = false;
			s->cur_top = -1;
			incarnate(s, 0, -1);
			p = NULL;
		} else if (p) {
			sim_transfer(s, p, e, i);
		}
		if (e->kind == HIST_ENTRY_INSN)
			p = e;
		s->top[i] = s->cur_top;
		s->act[i] = s->cur_act;
		s->stretch[i] = s->epoch;
		s->unchecked[i] = s->post;
	}
	return 0;
}

/* The simulated frames at entry index @i into @pc and @act; @uf is the
 * first underflow at or after @i.  Returns how many; the first *@called
 * are frame 0 and those known from calls, the others were learned from
 * returns. */
static size_t sim_frames(const struct sim *s, const struct tcase *tc,
			 uint64_t i, size_t uf, uint64_t *pc, uint32_t *act,
			 size_t *called)
{
	size_t n = 0;

	pc[n] = tc->e[i].ip;
	act[n++] = s->act[i];
	for (int64_t k = s->top[i]; k >= 0 && n < MAX_FRAMES;
	     k = s->nodes[k].parent) {
		if (!s->nodes[k].ret) {
			uf = s->nuf;
			break;
		}
		pc[n] = s->nodes[k].ret;
		act[n++] = s->nodes[k].act;
	}
	*called = n;
	for (; uf < s->nuf && n < MAX_FRAMES &&
	       s->stretch[s->uf[uf].at] == s->stretch[i]; uf++) {
		pc[n] = s->uf[uf].target;
		act[n++] = s->uf[uf].act;
	}
	return n;
}

/* One to one: activation @act is instance @inst everywhere. */
static bool same_identity(uint32_t *act2inst, uint32_t *inst2act,
			  size_t ninst, uint32_t act, uint32_t inst)
{
	if (inst == 0 || inst > ninst)
		return false;
	if (!act2inst[act] && !inst2act[inst - 1]) {
		act2inst[act] = inst;
		inst2act[inst - 1] = act + 1;
	}
	return act2inst[act] == inst && inst2act[inst - 1] == act + 1;
}

/* Describes frames @f (@n of them) and the simulated @pc (@m) into
 * @buf. */
static const char *describe(const struct replay_frame *f, size_t n,
			    const uint64_t *pc, size_t m, char *buf,
			    size_t size)
{
	size_t len = (size_t) snprintf(buf, size, "got");

	for (size_t k = 0; k < n && k < 16 && len < size; k++)
		len += (size_t) snprintf(buf + len, size - len, " 0x%" PRIx64
					 "/L%d/#%u", f[k].pc, f[k].level,
					 f[k].instance);
	if (len < size)
		len += (size_t) snprintf(buf + len, size - len, ", expected");
	for (size_t k = 0; k < m && k < 16 && len < size; k++)
		len += (size_t) snprintf(buf + len, size - len, " 0x%" PRIx64,
					 pc[k]);
	return buf;
}

/* Checks frames @f (@n) at entry index @i against the simulation. */
static void compare(struct tcase *tc, struct sim *s, uint64_t i, size_t uf,
		    const struct replay_frame *f, size_t n,
		    uint32_t *act2inst, uint32_t *inst2act, size_t ninst)
{
	static uint64_t pc[MAX_FRAMES];
	static uint32_t act[MAX_FRAMES];
	size_t called, m = sim_frames(s, tc, i, uf, pc, act, &called);
	char buf[1024];
	uint64_t start, end;
	bool bad = n != m;

	for (size_t k = 0; k < n && !bad; k++) {
		uint64_t at = k && k < called ? f[k].pc - 1 : f[k].pc;

		bad = f[k].pc != pc[k] ||
		      (k && f[k].level >= f[k - 1].level) ||
		      (func_around(s, at, &start, &end) && f[k].func != start);
		if (!bad && !same_identity(act2inst, inst2act, ninst, act[k],
					   f[k].instance)) {
			tc_fail(tc, "frames at %" PRIu64 ": frame %zu is "
				"instance %u, not that of its activation",
				tc->e[i].number, k, f[k].instance);
			return;
		}
	}
	if (bad)
		tc_fail(tc, "frames at %" PRIu64 ": %s", tc->e[i].number,
			describe(f, n, pc, m, buf, sizeof(buf)));
}

/* Moves the replay to instruction entry index @i, the next instruction
 * after its position (the first one if @i is): a step, which decodes a
 * segment once, where a goto would decode part of it again each time. */
static bool move_to(struct tcase *tc, uint64_t i)
{
	struct replay_result res;
	int err = i == (uint64_t) tc_insn_from(tc, 0, 1) ?
		  replay_goto(tc->rp, tc->thr, tc->e[i].number) :
		  replay_step(tc->rp, tc->thr, 1, &res);

	if (err || replay_position(tc->rp, tc->thr) != tc->e[i].number) {
		tc_fail(tc, "cannot move to %" PRIu64, tc->e[i].number);
		return false;
	}
	return true;
}

/* Compares replay_frames with the simulation at every position of @tc
 * (a sample of a long history). */
static void compare_all(struct tcase *tc, struct sim *s, size_t ninst)
{
	static struct replay_frame f[MAX_FRAMES];
	uint32_t *act2inst = calloc(s->nacts + 1, sizeof(*act2inst));
	uint32_t *inst2act = calloc(ninst + 1, sizeof(*inst2act));
	uint64_t step = tc->n > MAX_POSITIONS ? tc->n / MAX_POSITIONS : 1;
	size_t uf = 0, n;

	for (uint64_t i = 0; act2inst && inst2act && i < tc->n; i++) {
		if (tc->e[i].kind != HIST_ENTRY_INSN)
			continue;
		if (!move_to(tc, i))
			break;
		if (i % step || s->unchecked[i])
			continue;
		while (uf < s->nuf && s->uf[uf].at < i)
			uf++;
		if (replay_frames(tc->rp, tc->thr, f, MAX_FRAMES, &n)) {
			tc_fail(tc, "no frames at %" PRIu64, tc->e[i].number);
			continue;
		}
		compare(tc, s, i, uf, f, n, act2inst, inst2act, ninst);
	}
	free(act2inst);
	free(inst2act);
}

void check_frames(struct tcase *tc, struct hist_recording *rec)
{
	struct sim s = { .st = hist_recording_symtab(rec),
			 .img = hist_recording_image(rec) };
	struct history *h;
	size_t ncalls;

	if (hist_recording_history(rec, tc->thr, &h) ||
	    hist_calls_count(h, &ncalls) || simulate(&s, tc))
		tc_fail(tc, "cannot simulate its stack");
	else
		compare_all(tc, &s, ncalls);
	free(s.nodes);
	free(s.uf);
	free(s.top);
	free(s.act);
	free(s.stretch);
	free(s.unchecked);
	free(s.incs);
	replay_goto_end(tc->rp, tc->thr);
}
