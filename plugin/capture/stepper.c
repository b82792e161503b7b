/* Single-stepping a program under ptrace; see stepper.h.
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
 *    that completed is always reported by its SIGTRAP first.
 */
#include <config.h>

#include "capture/stepper.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096ull

/* ------------------------------------------------------------------ */
/* Memory and registers                                               */
/* ------------------------------------------------------------------ */

ssize_t cap_stepper_read(const struct cap_stepper *s, uint64_t addr,
			 void *buf, size_t size)
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
	return process_vm_readv(s->pid, &local, 1, remote, n, 0);
}

/* Fetches the registers at the current stop; rip becomes s->ip. */
static int get_regs(struct cap_stepper *s)
{
	if (ptrace(PTRACE_GETREGS, s->pid, NULL, &s->regs) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot read the registers of "
				 "process %d: %s", s->pid, strerror(errno));
	s->ip = s->regs.rip;
	return 0;
}

/* Makes s->cur the instruction at @ip.  An unreadable or invalid one
 * gets length 0: executing it faults. */
static void fetch_insn(struct cap_stepper *s, uint64_t ip)
{
	ssize_t n;

	if (s->cur.valid && s->cur.ip == ip)
		return;
	n = cap_stepper_read(s, ip, s->cur.code, sizeof(s->cur.code));
	memset(&s->cur.insn, 0, sizeof(s->cur.insn));
	if (n > 0)
		cap_insn_decode(s->cur.code, (size_t) n, &s->cur.insn);
	s->cur.ip = ip;
	s->cur.valid = true;
}

/* ------------------------------------------------------------------ */
/* Launching                                                          */
/* ------------------------------------------------------------------ */

/* The child's side of cap_stepper_launch(): becomes traced and execs;
 * on failure reports errno through @errfd. */
static void __attribute__((noreturn)) child_exec(char *const argv[],
						 bool aslr, int errfd)
{
	int err;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0 &&
	    (aslr || personality((unsigned long) personality(0xffffffff) |
				 ADDR_NO_RANDOMIZE) >= 0))
		execvp(argv[0], argv);
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

/* Waits for the traced process, retrying on EINTR. */
static int wait_child(struct cap_stepper *s, int *status)
{
	while (waitpid(s->pid, status, __WALL) < 0) {
		if (errno != EINTR)
			return ptrr_fail(PTRR_ERR_IO, "cannot wait for process "
					 "%d: %s", s->pid, strerror(errno));
	}
	if (WIFEXITED(*status) || WIFSIGNALED(*status))
		s->live = false;
	return 0;
}

/* Reads the errno the child sent if its exec failed; 0 if it worked. */
static int exec_error(int fd)
{
	int err = 0;
	ssize_t n;

	do
		n = read(fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	return n == sizeof(err) ? err : 0;
}

/* After the exec stop: the ptrace options, and the first registers. */
static int setup_traced(struct cap_stepper *s, int status)
{
	long opts = PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD |
		    PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC;

	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
		return ptrr_fail(PTRR_ERR_IO, "process %d did not stop after "
				 "exec (wait status 0x%x)", s->pid, status);
	if (ptrace(PTRACE_SETOPTIONS, s->pid, NULL, (void *) opts) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot set ptrace options on "
				 "process %d: %s", s->pid, strerror(errno));
	return get_regs(s);
}

int cap_stepper_launch(struct cap_stepper *s, char *const argv[], bool aslr)
{
	int fds[2], err, status;

	memset(s, 0, sizeof(*s));
	if (pipe2(fds, O_CLOEXEC) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot create a pipe: %s",
				 strerror(errno));
	s->pid = fork();
	if (s->pid < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot fork: %s",
				 strerror(errno));
	if (s->pid == 0)
		child_exec(argv, aslr, fds[1]);
	s->live = true;
	close(fds[1]);
	err = exec_error(fds[0]);
	close(fds[0]);
	if (wait_child(s, &status) < 0)
		return PTRR_ERR_IO;
	if (err)
		return ptrr_fail(PTRR_ERR_IO, "cannot run %s: %s", argv[0],
				 strerror(err));
	return setup_traced(s, status);
}

/* ------------------------------------------------------------------ */
/* Signals                                                            */
/* ------------------------------------------------------------------ */

/* Reads mask @field ("SigCgt") of /proc/PID/status into @mask. */
static int status_mask(pid_t pid, const char *field, uint64_t *mask)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	f = fopen(path, "r");
	if (!f)
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", path,
				 strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':')
			found = sscanf(line + flen + 1, "%" SCNx64, mask) == 1;
	fclose(f);
	return found ? 0 : ptrr_fail(PTRR_ERR_IO, "no %s in %s", field, path);
}

/* True if @sig's default action terminates the process (signal(7)). */
static bool default_kills(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return false;
	default:
		return true;
	}
}

/* True if @si is a fault the kernel forces on the thread: it cannot be
 * blocked or ignored (force_sig_fault resets such a signal to SIG_DFL). */
static bool forced_fault(const siginfo_t *si)
{
	switch (si->si_signo) {
	case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP:
	case SIGSYS:
		return si->si_code > 0;
	default:
		return false;
	}
}

enum disposition { DISP_FATAL, DISP_HANDLER, DISP_OTHER };

/* What delivering @si will do to the program. */
static int disposition(struct cap_stepper *s, const siginfo_t *si,
		       enum disposition *out)
{
	uint64_t caught, ignored, blocked, bit = 1ull << (si->si_signo - 1);
	int err;

	err = status_mask(s->pid, "SigCgt", &caught);
	if (!err)
		err = status_mask(s->pid, "SigIgn", &ignored);
	if (!err)
		err = status_mask(s->pid, "SigBlk", &blocked);
	if (err)
		return err;
	if (forced_fault(si) && ((blocked | ignored) & bit))
		*out = DISP_FATAL;
	else if (caught & bit)
		*out = DISP_HANDLER;
	else if (ignored & bit || !default_kills(si->si_signo))
		*out = DISP_OTHER;
	else
		*out = DISP_FATAL;
	return 0;
}

/* The fault address @si carries, or 0 for a signal that has none. */
static uint64_t fault_addr(const siginfo_t *si)
{
	return forced_fault(si) ? (uint64_t) (uintptr_t) si->si_addr : 0;
}

/* A signal-delivery stop for @si, before the instruction at s->ip ran:
 * a fatal signal ends the run (delivered by cap_stepper_finish), others
 * are passed on. */
static int signal_stop(struct cap_stepper *s, const siginfo_t *si)
{
	enum disposition d;
	int err = disposition(s, si, &d);

	if (err)
		return err;
	s->sig = si->si_signo;
	if (d == DISP_FATAL) {
		s->end.kind = CAP_END_FAULT;
		s->end.code = si->si_signo;
		s->end.addr = fault_addr(si);
	} else if (d == DISP_HANDLER) {
		s->expect_handler = true;
		s->handler_sig = si->si_signo;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Stepping                                                           */
/* ------------------------------------------------------------------ */

/* Reports the instruction at @ip as retired, execution having continued
 * at @next. */
static int report_insn(struct cap_stepper *s, uint64_t ip, uint64_t next,
		       cap_event_fn fn, void *arg)
{
	struct cap_event ev = { .kind = CAP_EV_INSN, .ip = ip,
				.next_ip = next };

	fetch_insn(s, ip);
	ev.insn = s->cur.insn;
	ev.code = s->cur.code;
	s->insns++;
	return fn(arg, &ev);
}

/* Steps covering more instructions than this are not untangled. */
#define MAX_SLIP 4

/* Reports the instructions one step executed from @ip, ending at s->ip.
 * Usually one.  But some hypervisors deliver the single-step trap of an
 * instruction they emulate (CPUID) one instruction late, so a step over a
 * plain instruction can end past its successor: the instructions in
 * between are found by walking the code, the last one continuing at
 * s->ip. */
static int report_step(struct cap_stepper *s, uint64_t ip, cap_event_fn fn,
		       void *arg)
{
	uint64_t next;
	int rc, stop = 0;

	for (int i = 1;; i++) {
		fetch_insn(s, ip);
		next = ip + s->cur.insn.len;
		if (next == s->ip || s->cur.insn.iclass != CAP_IC_OTHER ||
		    !s->cur.insn.len || i == MAX_SLIP)
			break;
		if (i == 1)
			s->slips++;
		rc = report_insn(s, ip, next, fn, arg);
		if (rc < 0)
			return rc;
		stop |= rc;	/* a stop waits: they all ran */
		ip = next;
	}
	rc = report_insn(s, ip, s->ip, fn, arg);
	return rc < 0 ? rc : rc | stop;
}

/* Turns a callback's verdict into the run's: positive stops it. */
static int verdict(struct cap_stepper *s, int rc)
{
	if (rc > 0) {
		s->end.kind = CAP_END_STOPPED;
		return 0;
	}
	return rc;
}

/* Gets the siginfo of the current stop; false for a group-stop (which
 * has none). */
static bool get_siginfo(struct cap_stepper *s, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	return ptrace(PTRACE_GETSIGINFO, s->pid, NULL, si) == 0;
}

/* The stop after the handler of an injected signal was set up. */
static int handler_entry(struct cap_stepper *s, uint64_t from,
			 cap_event_fn fn, void *arg)
{
	struct cap_event ev = { .kind = CAP_EV_SIGNAL, .ip = from,
				.next_ip = s->ip, .signo = s->handler_sig };

	s->expect_handler = false;
	return verdict(s, fn(arg, &ev));
}

/* A SIGTRAP stop after a step from @prev (the instruction s->cur).
 * Always read its si_code when the step could be anything but a plain
 * instruction; a plain one leaves orig_rax at -1. */
static int trap_stop(struct cap_stepper *s, uint64_t prev,
		     cap_event_fn fn, void *arg)
{
	const struct cap_insn *insn = &s->cur.insn;
	siginfo_t si = { .si_code = TRAP_TRACE };
	uint64_t ran = prev;
	int rc;

	if ((s->expect_handler || insn->iclass == CAP_IC_KERNEL ||
	     (int64_t) s->regs.orig_rax != -1) && !get_siginfo(s, &si))
		return 0;	/* a group-stop: nothing ran */
	if (s->expect_handler && si.si_code == SIGTRAP)
		return handler_entry(s, prev, fn, arg);
	s->expect_handler = false;
	if (si.si_code == TRAP_BRKPT && (int64_t) s->regs.orig_rax >= 0)
		ran = s->ip - 2;	/* the syscall that ran, even if the
					 * kernel rewound rip to restart it */
	if (ran == s->ip && insn->rep_string)
		return 0;		/* one more REP iteration */
	rc = verdict(s, report_step(s, ran, fn, arg));
	if (rc || si.si_code != SI_KERNEL || s->end.kind)
		return rc;
	return signal_stop(s, &si);	/* the program's own int3 */
}

/* The PTRACE_EVENT_EXIT stop: the exit system call retired if it was the
 * instruction being stepped; records how the program ended. */
static int exit_stop(struct cap_stepper *s, uint64_t prev, cap_event_fn fn,
		     void *arg)
{
	unsigned long msg = 0;
	int err = get_regs(s), rc = 0;

	if (err)
		return err;
	if (fn && (s->regs.orig_rax == SYS_exit ||
		   s->regs.orig_rax == SYS_exit_group))
		rc = verdict(s, report_insn(s, prev, s->ip, fn, arg));
	ptrace(PTRACE_GETEVENTMSG, s->pid, NULL, &msg);
	if (WIFSIGNALED((int) msg)) {
		s->end.kind = CAP_END_SIGNALED;
		s->end.code = WTERMSIG((int) msg);
	} else {
		s->end.kind = CAP_END_EXITED;
		s->end.code = WEXITSTATUS((int) msg);
	}
	return rc;
}

/* Handles the wait @status after one step from @prev. */
static int handle_stop(struct cap_stepper *s, int status, uint64_t prev,
		       cap_event_fn fn, void *arg)
{
	siginfo_t si;
	int err;

	if (!s->live) {
		s->end.kind = WIFEXITED(status) ? CAP_END_EXITED
						: CAP_END_SIGNALED;
		s->end.code = WIFEXITED(status) ? WEXITSTATUS(status)
						: WTERMSIG(status);
		return 0;
	}
	if (status >> 16 == PTRACE_EVENT_EXIT)
		return exit_stop(s, prev, fn, arg);
	if (status >> 16 == PTRACE_EVENT_EXEC) {
		s->end.kind = CAP_END_EXEC;
		return get_regs(s);
	}
	err = get_regs(s);
	if (err)
		return err;
	if (WSTOPSIG(status) == SIGTRAP)
		return trap_stop(s, prev, fn, arg);
	s->expect_handler = false;
	if (!get_siginfo(s, &si))
		return 0;		/* a group-stop: resume it */
	return signal_stop(s, &si);
}

/* True if the instruction about to run is a system call that execs. */
static bool about_to_exec(const struct cap_stepper *s)
{
	return s->cur.insn.iclass == CAP_IC_KERNEL &&
	       (s->regs.rax == SYS_execve || s->regs.rax == SYS_execveat);
}

/* Executes one step and handles what it did. */
static int step_once(struct cap_stepper *s, cap_event_fn fn, void *arg)
{
	uint64_t prev = s->ip;
	int status, err;

	fetch_insn(s, s->ip);
	if (about_to_exec(s)) {
		s->end.kind = CAP_END_EXEC;
		return 0;
	}
	if (ptrace(PTRACE_SINGLESTEP, s->pid, NULL,
		   (void *) (long) s->sig) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot single-step process "
				 "%d: %s", s->pid, strerror(errno));
	s->sig = 0;
	s->steps++;
	err = wait_child(s, &status);
	if (err)
		return err;
	return handle_stop(s, status, prev, fn, arg);
}

int cap_stepper_run(struct cap_stepper *s, cap_event_fn fn, void *arg)
{
	int err = 0;

	while (!err && !s->end.kind)
		err = step_once(s, fn, arg);
	return err;
}

/* ------------------------------------------------------------------ */
/* Running to the start address                                       */
/* ------------------------------------------------------------------ */

/* Replaces the byte at @addr by @byte (through the word containing it),
 * returning the old byte in @old. */
static int poke_byte(struct cap_stepper *s, uint64_t addr, uint8_t byte,
		     uint8_t *old)
{
	uint64_t base = addr & ~7ull;
	unsigned shift = (unsigned) (addr - base) * 8;
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, s->pid, (void *) base, NULL);
	if (errno)
		return ptrr_fail(PTRR_ERR_IO, "cannot read the code at 0x%"
				 PRIx64 ": %s", addr, strerror(errno));
	*old = (uint8_t) ((uint64_t) word >> shift);
	word = (long) (((uint64_t) word & ~(0xffull << shift)) |
		       ((uint64_t) byte << shift));
	if (ptrace(PTRACE_POKETEXT, s->pid, (void *) base, (void *) word) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot write the code at 0x%"
				 PRIx64 ": %s", addr, strerror(errno));
	return 0;
}

/* Continues until a stop; returns 1 when the thread hit the int3 at
 * @addr, 0 for other stops, and ends s->end if the program ended. */
static int cont_once(struct cap_stepper *s, uint64_t addr)
{
	int status, err;
	siginfo_t si;

	if (ptrace(PTRACE_CONT, s->pid, NULL, (void *) (long) s->sig) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot continue process %d: %s",
				 s->pid, strerror(errno));
	s->sig = 0;
	err = wait_child(s, &status);
	if (!err && s->live && status >> 16 == PTRACE_EVENT_EXIT)
		err = exit_stop(s, s->ip, NULL, NULL);
	else if (!err && !s->live)
		err = handle_stop(s, status, s->ip, NULL, NULL);
	if (err || s->end.kind || status >> 16)
		return err;
	err = get_regs(s);
	if (err || !get_siginfo(s, &si))
		return err;
	if (si.si_signo == SIGTRAP && si.si_code == SI_KERNEL &&
	    s->regs.rip == addr + 1)
		return 1;
	s->sig = si.si_signo;	/* the program's own signal: pass it on */
	return 0;
}

int cap_stepper_run_to(struct cap_stepper *s, uint64_t addr)
{
	uint8_t orig, junk;
	int rc;

	rc = poke_byte(s, addr, 0xcc, &orig);
	while (rc == 0 && !s->end.kind)
		rc = cont_once(s, addr);
	if (rc < 0)
		return rc;
	if (s->end.kind)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "the program %s %d before "
				 "reaching the start address 0x%" PRIx64 ": "
				 "check --start", s->end.kind == CAP_END_EXITED
				 ? "exited with status" : "was killed by signal",
				 s->end.code, addr);
	rc = poke_byte(s, addr, orig, &junk);
	if (rc < 0)
		return rc;
	s->regs.rip = addr;
	if (ptrace(PTRACE_SETREGS, s->pid, NULL, &s->regs) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot set the registers of "
				 "process %d: %s", s->pid, strerror(errno));
	s->ip = addr;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Letting go                                                         */
/* ------------------------------------------------------------------ */

int cap_stepper_finish(struct cap_stepper *s)
{
	int status = 0;

	if (!s->live)
		return 0;
	if (s->end.kind == CAP_END_EXEC) {
		/* Untraced from here on: only its end will be reported. */
		ptrace(PTRACE_DETACH, s->pid, NULL, (void *) (long) s->sig);
		while (s->live && wait_child(s, &status) == 0)
			;
		return status;
	}
	if (s->end.kind != CAP_END_EXITED && s->end.kind != CAP_END_SIGNALED &&
	    s->end.kind != CAP_END_FAULT)
		kill(s->pid, SIGKILL);
	while (s->live) {
		ptrace(PTRACE_CONT, s->pid, NULL, (void *) (long) s->sig);
		s->sig = 0;
		if (wait_child(s, &status) < 0)
			break;
	}
	return status;
}
