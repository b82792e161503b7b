/* A live process under ptrr's control: launching, state at a stop, and
 * resuming it; see live.h.
 *
 * Every resume is one run of the capture stepper (plugin/capture): a
 * continue runs every thread at native speed (cap_stepper_run_native)
 * with the breakpoints' int3s planted, and the event callback ends the
 * run at the first signal stop that is not passed on (an int3 of ours is
 * a breakpoint stop, its signal dropped); a single-step runs the stepper
 * in single-step mode with every other thread held, and the first
 * instruction the thread retires ends the run.  The stepper stops every
 * thread before it returns (all-stop), follows new and exiting threads,
 * and catches a fatal signal before its delivery (the crash).
 */
#include <config.h>

#include "live/live_internal.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A session over stepper @s just launched or attached (@err: how that
 * went), *@out; on failure the program is let go (killed if launched,
 * detached if attached) and the session freed. */
static int new_session(struct live *l, int err, const struct live_options *opt,
		       struct live **out)
{
	if (err) {
		cap_stepper_finish(&l->s);
		cap_stepper_free(&l->s);
		free(l);
		return err;
	}
	l->last_tid = l->s.pid;
	l->trace_cap = opt ? opt->trace_cap : 0;
	l->insn_step = opt && opt->insn_step;
	l->tracer = (pid_t) syscall(SYS_gettid);
	/* For tests (tests/gdb-nonstop.sh): a delay between counting an
	 * interrupt's SIGINT and sending it, which opens the window in
	 * which a resume that begins meanwhile must not forget it. */
	if (getenv("PTRR_TEST_SIGINT_DELAY_US"))
		l->sigint_delay_us = (unsigned) atoi(
			getenv("PTRR_TEST_SIGINT_DELAY_US"));
	*out = l;
	return 0;
}

int live_launch(struct live **out, char *const argv[],
		const struct live_options *opt)
{
	struct live *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return new_session(l, cap_stepper_launch(&l->s, argv,
						 opt && opt->aslr), opt, out);
}

int live_attach(struct live **out, pid_t pid, const struct live_options *opt)
{
	struct live *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return new_session(l, cap_stepper_attach(&l->s, pid), opt, out);
}

/* Takes every planted int3 out again (through any stopped thread). */
/* Drops each thread's decoded instruction (the stepper's cache of the
 * one at its pc): the bytes under it may have changed (an int3 planted or
 * taken out, gdb's write).  A thread resumed at a planted breakpoint had
 * the int3 decoded there, and a traced step from that pc later took the
 * movl under it for a trap: its trace lost the instruction (a bare
 * TIP.PGD), which gdb's decoder then failed on. */
static void forget_decoded(struct live *l)
{
	for (size_t i = 0; i < l->s.nthreads; i++)
		l->s.threads[i]->cur.valid = false;
}

static void unplant(struct live *l)
{
	pid_t tid = cap_stepper_mem_tid(&l->s);
	uint8_t junk;

	for (size_t i = 0; i < l->nbps; i++) {
		if (l->bps[i].planted && tid)
			cap_poke_byte(tid, l->bps[i].addr, l->bps[i].orig,
				      &junk);
		l->bps[i].planted = false;
	}
	forget_decoded(l);
}

/* Lets the program go as the stepper says (killed if launched, detached
 * if attached) and frees the session. */
static void free_session(struct live *l)
{
	unplant(l);
	if (!l->s.end.kind || l->s.end.kind == CAP_END_STOPPED)
		l->s.end.kind = CAP_END_STOPPED;
	cap_stepper_finish(&l->s);
	cap_stepper_free(&l->s);
	live_trace_free_all(l);
	free(l->bps);
	free(l->hits);
	free(l);
}

void live_free(struct live *l)
{
	if (!l)
		return;
	/* An attached process is killed too (gdb's kill), then reaped as
	 * its tracer. */
	if (l->s.attached && !live_ended(l)) {
		kill(l->s.pid, SIGKILL);
		l->s.attached = false;
	}
	free_session(l);
}

/* A SIGINT live_interrupt() sent that no thread has reported (a traced
 * run saw stop_requested first) is still pending, and would kill the
 * process once it is let go: a thread that does not block SIGINT is
 * resumed to take it, and stops again at once, its delivery to be
 * dropped.  Whatever else it stops with first is kept to pass on, and
 * it is resumed again (a few times at most) until the SIGINT is taken. */
static void drop_pending_sigint(struct live *l)
{
	int status;

	for (int tries = 0; tries < 8; tries++) {
		struct cap_thread *t = NULL;

		if (!__atomic_load_n(&l->sigint_sent, __ATOMIC_SEQ_CST) ||
		    !cap_sig_shared_pending(l->s.pid, SIGINT))
			return;
		for (size_t i = 0; !t && i < l->s.nthreads; i++)
			if (l->s.threads[i]->state == CAP_TS_STOPPED &&
			    !l->s.threads[i]->sig &&
			    !cap_sig_blocked(l->s.threads[i]->tid, SIGINT))
				t = l->s.threads[i];
		if (!t || ptrace(PTRACE_CONT, t->tid, NULL, NULL) < 0)
			return;
		while (waitpid(t->tid, &status, __WALL) < 0 && errno == EINTR)
			;
		if (!WIFSTOPPED(status)) {
			t->state = CAP_TS_EXITING;
		} else if (WSTOPSIG(status) == SIGINT && !(status >> 16)) {
			__atomic_store_n(&l->sigint_sent, 0, __ATOMIC_SEQ_CST);
			return;
		} else if (!(status >> 16) && WSTOPSIG(status) != SIGTRAP) {
			t->sig = WSTOPSIG(status);
		}
	}
}

void live_detach(struct live *l, bool stopped)
{
	if (!l)
		return;
	unplant(l);
	live_watch_forget(l);
	for (size_t i = 0; i < l->s.nthreads; i++)
		l->s.threads[i]->sig = 0;
	drop_pending_sigint(l);
	/* Pending as the threads are let go: the first to run takes the
	 * whole process into a group-stop. */
	if (stopped && !live_ended(l))
		kill(l->s.pid, SIGSTOP);
	l->s.attached = true;	/* cap_stepper_finish detaches */
	free_session(l);
}

void live_step_counts(const struct live *l, uint64_t *insns,
		      uint64_t *steps, bool *blocks)
{
	*insns = l->s.insns;
	*steps = l->s.steps;
	*blocks = !l->insn_step;
}

pid_t live_pid(const struct live *l)
{
	return l->s.pid;
}

bool live_ended(const struct live *l)
{
	return !l->s.live || l->s.end.kind == CAP_END_EXITED ||
	       l->s.end.kind == CAP_END_SIGNALED;
}

size_t live_threads(const struct live *l, pid_t *tids, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < l->s.nthreads; i++) {
		if (l->s.threads[i]->state != CAP_TS_STOPPED)
			continue;
		if (n < max)
			tids[n] = l->s.threads[i]->tid;
		n++;
	}
	return n;
}

/* The stopped thread @tid, or NULL with the error set. */
static struct cap_thread *stopped_thread(struct live *l, pid_t tid)
{
	struct cap_thread *t = cap_thr_find(&l->s, tid);

	if (!t || t->state != CAP_TS_STOPPED) {
		ptrr_fail(PTRR_ERR_NOTFOUND, "no stopped thread %d in process "
			  "%d", (int) tid, (int) l->s.pid);
		return NULL;
	}
	return t;
}

int live_regs_get(struct live *l, pid_t tid, struct user_regs_struct *regs)
{
	struct cap_thread *t = stopped_thread(l, tid);

	if (!t)
		return PTRR_ERR_NOTFOUND;
	if (ptrace(PTRACE_GETREGS, tid, NULL, regs) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot read the registers of "
				 "thread %d: %s", (int) tid, strerror(errno));
	return 0;
}

int live_regs_set(struct live *l, pid_t tid,
		  const struct user_regs_struct *regs)
{
	struct cap_thread *t = stopped_thread(l, tid);

	if (!t)
		return PTRR_ERR_NOTFOUND;
	t->regs = *regs;
	t->ip = regs->rip;
	return cap_set_regs(t) ? PTRR_ERR_IO : 0;
}

ssize_t live_mem_read(struct live *l, uint64_t addr, void *buf, size_t size)
{
	ssize_t n = cap_stepper_read(&l->s, addr, buf, size);

	if (n <= 0 && size)
		return ptrr_fail(PTRR_ERR_IO, "cannot read memory at 0x%" PRIx64
				 ": %s", addr, n < 0 ? strerror(errno) :
				 "not mapped");
	return n;
}

int live_mem_write(struct live *l, uint64_t addr, const void *buf,
		   size_t size)
{
	pid_t tid = cap_stepper_mem_tid(&l->s);
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int) tid);
	fd = tid ? open(path, O_RDWR | O_CLOEXEC) : -1;
	if (fd >= 0) {
		n = pwrite(fd, buf, size, (off_t) addr);
		close(fd);
	}
	cap_stepper_forget_blocks(&l->s);	/* it may be code */
	forget_decoded(l);
	if (n != (ssize_t) size)
		return ptrr_fail(PTRR_ERR_IO, "cannot write %zu bytes at 0x%"
				 PRIx64 ": %s", size, addr, n < 0 ?
				 strerror(errno) : "not mapped");
	return 0;
}

/* The index of the breakpoint at @addr, or -1. */
ssize_t live_bp_find(const struct live *l, uint64_t addr)
{
	for (size_t i = 0; i < l->nbps; i++)
		if (l->bps[i].addr == addr)
			return (ssize_t) i;
	return -1;
}

/* Sets the software (@hw false) or hardware breakpoint at @addr. */
static int bp_set(struct live *l, uint64_t addr, bool hw)
{
	ssize_t i = live_bp_find(l, addr);

	if (i >= 0) {
		l->bps[i].hw |= hw;
		l->bps[i].sw |= !hw;
		return 0;
	}
	if (l->nbps == l->bps_alloc) {
		size_t n = l->bps_alloc ? 2 * l->bps_alloc : 8;
		struct live_bp *v = realloc(l->bps, n * sizeof(*v));

		if (!v)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		l->bps = v;
		l->bps_alloc = n;
	}
	l->bps[l->nbps++] = (struct live_bp) { .addr = addr, .sw = !hw,
					       .hw = hw };
	return 0;
}

/* Clears the software (@hw false) or hardware breakpoint at @addr. */
static int bp_clear(struct live *l, uint64_t addr, bool hw)
{
	ssize_t i = live_bp_find(l, addr);

	if (i < 0 || !(hw ? l->bps[i].hw : l->bps[i].sw))
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no %sbreakpoint at 0x%"
				 PRIx64, hw ? "hardware " : "", addr);
	if (hw)
		l->bps[i].hw = false;
	else
		l->bps[i].sw = false;
	if (!l->bps[i].hw && !l->bps[i].sw)
		l->bps[i] = l->bps[--l->nbps];
	return 0;
}

int live_bp_set(struct live *l, uint64_t addr)
{
	return bp_set(l, addr, false);
}

int live_bp_clear(struct live *l, uint64_t addr)
{
	return bp_clear(l, addr, false);
}

int live_hbp_set(struct live *l, uint64_t addr)
{
	return bp_set(l, addr, true);
}

int live_hbp_clear(struct live *l, uint64_t addr)
{
	return bp_clear(l, addr, true);
}

void live_pass_signals(struct live *l, const int *sigs, size_t n)
{
	memset(l->pass, 0, sizeof(l->pass));
	for (size_t i = 0; i < n; i++)
		if (sigs[i] > 0 && sigs[i] < NSIG)
			l->pass[sigs[i]] = true;
}

void live_set_progress(struct live *l, int (*fn)(void *arg), void *arg,
		       uint64_t every)
{
	l->progress = every ? fn : NULL;
	l->progress_arg = arg;
	l->progress_every = l->progress_left = every;
}

/* Only the thread that traces the process can PTRACE_INTERRUPT it.
 * Another thread wakes that one with a SIGINT to the process (as gdb's
 * Ctrl-C does), which the run drops when it arrives. */
void live_interrupt(struct live *l)
{
	int saved = errno;

	if ((pid_t) syscall(SYS_gettid) == l->tracer) {
		cap_stepper_request_stop(&l->s);
		return;
	}
	l->s.stop_requested = 1;
	/* Counted before it is sent: the tracer, seeing an earlier one
	 * arrive, must not take this one for it (it would then stay
	 * pending unclaimed and kill the process once let go).  Marked as
	 * on its way meanwhile, so that forget_merged_sigints() does not
	 * take it, not pending yet, for one that will never come. */
	__atomic_add_fetch(&l->sigint_sending, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&l->sigint_sent, 1, __ATOMIC_SEQ_CST);
	if (l->sigint_delay_us)
		usleep(l->sigint_delay_us);
	kill(l->s.pid, SIGINT);
	__atomic_sub_fetch(&l->sigint_sending, 1, __ATOMIC_SEQ_CST);
	errno = saved;
}

/* ------------------------------------------------------------------ */
/* Resuming                                                           */
/* ------------------------------------------------------------------ */

/* Plants the int3 of every breakpoint. */
static int plant(struct live *l)
{
	pid_t tid = cap_stepper_mem_tid(&l->s);
	int err = 0;

	for (size_t i = 0; !err && i < l->nbps; i++) {
		err = cap_poke_byte(tid, l->bps[i].addr, 0xcc, &l->bps[i].orig);
		l->bps[i].planted = !err;
	}
	forget_decoded(l);
	return err;
}

/* Records the first stop of the run. */
static int note_stop(struct live *l, enum live_stop_kind kind,
		     const struct cap_thread *t, uint64_t pc, int signo)
{
	ssize_t bp = live_bp_find(l, pc);

	if (l->stop.kind)
		return 1;
	l->stop = (struct live_stop) { .kind = kind, .tid = t->tid, .pc = pc,
				       .signo = signo };
	if (kind == LIVE_STOP_BREAKPOINT && bp >= 0)
		l->stop.hw = l->bps[bp].hw && !l->bps[bp].sw;
	return 1;
}

/* If thread @t accessed a watchpoint (a SIGTRAP of a debug register,
 * or instruction @ev just retired), the run stops there, at @pc. */
static int watch_stop(struct live *l, struct cap_thread *t,
		      const struct cap_event *ev, uint64_t pc)
{
	struct live_stop hit;

	if (l->stop.kind || !live_watch_hit(l, t->tid, ev->kind == CAP_EV_INSN ?
					    ev : NULL, &hit))
		return 0;
	note_stop(l, LIVE_STOP_WATCH, t, pc, SIGTRAP);
	l->stop.addr = hit.addr;
	l->stop.watch = hit.watch;
	return 1;
}

/* True if a SIGINT that arrived is one live_interrupt() sent (and is
 * then no longer counted). */
static bool claim_sigint(struct live *l)
{
	int n = __atomic_load_n(&l->sigint_sent, __ATOMIC_SEQ_CST);

	while (n > 0 && !__atomic_compare_exchange_n(&l->sigint_sent, &n,
						     n - 1, false,
						     __ATOMIC_SEQ_CST,
						     __ATOMIC_SEQ_CST))
		;
	return n > 0;
}

/* SIGINTs counted as sent that will never arrive: two sent before the
 * first was taken are one.  With none pending, the count starts again
 * from 0, so that the program's own SIGINT in a later run is not
 * dropped as ours.  (A count that grew meanwhile is kept, and so is one
 * whose SIGINT is still on its way: the server's watcher may interrupt
 * as the resume begins.  Read in this order: a SIGINT counted but not
 * pending yet is still marked as sending.) */
static void forget_merged_sigints(struct live *l)
{
	int n = __atomic_load_n(&l->sigint_sent, __ATOMIC_SEQ_CST);

	if (n > 0 && !cap_sig_shared_pending(l->s.pid, SIGINT) &&
	    !__atomic_load_n(&l->sigint_sending, __ATOMIC_SEQ_CST))
		__atomic_compare_exchange_n(&l->sigint_sent, &n, 0, false,
					    __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
}

/* True if runs single-step every thread (tracing, or watchpoints
 * without debug registers): no int3 is planted then. */
static bool stepped(const struct live *l)
{
	return l->tracing || live_watch_stepping(l);
}

/* A signal stop while running natively: our int3 (the thread goes back
 * onto the instruction it replaced, the SIGTRAP dropped), a signal
 * passed on, or a stop. */
static int native_stop(struct live *l, struct cap_thread *t,
		       const struct cap_event *ev)
{
	if (ev->signo == SIGTRAP && watch_stop(l, t, ev, ev->ip)) {
		t->sig = 0;
		return 1;
	}
	if (!stepped(l) && ev->signo == SIGTRAP &&
	    live_bp_find(l, ev->ip - 1) >= 0) {
		t->sig = 0;
		t->regs.rip = ev->ip - 1;
		t->ip = t->regs.rip;
		if (cap_set_regs(t))
			return PTRR_ERR_IO;
		return note_stop(l, LIVE_STOP_BREAKPOINT, t, t->ip, 0);
	}
	if (ev->signo == SIGINT && claim_sigint(l)) {
		t->sig = 0;
		return 0;
	}
	if (l->pass[ev->signo])
		return 0;
	return note_stop(l, LIVE_STOP_SIGNAL, t, ev->ip, ev->signo);
}

/* Keeps thread @tid's arrival at breakpoint @pc, which came after the
 * run's stop: a traced thread stops before the breakpoint's instruction
 * but would run it at the next resume, so the arrival is told then
 * (found_hit()).  (Natively the thread runs the int3 again.) */
static void keep_hit(struct live *l, pid_t tid, uint64_t pc)
{
	if (l->nhits == l->hits_alloc) {
		size_t n = l->hits_alloc ? 2 * l->hits_alloc : 4;
		struct live_hit *v = realloc(l->hits, n * sizeof(*v));

		if (!v)
			return;	/* the thread runs on past it */
		l->hits = v;
		l->hits_alloc = n;
	}
	l->hits[l->nhits++] = (struct live_hit) { .tid = tid, .pc = pc };
}

/* The stepper's event callback: decides where the run stops. */
static int on_event(void *arg, const struct cap_event *ev)
{
	struct live *l = arg;
	int rc;

	if (ev->kind == CAP_EV_STOP)
		return native_stop(l, ev->thread, ev);
	if (ev->kind == CAP_EV_THREAD || ev->kind == CAP_EV_EXEC) {
		rc = live_watch_thread(l, ev->thread->tid);
		if (rc < 0)
			return rc;
	}
	rc = l->tracing ? live_trace_event(l, ev) : 0;
	if (!rc && l->tracing && l->progress && ev->kind == CAP_EV_INSN &&
	    !--l->progress_left) {
		l->progress_left = l->progress_every;
		rc = l->progress(l->progress_arg);
	}
	if (rc < 0 || (ev->kind != CAP_EV_INSN && ev->kind != CAP_EV_SIGNAL))
		return rc;
	if (ev->kind == CAP_EV_INSN && watch_stop(l, ev->thread, ev, ev->next_ip))
		return 1;
	if (ev->thread->tid == l->step_tid)
		return note_stop(l, LIVE_STOP_STEP, ev->thread, ev->next_ip, 0);
	if ((!l->step_tid || l->others_run) &&
	    live_bp_find(l, ev->next_ip) >= 0) {
		if (l->stop.kind)
			keep_hit(l, ev->thread->tid, ev->next_ip);
		return note_stop(l, LIVE_STOP_BREAKPOINT, ev->thread,
				 ev->next_ip, 0);
	}
	return 0;
}

/* The stop of a run the callback did not end: the process ended, a
 * fatal signal, an interrupt. */
static void end_stop(struct live *l)
{
	struct cap_stepper *s = &l->s;
	struct cap_thread *t = cap_thr_find(s, l->last_tid);

	if (s->end.kind == CAP_END_EXITED || s->end.kind == CAP_END_SIGNALED) {
		l->stop.kind = s->end.kind == CAP_END_EXITED ?
			       LIVE_STOP_EXITED : LIVE_STOP_KILLED;
		l->stop.code = s->end.code;
		l->stop.signo = s->end.code;
		return;
	}
	if (s->end.kind == CAP_END_FAULT && s->fault_thread)
		t = s->fault_thread;
	else if (!t || t->state != CAP_TS_STOPPED)
		t = cap_thr_find(s, cap_stepper_mem_tid(s));
	l->stop.kind = s->end.kind == CAP_END_FAULT ? LIVE_STOP_CRASH :
		       LIVE_STOP_INTERRUPTED;
	l->stop.tid = t ? t->tid : 0;
	l->stop.pc = t ? t->regs.rip : 0;
	if (s->end.kind == CAP_END_FAULT) {
		l->stop.signo = s->end.code;
		l->stop.addr = s->end.addr;
	}
}

/* A signal stop of a fatal signal is the crash. */
static void crash_stop(struct live *l)
{
	struct cap_thread *t = cap_thr_find(&l->s, l->stop.tid);

	if (l->stop.kind == LIVE_STOP_SIGNAL && t &&
	    t->end.kind == CAP_END_FAULT) {
		l->stop.kind = LIVE_STOP_CRASH;
		l->stop.addr = t->end.addr;
	}
}

/* Makes the stepper ready for another run: no end, no request, the
 * signals of the last stop dropped but @signo for thread @tid. */
static void rearm(struct live *l, pid_t tid, int signo)
{
	struct cap_stepper *s = &l->s;

	s->end = (struct cap_end) { 0 };
	s->fault_thread = NULL;
	s->halting = false;
	for (size_t i = 0; i < s->nthreads; i++) {
		struct cap_thread *t = s->threads[i];

		t->held = false;
		t->sig = t->tid == tid ? signo : 0;
		if (t->sig != t->handler_sig)
			t->expect_handler = false;
		if (t->end.kind == CAP_END_FAULT)
			t->end = (struct cap_end) { 0 };
	}
	l->stop = (struct live_stop) { 0 };
}

/* True if a breakpoint is at an instruction in (@from, @to]: a block
 * of code running natively there would run past it. */
static bool bp_within(void *arg, uint64_t from, uint64_t to)
{
	const struct live *l = arg;

	for (size_t i = 0; i < l->nbps; i++)
		if (l->bps[i].addr > from && l->bps[i].addr <= to)
			return true;
	return false;
}

/* One run of the stepper: natively, or single-stepping thread @tid
 * with the others held (or single-stepped too if @others_run), or
 * single-stepping every thread (stepped()).  A traced run of every
 * thread block-steps (as `ptrr record` does, --soft-step=block) unless
 * told not to: straight-line code runs natively up to a branch or a
 * breakpoint.  With a watchpoint set (whose hit is checked after each
 * instruction), and for a single step of one thread, every instruction
 * is stepped. */
static int run(struct live *l, pid_t step_tid, bool others_run)
{
	struct cap_stepper *s = &l->s;
	int err;

	l->step_tid = step_tid;
	l->others_run = others_run;
	for (size_t i = 0; step_tid && !others_run && i < s->nthreads; i++)
		s->threads[i]->held = s->threads[i]->tid != step_tid;
	s->native = !step_tid && !stepped(l);
	s->block_mode = !step_tid && l->tracing && !l->insn_step &&
			!l->nwatches;
	s->must_stop = bp_within;
	s->report_signals = l->tracing;
	live_watch_snapshot(l);
	err = s->native ? plant(l) : 0;
	if (!err && l->tracing)
		err = live_trace_begin_run(l);
	if (!err)
		err = cap_stepper_run(s, on_event, l);
	cap_blk_finish(s);	/* gdb reads and writes, runs may be native */
	unplant(l);
	if (l->tracing && (!err || err == PTRR_ERR_GONE)) {
		int e = live_trace_end_run(l);

		err = err ? err : e;
	}
	if (err)
		return err;
	if (l->stop.kind)
		crash_stop(l);
	else
		end_stop(l);
	if (l->stop.tid)
		l->last_tid = l->stop.tid;
	return 0;
}

/* True if stopped thread @tid is at a breakpoint: it steps off first. */
static bool at_bp(struct live *l, pid_t tid)
{
	struct cap_thread *t = cap_thr_find(&l->s, tid);

	return t && t->state == CAP_TS_STOPPED && live_bp_find(l, t->regs.rip) >= 0;
}

/* True if resume @r lets thread @tid run (its run_tids). */
static bool may_run(const struct live_resume *r, pid_t tid)
{
	for (size_t k = 0; r->run_tids && k < r->nrun; k++)
		if (r->run_tids[k] == tid)
			return true;
	return !r->run_tids;
}

/* True if a thread resume @r moves has an arrival at a breakpoint kept
 * from the last run (keep_hit()) and is still there, the breakpoint
 * too: that is the stop (*@stop), before anything runs.  Arrivals of
 * threads that have moved since, or whose breakpoint is gone, are
 * dropped. */
static bool found_hit(struct live *l, const struct live_resume *r,
		      struct live_stop *stop)
{
	size_t kept = 0;
	bool found = false;

	for (size_t i = 0; i < l->nhits; i++) {
		struct live_hit h = l->hits[i];
		struct cap_thread *t = cap_thr_find(&l->s, h.tid);
		ssize_t bp = live_bp_find(l, h.pc);
		bool moves = r->step_tid && !r->others_run ?
			     h.tid == r->step_tid : may_run(r, h.tid);

		if (!t || t->state != CAP_TS_STOPPED || t->regs.rip != h.pc ||
		    bp < 0)
			continue;
		if (found || !moves) {
			l->hits[kept++] = h;
			continue;
		}
		*stop = (struct live_stop) { .kind = LIVE_STOP_BREAKPOINT,
					     .tid = h.tid, .pc = h.pc,
					     .hw = l->bps[bp].hw &&
						   !l->bps[bp].sw };
		l->last_tid = h.tid;
		found = true;
	}
	l->nhits = kept;
	return found;
}

/* Holds the threads @r does not let run (run_tids). */
static void hold_others(struct live *l, const struct live_resume *r)
{
	for (size_t i = 0; i < l->s.nthreads; i++)
		l->s.threads[i]->held = !may_run(r, l->s.threads[i]->tid);
}

int live_resume(struct live *l, const struct live_resume *r,
		struct live_stop *stop)
{
	pid_t sig_tid = r->sig_tid ? r->sig_tid : l->last_tid;
	pid_t first = r->step_tid ? r->step_tid : l->last_tid;
	int err;

	memset(stop, 0, sizeof(*stop));
	if (live_ended(l))
		return ptrr_fail(PTRR_ERR_USAGE, "the process is not running: "
				 "start it again");
	/* An interrupt counts from here to the end of the resume: one that
	 * comes while a thread steps off its breakpoint stops the run that
	 * follows at once (its SIGINT is dropped when it arrives). */
	l->s.stop_requested = 0;
	forget_merged_sigints(l);
	for (size_t i = 0; i < l->s.nthreads; i++)
		if (l->s.threads[i]->state == CAP_TS_STOPPED)
			cap_get_regs(l->s.threads[i], false);
	if (!r->signo && found_hit(l, r, stop))
		return 0;
	rearm(l, sig_tid, r->signo);
	if (r->run_tids) {
		hold_others(l, r);
		err = run(l, r->step_tid, r->step_tid && r->others_run);
		*stop = l->stop;
		return err;
	}
	if (r->step_tid || (!stepped(l) && at_bp(l, first))) {
		err = run(l, first, r->step_tid && r->others_run);
		if (err || r->step_tid || l->stop.kind != LIVE_STOP_STEP) {
			*stop = l->stop;
			return err;
		}
		rearm(l, 0, 0);
	}
	err = run(l, 0, false);
	*stop = l->stop;
	return err;
}
