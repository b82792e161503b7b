/* plugin/capture — runs a program under ptrace one instruction at a time.
 *
 * The software PT backend's eyes: it launches a program stopped at its
 * first instruction, optionally lets it run at native speed to a start
 * address, then single-steps it and reports each retired instruction
 * (its address, bytes, class and the address execution continued at) and
 * each signal handler entered, until the program exits, takes a fatal
 * signal (stopped before delivery: that is the crash), or is about to
 * execve.
 *
 * One retired instruction is one report even when it single-steps
 * several times: a REP string instruction traps after every iteration
 * with the same rip, and PT traces it once.  A restarted system call (the
 * kernel rewinds rip by 2 after a signal interrupted it) is reported at
 * the address that really ran.  A step that ran two instructions (some
 * hypervisors trap CPUID and report the single-step one instruction
 * late) is reported as both.
 *
 * Single-threaded for now: new threads and child processes run
 * untraced.
 */
#ifndef PTRR_CAP_STEPPER_H
#define PTRR_CAP_STEPPER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "capture/insn.h"

enum cap_event_kind {
	CAP_EV_INSN,		/* an instruction retired */
	CAP_EV_SIGNAL,		/* a signal handler was entered */
};

struct cap_event {
	enum cap_event_kind kind;
	uint64_t ip;		/* INSN: its address; SIGNAL: the instruction
				 * the signal interrupted (not executed) */
	uint64_t next_ip;	/* INSN: where execution continued;
				 * SIGNAL: the handler */
	const uint8_t *code;	/* INSN: its bytes (insn.len of them) */
	struct cap_insn insn;	/* INSN: its class */
	int signo;		/* SIGNAL: the signal */
};

/* Called for every event.  A negative return (an error) ends the run at
 * once; a positive one ends it as CAP_END_STOPPED after the events of
 * the current step (which all happened) are reported. */
typedef int (*cap_event_fn)(void *arg, const struct cap_event *ev);

enum cap_end_kind {
	CAP_END_NONE = 0,	/* still running */
	CAP_END_EXITED,		/* exited: code = status */
	CAP_END_SIGNALED,	/* killed by signal code (not intercepted:
				 * SIGKILL, or a fatal signal before start) */
	CAP_END_FAULT,		/* fatal signal code, stopped before its
				 * delivery; addr = fault address or 0 */
	CAP_END_EXEC,		/* stopped before an execve (not followed) */
	CAP_END_STOPPED,	/* the event callback asked to stop */
};

struct cap_end {
	enum cap_end_kind kind;
	int code;
	uint64_t addr;
};

struct cap_stepper {
	pid_t pid;
	bool live;			/* pid is ours to wait for */
	struct user_regs_struct regs;	/* at the last stop */
	uint64_t ip;			/* the next instruction to execute */
	struct {			/* the instruction last fetched: */
		uint64_t ip;
		uint8_t code[CAP_INSN_MAX];
		struct cap_insn insn;	/* length 0 if unreadable */
		bool valid;
	} cur;
	int sig;			/* to deliver at the next resume */
	bool expect_handler;		/* a caught signal was injected */
	int handler_sig;
	struct cap_end end;
	uint64_t steps;			/* PTRACE_SINGLESTEPs */
	uint64_t insns;			/* instructions reported */
	uint64_t slips;			/* steps that ran two instructions */
};

/* Starts argv[0] (searched in PATH) with @argv, traced and stopped at
 * its first instruction; @aslr false disables address randomization
 * like gdb.  A program that cannot be run fails with "cannot run PROG:
 * REASON". */
int cap_stepper_launch(struct cap_stepper *s, char *const argv[], bool aslr);

/* Runs at native speed until the thread reaches @addr (an int3 there,
 * removed again).  PTRR_ERR_NOTFOUND, with s->end set, if the program
 * ends first. */
int cap_stepper_run_to(struct cap_stepper *s, uint64_t addr);

/* Single-steps, calling @fn for each event, until s->end is set. */
int cap_stepper_run(struct cap_stepper *s, cap_event_fn fn, void *arg);

/* Reads up to @size bytes of the program's memory at @addr; returns the
 * number read (fewer where the mapping ends), or -1 with errno. */
ssize_t cap_stepper_read(const struct cap_stepper *s, uint64_t addr,
			 void *buf, size_t size);

/* Lets the program go its way after the recording: an exit completes, a
 * fatal signal is delivered, an exec runs untraced, a program the
 * callback stopped is killed.  Returns the wait status. */
int cap_stepper_finish(struct cap_stepper *s);

#endif
