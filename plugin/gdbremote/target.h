/* plugin/gdbremote — what `ptrr serve` debugs: the target behind the
 * server (docs/server.md).
 *
 * The server (server.c) speaks the protocol and keeps gdb's state (the
 * selected threads, the reply); everything about the program itself goes
 * through this narrow interface, as rr's GdbServer goes through its
 * Session: threads, registers, memory, breakpoints, resuming in both
 * directions, why a thread stopped, the documents gdb reads with qXfer,
 * monitor commands and the raw trace gdb's `record pt` decodes.
 *
 * Two targets: a replay of a bundle (target_replay.c) and a live traced
 * process (live_target.c over plugin/live/), which also runs backward
 * by replaying its trace so far (replay_new_threads).
 *
 * Threads are numbered 0 .. nthreads() - 1 (the server maps gdb's thread
 * ids with tid()/find_tid()); numbers must stay stable while gdb is
 * connected (a live target appends new threads and keeps exited ones as
 * numbers that find_tid() no longer returns).  Registers are numbered as
 * history/history.h's HIST_* registers; the server maps them onto gdb's
 * amd64 description (regs.c).  Errors are negative enum ptrr_error values
 * (history/error.h): PTRR_ERR_UNSUPPORTED means "this target cannot do
 * that" and becomes gdb's empty reply where the protocol has one; any
 * other error becomes an error reply carrying ptrr_errmsg() when gdb can
 * show it.  The server is single-threaded: no call is made while another
 * runs.
 */
#ifndef PTRR_RSP_TARGET_H
#define PTRR_RSP_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "history.h"

struct rsp_target;

/* Why a thread stopped (the stop reply gdb gets). */
enum rsp_stop_why {
	RSP_STOP_SIGNAL,	/* a signal (SIGTRAP after a step, SIGSEGV of
				 * a crash ...): T<signal> */
	RSP_STOP_SWBREAK,	/* at a Z0 breakpoint: T05 swbreak */
	RSP_STOP_HWBREAK,	/* at a Z1 breakpoint: T05 hwbreak */
	RSP_STOP_WATCH,		/* after a write to a Z2 watchpoint's
				 * memory: T05 watch:ADDR */
	RSP_STOP_RWATCH,	/* after a read (Z3): T05 rwatch:ADDR */
	RSP_STOP_AWATCH,	/* after an access (Z4): T05 awatch:ADDR */
	RSP_STOP_BEGIN,		/* backward at the start of history:
				 * replaylog:begin ("No more reverse-execution
				 * history.") */
	RSP_STOP_END,		/* forward at the end of history (replay
				 * only): replaylog:end */
	RSP_STOP_EXITED,	/* the process exited: W<status> */
	RSP_STOP_KILLED,	/* the process died of a signal: X<signal> */
};

struct rsp_stop {
	size_t thr;		/* the thread that stopped */
	enum rsp_stop_why why;
	int signal;		/* the signal (RSP_STOP_SIGNAL, _KILLED; SIGTRAP
				 * for the others), or the exit status
				 * (RSP_STOP_EXITED) */
	uint64_t addr;		/* the watchpoint's address (RSP_STOP_*WATCH) */
	/* Shown on gdb's console before the stop, if not empty: why a
	 * watchpoint stop is not a proven write. */
	char note[256];
};

/* Breakpoint and watchpoint types: the TYPE of gdb's Z/z packets. */
enum rsp_break_type {
	RSP_BREAK_SW = 0,	/* Z0: software breakpoint */
	RSP_BREAK_HW = 1,	/* Z1: hardware breakpoint */
	RSP_WATCH_WRITE = 2,	/* Z2 */
	RSP_WATCH_READ = 3,	/* Z3 */
	RSP_WATCH_ACCESS = 4,	/* Z4 */
};

struct rsp_target_ops {
	/* Frees the target (the process: a live target detaches or kills
	 * it as it was told at start). */
	void (*close)(struct rsp_target *t);

	/* ---- Threads ---- */

	/* The number of threads (numbers never reused). */
	size_t (*nthreads)(struct rsp_target *t);
	/* Task id of thread @thr: gdb's thread id. */
	int (*tid)(struct rsp_target *t, size_t thr);
	/* The thread with task id @tid if it is alive (gdb's T packet):
	 * 0, or PTRR_ERR_NOTFOUND. */
	int (*find_tid)(struct rsp_target *t, int tid, size_t *thr);
	/* Why thread @thr is stopped now (gdb's `?` after connecting, and
	 * the thread gdb starts with: @thr is then the target's choice,
	 * passed as SIZE_MAX: the thread whose event stopped the program,
	 * e.g. the one that crashed). */
	void (*status)(struct rsp_target *t, size_t thr, struct rsp_stop *st);
	/* True if thread @thr is somewhere in its past (reverse execution)
	 * rather than at its present: only the PC is then known, memory is
	 * what was saved, and the unwind range has its call stack. */
	bool (*replaying)(struct rsp_target *t, size_t thr);

	/* ---- Registers and memory ---- */

	/* The registers of thread @thr; known[i] false for those the target
	 * cannot tell (gdb shows them <unavailable>). */
	void (*regs)(struct rsp_target *t, size_t thr,
		     uint64_t vals[HIST_NREGS], bool known[HIST_NREGS]);
	/* Sets register @reg (HIST_*) of thread @thr. */
	int (*write_reg)(struct rsp_target *t, size_t thr, unsigned reg,
			 uint64_t value);
	/* Reads [@addr, @addr + @len) as seen by thread @thr (whose call
	 * stack the unwind range of unwind_abi.h holds): the number of
	 * bytes read from @addr on, 0 if none is readable. */
	size_t (*read_memory)(struct rsp_target *t, size_t thr, uint64_t addr,
			      uint8_t *buf, size_t len);
	/* Writes @len bytes at @addr. */
	int (*write_memory)(struct rsp_target *t, uint64_t addr,
			    const uint8_t *buf, size_t len);

	/* ---- Execution ---- */

	/* Inserts (@insert) or removes a breakpoint or watchpoint of @type
	 * at @addr (@kind: gdb's KIND, the breakpoint's length).  Inserting
	 * twice or removing one that is not there succeeds. */
	int (*breakpoint)(struct rsp_target *t, enum rsp_break_type type,
			  uint64_t addr, unsigned kind, bool insert);
	/* Moves thread @thr one instruction (@step) or until a breakpoint,
	 * a signal or an end of history, forward (@dir > 0) or backward
	 * (@dir < 0), and says why it stopped.  All-stop: a live target
	 * resumes the other threads too when continuing, and while @thr
	 * steps if t->others_run.  While it runs it calls interrupted() now
	 * and then and stops (SIGINT) when true. */
	int (*resume)(struct rsp_target *t, size_t thr, int dir, bool step,
		      struct rsp_stop *st);

	/* Non-stop mode (gdb's QNonStop:1): runs the threads whose
	 * @run[thr] is true (@n entries), thread @step (SIZE_MAX: none)
	 * only one instruction, while the others stay stopped (threads
	 * made meanwhile run too), delivering host signal t->signal to
	 * thread @sig_thr (SIZE_MAX: none); until one of them stops (*@st)
	 * or interrupted() is true or none is left to run (then st->thr is
	 * SIZE_MAX: nothing to tell gdb).  Forward, from the present.
	 * With @n 0, only says whether the target can: 0, or an error
	 * saying why not.  NULL for a target that cannot. */
	int (*resume_threads)(struct rsp_target *t, const bool *run, size_t n,
			      size_t step, size_t sig_thr,
			      struct rsp_stop *st);

	/* ---- What gdb reads ---- */

	/* The qXfer document @object ("auxv", "exec-file",
	 * "libraries-svr4") for annex @annex: malloc'd in *@doc, its length
	 * in *@len.  PTRR_ERR_UNSUPPORTED for an object the target does
	 * not have.  (features/target.xml is the server's.) */
	int (*xfer)(struct rsp_target *t, const char *object,
		    const char *annex, char **doc, size_t *len);
	/* Opens file @path for reading, for gdb's vFile:open: only the
	 * program's own executable and libraries (module_files.c has the
	 * rule).  An fd the server owns from then on, or a negative error
	 * whose message says why not.  NULL for a target with no files. */
	int (*open_file)(struct rsp_target *t, const char *path);
	/* Runs monitor command @cmd (writable; "pt " already removed) with
	 * thread @thr selected, writing what gdb shows to @out. */
	int (*monitor)(struct rsp_target *t, size_t thr, FILE *out, char *cmd);
	/* The raw Intel PT of thread @thr for gdb's `record pt` and the CPU
	 * it was recorded on; pointers valid until the next call. */
	int (*trace)(struct rsp_target *t, size_t thr,
		     const struct hist_cpu **cpu, const uint8_t **data,
		     size_t *size);
	/* Signals @sigs[0..@n) (host numbers) go on to the program without
	 * stopping it (gdb's QPassSignals; replaces the previous set).
	 * NULL for a target that receives no signals. */
	void (*pass_signals)(struct rsp_target *t, const int *sigs, size_t n);
	/* Starts tracing (gdb's `record pt` sends Qbtrace:pt): every thread
	 * of a live target is traced from now on.  NULL for a recording,
	 * whose trace is all there is. */
	int (*trace_start)(struct rsp_target *t);

	/* ---- The program's life (gdb's extended-remote mode) ---- */

	/* Starts the program again, stopped at its first instruction as at
	 * launch, killing the process first if it is still there: as
	 * @argv[0] with arguments @argv[1..] (NULL-terminated), where an
	 * empty @argv[0] is the program of the last start and no argument
	 * the arguments of the last start; @argv NULL: both.  Tracing
	 * starts as it did at launch, the history of the earlier run is
	 * dropped, and threads are numbered from 0 again.  NULL for a
	 * recording, which cannot run again. */
	int (*restart)(struct rsp_target *t, char *const argv[]);
	/* Kills the process, or with @detach lets it run on untraced; the
	 * target then has no process until restart() (other calls that
	 * need one fail).  NULL for a recording. */
	int (*release)(struct rsp_target *t, bool detach);
	/* Attaches to running process @pid (gdb's vAttach), ending the
	 * process there is first: stopped where it is, traced from there
	 * (its history begins at the attach); threads numbered from 0
	 * again.  NULL for a recording. */
	int (*attach)(struct rsp_target *t, int pid);
	/* True if the process was attached to rather than started (gdb
	 * detaches from it when it quits, kills one the target started).
	 * NULL: attached if it cannot restart (a recording). */
	bool (*attached)(struct rsp_target *t);
};

/* A target: each kind embeds this as its first member. */
struct rsp_target {
	const struct rsp_target_ops *ops;
	/* Set by the server: true once gdb has sent its interrupt (0x03)
	 * since the last resume.  For resume(): a live target's run, and a
	 * continue through a recording (which stops where its search has
	 * come to, reported as SIGINT). */
	bool (*interrupted)(void *arg);
	void *interrupted_arg;
	/* Set by the server before each resume() from gdb's packet: the
	 * signal delivered to the resumed thread as it goes on (a host
	 * number, 0 for none: gdb's C/S), and whether the other threads
	 * run while it steps (vCont;s:TID;c) or stay stopped (vCont;s:TID,
	 * scheduler-locking on). */
	int signal;
	bool others_run;
};

/* The replay target: the recording in bundle @dir, every thread at the
 * end of its history (target_replay.c).  A one-line error otherwise. */
int rsp_replay_target_open(const char *dir, struct rsp_target **out);

#endif
