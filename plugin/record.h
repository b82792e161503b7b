/* `ptrr record` internals: the options (record.c), and the recorder
 * the two ptrace-driven trace sources share (source.h): the software
 * one (record_soft.c) and perf (record_perf.c), with record_threads.c
 * (one trace per thread, execve), record_bundle.c (memory, header,
 * notes) and record_filter.c (--filter). */
#ifndef PTRR_RECORD_H
#define PTRR_RECORD_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "capture/affinity.h"
#include "capture/emit.h"
#include "capture/perf_pt.h"
#include "capture/ring.h"
#include "capture/stepper.h"
#include "history.h"
#include "source.h"

/* One --filter=START[/SIZE][@FILE] (record_filter.c). */
struct rec_filter {
	const char *spec;	/* the option's argument */
	char name[256];		/* START's symbol, or "" for a number */
	uint64_t start;		/* the number, or the offset from the symbol */
	uint64_t size;		/* /SIZE, or 0: to the end of the symbol */
	char file[PATH_MAX];	/* @FILE (its real path), or "": PROG */
	bool pie;		/* the symbol's file is loaded with a bias */
	uint64_t link_addr;	/* the symbol's st_value + offset */
	bool has_offset;	/* START's file offset is known: */
	uint64_t file_offset;	/* a symbol's, or the number with @FILE */
	bool resolved;		/* its run-time range is known */
};

struct rec_opts {
	const char *out;	/* -o BUNDLE */
	const char *backend;	/* --backend=NAME, or NULL: auto */
	size_t buffer_size;	/* snapshot: ring size; full: the cap */
	bool full;		/* --mode=full */
	const char *start;	/* --start=SYMBOL|ADDR */
	bool pack;
	enum { REC_INDEX_SOURCE, REC_INDEX_FULL, REC_INDEX_LAZY }
		index;		/* --index=full|lazy, else the source's */
	const char *truth;	/* --ground-truth=FILE */
	bool insn_step;		/* --soft-step=insn (or --ground-truth) */
	uint32_t psb_period;	/* --psb-period=SIZE, else 0 (default) */
	bool noretcomp;		/* --noretcomp */
	bool tsc;		/* --tsc */
	pid_t pid;		/* --pid=PID, else 0 */
	uint64_t regs_every;	/* --regs-every=N (0: none), record_regs.c */
	bool regs_every_given;
	struct rec_filter filters[CAP_EMIT_MAX_FILTERS];
	uint32_t nfilters;	/* --filter=... */
	char **argv;		/* PROG ARGS */
};

/* One thread's trace: its own ring and emitter, like perf's per-thread
 * intel_pt events, and its own ground-truth file. */
struct rec_thread {
	pid_t tid;
	struct cap_ring ring;
	struct cap_emit em;
	FILE *truth;
	bool overflowed;	/* full mode passed its cap */
	uint64_t dropped;	/* instructions lost to that */
	bool done;		/* the trace is finished */
	struct user_regs_struct regs;	/* at its end */
	struct user_regs_struct start_regs;	/* as tracing began, */
	bool have_start_regs;		/* if read there */
	struct cap_end end;
	struct cap_perf *perf;	/* the perf backend's event, or NULL */
	struct {		/* registers recorded on the way
				 * (record_regs.c), by ring offset */
		struct hist_regsnap *v;
		size_t n, cap;
		uint64_t due;	/* instructions fed when the next is */
	} snaps;
};

/* The recording of one program image; an execve starts another. */
struct rec_image {
	char *exe;		/* /proc/PID/exe */
	char **argv;		/* NULL-terminated */
	struct rec_thread **threads;	/* in the order they started */
	size_t nthreads, threads_alloc;
	char **notes;		/* NULL-terminated, or NULL */
};

struct recorder {
	struct tsrc base;	/* the trace source (tsrc_soft, tsrc_perf) */
	struct rec_opts *opts;	/* with the filters' run-time state */
	struct cap_stepper st;
	struct cap_emit_config cfg;
	struct rec_image img;
	struct hist_bundle *exec_mem;	/* the image's memory as last read:
					 * when tracing started, after code
					 * was mapped, before an execve (in
					 * case it succeeds) */
	struct hist_bundle *before;	/* the recording of the image before
					 * the last execve, or NULL */
	char **truths;		/* every ground-truth file, oldest first */
	struct rec_perf *perf;	/* the perf backend (record_perf.c), or
				 * NULL for the software one */
	uint8_t *scratch;	/* the trace thread() hands over */
	struct hist_psb *psb_scratch;	/* ... and its table of PSBs */
	struct hist_regsnap *snap_scratch;	/* ... and its registers */
	uint64_t trace_bytes;	/* of finished images, for the summary */
	uint64_t trace_lost;
	uint64_t resyncs;
	struct timespec t0;
	uint64_t dropped;	/* instructions past the full-mode cap */
	bool told_truncated;	/* the user heard of the cap */
	uint32_t filters_pending;	/* --filter ranges in files not
					 * mapped yet */
	struct cap_affinity affinity;	/* one CPU while stepping */
	struct {
		bool on;		/* stderr is a terminal: show it */
		bool shown;		/* the line is on the terminal */
		uint64_t ticks;		/* events seen */
		struct timespec last;	/* when it was last shown */
	} progress;		/* record_progress.c */
};

/* The trace so far, over every thread and image: bytes written, bytes
 * overwritten, unexplained jumps, instructions past the cap
 * (record_soft.c). */
void rec_trace_totals(const struct recorder *r, uint64_t *bytes,
		      uint64_t *lost, uint64_t *resyncs, uint64_t *dropped);

/* Registers recorded on the way (--regs-every, record_regs.c). */
#define REC_REGS_EVERY_DEFAULT 4096

/* After instruction @ev of thread @rt was fed to its emitter: keeps the
 * thread's registers if they are the state before the next instruction
 * (ev->regs_after), --regs-every instructions have passed since the
 * last ones, and the emitter's count since its last PSB is the
 * decoder's.  Those whose PSB a snapshot ring overwrote are dropped. */
int rec_regs_note(const struct recorder *r, struct rec_thread *rt,
		  const struct cap_event *ev);

/* The snapshots of @rt whose PSB lies in the last @size bytes of its
 * ring, offsets made offsets into those bytes: into *@out (the caller's
 * scratch, reallocated), their number into *@n. */
int rec_regs_window(const struct rec_thread *rt, size_t size,
		    struct hist_regsnap **out, size_t *n);

/* The progress line: on if stderr is a terminal, from r->t0
 * (record_progress.c). */
void rec_progress_start(struct recorder *r);

/* One event: now and then, the progress line rewritten with the
 * instructions, the trace size, the time and the rate so far. */
void rec_progress_tick(struct recorder *r);

/* Erases the progress line, if shown, before the summary. */
void rec_progress_end(struct recorder *r);

/* "N UNIT/s" for @count in @secs seconds into @buf, never "0 UNIT/s":
 * 2 significant digits below 10; empty for no count or a time too
 * short to tell. */
void rec_rate_text(char *buf, size_t size, uint64_t count, double secs,
		   const char *unit);

/* Parses the arguments of `ptrr record` (after the word "record") into
 * @o: 0, -1 after printing the help, or the exit status after a usage
 * error (record.c). */
int rec_opts_parse(int argc, char **argv, struct rec_opts *o);

/* Prints "ptrr record: MSG: ARG" (": ARG" if @arg) and the usage;
 * returns the usage-error status (record.c). */
int rec_usage_error(const char *msg, const char *arg);

/* Splits "SYMBOL+OFFSET" at the last '+' into @name (malloc'd) and
 * @offset; a plain SYMBOL has offset 0.  False if OFFSET is not a number
 * (or out of memory) (record.c). */
bool rec_split_symbol(const char *spec, char **name, uint64_t *offset);

/* Parses SIZE: a number with an optional K, M or G suffix (powers of
 * 1024, optionally followed by "iB" or "B").  0 if invalid (record.c). */
size_t rec_parse_size(const char *s);

/* Parses the argument of one --filter into o->filters (usage errors are
 * printed; returns 0 or the exit status) (record_filter.c). */
int rec_filter_parse(struct rec_opts *o, const char *spec);

/* Looks up the symbol of filter @f (f->name) in ELF file @path: its
 * size (without /SIZE: from the offset to the symbol's end), link-time
 * address and file offset (PTRR_ERR_USAGE naming the filter if it has
 * none) (record_filter.c). */
int rec_filter_symbol(struct rec_filter *f, const char *path);

/* Looks up the symbols of the filters once the program is loaded, and
 * sets the run-time ranges of those whose file is mapped into r->cfg
 * (record_filter.c). */
int rec_filters_start(struct recorder *r);

/* Sets the ranges of filters whose file has been mapped since, in
 * r->cfg and every thread's emitter (record_filter.c). */
int rec_filters_update(struct recorder *r);

/* After an execve: the ranges of files are placed again in the new
 * image, where their files may be mapped elsewhere or not at all; plain
 * addresses stay (record_filter.c). */
int rec_filters_exec(struct recorder *r);

/* The filters as the kernel takes them for the perf backend: ranges of
 * files, by file offset (an address is turned into one with the maps of
 * process @pid) (record_filter.c). */
int rec_filters_perf(struct recorder *r, pid_t pid,
		     struct cap_perf_filter *out, size_t *n);

/* The header's filters: those of the @n @ranges that were placed (a
 * size; 0: the range's file was never mapped) (record_filter.c). */
void rec_filters_header(struct hist_bundle *b,
			const struct cap_filter *ranges, uint32_t n);

/* Notes for the bundle: each filter of @o and its range, ranges[i] if
 * placed, else that its file was never mapped or, @by_kernel, that the
 * kernel placed it (record_filter.c). */
int rec_filters_note_ranges(struct hist_bundle *b, const struct rec_opts *o,
			    const struct cap_filter *ranges, bool by_kernel);

/* rec_filters_note_ranges() for recorder @r (record_filter.c). */
int rec_filters_note(struct hist_bundle *b, const struct recorder *r);

/* Set by SIGINT and SIGTERM (record.c): the recording is to end. */
extern volatile sig_atomic_t rec_interrupted;

/* Set with rec_interrupted when the signal came from the terminal (a
 * Ctrl-C, which the program's process group got too), not from kill. */
extern volatile sig_atomic_t rec_interrupt_from_terminal;

/* The stepper's event callback (record_threads.c); @arg is the
 * recorder. */
int rec_on_event(void *arg, const struct cap_event *ev);

/* Finishes the trace of every thread still being traced at the end of
 * the recording (record_threads.c). */
int rec_finish_threads(struct recorder *r);

/* Frees what the recorder's images hold (record_threads.c). */
void rec_free_images(struct recorder *r);

/* Sets the image's program from the process (/proc/PID/exe, and its
 * cmdline unless @argv is given) (record_threads.c). */
int rec_image_program(struct recorder *r, char *const *argv);

/* Reads the memory map of the image into r->exec_mem, while it is still
 * there: when tracing starts, after code is mapped, before an execve
 * (which ends the image if it succeeds) (record_threads.c). */
int rec_read_memory_map(struct recorder *r);

/* Adds the memory image of the process (and after a crash, @crash, the
 * snapshot of its writable memory) to @b (record_bundle.c). */
int rec_add_memory(struct hist_bundle *b, const struct recorder *r,
		   bool crash);

/* The header's filters and the image's program and arguments
 * (record_bundle.c; the source sets the CPU and PT configuration). */
int rec_header(struct hist_bundle *b, const struct recorder *r);

/* The notes every image has after the source's own: how stepping went,
 * --pid, the filters, forks, full mode's cap (record_bundle.c). */
int rec_image_notes(struct hist_bundle *b, const struct recorder *r);

/* ---- the calls of struct tsrc_ops that soft and perf share
 * (record_soft.c; memory in record_bundle.c) ---- */

/* A new recorder for @o (tsrc_open() sets its base). */
int rec_src_new(struct rec_opts *o, struct recorder **out);
int rec_src_start(struct tsrc *s, const char *bundle);
const char *rec_src_program(struct tsrc *s);
void rec_src_interrupt(struct tsrc *s);
int rec_src_finish(struct tsrc *s);
size_t rec_src_nthreads(struct tsrc *s);
int rec_src_thread(struct tsrc *s, size_t i, struct tsrc_thread *out);
int rec_src_memory(struct tsrc *s, struct hist_bundle **out);
struct hist_stop rec_src_stop(struct tsrc *s);
struct hist_bundle *rec_src_before_exec(struct tsrc *s);
void rec_src_close(struct tsrc *s);

/* ---- the perf backend's threads (record_perf.c) ---- */

/* Opens and (unless later) enables the event of new thread @rt. */
int rec_perf_thread_start(struct recorder *r, struct rec_thread *rt);

/* The final read of @rt's trace; the event is closed. */
int rec_perf_thread_finish(struct recorder *r, struct rec_thread *rt);

/* A stop of a thread running natively (full mode drains its area). */
int rec_perf_stop(struct recorder *r, struct rec_thread *rt);

/* Closes and frees @rt's event. */
void rec_perf_thread_free(struct rec_thread *rt);

#endif
