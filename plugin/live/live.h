/* plugin/live — a live process under ptrr's control, for the gdb server.
 *
 * `ptrr record` runs a program to its end in one go; a debugger needs a
 * process that stops and goes on at its command.  A live session
 * launches the program stopped at its first instruction (address
 * randomization off, like gdb), then, at each stop, lets the caller read
 * and write registers and memory, set and clear breakpoints, and resume:
 * every thread at native speed (all-stop: when one thread stops, every
 * thread is stopped), or one thread by one instruction.  Each resume
 * ends with one stop event (struct live_stop).
 *
 * Breakpoints are int3s planted only while the threads run: at a stop,
 * memory holds the program's own bytes, so reads show them and writes
 * need no bookkeeping.  Watchpoints use the x86 debug registers of every
 * thread, or, where they do not fire (some virtual machines), single-step
 * the threads and compare the watched bytes after each instruction.
 *
 * Errors are negative enum ptrr_error values (history/error.h) with the
 * message in ptrr_last_error().  See docs/live.md.
 */
#ifndef PTRR_LIVE_H
#define PTRR_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct live;

/* How the session starts. */
struct live_options {
	bool aslr;		/* keep address randomization (gdb turns it
				 * off: false) */
	size_t trace_cap;	/* bytes of trace a run may add per thread
				 * (0: the default, LIVE_TRACE_CAP_DEFAULT) */
	bool insn_step;		/* trace by single-stepping every
				 * instruction, never block stepping (for
				 * code that changes: --soft-step=insn) */
};

#define LIVE_TRACE_CAP_DEFAULT (64u << 20)

enum live_stop_kind {
	LIVE_STOP_NONE = 0,
	LIVE_STOP_BREAKPOINT,	/* tid reached breakpoint pc (not run yet) */
	LIVE_STOP_STEP,		/* tid's single-step is done, at pc */
	LIVE_STOP_SIGNAL,	/* tid received signo (not delivered yet: it
				 * is, if the next resume passes it) */
	LIVE_STOP_CRASH,	/* tid took fatal signo at pc, before its
				 * delivery; addr is the fault address */
	LIVE_STOP_EXITED,	/* the process exited with code */
	LIVE_STOP_KILLED,	/* the process was killed by signo */
	LIVE_STOP_INTERRUPTED,	/* live_interrupt() stopped it; tid is the
				 * thread to show */
	LIVE_STOP_WATCH,	/* tid accessed watchpoint addr (watch) as
				 * the instruction before pc: it has run */
};

/* What a watchpoint watches for (the x86 debug registers' RW bits). */
enum live_watch_kind {
	LIVE_WATCH_WRITE = 1,
	LIVE_WATCH_ACCESS = 3,	/* a read or a write */
};

/* Why the process stopped. */
struct live_stop {
	enum live_stop_kind kind;
	pid_t tid;
	uint64_t pc;
	int signo;
	int code;
	uint64_t addr;		/* fault address (CRASH), watchpoint (WATCH) */
	enum live_watch_kind watch;	/* LIVE_STOP_WATCH */
	bool hw;		/* LIVE_STOP_BREAKPOINT: a live_hbp_set() one */
};

/* What one resume does: every thread continues, or thread @step_tid
 * runs one instruction while the others stay stopped (others_run false)
 * or continue (true) until it has.  @signo is delivered to thread @sig_tid (0: the
 * thread of the last stop) as it resumes; 0 for none.
 *
 * With @run_tids (gdb's non-stop mode), "every thread" and "the others"
 * are only the @nrun threads listed (and the threads they make while
 * they run): the rest stay stopped.  No thread steps off a breakpoint
 * first then (gdb steps its threads over their breakpoints itself). */
struct live_resume {
	pid_t step_tid;		/* 0: continue every thread */
	bool others_run;
	int signo;
	pid_t sig_tid;
	const pid_t *run_tids;	/* NULL: every thread may run */
	size_t nrun;
};

/* Starts argv[0] (searched in PATH) traced and stopped at its first
 * instruction; *@out is the session. */
int live_launch(struct live **out, char *const argv[],
		const struct live_options *opt);

/* Attaches to every thread of running process @pid (ptrace) and stops
 * them all where they are; *@out is the session.  One line naming the
 * cause and the fix if it cannot (cap_stepper_attach()). */
int live_attach(struct live **out, pid_t pid, const struct live_options *opt);

/* Kills the process (if still there, attached or not) and frees the
 * session. */
void live_free(struct live *l);

/* Lets the process go on untraced (no breakpoint left in it) and frees
 * the session; with @stopped, it is let go stopped (SIGSTOP, state T)
 * for another debugger to attach. */
void live_detach(struct live *l, bool stopped);

/* How the session's software tracing stepped so far: the instructions
 * it traced (*@insns) and how many of them it single-stepped (*@steps);
 * the rest ran natively in blocks.  *@blocks: block stepping is on. */
void live_step_counts(const struct live *l, uint64_t *insns,
		      uint64_t *steps, bool *blocks);

/* The process id (its first thread). */
pid_t live_pid(const struct live *l);

/* True once the process has exited or was killed. */
bool live_ended(const struct live *l);

/* Copies up to @max thread ids into @tids (the first is the main thread
 * while it lives); returns how many threads there are. */
size_t live_threads(const struct live *l, pid_t *tids, size_t max);

/* The registers of thread @tid at this stop (user_regs_struct, the order
 * of history.h's HIST_* numbers), and setting them. */
int live_regs_get(struct live *l, pid_t tid, struct user_regs_struct *regs);
int live_regs_set(struct live *l, pid_t tid,
		  const struct user_regs_struct *regs);

/* Reads @size bytes of memory at @addr (the program's own bytes, never a
 * breakpoint's int3); returns the number read, fewer where the mapping
 * ends, or a negative error if none could be. */
ssize_t live_mem_read(struct live *l, uint64_t addr, void *buf, size_t size);

/* Writes @size bytes at @addr (also to code); returns 0 or an error. */
int live_mem_write(struct live *l, uint64_t addr, const void *buf,
		   size_t size);

/* A software breakpoint at @addr: set (again: no-op), cleared. */
int live_bp_set(struct live *l, uint64_t addr);
int live_bp_clear(struct live *l, uint64_t addr);

/* gdb's hardware breakpoint at @addr: an int3 like live_bp_set()'s (the
 * debug registers are kept for watchpoints), whose stop says hw.  Set
 * and cleared apart from a software one at the same address. */
int live_hbp_set(struct live *l, uint64_t addr);
int live_hbp_clear(struct live *l, uint64_t addr);

/* The most watchpoint pieces: the four debug registers. */
#define LIVE_WATCH_SLOTS 4

/* A watchpoint on [@addr, @addr + @len) for @kind, at any stop; it
 * stops the thread that accessed it just after the access
 * (LIVE_STOP_WATCH).  It takes one debug register per naturally aligned
 * piece of 1, 2, 4 or 8 bytes; PTRR_ERR_USAGE when the four are taken.
 * Without working debug registers (see live_watch_hw) only
 * LIVE_WATCH_WRITE is possible, and it sees writes that change the
 * bytes.  Clearing takes the same arguments. */
int live_watch_set(struct live *l, uint64_t addr, size_t len,
		   enum live_watch_kind kind);
int live_watch_clear(struct live *l, uint64_t addr, size_t len,
		     enum live_watch_kind kind);

/* True if this machine's debug registers fire (tried once, in a child
 * process); false in VMs that do not pass them through, or if the
 * environment has PTRR_LIVE_WATCH=soft. */
bool live_watch_hw(void);

/* Signals that, received while running, are passed on without stopping
 * (gdb's QPassSignals): @sigs[0..n). Replaces the previous set. */
void live_pass_signals(struct live *l, const int *sigs, size_t n);

/* Resumes the process as @r says and waits until it stops again; *@stop
 * says why.  A stop ends with every thread stopped. */
int live_resume(struct live *l, const struct live_resume *r,
		struct live_stop *stop);

/* Asks a running live_resume() to stop (LIVE_STOP_INTERRUPTED).
 * Async-signal-safe: callable from a SIGINT handler or another thread. */
void live_interrupt(struct live *l);

/* Tracing on and off, at any stop.  While on, threads are single-stepped
 * and every instruction they retire is written as Intel PT packets
 * (ptrr's software backend), about a hundred times slower than native;
 * off, they run natively again. */
int live_trace_start(struct live *l);
void live_trace_stop(struct live *l);
bool live_tracing(const struct live *l);

/* The trace of one thread so far.  At every stop the same bytes are
 * offered again with the new ones appended (hist_extend() grows a
 * history opened on an earlier stop's trace); the pointer may move
 * between stops.
 *
 * Full mode, as perf's AUX area drained at every stop: one run (from a
 * resume to the next stop) appends at most trace_cap bytes per thread.
 * A run that fills them loses the rest of its instructions to an
 * overflow: the trace says OVF where the thread stops (a gap in its
 * history, just before the stop), and the next run is traced again, so
 * the history goes on after the gap. */
struct hist_psb;

struct live_thread_trace {
	const uint8_t *data;
	size_t size;
	bool have_end_ip;	/* end_ip is where the thread is (or was when
				 * it ended) */
	uint64_t end_ip;
	bool ended;		/* the thread is gone */
	unsigned overflows;	/* runs that filled the buffer (OVF gaps) */
	uint64_t lost;		/* instructions those runs did not trace */
	uint64_t run_lost;	/* ... the last run (0: it did not fill) */
	/* Its table of PSBs, offsets in @data (struct hist_psb), valid as
	 * long as @data; NULL if the source keeps none. */
	const struct hist_psb *psbs;
	size_t npsbs;
};

/* While tracing, @fn(@arg) is called from inside live_resume() each
 * time the traced threads have retired @every more instructions, in
 * the thread that runs the process, between two steps: it may read the
 * traces so far (live_trace_get(), whose end_ip is then where the thread
 * is going, which the trace does not yet lead to: its last branches are
 * still held back), and do the work that would otherwise wait for the
 * stop.  Its negative return ends the run with that error.  @fn NULL:
 * no calls. */
void live_set_progress(struct live *l, int (*fn)(void *arg), void *arg,
		       uint64_t every);

/* Copies up to @max ids of the threads with a trace into @tids, in the
 * order they were first traced; returns how many there are. */
size_t live_traced_threads(const struct live *l, pid_t *tids, size_t max);

/* True if thread @tid has a trace: it ran while traced. */
bool live_has_trace(const struct live *l, pid_t tid);

/* The trace of thread @tid so far (valid until the next resume). */
int live_trace_get(const struct live *l, pid_t tid,
		   struct live_thread_trace *out);

#endif
