/* Running every thread at native speed (PTRACE_CONT), stopped only by
 * events: the hardware backend's run, where the CPU traces and ptrace
 * only follows threads, signals and the end.  See stepper.h.
 *
 * It is the single-step run with PTRACE_CONT for PTRACE_SINGLESTEP
 * (loop.c's resume) and this file's signal stop for stepper.c's: the
 * thread table, clone, fork, exit, execve (threads.c), stopping every
 * thread at the end and interrupts (loop.c), launching and letting go
 * (launch.c) are the same code.  No instruction is reported: a
 * CAP_EV_STOP at each signal stop says where the thread is instead; a
 * callback that clears the thread's sig claims the stop (a breakpoint of
 * its own) and no signal is delivered. */
#include <config.h>

#include "capture/stepper_internal.h"
#include "error.h"

int cap_native_stop(struct cap_stepper *s, struct cap_thread *t)
{
	struct cap_event ev = { .kind = CAP_EV_STOP, .thread = t };
	enum cap_disposition d;
	siginfo_t si;
	int err = cap_get_regs(t, false);

	if (!err)
		err = cap_get_siginfo(t, &si);
	if (err || !si.si_signo)
		return err;
	t->sig = si.si_signo;	/* the program's own: passed on */
	ev.ip = t->ip;
	ev.signo = si.si_signo;
	err = cap_report(s, &ev);
	if (err || t->sig != si.si_signo)
		return err;	/* the caller's own stop (its int3) */
	err = cap_disposition(t->tid, &si, &d);
	if (err)
		return err;
	if (d == CAP_DISP_FATAL) {
		t->end.kind = CAP_END_FAULT;
		t->end.code = si.si_signo;
		t->end.addr = cap_fault_addr(&si);
		if (!s->end.kind) {
			s->end = t->end;
			s->fault_thread = t;
		}
	}
	return 0;
}

int cap_stepper_run_native(struct cap_stepper *s, cap_event_fn fn,
			   void *arg)
{
	s->native = true;
	return cap_stepper_run(s, fn, arg);
}
