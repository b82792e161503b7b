/* plugin/source.h — a trace source: what records a program's control
 * flow as Intel PT, behind one table of functions (docs/sources.md).
 *
 * Three sources implement it: the ptrace stepper ("soft",
 * record_threads.c: a software PT emitter per thread), perf intel_pt
 * ("perf", record_perf.c: the program runs natively, one event per
 * thread) and QEMU ("qemu", record_qemu.c: qemu-x86_64 with ptrr's TCG
 * plugin).  `ptrr record` (record.c) and the live server (serve.c)
 * choose one with tsrc_choose() and from then on only call the table:
 * the run is tsrc_record() and the bundle is made by tsrc_bundle()
 * from what the source hands over — its threads' trace bytes, their
 * registers and ends, the memory image, the header and notes — so every
 * source's recording is written by the same code.
 *
 * Memory: a source owns what it hands over (a thread's trace bytes stay
 * valid until the next call on the source); what it adds to a bundle is
 * copied into it.  Errors: calls return 0 or a negative enum ptrr_error
 * with its message set by ptrr_fail() (one line, naming the fix); a
 * failure the user's options caused sets tsrc.usage_error (exit status
 * 1, else 2).  Calls are made from one thread, in the order the table
 * lists them, except interrupt(), which a signal handler may call.
 */
#ifndef PTRR_SOURCE_H
#define PTRR_SOURCE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "history.h"
#include "capture/procmaps.h"
#include "live/live.h"

struct rec_opts;
struct tsrc_ops;
struct tsrc_live_ops;

/* A source's state starts with this (the source's own struct embeds it
 * first, as rsp_target is embedded by the server's targets). */
struct tsrc {
	const struct tsrc_ops *ops;
	struct rec_opts *opts;	/* the recording's options */
	bool usage_error;	/* the failure is the user's options' */
};

/* One thread's part of a recording, as thread() hands it over. */
struct tsrc_thread {
	pid_t tid;
	const uint8_t *trace;	/* its PT bytes, oldest first (the
				 * source's, until its next call) */
	size_t size;
	uint64_t lost;		/* bytes overwritten before @trace (a
				 * wrapped snapshot ring) */
	struct hist_regs regs;	/* at its end, if valid */
	struct hist_regs start_regs;	/* as its trace began, if valid
					 * (kept only if nothing was lost) */
	struct hist_stop stop;	/* how it ended; HIST_STOP_NONE: still
				 * there when the recording ended */
	const struct hist_psb *psbs;	/* its table of PSBs, offsets in
					 * @trace (the source's, as @trace);
					 * NULL if it keeps none */
	size_t npsbs;
	const struct hist_regsnap *snaps;	/* registers recorded on the
						 * way, offsets in @trace
						 * (the source's); NULL if
						 * none */
	size_t nsnaps;
};

/* What the sessions need of a source.  "The program" is the process
 * being recorded; an execve in it ends one program image and starts
 * another (before_exec). */
struct tsrc_ops {
	const char *name;	/* --backend=NAME; the bundle's backend */

	/* True if `ptrr record` in snapshot mode saves the index without
	 * call segments by default (--index=lazy): the source records
	 * faster than the call-segment pass goes (30-40 ns an
	 * instruction), which would otherwise take most of the recording's
	 * time; the replay computes them when first needed (its first stop
	 * waits for them: seconds for a snapshot ring), ptrr index saves
	 * them.  Not in full mode, where that wait grows with the program
	 * (a minute for 1.36 G instructions, past gdb's remote timeout).
	 * False for the ptrace stepper, against whose microseconds an
	 * instruction the pass costs a few percent. */
	bool lazy_index;

	/* True if the source can trace a session as @o asks on this
	 * machine (@live: a live debugging session, @o then NULL; else
	 * `ptrr record`):
	 * *@text then names it for the one line --backend=auto prints
	 * ("QEMU (/usr/bin/qemu-x86_64)"); else *@text says why not, in a
	 * clause ("intel_pt PMU not found (...): this CPU or VM has no
	 * Intel PT").  Probes the machine; starts nothing. */
	bool (*usable)(const struct rec_opts *o, bool live, char *text,
		       size_t n);

	/* A new source for recording as @o says, in *@out (tsrc_open()
	 * then sets its ops and opts): checks the options it does not take
	 * (usage_error) and what it needs (a PMU, a qemu-x86_64 ...).
	 * Runs nothing.  *@out is set, to be closed, also after an error
	 * (NULL only if nothing was allocated). */
	int (*open)(struct rec_opts *o, struct tsrc **out);

	/* Launches the program (o->argv) or attaches to process o->pid,
	 * and brings it to where tracing begins (--start).  @bundle is
	 * where the recording will be saved, for a source that keeps its
	 * temporary files beside it; NULL when it is named only once
	 * attached (--pid without -o). */
	int (*start)(struct tsrc *s, const char *bundle);

	/* The path of the program's executable, once started. */
	const char *(*program)(struct tsrc *s);

	/* Traces the program until it ends or interrupt() is called. */
	int (*run)(struct tsrc *s);

	/* Asks run() to end soon, the program stopped or let go where it
	 * is.  Async-signal-safe.  NULL: the source cannot be interrupted
	 * (SIGINT and SIGTERM keep their default action). */
	void (*interrupt)(struct tsrc *s);

	/* Stops tracing: every thread's trace is ended where the thread
	 * is (or was), so that thread() hands over final bytes.  An error
	 * here says the run left nothing to save. */
	int (*finish)(struct tsrc *s);

	/* The threads of the current program image, in the order they
	 * started, and thread @i's part (see struct tsrc_thread). */
	size_t (*nthreads)(struct tsrc *s);
	int (*thread)(struct tsrc *s, size_t i, struct tsrc_thread *out);

	/* The bundle header of the current image into @b: the CPU the
	 * trace is decoded for, the PT configuration (pt.backend is set by
	 * the caller), the program and its arguments. */
	int (*header)(struct tsrc *s, struct hist_bundle *b);

	/* The memory image at the end, in a new bundle *@out (the caller
	 * takes it): the modules and anonymous code the trace ran in, at
	 * the program's addresses, and after a crash the snapshot of its
	 * writable memory. */
	int (*memory)(struct tsrc *s, struct hist_bundle **out);

	/* Notes on how the image was recorded and what it lacks. */
	int (*notes)(struct tsrc *s, struct hist_bundle *b);

	/* How the program ended (a fault with its thread's details). */
	struct hist_stop (*stop)(struct tsrc *s);

	/* The recording of the image before the last execve, or NULL;
	 * the caller takes it. */
	struct hist_bundle *(*before_exec)(struct tsrc *s);

	/* Prints the one-line summary of what was recorded into @bundle. */
	void (*summary)(struct tsrc *s, const char *bundle);

	/* Lets the program go (or reaps it) and frees the source. */
	void (*close)(struct tsrc *s);

	/* Live debugging sessions of this source, or NULL (usable() says
	 * why not). */
	const struct tsrc_live_ops *live;
};

/* A live session of a source: a program that stops and goes on at a
 * debugger's command (the live target, plugin/gdbremote/live_target.c,
 * calls only this), traced between stops when asked.  The calls are
 * those of plugin/live/live.h, which the ptrace session implements
 * (live_ptrace); docs/sources.md has how a QEMU session fits.  Memory and
 * errors as for recording; a call the source cannot serve returns
 * PTRR_ERR_UNSUPPORTED.  interrupt() may come from another thread while
 * resume() runs; no other call is made while one runs. */
struct tsrc_live_ops {
	/* Starts argv[0] stopped at its first instruction, *@out; frees
	 * the session with the program killed (free) or let go (detach,
	 * @stopped: SIGSTOPped, for another debugger). */
	int (*launch)(char *const argv[], const struct live_options *opt,
		      struct tsrc **out);
	/* Attaches to running process @pid, every thread stopped where it
	 * is, *@out (free() kills it then, detach() lets it go on).  NULL
	 * for a source that runs only the programs it starts. */
	int (*attach)(pid_t pid, const struct live_options *opt,
		      struct tsrc **out);
	void (*free)(struct tsrc *s);
	void (*detach)(struct tsrc *s, bool stopped);

	/* The bundle header of the session's traces: the CPU they decode
	 * for, the PT configuration (the caller sets pt.backend and the
	 * program).  Known before any session starts. */
	void (*header)(struct hist_bundle *b);

	/* The process: its id (its first thread's task id), whether it
	 * has ended, its threads. */
	pid_t (*pid)(struct tsrc *s);
	bool (*ended)(struct tsrc *s);
	size_t (*threads)(struct tsrc *s, pid_t *tids, size_t max);

	/* What the program is, as the program sees it (never the /proc of
	 * an emulator running it): the path of its executable (into @buf,
	 * @n bytes), its memory mappings at its own addresses (free with
	 * cap_maps_free()), its auxiliary vector (malloc'd), and a file it
	 * has mapped executable, opened for gdb's vFile (an fd, or an
	 * error saying why not). */
	int (*program)(struct tsrc *s, char *buf, size_t n);
	int (*maps)(struct tsrc *s, struct cap_map **maps, size_t *n);
	int (*auxv)(struct tsrc *s, char **doc, size_t *len);
	int (*open_file)(struct tsrc *s, const char *path);

	/* The code the program ran in anonymous memory (a JIT's) that the
	 * source kept since the last call, as it ran: each block to @add
	 * (guest address, bytes).  NULL for a source that keeps none,
	 * whose anonymous code is not added. */
	int (*anon_code)(struct tsrc *s,
			 int (*add)(void *arg, uint64_t addr,
				    const uint8_t *bytes, size_t len),
			 void *arg);

	/* Registers and memory at a stop. */
	int (*regs_get)(struct tsrc *s, pid_t tid,
			struct user_regs_struct *regs);
	int (*regs_set)(struct tsrc *s, pid_t tid,
			const struct user_regs_struct *regs);
	ssize_t (*mem_read)(struct tsrc *s, uint64_t addr, void *buf,
			    size_t size);
	int (*mem_write)(struct tsrc *s, uint64_t addr, const void *buf,
			 size_t size);

	/* Breakpoints (gdb's Z0, Z1) and watchpoints (Z2-Z4). */
	int (*bp_set)(struct tsrc *s, uint64_t addr);
	int (*bp_clear)(struct tsrc *s, uint64_t addr);
	int (*hbp_set)(struct tsrc *s, uint64_t addr);
	int (*hbp_clear)(struct tsrc *s, uint64_t addr);
	int (*watch_set)(struct tsrc *s, uint64_t addr, size_t len,
			 enum live_watch_kind kind);
	int (*watch_clear)(struct tsrc *s, uint64_t addr, size_t len,
			   enum live_watch_kind kind);
	void (*pass_signals)(struct tsrc *s, const int *sigs, size_t n);

	/* Resumes until the next stop; interrupt() (async-signal-safe)
	 * makes it stop soon.  @r's run_tids only if threads_apart. */
	int (*resume)(struct tsrc *s, const struct live_resume *r,
		      struct live_stop *stop);
	void (*interrupt)(struct tsrc *s);

	/* Tracing on and off at a stop, and each traced thread's trace so
	 * far (the bytes the source's until the next resume). */
	int (*trace_start)(struct tsrc *s);
	void (*trace_stop)(struct tsrc *s);
	bool (*tracing)(struct tsrc *s);
	void (*set_progress)(struct tsrc *s, int (*fn)(void *arg), void *arg,
			     uint64_t every);
	size_t (*traced_threads)(struct tsrc *s, pid_t *tids, size_t max);
	bool (*has_trace)(struct tsrc *s, pid_t tid);
	int (*trace_get)(struct tsrc *s, pid_t tid,
			 struct live_thread_trace *out);

	/* What pt info says of how tracing went: instructions traced, how
	 * many single-stepped, block stepping on. */
	void (*step_counts)(struct tsrc *s, uint64_t *insns, uint64_t *steps,
			    bool *blocks);

	/* How the instructions are traced, for pt info, if not by
	 * stepping (step_counts' steps and blocks then mean nothing). */
	const char *tracer;

	/* Threads can run while others stay stopped (live_resume's
	 * run_tids: gdb's non-stop mode). */
	bool threads_apart;
};

/* The ptrace session of plugin/live (live_source.c), and QEMU's
 * (live_qemu.c). */
extern const struct tsrc_live_ops live_ptrace, live_qemu;

/* The sources. */
extern const struct tsrc_ops tsrc_perf, tsrc_qemu, tsrc_soft;

/* The sources sessions choose from, in the order --backend=auto
 * prefers them (a test may put a table that wraps one in its place). */
#define TSRC_NSOURCES 3
extern const struct tsrc_ops *tsrc_sources[TSRC_NSOURCES];

/* The source named @name ("soft", "perf", "qemu"), or NULL. */
const struct tsrc_ops *tsrc_named(const char *name);

/* Picks the source for a session: @name's ("auto" or NULL: the first
 * usable one of perf, QEMU, the software backend, in one line on
 * stderr that says why, prefixed "@who: ").  @live: a live session.
 * Returns 0 with *@out set, or the exit status (2) after printing why
 * the source named cannot be had. */
int tsrc_choose(const char *who, const char *name,
		const struct rec_opts *o, bool live,
		const struct tsrc_ops **out);

/* Opens source @ops for recording as @o says (ops->open), into *@out
 * with its ops and opts set; *@out may be set (to close) even after an
 * error. */
int tsrc_open(const struct tsrc_ops *ops, struct rec_opts *o,
	      struct tsrc **out);

/* The bundle of the source's current image: @mem (taken over; NULL: a
 * new bundle) with the header, every thread and the notes added;
 * threads still there when the recording ended are marked interrupted
 * if @interrupted.  The caller sets how the process ended. */
int tsrc_bundle(struct tsrc *s, struct hist_bundle *mem, bool interrupted,
		struct hist_bundle **out);

/* Records with open source @s into the bundle named by -o (or
 * PROG.ptrr here): start, run, finish, the bundle written (with its
 * index), the summary.  @interrupted is read when the run has ended
 * (set by the caller's signal handler).  0 or an error. */
int tsrc_record(struct tsrc *s, volatile sig_atomic_t *interrupted);

#endif
