/* plugin/capture — runs a process under ptrace one instruction at a time.
 *
 * The software PT backend's eyes: it launches a program stopped at its
 * first instruction, or attaches to a running process, optionally lets
 * it run at native speed to a start address, then single-steps every
 * thread and reports each retired instruction (its address, bytes, class
 * and the address execution continued at), each signal handler entered,
 * each thread that starts or ends, each child process left untraced and
 * each execve, until the process exits, a thread takes a fatal signal
 * (stopped before delivery: that is the crash), or the caller asks it to
 * stop.
 *
 * Threads (PTRACE_O_TRACECLONE) are stepped concurrently, never one at a
 * time: every thread has a single-step in flight and the stepper handles
 * whichever stops first (waitpid(-1, __WALL)), collecting every stop that
 * is ready before it resumes the threads again, so that a thread blocked
 * in the kernel (a futex, a read) never holds the others back and no
 * thread starves.  Child processes (fork, vfork, a clone without
 * CLONE_THREAD) are detached at their first stop, with the start
 * breakpoint removed from a forked copy of memory.  An execve ends every
 * thread of the old image (CAP_EV_END) and the stepper goes on with the
 * new image (CAP_EV_EXEC).  Signals reach the program as they would
 * without ptrr; a group-stop (SIGSTOP, SIGTSTP ...) is resumed at once,
 * as gdb does, so the recording never hangs on it.
 *
 * One retired instruction is one report even when it single-steps
 * several times: a REP string instruction traps after every iteration
 * with the same rip, and PT traces it once.  A restarted system call (the
 * kernel rewinds rip by 2 after a signal interrupted it) is reported at
 * the address that really ran.  A step that ran two instructions (some
 * hypervisors trap CPUID and report the single-step one instruction
 * late) is reported as both.
 *
 * All tasks are attached with PTRACE_SEIZE, so that any thread can be
 * stopped with PTRACE_INTERRUPT, also while it waits in a system call.
 *
 * Block stepping (block_mode, `--soft-step=block`, block.c) gives the
 * same events several times faster: straight-line code up to a branch
 * runs natively (PTRACE_CONT) to an int3 planted over the branch, which
 * is then emulated exactly (branch.h); blocks ending in anything else
 * (a system call, the program's own int3, a far transfer) are
 * single-stepped.  What the program could notice: the int3 bytes, if it
 * reads its own code while a thread runs (ptrr's own reads of memory
 * show the original bytes), and code it writes or generates (a JIT,
 * self-modifying code) is run and reported as it was when first decoded
 * there: record such programs with `--soft-step=insn`.  Code decoded
 * two ways (a jump into the middle of an instruction) is single-stepped
 * where one decoding overlaps an int3 already planted, but an int3
 * planted later inside an instruction another block already runs
 * natively is not noticed.  Branches that would fault (a call whose push
 * needs the stack to grow, a jump through a bad pointer) are
 * single-stepped for real once their int3 is out.  The int3s are taken
 * out before the program runs without ptrr: at the end of the run,
 * before a fatal signal is delivered, in a forked child's copy of
 * memory, and while a vfork child runs in our memory (every thread is
 * single-stepped until PTRACE_EVENT_VFORK_DONE; after a clone sharing
 * memory without being a thread, for the rest of the run).
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
	CAP_EV_THREAD,		/* a thread starts being traced at ip: every
				 * thread there is when stepping starts, then
				 * each new one at its first instruction */
	CAP_EV_END,		/* the thread's trace is over: it exited, was
				 * killed or called execve (thread->end) */
	CAP_EV_FORK,		/* child process @child was left untraced */
	CAP_EV_EXECVE,		/* the thread is about to run the execve at
				 * ip: the last moment the old image can be
				 * read (the execve may still fail) */
	CAP_EV_EXEC,		/* the execve succeeded: every thread of the
				 * old image has had its CAP_EV_END; thread
				 * is the new image's, starting at ip */
	CAP_EV_STOP,		/* running natively (or single-stepping
				 * with report_signals): the thread stopped
				 * for a signal (signo) at ip, before its
				 * delivery; clearing thread->sig drops it */
};

struct cap_thread;
struct cap_block;
struct cap_blocks;

struct cap_event {
	enum cap_event_kind kind;
	struct cap_thread *thread;
	uint64_t ip;		/* INSN: its address; SIGNAL: the instruction
				 * the signal interrupted (not executed);
				 * THREAD, EXEC: the first instruction;
				 * EXECVE: the system call */
	uint64_t next_ip;	/* INSN: where execution continued;
				 * SIGNAL: the handler */
	const uint8_t *code;	/* INSN: its bytes (insn.len of them) */
	struct cap_insn insn;	/* INSN: its class */
	int signo;		/* SIGNAL: the signal */
	pid_t child;		/* FORK: the child process */
	bool regs_after;	/* INSN: thread->regs is the thread's state
				 * right after it, before next_ip (the last
				 * instruction of a single-step that was not
				 * a system call, a branch block.c emulated);
				 * false where the registers were read
				 * elsewhere (a block's other instructions) */
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
	CAP_END_EXEC,		/* a thread: it called execve; the process:
				 * execve before the start address */
	CAP_END_STOPPED,	/* the event callback or the caller asked to
				 * stop */
};

struct cap_end {
	enum cap_end_kind kind;
	int code;
	uint64_t addr;
};

enum cap_thread_state {
	CAP_TS_NEW,		/* known, its first stop not seen yet */
	CAP_TS_STOPPED,		/* in a ptrace stop, handled */
	CAP_TS_RUNNING,		/* resumed: a stop will come */
	CAP_TS_EXITING,		/* past its exit: only its death will come */
};

/* One traced thread. */
struct cap_thread {
	pid_t tid;
	enum cap_thread_state state;
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
	bool started;			/* CAP_EV_THREAD was reported */
	bool held;			/* stays stopped: the run is ending */
	bool interrupted;		/* PTRACE_INTERRUPT sent since it ran */
	bool drain;			/* its step's SIGTRAP is still queued:
					 * resume it once to have it reported */
	bool hit_bp;			/* stopped at the start breakpoint */
	bool in_block;			/* running blk natively (block.c) */
	const struct cap_block *blk;
	uint64_t evict;			/* to single-step the branch here for
					 * real once its int3 is out */
	uint64_t unban;			/* ... did so: plant it again */
	struct cap_stepper *owner;	/* the process it belongs to */
	struct cap_end end;		/* how its trace ended */
	void *user;			/* the caller's, per thread */
};

/* The breakpoint cap_stepper_run_to() plants. */
struct cap_bp {
	uint64_t addr;
	uint8_t orig;
	bool set;			/* planted */
};

/* A child task whose first stop came before its parent's event. */
struct cap_newborn {
	pid_t tid;
	int status;
};

/* The traced process: all its threads. */
struct cap_stepper {
	pid_t pid;			/* the thread group */
	bool live;			/* it has tasks ours to wait for */
	bool attached;			/* by --pid: detach, never kill */
	bool stepping;			/* single-stepping (else running to
					 * the start address) */
	bool native;			/* ... or running at native speed,
					 * stopped only by events (native.c) */
	struct cap_thread **threads;
	size_t nthreads, threads_alloc;
	struct cap_newborn *newborn;	/* stops of tasks not yet known */
	size_t nnewborn, newborn_alloc;
	pid_t *detach;			/* children to detach at first stop */
	size_t ndetach, detach_alloc;
	struct cap_bp bp;
	bool report_signals;		/* single-stepping: a CAP_EV_STOP at
					 * each signal before its delivery,
					 * which the callback may claim */
	bool block_mode;		/* run blocks natively (the caller's
					 * choice, before each cap_stepper_run) */
	/* Optional, with block_mode: true if a thread must stop before an
	 * instruction in (@from, @to] (a debugger's breakpoint there), so
	 * that a block over it is single-stepped; called with the run's
	 * event argument. */
	bool (*must_stop)(void *arg, uint64_t from, uint64_t to);
	struct cap_blocks *blk;		/* their cache and int3s (block.c) */
	bool halting;			/* stop every thread, the run goes on
					 * (the start address was reached, an
					 * attach settles) */
	struct cap_end end;		/* how the run ended */
	struct cap_thread *fault_thread;	/* the thread that faulted */
	pid_t execve_tid;		/* a thread stepping an execve */
	cap_event_fn fn;
	void *arg;
	volatile sig_atomic_t stop_requested;
	volatile pid_t wake_tid;	/* interrupted to wake the loop */
	uint64_t steps;			/* PTRACE_SINGLESTEPs */
	uint64_t insns;			/* instructions reported */
	uint64_t slips;			/* steps that ran two instructions */
	uint64_t threads_seen;		/* threads ever traced */
};

/* Starts argv[0] (searched in PATH) with @argv, traced and stopped at
 * its first instruction; @aslr false disables address randomization
 * like gdb.  A program that cannot be run fails with "cannot run PROG:
 * REASON". */
int cap_stepper_launch(struct cap_stepper *s, char *const argv[], bool aslr);

/* Attaches to every thread of running process @pid and stops them all.
 * A process that cannot be traced fails with one line naming the cause
 * (no such process, another tracer, yama's ptrace_scope, another user)
 * and the fix. */
int cap_stepper_attach(struct cap_stepper *s, pid_t pid);

/* Runs at native speed until a thread reaches @addr (an int3 there,
 * removed again), then stops every thread.  PTRR_ERR_NOTFOUND, with
 * s->end set, if the program ends or execs first. */
int cap_stepper_run_to(struct cap_stepper *s, uint64_t addr);

/* Single-steps every thread, calling @fn for each event, until s->end is
 * set; every thread is then stopped (or gone). */
int cap_stepper_run(struct cap_stepper *s, cap_event_fn fn, void *arg);

/* Like cap_stepper_run(), but every thread runs at native speed
 * (PTRACE_CONT) and stops only for events: the same events but for
 * CAP_EV_INSN and CAP_EV_SIGNAL, and a CAP_EV_STOP at each signal.  A
 * fatal signal is stopped before its delivery, as in cap_stepper_run(). */
int cap_stepper_run_native(struct cap_stepper *s, cap_event_fn fn,
			   void *arg);

/* Asks a running cap_stepper_run() to stop: it ends as CAP_END_STOPPED
 * once every thread is stopped.  Async-signal-safe (for SIGINT). */
void cap_stepper_request_stop(struct cap_stepper *s);

/* Between two runs (no thread is in a block): takes out the int3s block
 * stepping planted and forgets the code it decoded, after someone else
 * (a debugger) wrote to the program's memory. */
void cap_stepper_forget_blocks(struct cap_stepper *s);

/* True if block stepping was turned off for good: a CLONE_VM child that
 * is not a thread shares the memory its int3s would be planted in, so
 * every thread single-steps from then on. */
bool cap_stepper_block_disarmed(const struct cap_stepper *s);

/* A stopped thread through which the process's memory and maps can be
 * read (after the leader exited, its own view of them is empty), or 0
 * if none is left. */
pid_t cap_stepper_mem_tid(const struct cap_stepper *s);

/* Reads up to @size bytes of the program's memory at @addr; returns the
 * number read (fewer where the mapping ends), or -1 with errno. */
ssize_t cap_stepper_read(const struct cap_stepper *s, uint64_t addr,
			 void *buf, size_t size);

/* Lets the program go its way after the recording: an exit completes, a
 * fatal signal is delivered; a launched program that was stopped is
 * killed, an attached one is detached and keeps running.  Returns the
 * wait status of the process when it ended here, else 0. */
int cap_stepper_finish(struct cap_stepper *s);

/* Frees the thread table (after cap_stepper_finish). */
void cap_stepper_free(struct cap_stepper *s);

#endif
