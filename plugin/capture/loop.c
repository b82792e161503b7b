/* Waiting for stops, resuming threads and stopping them all; see
 * stepper_internal.h.
 *
 * Every thread has a step (or, running to the start address, a
 * PTRACE_CONT) in flight.  One round waits for a stop, collects every
 * other stop that is ready (WNOHANG), handles each, then resumes every
 * thread that stopped: all stopped threads move on in every round, and a
 * thread that waits in the kernel simply does not report until its
 * system call returns.
 *
 * When the run is to end (a fatal signal, the caller's request, a
 * positive verdict of the callback), running threads get a
 * PTRACE_INTERRUPT, also those waiting in a system call, and the loop
 * goes on until none is running.  An interrupt can arrive after a step
 * completed but before its SIGTRAP was dequeued; the thread is then
 * resumed once more so that the SIGTRAP (dequeued before any further
 * instruction runs) reports the step.
 */
#include <config.h>

#include "capture/stepper_internal.h"
#include "error.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

/* Kernel-internal system call results that mean "restart it" (they
 * never reach the program). */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

int cap_get_regs(struct cap_thread *t, bool keep_ip)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->regs) < 0)
		return ptrr_fail(errno == ESRCH ? PTRR_ERR_GONE : PTRR_ERR_IO,
				 "cannot read the registers of "
				 "thread %d: %s", (int) t->tid,
				 strerror(errno));
	if (!keep_ip)
		t->ip = t->regs.rip;
	return 0;
}

void cap_restart_view(struct cap_thread *t)
{
	int64_t rax = (int64_t) t->regs.rax;

	if ((int64_t) t->regs.orig_rax < 0)
		return;
	if (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR ||
	    rax == -ERESTARTNOHAND)
		t->regs.rax = t->regs.orig_rax;
	else if (rax == -ERESTART_RESTARTBLOCK)
		t->regs.rax = SYS_restart_syscall;
	else
		return;
	t->regs.rip -= 2;
	if (t->ip == t->regs.rip + 2)
		t->ip = t->regs.rip;
}

int cap_interrupt_regs(struct cap_thread *t, bool keep_ip)
{
	int err = cap_get_regs(t, keep_ip);

	if (!err)
		cap_restart_view(t);
	return err;
}

int cap_get_siginfo(const struct cap_thread *t, siginfo_t *si)
{
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, si) < 0) {
		bool gone = errno == ESRCH;

		memset(si, 0, sizeof(*si));
		return gone ? ptrr_fail(PTRR_ERR_GONE, "thread %d is gone",
					(int) t->tid) : 0;
	}
	/* A ptrace event's siginfo (SIGTRAP | event << 8) in a stop that
	 * is not an event stop: a SIGKILL woke the thread from the stop
	 * being handled, and it is in its PTRACE_EVENT_EXIT stop now. */
	if (si->si_signo == SIGTRAP && (si->si_code & 0xff) == SIGTRAP &&
	    si->si_code >> 8) {
		memset(si, 0, sizeof(*si));
		return ptrr_fail(PTRR_ERR_GONE, "thread %d was killed in its "
				 "stop", (int) t->tid);
	}
	return 0;
}

bool cap_stopping(const struct cap_stepper *s)
{
	return s->end.kind || s->stop_requested || s->halting;
}

void cap_stepper_request_stop(struct cap_stepper *s)
{
	int saved = errno;
	pid_t tid = s->wake_tid;

	s->stop_requested = 1;
	if (tid > 0)
		ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	errno = saved;
}

pid_t cap_stepper_mem_tid(const struct cap_stepper *s)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->state == CAP_TS_STOPPED)
			return s->threads[i]->tid;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Stops                                                              */
/* ------------------------------------------------------------------ */

/* A PTRACE_EVENT_STOP of @t that is not its first: a group-stop (it is
 * resumed, as gdb does) or a PTRACE_INTERRUPT.  Nothing ran, except a
 * step whose SIGTRAP is still queued: that one is drained. */
static int event_stop(struct cap_stepper *s, struct cap_thread *t,
		      int status)
{
	siginfo_t si;
	int err;

	if (t->in_block)
		return cap_blk_event_stop(s, t);
	if (cap_stop_signal(WSTOPSIG(status))) {
		err = cap_get_siginfo(t, &si);
		if (err || !si.si_signo)
			return err;	/* gone, or a group-stop */
	}
	if (cap_sig_pending(t->tid, SIGTRAP)) {
		t->drain = true;
		return 0;
	}
	return cap_interrupt_regs(t, s->stepping && !s->native && t->started);
}

/* Handles the wait @status of task @tid. */
static int dispatch(struct cap_stepper *s, pid_t tid, int status)
{
	struct cap_thread *t = cap_thr_find(s, tid);
	uint64_t prev;


	if (!t)
		return cap_newborn_stop(s, tid, status);
	t->interrupted = false;
	t->drain = false;
	if (t->state == CAP_TS_NEW || !WIFSTOPPED(status) ||
	    (status >> 16 && status >> 16 != PTRACE_EVENT_STOP))
		return cap_thr_event(s, t, status);
	t->state = CAP_TS_STOPPED;
	if (status >> 16 == PTRACE_EVENT_STOP)
		return event_stop(s, t, status);
	prev = t->ip;
	if (t->in_block)
		return cap_blk_stop(s, t, WSTOPSIG(status));
	if (s->native)
		return cap_native_stop(s, t);
	if (!s->stepping)
		return cap_run_stop(s, t);
	return cap_step_stop(s, t, prev, WSTOPSIG(status));
}

/* Waits for a stop (@block) or takes one that is ready; *@tid is 0 if
 * none came (interrupted, or none ready). */
static int wait_task(struct cap_stepper *s, bool block, pid_t *tid,
		     int *status)
{
	*tid = waitpid(-1, status, __WALL | (block ? 0 : WNOHANG));
	if (*tid >= 0)
		return 0;
	*tid = 0;
	if (errno == EINTR)
		return 0;
	if (errno == ECHILD) {
		s->live = false;
		return 0;
	}
	return ptrr_fail(PTRR_ERR_IO, "cannot wait for process %d: %s",
			 (int) s->pid, strerror(errno));
}

/* While the run ends, stops are awaited by polling, every POLL_NS; a
 * thread that has not stopped RETRY_POLLS polls after its interrupt is
 * interrupted again (a safety net: an interrupt must never be the one
 * thing a recording waits for forever). */
#define POLL_NS 1000000L
#define RETRY_POLLS 200

/* Forgets the interrupts sent to running threads: advance() sends them
 * again. */
static void reinterrupt(struct cap_stepper *s)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->state == CAP_TS_RUNNING)
			s->threads[i]->interrupted = false;
}

/* Waits for a stop: blocking while the run goes on, polling while it
 * ends; *@tid is 0 if none came. */
static int await_stop(struct cap_stepper *s, pid_t *tid, int *status)
{
	struct timespec pause = { 0, POLL_NS };
	bool block = !cap_stopping(s);
	int err;

	for (int polls = 0;; polls++) {
		err = wait_task(s, block, tid, status);
		if (err || *tid || block || !s->live)
			return err;
		if (polls == RETRY_POLLS) {
			reinterrupt(s);
			return 0;
		}
		nanosleep(&pause, NULL);
	}
}

/* After PTRR_ERR_GONE while handling or resuming thread @t (NULL: not
 * known yet): a SIGKILL took it out of its stop (nothing more ran).
 * Its death is still to be reported, and ends its trace; the recording
 * goes on. */
static int vanished(struct cap_thread *t)
{
	ptrr_clear_error();
	if (t)
		t->state = CAP_TS_RUNNING;
	return 0;
}

/* Handles one stop (waiting for it), then every other stop ready. */
static int collect(struct cap_stepper *s)
{
	pid_t tid;
	int status, err = await_stop(s, &tid, &status);

	while (!err && tid > 0) {
		err = dispatch(s, tid, status);
		if (err == PTRR_ERR_GONE)
			err = vanished(cap_thr_find(s, tid));
		if (!err)
			err = wait_task(s, false, &tid, &status);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Resuming and stopping                                              */
/* ------------------------------------------------------------------ */

/* Resumes @t: one single-step, or running freely to the start address;
 * the signal it is to get goes with it. */
static int resume(struct cap_stepper *s, struct cap_thread *t)
{
	int req = s->stepping && !s->native && !t->in_block ?
		  PTRACE_SINGLESTEP : PTRACE_CONT;

	if (ptrace(req, t->tid, NULL, (void *) (long) t->sig) < 0 &&
	    errno != ESRCH)
		return ptrr_fail(PTRR_ERR_IO, "cannot resume thread %d: %s",
				 (int) t->tid, strerror(errno));
	t->sig = 0;
	t->state = CAP_TS_RUNNING;
	s->steps += req == PTRACE_SINGLESTEP;
	s->wake_tid = t->tid;
	return 0;
}

/* Before @t single-steps an execve: the old image's last moment. */
static int before_execve(struct cap_stepper *s, struct cap_thread *t)
{
	struct cap_event ev = { .kind = CAP_EV_EXECVE, .thread = t,
				.ip = t->ip };

	cap_fetch_insn(t, t->ip);
	if (!s->stepping || !cap_about_to_exec(t) || s->execve_tid == t->tid)
		return 0;
	s->execve_tid = t->tid;
	return cap_report(s, &ev);
}

/* Returns @err for stopped thread @t, which is not resumed after all:
 * the block cap_blk_prepare() began for it was not run.  (A stop asked
 * for from another thread, gdb's interrupt, can end the run here, and a
 * thread left in_block would be taken, in the next run, maybe a native
 * one, for one stopped inside it: "code changed under ptrr".) */
static int unbegun(struct cap_thread *t, int err)
{
	t->in_block = false;
	return err;
}

/* Moves stopped thread @t on, unless the run is ending. */
static int advance_one(struct cap_stepper *s, struct cap_thread *t)
{
	int err;

	if (t->drain)
		return resume(s, t);
	if (t->held || cap_stopping(s))
		return 0;
	err = cap_blk_prepare(s, t);
	if (err || cap_stopping(s))
		return unbegun(t, err < 0 ? err : 0);
	err = before_execve(s, t);
	if (err || cap_stopping(s))
		return unbegun(t, err);
	return resume(s, t);
}

/* Resumes every stopped thread, or once the run is to end, interrupts
 * every running one. */
static int advance(struct cap_stepper *s)
{
	int err = 0;

	if (s->stop_requested && !s->end.kind)
		s->end.kind = CAP_END_STOPPED;
	cap_blk_sync(s);
	for (size_t i = 0; !err && i < s->nthreads; i++) {
		struct cap_thread *t = s->threads[i];

		if (t->state == CAP_TS_STOPPED) {
			err = advance_one(s, t);
			if (err == PTRR_ERR_GONE)
				err = vanished(t);
		} else if (t->state == CAP_TS_RUNNING && cap_stopping(s) &&
			 !t->interrupted) {
			ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
			t->interrupted = true;
		}
	}
	return err;
}

/* True while a stop is still to come from a thread that must be stopped
 * (or a child that must be detached) before the run can end. */
static bool waiting(const struct cap_stepper *s)
{
	if (!s->live)
		return false;
	if (s->ndetach)
		return true;
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct cap_thread *t = s->threads[i];

		if (t->state == CAP_TS_NEW || t->state == CAP_TS_RUNNING)
			return true;
	}
	return false;
}

int cap_loop(struct cap_stepper *s)
{
	int err = advance(s);

	while (!err && waiting(s)) {
		err = collect(s);
		if (!err)
			err = advance(s);
	}
	return err;
}

int cap_stepper_run(struct cap_stepper *s, cap_event_fn fn, void *arg)
{
	int err = 0;

	s->fn = fn;
	s->arg = arg;
	s->stepping = true;
	err = cap_blk_init(s);
	for (size_t i = 0; !err && i < s->nthreads; i++)
		if (s->threads[i]->state == CAP_TS_STOPPED)
			err = cap_thr_start(s, s->threads[i]);
	if (!err)
		err = cap_loop(s);
	if (!err && !s->end.kind)
		s->end.kind = CAP_END_STOPPED;
	return err;
}
