/* One thread's single-step: what the stop after it means; see stepper.h.
 *
 * How Linux reports what one PTRACE_SINGLESTEP did (x86-64), which the
 * code below relies on:
 *  - a plain instruction: SIGTRAP, si_code TRAP_TRACE, orig_rax -1;
 *  - a system call: SIGTRAP, si_code TRAP_BRKPT, orig_rax = its number
 *    (-1 after rt_sigreturn, which restores it), rip past the syscall;
 *  - int3 in the program: SIGTRAP, si_code SI_KERNEL, rip past it;
 *  - injecting a caught signal: SIGTRAP, si_code SIGTRAP (ptrace_notify),
 *    rip at the handler, before any handler instruction ran;
 *  - any other signal stop comes before the instruction ran: the kernel
 *    dequeues synchronous signals (SIGTRAP among them) first, so a step
 *    that completed is always reported by its SIGTRAP first;
 *  - ptrace events (clone, fork, exec, exit) and PTRACE_INTERRUPT stops
 *    come from inside the kernel before the step completed: those are
 *    handled in threads.c and loop.c.
 */
#include <config.h>

#include "capture/stepper_internal.h"
#include "error.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#define PAGE 4096ull

/* Reads up to @size bytes at @addr through task @tid; see
 * cap_stepper_read(). */
static ssize_t read_task(pid_t tid, uint64_t addr, void *buf, size_t size)
{
	/* One remote iovec per page, so that a read running into an
	 * unmapped page still returns the bytes before it. */
	struct iovec local = { buf, size }, remote[2];
	uint64_t page_end = (addr | (PAGE - 1)) + 1;
	int n = 1;

	remote[0].iov_base = (void *) (uintptr_t) addr;
	remote[0].iov_len = size;
	if (size <= PAGE && addr + size > page_end) {
		remote[0].iov_len = page_end - addr;
		remote[1].iov_base = (void *) (uintptr_t) page_end;
		remote[1].iov_len = size - remote[0].iov_len;
		n = 2;
	}
	return process_vm_readv(tid, &local, 1, remote, n, 0);
}

ssize_t cap_read_task(const struct cap_stepper *s, pid_t tid, uint64_t addr,
		      void *buf, size_t size)
{
	ssize_t n = read_task(tid, addr, buf, size);

	if (n > 0)
		cap_blk_mask(s, addr, buf, (size_t) n);
	return n;
}

ssize_t cap_stepper_read(const struct cap_stepper *s, uint64_t addr,
			 void *buf, size_t size)
{
	pid_t tid = cap_stepper_mem_tid(s);

	return cap_read_task(s, tid ? tid : s->pid, addr, buf, size);
}

void cap_fetch_insn(struct cap_thread *t, uint64_t ip)
{
	ssize_t n;

	if (t->cur.valid && t->cur.ip == ip)
		return;
	n = cap_read_task(t->owner, t->tid, ip, t->cur.code,
			  sizeof(t->cur.code));
	memset(&t->cur.insn, 0, sizeof(t->cur.insn));
	if (n > 0)
		cap_insn_decode(t->cur.code, (size_t) n, &t->cur.insn);
	t->cur.ip = ip;
	t->cur.valid = true;
}

bool cap_about_to_exec(const struct cap_thread *t)
{
	return t->cur.insn.iclass == CAP_IC_KERNEL &&
	       (t->regs.rax == SYS_execve || t->regs.rax == SYS_execveat);
}

int cap_set_regs(const struct cap_thread *t)
{
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs) < 0)
		return ptrr_fail(errno == ESRCH ? PTRR_ERR_GONE : PTRR_ERR_IO,
				 "cannot set the registers of "
				 "thread %d: %s", (int) t->tid,
				 strerror(errno));
	return 0;
}

/* Reports an instruction (cap_report_code), t->regs being the state
 * after it if @regs_after. */
static int report_code(struct cap_stepper *s, struct cap_thread *t,
		       uint64_t ip, uint64_t next, const uint8_t *code,
		       const struct cap_insn *insn, bool regs_after)
{
	struct cap_event ev = { .kind = CAP_EV_INSN, .thread = t, .ip = ip,
				.next_ip = next, .code = code,
				.insn = *insn, .regs_after = regs_after };

	s->insns++;
	return cap_report(s, &ev);
}

int cap_report_code(struct cap_stepper *s, struct cap_thread *t,
		    uint64_t ip, uint64_t next, const uint8_t *code,
		    const struct cap_insn *insn)
{
	return report_code(s, t, ip, next, code, insn, false);
}

/* A system call's stop shows registers the kernel may rewrite (a
 * restart rewinds rip, rax is the result or the number again):
 * never the state after it.  A single-step trap leaves orig_rax -1. */
int cap_report_settled(struct cap_stepper *s, struct cap_thread *t,
		       uint64_t ip, uint64_t next, const uint8_t *code,
		       const struct cap_insn *insn)
{
	return report_code(s, t, ip, next, code, insn,
			   insn->iclass != CAP_IC_KERNEL &&
			   (int64_t) t->regs.orig_rax == -1 &&
			   t->regs.rip == next);
}

int cap_report_insn(struct cap_stepper *s, struct cap_thread *t,
		    uint64_t ip, uint64_t next)
{
	cap_fetch_insn(t, ip);
	return cap_report_code(s, t, ip, next, t->cur.code, &t->cur.insn);
}

/* Steps covering more instructions than this are not untangled. */
#define MAX_SLIP 4

/* Reports the instructions one step executed from @ip, ending at t->ip.
 * Usually one.  But some hypervisors deliver the single-step trap of an
 * instruction they emulate (CPUID) one instruction late, so a step over a
 * plain instruction can end past its successor: the instructions in
 * between are found by walking the code, the last one continuing at
 * t->ip. */
static int report_step(struct cap_stepper *s, struct cap_thread *t,
		       uint64_t ip)
{
	uint64_t next;
	int err;

	for (int i = 1;; i++) {
		cap_fetch_insn(t, ip);
		next = ip + t->cur.insn.len;
		if (next == t->ip || t->cur.insn.iclass != CAP_IC_OTHER ||
		    !t->cur.insn.len || i == MAX_SLIP)
			break;
		if (i == 1)
			s->slips++;
		err = cap_report_insn(s, t, ip, next);
		if (err)
			return err;
		ip = next;
	}
	return cap_report_settled(s, t, ip, t->ip, t->cur.code,
				  &t->cur.insn);
}

/* The stop after the handler of an injected signal was set up. */
static int handler_entry(struct cap_stepper *s, struct cap_thread *t,
			 uint64_t from)
{
	struct cap_event ev = { .kind = CAP_EV_SIGNAL, .thread = t,
				.ip = from, .next_ip = t->ip,
				.signo = t->handler_sig };

	t->expect_handler = false;
	return cap_report(s, &ev);
}

/* A signal-delivery stop for @si, before the instruction at t->ip ran:
 * a fatal signal ends the run (delivered by cap_stepper_finish), others
 * are passed on. */
int cap_signal_stop(struct cap_stepper *s, struct cap_thread *t,
		    const siginfo_t *si)
{
	struct cap_event ev = { .kind = CAP_EV_STOP, .thread = t,
				.ip = t->ip, .signo = si->si_signo };
	enum cap_disposition d;
	int err;

	t->sig = si->si_signo;
	if (s->report_signals) {
		err = cap_report(s, &ev);
		if (err || t->sig != si->si_signo)
			return err;
	}
	err = cap_disposition(t->tid, si, &d);
	if (err)
		return err;
	if (d == CAP_DISP_FATAL) {
		t->end.kind = CAP_END_FAULT;
		t->end.code = si->si_signo;
		t->end.addr = cap_fault_addr(si);
		if (!s->end.kind) {
			s->end = t->end;
			s->fault_thread = t;
		}
	} else if (d == CAP_DISP_HANDLER) {
		t->expect_handler = true;
		t->handler_sig = si->si_signo;
	}
	return 0;
}

/* @t stepped into our int3 at @prev (delivering an ignored signal, as
 * block.c does not emulate then): the branch has not run; it goes back
 * there, to be emulated. */
static int unstep_int3(struct cap_thread *t, uint64_t prev)
{
	t->regs.rip = prev;
	t->ip = prev;
	return cap_set_regs(t);
}

/* A SIGTRAP stop after a step from @prev (the instruction t->cur).
 * Always read its si_code when the step could be anything but a plain
 * instruction; a plain one leaves orig_rax at -1. */
static int trap_stop(struct cap_stepper *s, struct cap_thread *t,
		     uint64_t prev)
{
	const struct cap_insn *insn = &t->cur.insn;
	siginfo_t si = { .si_code = TRAP_TRACE };
	uint64_t ran = prev;
	int err;

	if (t->expect_handler || insn->iclass == CAP_IC_KERNEL ||
	    (int64_t) t->regs.orig_rax != -1 || cap_blk_planted(s, prev)) {
		err = cap_get_siginfo(t, &si);
		if (err || !si.si_signo)
			return err;	/* gone, or a group-stop: nothing ran */
	}
	if (t->expect_handler && si.si_code == SIGTRAP)
		return handler_entry(s, t, prev);
	if (si.si_code == SI_KERNEL && t->ip == prev + 1 &&
	    cap_blk_planted(s, prev))
		return unstep_int3(t, prev);
	t->expect_handler = false;
	if (si.si_code == TRAP_BRKPT && (int64_t) t->regs.orig_rax >= 0) {
		if (t->ip == prev)
			return 0;	/* the exit of a system call whose
					 * event stop came first (execve): the
					 * step has not started yet */
		ran = t->ip - 2;	/* the syscall that ran, even if the
					 * kernel rewound rip to restart it */
		err = cap_blk_remapped(s, t);
		if (err)
			return err;
	}
	if (ran == t->ip && insn->rep_string)
		return 0;		/* one more REP iteration */
	err = report_step(s, t, ran);
	if (err || si.si_code != SI_KERNEL)
		return err;
	return cap_signal_stop(s, t, &si);	/* the program's own int3 */
}

int cap_step_stop(struct cap_stepper *s, struct cap_thread *t,
		  uint64_t prev, int stopsig)
{
	int err = cap_get_regs(t, false);
	siginfo_t si;

	if (err)
		return err;
	if (t->tid == s->execve_tid)
		s->execve_tid = 0;	/* the execve failed */
	cap_fetch_insn(t, prev);
	if (stopsig == SIGTRAP) {
		err = trap_stop(s, t, prev);
	} else {
		t->expect_handler = false;
		err = cap_get_siginfo(t, &si);
		if (!err && si.si_signo)
			err = cap_signal_stop(s, t, &si);
	}
	cap_restart_view(t);
	return err;
}
