/* The live target (live_target.h): the server's target interface
 * (target.h) over a trace source's live session (source.h: struct
 * tsrc_live_ops; plugin/live/live.h for the ptrace stepper's).
 *
 * Forward, the process runs.  Backward, and forward again until the
 * present, a replay target (target_replay.c) moves through the trace so
 * far: at every stop while tracing, the trace of each thread is handed
 * to a growing recording (hist_recording_new), whose histories grow by
 * hist_extend — new segments only.  A thread somewhere in its past is
 * "replaying": what is known there is what the replay proves (replay/
 * known.c: the PC, rsp and frames where proven, code and read-only
 * data; never the present's writable memory), and nothing can be
 * written.  Going forward, a replaying thread moves
 * through its history; reaching the present, a continue goes on in the
 * live process (every thread is first put back at its present).
 *
 * Thread numbers are the order tasks were first seen and are never
 * reused; a recording's threads are found by task id.  gdb's Ctrl-C
 * reaches a running resume through a watcher thread that polls the
 * server's interrupted() and calls the session's interrupt().
 *
 * A session has runs: gdb's `run` (vRun, R in extended-remote mode)
 * ends the process and its history and launches the program again, as
 * at the first launch (the same program, arguments, options, passed
 * signals and tracing from the start or not); kill and detach leave
 * the session without a process until then. */
#include <config.h>

#include "gdbremote/live_target.h"
#include "gdbremote/target_replay.h"
#include "capture/procmaps.h"
#include "error.h"
#include "unwind_abi.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Bytes of writable memory `pt save` keeps at most. */
#define LIVE_SNAPSHOT_MAX (256 << 20)

struct live_target {
	struct rsp_target base;
	const struct tsrc_ops *src;	/* the trace source (its live table) */
	struct tsrc *l;			/* its session: NULL after a kill or
					 * a detach */
	pid_t *tids;			/* by thread number */
	size_t ntids, tids_alloc;
	struct live_stop last;		/* the last stop */
	struct hist_cpu cpu;		/* the trace's (the source's header) */
	char *name;			/* "live session of PROG" */
	struct live_options opt;	/* how each run is launched */
	bool from_start;		/* each run traced from its start */
	unsigned run;			/* 1 at launch, 2 after a restart ... */
	int pass[NSIG];			/* gdb's QPassSignals, for every run */
	size_t npass;
	struct hist_bundle *launch;	/* the program, arguments, CPU and
					 * backend of this run: the header of
					 * its recording */
	struct hist_recording *rec;	/* the trace so far, once traced */
	struct rsp_target *rt;		/* the replay target over @rec */
	uint64_t bps[RSP_MAX_BREAKPOINTS];	/* for @rt, made later */
	size_t nbps;
	struct live_watch_note {	/* Z2, Z4: for @rt too */
		uint64_t addr;
		unsigned len;
		enum rsp_break_type type;
	} watches[RSP_MAX_WATCHPOINTS];
	size_t nwatches;
	bool outside;		/* gdb wrote registers or memory (for @rt) */
	enum rsp_on_disconnect on_close;	/* the process at close() */
	bool attached;			/* this run's process was attached
					 * to (vAttach, --attach), not
					 * launched: let go at close() */
};

/* The live target of @t. */
static struct live_target *lt_of(struct rsp_target *t)
{
	return (struct live_target *) t;
}

/* Gives every live thread not numbered yet the next number. */
static int number_threads(struct live_target *lt)
{
	pid_t now[256];
	size_t n = lt->src->live->threads(lt->l, now, 256);

	for (size_t i = 0; i < n && i < 256; i++) {
		size_t j = 0;

		while (j < lt->ntids && lt->tids[j] != now[i])
			j++;
		if (j < lt->ntids)
			continue;
		if (lt->ntids == lt->tids_alloc) {
			size_t m = lt->tids_alloc ? 2 * lt->tids_alloc : 16;
			pid_t *v = realloc(lt->tids, m * sizeof(*v));

			if (!v)
				return ptrr_fail(PTRR_ERR_NOMEM,
						 "out of memory");
			lt->tids = v;
			lt->tids_alloc = m;
		}
		lt->tids[lt->ntids++] = now[i];
	}
	return 0;
}

/* The number of task @tid, or 0 (the first thread) if it has none. */
static size_t thr_of(const struct live_target *lt, pid_t tid)
{
	for (size_t i = 0; i < lt->ntids; i++)
		if (lt->tids[i] == tid)
			return i;
	return 0;
}

/* Ends the run: the process is killed, or let go (running or stopped,
 * as @how says), and its history and threads are forgotten.  Its last
 * stop is then as gdbserver tells it: killed by SIGKILL (X09), or let
 * go as if it exited (W00). */
static void end_run(struct live_target *lt, enum rsp_on_disconnect how)
{
	bool detach = how != RSP_DISCONNECT_KILL;

	if (lt->rt)
		lt->rt->ops->close(lt->rt);
	lt->rt = NULL;
	lt->outside = false;
	hist_recording_close(lt->rec);	/* before the traces it borrows */
	lt->rec = NULL;
	if (detach)
		lt->src->live->detach(lt->l, how == RSP_DISCONNECT_STOP);
	else
		lt->src->live->free(lt->l);
	lt->l = NULL;
	lt->last = (struct live_stop) {
		.kind = detach ? LIVE_STOP_EXITED : LIVE_STOP_KILLED,
		.signo = SIGKILL };
	lt->ntids = 0;
	lt->nbps = 0;
	lt->nwatches = 0;
}

static void op_close(struct rsp_target *t)
{
	struct live_target *lt = lt_of(t);

	/* A process ptrr did not start is never killed by gdb going
	 * away: as gdb's own quit does, it is detached. */
	end_run(lt, lt->attached && lt->on_close == RSP_DISCONNECT_KILL ?
		RSP_DISCONNECT_DETACH : lt->on_close);
	free(lt->tids);
	free(lt->name);
	hist_bundle_free(lt->launch);
	free(lt);
}

/* The error of a request that needs the process between runs. */
static int no_process(void)
{
	return ptrr_fail(PTRR_ERR_USAGE, "the program is not being run: "
			 "run starts it again");
}

/* The thread of the replay target that live thread @thr is: false if
 * it has no trace. */
static bool replay_thr(struct live_target *lt, size_t thr, size_t *r)
{
	if (!lt->rt || thr >= lt->ntids)
		return false;
	if (lt->rt->ops->find_tid(lt->rt, lt->tids[thr], r) == 0)
		return true;
	ptrr_clear_error();
	return false;
}

/* True if live thread @thr is in its past. */
static bool thr_replaying(struct live_target *lt, size_t thr)
{
	size_t r;

	return replay_thr(lt, thr, &r) && lt->rt->ops->replaying(lt->rt, r);
}

/* True if any thread is in its past. */
static bool any_replaying(struct live_target *lt)
{
	for (size_t i = 0; i < lt->ntids; i++)
		if (thr_replaying(lt, i))
			return true;
	return false;
}

/* The error for changing the program while thread @what is replaying. */
static int refuse_write(const char *what)
{
	return ptrr_fail(PTRR_ERR_UNSUPPORTED, "%s cannot be written while "
			 "replaying the trace: go back to the present first "
			 "(pt goto end, or continue to the end of history)",
			 what);
}

static size_t op_nthreads(struct rsp_target *t)
{
	return lt_of(t)->ntids;
}

static int op_tid(struct rsp_target *t, size_t thr)
{
	struct live_target *lt = lt_of(t);

	return thr < lt->ntids ? (int) lt->tids[thr] : 0;
}

static int op_find_tid(struct rsp_target *t, int tid, size_t *thr)
{
	struct live_target *lt = lt_of(t);
	pid_t now[256];
	size_t n = lt->l ? lt->src->live->threads(lt->l, now, 256) : 0;

	for (size_t i = 0; i < n && i < 256; i++)
		if (now[i] == tid) {
			*thr = thr_of(lt, tid);
			return 0;
		}
	return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %d", tid);
}

/* The stop reply for live stop @s. */
static void to_rsp_stop(const struct live_target *lt,
			const struct live_stop *s, struct rsp_stop *st)
{
	st->thr = thr_of(lt, s->tid);
	st->why = RSP_STOP_SIGNAL;
	st->signal = SIGTRAP;
	st->addr = 0;
	switch (s->kind) {
	case LIVE_STOP_BREAKPOINT:
		st->why = s->hw ? RSP_STOP_HWBREAK : RSP_STOP_SWBREAK;
		break;
	case LIVE_STOP_WATCH:
		st->why = s->watch == LIVE_WATCH_ACCESS ? RSP_STOP_AWATCH :
			  RSP_STOP_WATCH;
		st->addr = s->addr;
		break;
	case LIVE_STOP_SIGNAL:
	case LIVE_STOP_CRASH:
		st->signal = s->signo;
		break;
	case LIVE_STOP_INTERRUPTED:
		st->signal = SIGINT;
		break;
	case LIVE_STOP_EXITED:
		st->why = RSP_STOP_EXITED;
		st->signal = s->code;
		break;
	case LIVE_STOP_KILLED:
		st->why = RSP_STOP_KILLED;
		st->signal = s->signo;
		break;
	default:
		break;
	}
}

static void op_status(struct rsp_target *t, size_t thr, struct rsp_stop *st)
{
	struct live_target *lt = lt_of(t);

	to_rsp_stop(lt, &lt->last, st);
	if (thr != SIZE_MAX && thr_replaying(lt, thr)) {
		st->thr = thr;
		st->why = RSP_STOP_SIGNAL;
		st->signal = SIGTRAP;
	} else if (thr != SIZE_MAX && thr != st->thr) {
		st->thr = thr;
		st->why = RSP_STOP_SIGNAL;
		st->signal = 0;
	}
}

static bool op_replaying(struct rsp_target *t, size_t thr)
{
	return thr_replaying(lt_of(t), thr);
}

static void op_regs(struct rsp_target *t, size_t thr,
		    uint64_t vals[HIST_NREGS], bool known[HIST_NREGS])
{
	struct live_target *lt = lt_of(t);
	struct user_regs_struct regs;
	size_t r;
	bool ok;

	if (thr_replaying(lt, thr) && replay_thr(lt, thr, &r)) {
		lt->rt->ops->regs(lt->rt, r, vals, known);
		return;
	}
	ok = thr < lt->ntids && lt->src->live->regs_get(lt->l, lt->tids[thr], &regs) == 0;

	_Static_assert(sizeof(regs) == HIST_NREGS * sizeof(uint64_t),
		       "user_regs_struct is in HIST_* order");
	if (ok)
		memcpy(vals, &regs, sizeof(regs));
	for (unsigned i = 0; i < HIST_NREGS; i++)
		known[i] = ok;
}

/* gdb changed the program's registers or memory: the replay of its
 * trace must not take the state after a stop to follow from the one
 * before (replay_set_outside_writes). */
static void wrote_outside(struct live_target *lt)
{
	lt->outside = true;
	if (lt->rt)
		rsp_replay_target_outside_writes(lt->rt);
}

static int op_write_reg(struct rsp_target *t, size_t thr, unsigned reg,
			uint64_t value)
{
	struct live_target *lt = lt_of(t);
	uint64_t r[HIST_NREGS];
	struct user_regs_struct regs;
	int err;

	if (thr >= lt->ntids || reg >= HIST_NREGS)
		return ptrr_fail(PTRR_ERR_USAGE, "no register %u of thread "
				 "%zu", reg, thr);
	if (thr_replaying(lt, thr))
		return refuse_write("registers");
	err = lt->src->live->regs_get(lt->l, lt->tids[thr], &regs);
	if (err)
		return err;
	memcpy(r, &regs, sizeof(regs));
	r[reg] = value;
	memcpy(&regs, r, sizeof(regs));
	err = lt->src->live->regs_set(lt->l, lt->tids[thr], &regs);
	if (!err)
		wrote_outside(lt);
	return err;
}

/* What thread @thr sees: in its past what the replay of its trace
 * knows there (replay_read_memory: never the present's writable memory),
 * at its present the process's memory; the unwind range of the replay. */
static size_t op_read_memory(struct rsp_target *t, size_t thr, uint64_t addr,
			     uint8_t *buf, size_t len)
{
	struct live_target *lt = lt_of(t);
	ssize_t n;
	size_t r;

	if ((addr >= PTRR_UNWIND_ADDR &&
	     addr - PTRR_UNWIND_ADDR < PTRR_UNWIND_SIZE) ||
	    thr_replaying(lt, thr))
		return replay_thr(lt, thr, &r) ?
		       lt->rt->ops->read_memory(lt->rt, r, addr, buf, len) : 0;
	if (!lt->l)
		return 0;
	n = lt->src->live->mem_read(lt->l, addr, buf, len);
	if (n < 0)
		ptrr_clear_error();
	return n > 0 ? (size_t) n : 0;
}

static int op_write_memory(struct rsp_target *t, uint64_t addr,
			   const uint8_t *buf, size_t len)
{
	if (!lt_of(t)->l)
		return no_process();
	int err;

	if (any_replaying(lt_of(t)))
		return refuse_write("memory");
	err = lt_of(t)->src->live->mem_write(lt_of(t)->l, addr, buf, len);
	if (!err)
		wrote_outside(lt_of(t));
	return err;
}

/* Keeps write or access watchpoint @type of @len bytes at @addr for the
 * replay target made later. */
static void note_watch(struct live_target *lt, enum rsp_break_type type,
		       uint64_t addr, unsigned len, bool insert)
{
	size_t i = 0;

	while (i < lt->nwatches && (lt->watches[i].addr != addr ||
				    lt->watches[i].len != len ||
				    lt->watches[i].type != type))
		i++;
	if (i < lt->nwatches && !insert)
		lt->watches[i] = lt->watches[--lt->nwatches];
	else if (i == lt->nwatches && insert &&
		 lt->nwatches < RSP_MAX_WATCHPOINTS)
		lt->watches[lt->nwatches++] = (struct live_watch_note) {
			addr, len, type };
}

/* Keeps execution breakpoint @addr, or a write or access watchpoint, for
 * the replay target (now and when it is made), which runs to them
 * through the history. */
static void note_breakpoint(struct live_target *lt, enum rsp_break_type type,
			    uint64_t addr, unsigned kind, bool insert)
{
	size_t i = 0;

	if (type == RSP_WATCH_READ)
		return;
	if (lt->rt && lt->rt->ops->breakpoint(lt->rt, type, addr, kind,
					      insert))
		ptrr_clear_error();
	if (type != RSP_BREAK_SW && type != RSP_BREAK_HW) {
		note_watch(lt, type, addr, kind, insert);
		return;
	}
	while (i < lt->nbps && lt->bps[i] != addr)
		i++;
	if (i < lt->nbps && !insert)
		lt->bps[i] = lt->bps[--lt->nbps];
	else if (i == lt->nbps && insert && lt->nbps < RSP_MAX_BREAKPOINTS)
		lt->bps[lt->nbps++] = addr;
}

/* Inserts or removes a watchpoint of @len bytes at @addr for @kind: an
 * access watchpoint without working debug registers is unsupported (the
 * empty reply). */
static int watchpoint(struct live_target *lt, enum live_watch_kind kind,
		      uint64_t addr, unsigned len, bool insert)
{
	struct tsrc *l = lt->l;
	int err;

	if (!insert) {
		if (lt->src->live->watch_clear(l, addr, len, kind))
			ptrr_clear_error();	/* one not there: done */
		return 0;
	}
	err = lt->src->live->watch_set(l, addr, len, kind);
	if (err == PTRR_ERR_UNSUPPORTED)
		ptrr_clear_error();
	return err;
}

/* Z0 and Z1 are int3s (Z1's stops say hwbreak); Z2 and Z4 watch writes
 * and accesses with the debug registers.  Z3 (reads only) is refused:
 * x86 cannot watch reads alone (RW=11 is reads and writes), and the
 * empty reply lets gdb say so instead of reporting writes as reads. */
static int op_breakpoint(struct rsp_target *t, enum rsp_break_type type,
			 uint64_t addr, unsigned kind, bool insert)
{
	const struct tsrc_live_ops *ops = lt_of(t)->src->live;
	struct tsrc *l = lt_of(t)->l;
	bool hw = type == RSP_BREAK_HW;

	if (!l)
		return no_process();
	note_breakpoint(lt_of(t), type, addr, kind, insert);
	if (type == RSP_WATCH_WRITE || type == RSP_WATCH_ACCESS)
		return watchpoint(lt_of(t), type == RSP_WATCH_WRITE ?
				  LIVE_WATCH_WRITE : LIVE_WATCH_ACCESS, addr,
				  kind, insert);
	if (type != RSP_BREAK_SW && !hw)
		return PTRR_ERR_UNSUPPORTED;
	if (insert)
		return hw ? ops->hbp_set(l, addr) : ops->bp_set(l, addr);
	if (hw ? ops->hbp_clear(l, addr) : ops->bp_clear(l, addr))
		ptrr_clear_error();	/* removing one not there succeeds */
	return 0;
}

/* The set is kept for the runs to come. */
static void op_pass_signals(struct rsp_target *t, const int *sigs, size_t n)
{
	struct live_target *lt = lt_of(t);

	lt->npass = n < NSIG ? n : NSIG;
	memcpy(lt->pass, sigs, lt->npass * sizeof(*sigs));
	if (lt->l)
		lt->src->live->pass_signals(lt->l, lt->pass, lt->npass);
}

/* What a resume shares with its watcher thread (watch_interrupt()). */
struct watcher {
	struct live_target *lt;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t done;	/* signalled when the resume ends */
	bool running;		/* the resume is under way (under @lock) */
};

/* While a resume runs: polls the server's interrupted() every 20 ms and
 * stops the run when gdb sent its interrupt (or, in non-stop mode, a
 * request).  If the run goes on half a second later and interrupted()
 * is still true (a request not read yet), it interrupts again: an
 * interrupt that came before the session's resume began is forgotten
 * there.  It ends as soon as the resume does (a step does not wait for
 * the next poll). */
static void *watch_interrupt(void *arg)
{
	struct watcher *w = arg;
	struct live_target *lt = w->lt;
	unsigned wait = 0;
	struct timespec until;

	pthread_mutex_lock(&w->lock);
	while (w->running) {
		if (wait)
			wait--;
		else if (lt->base.interrupted &&
			 lt->base.interrupted(lt->base.interrupted_arg)) {
			lt->src->live->interrupt(lt->l);
			wait = 25;
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 20000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&w->done, &w->lock, &until);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Starts @w's thread watching for gdb's interrupt during a resume of
 * @lt; false if it could not (the resume then cannot be interrupted). */
static bool watch_start(struct watcher *w, struct live_target *lt)
{
	pthread_condattr_t attr;

	w->lt = lt;
	w->running = true;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->done, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&w->thread, NULL, watch_interrupt, w) == 0)
		return true;
	pthread_cond_destroy(&w->done);
	pthread_mutex_destroy(&w->lock);
	return false;
}

/* Ends @w's thread: the resume is over. */
static void watch_end(struct watcher *w)
{
	pthread_mutex_lock(&w->lock);
	w->running = false;
	pthread_cond_signal(&w->done);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->done);
	pthread_mutex_destroy(&w->lock);
}

/* ---- The trace so far, as a recording ---- */

/* The bundle header of a run's recording, *@out: the CPU, the backend
 * and its configuration (the source's) and the program's arguments
 * @argv. */
static int new_header(struct live_target *lt, char *const argv[],
		      struct hist_bundle **out)
{
	int err = hist_bundle_new(out);

	if (err)
		return err;
	lt->src->live->header(*out);
	snprintf((*out)->pt.backend, sizeof((*out)->pt.backend), "%s",
		 lt->src->name);
	err = hist_bundle_set_argv(*out, argv);
	if (err) {
		hist_bundle_free(*out);
		*out = NULL;
	}
	return err;
}

/* The empty recording of the process, for its first trace: the run's
 * header and the program as the process has it now (else as named). */
static int new_recording(struct live_target *lt)
{
	struct hist_bundle *b;
	char exe[4096];
	bool known;
	int err = new_header(lt, lt->launch->argv, &b);

	if (err)
		return err;
	known = lt->src->live->program(lt->l, exe, sizeof(exe)) == 0;
	if (!known)
		ptrr_clear_error();
	b->exe = strdup(known ? exe : b->argv[0]);
	if (!b->exe) {
		hist_bundle_free(b);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	return hist_recording_new(b, &lt->rec);
}

/* The largest anonymous executable mapping whose code a stop reads (a
 * JIT's code stays far below; its mapping may be a large reservation). */
#define LT_ANON_CODE_MAX (64u << 20)

/* Adds the code in anonymous executable mapping @m (the vDSO, a JIT's)
 * as it is now to the recording, if it changed: what the process ran
 * there, unless it rewrote it since (as ptrr record reads it at the
 * end). */
static int add_anon_mapping(struct live_target *lt, const struct cap_map *m)
{
	uint64_t size = m->end - m->start;
	uint8_t *data;
	int err = 0;

	if (size > LT_ANON_CODE_MAX || !(data = malloc(size)))
		return 0;
	if (lt->src->live->mem_read(lt->l, m->start, data, size) ==
	    (ssize_t) size)
		err = hist_recording_add_code(lt->rec, m->path, m->start,
					      data, size);
	else
		ptrr_clear_error();
	free(data);
	return err;
}

/* Adds @len bytes of code at @addr in anonymous memory that the source
 * kept (its anon_code) to recording @arg. */
static int add_anon_code(void *arg, uint64_t addr, const uint8_t *bytes,
			 size_t len)
{
	struct live_target *lt = arg;

	return hist_recording_add_code(lt->rec, "", addr, bytes, len);
}

/* Adds the code mapped now (files, anonymous code, the vDSO) to the
 * recording, and the anonymous code the source kept: what the trace's
 * new instructions may have run.  ([vsyscall] is execute-only and
 * emulated by the kernel: no user code runs there.) */
static int add_code(struct live_target *lt)
{
	struct cap_map *maps = NULL;
	size_t n = 0;
	int err = lt->src->live->maps(lt->l, &maps, &n);

	if (err) {
		ptrr_clear_error();	/* the process is gone: nothing new */
		return 0;
	}
	for (size_t i = 0; !err && i < n; i++) {
		const struct cap_map *m = &maps[i];

		if (!m->executable || !strcmp(m->path, "[vsyscall]"))
			continue;
		if (cap_map_is_file(m))
			err = hist_recording_add_module(lt->rec, m->path,
							m->start,
							m->end - m->start,
							m->offset);
		else
			err = add_anon_mapping(lt, m);
	}
	cap_maps_free(maps, n);
	if (!err && lt->src->live->anon_code)
		err = lt->src->live->anon_code(lt->l, add_anon_code, lt);
	return err;
}

/* How thread @tid stopped, for its recording: the crash it took, or
 * the end of the process (killed, also from outside, or exited). */
static struct hist_stop thread_stop(const struct live_target *lt, pid_t tid)
{
	const struct live_stop *s = &lt->last;

	if (s->kind == LIVE_STOP_CRASH && s->tid == tid)
		return (struct hist_stop) { HIST_STOP_FAULT, s->signo,
					    s->addr };
	if (s->kind == LIVE_STOP_KILLED)
		return (struct hist_stop) { HIST_STOP_SIGNALED, s->signo, 0 };
	if (s->kind == LIVE_STOP_EXITED)
		return (struct hist_stop) { HIST_STOP_EXITED, s->code, 0 };
	return (struct hist_stop) { HIST_STOP_NONE, 0, 0 };
}

/* The process's memory now, for the replay of its trace (its present:
 * where the stack at the end of history is unwound). */
static ssize_t present_memory(void *arg, uint64_t addr, uint8_t *buf,
			      size_t len)
{
	struct live_target *lt = arg;
	ssize_t n;

	if (!lt->l)
		return 0;
	n = lt->src->live->mem_read(lt->l, addr, buf, len);
	if (n < 0)
		ptrr_clear_error();
	return n;
}

/* Hands the trace of every traced thread at this stop to the recording
 * (made at the first one) and the replay target over it.  @partial: a
 * run's progress point, not a stop: each history ends where its trace
 * leaves it so far (not at the thread's registers). */
static int sync_trace(struct live_target *lt, bool partial)
{
	pid_t tids[256];
	size_t n = lt->src->live->traced_threads(lt->l, tids, 256), i;
	int err = 0;

	if (n == 0)
		return 0;
	if (!lt->rec)
		err = new_recording(lt);
	if (!err)
		err = add_code(lt);
	for (size_t k = 0; !err && k < n && k < 256; k++) {
		struct live_thread_trace tr;
		struct hist_regs regs = { 0 };
		struct hist_stop stop = partial ?
			(struct hist_stop) { HIST_STOP_NONE, 0, 0 } :
			thread_stop(lt, tids[k]);
		struct user_regs_struct ur;

		err = lt->src->live->trace_get(lt->l, tids[k], &tr);
		if (err)
			break;
		if (hist_recording_find_tid(lt->rec, tids[k], &i)) {
			ptrr_clear_error();
			err = hist_recording_add_thread(lt->rec, tids[k], &i);
			if (err)
				break;
		}
		if (!partial && !tr.ended &&
		    lt->src->live->regs_get(lt->l, tids[k], &ur) == 0) {
			regs.valid = true;
			memcpy(regs.r, &ur, sizeof(ur));
			/* Where its trace leaves it: a thread stopped inside a
			 * system call is before the syscall instruction, which
			 * it executes again (a restart) or returns from. */
			if (tr.have_end_ip)
				regs.r[HIST_RIP] = tr.end_ip;
		} else {
			ptrr_clear_error();
		}
		err = hist_recording_set_trace(lt->rec, i, tr.data, tr.size,
					       tr.psbs, tr.npsbs, &regs,
					       &stop);
	}
	if (err)
		return err;
	if (!partial)
		hist_recording_bundle_mut(lt->rec)->stop =
			thread_stop(lt, lt->last.tid);
	if (lt->rt)
		return rsp_replay_target_grown(lt->rt);
	err = rsp_replay_target_wrap(lt->rec, lt->name, &lt->rt);
	if (!err)
		rsp_replay_target_set_present(lt->rt, present_memory, lt);
	if (!err && lt->outside)
		rsp_replay_target_outside_writes(lt->rt);
	for (size_t k = 0; !err && k < lt->nbps; k++)
		err = lt->rt->ops->breakpoint(lt->rt, RSP_BREAK_SW,
					      lt->bps[k], 1, true);
	for (size_t k = 0; !err && k < lt->nwatches; k++)
		err = lt->rt->ops->breakpoint(lt->rt, lt->watches[k].type,
					      lt->watches[k].addr,
					      lt->watches[k].len, true);
	return err;
}

/* Says, after a stop that ended the process by a signal (SIGKILL from
 * outside, or a crash passed on), that its history is still there. */
static void note_killed(const struct live_target *lt)
{
	const char *name = sigabbrev_np(lt->last.signo);

	if (lt->last.kind == LIVE_STOP_KILLED && lt->rt)
		fprintf(stderr, "ptrr serve: the program was killed by SIG%s; "
			"its history is kept (pt insn-history, pt save DIR)\n",
			name ? name : "?");
}

/* The bytes of trace a run may add per thread (--buffer-size). */
static size_t trace_cap(const struct live_target *lt)
{
	return lt->opt.trace_cap ? lt->opt.trace_cap : LIVE_TRACE_CAP_DEFAULT;
}

/* Where list_overflows() says what the runs that filled the trace
 * buffer lost. */
enum overflow_report {
	OVF_STOP,	/* this run's, as a warning on stderr */
	OVF_INFO,	/* the session's, as `pt info` lines */
	OVF_NOTES,	/* the session's, as notes of the bundle saved */
};

/* What the runs that filled the trace buffer lost, per thread, reported
 * as @how says (to @out, or into @b for OVF_NOTES). */
static int list_overflows(const struct live_target *lt,
			  enum overflow_report how, FILE *out,
			  struct hist_bundle *b)
{
	pid_t tids[256];
	size_t n = lt->src->live->traced_threads(lt->l, tids, 256);
	int err = 0;

	for (size_t k = 0; !err && k < n && k < 256; k++) {
		struct live_thread_trace tr;

		if (lt->src->live->trace_get(lt->l, tids[k], &tr) ||
		    !(how == OVF_STOP ? tr.run_lost : tr.overflows))
			continue;
		if (how == OVF_STOP)
			fprintf(out, "ptrr serve: warning: thread %d filled "
				"its %zu-byte trace buffer in this run: its "
				"last %" PRIu64 " instructions before the stop "
				"were not traced (an overflow gap in its "
				"history); the next run is traced again (ptrr "
				"gdb --buffer-size=SIZE keeps more)\n",
				(int) tids[k], trace_cap(lt), tr.run_lost);
		else if (how == OVF_INFO)
			fprintf(out, "Thread %d filled its %zu-byte trace "
				"buffer in %u run%s: %" PRIu64 " instructions "
				"were not traced (an overflow gap at the end "
				"of each).\n",
				(int) tids[k], trace_cap(lt), tr.overflows,
				tr.overflows == 1 ? "" : "s", tr.lost);
		else
			err = hist_bundle_add_note(b, "thread %d: %u run%s "
				"filled the live session's %zu-byte trace "
				"buffer: %" PRIu64 " instructions were lost "
				"(OVF)", (int) tids[k], tr.overflows,
				tr.overflows == 1 ? "" : "s", trace_cap(lt),
				tr.lost);
	}
	ptrr_clear_error();
	return err;
}

/* Runs the process as @r says; then brings the recording up to date. */
static int resume_live(struct live_target *lt, const struct live_resume *r,
		       struct rsp_stop *st)
{
	struct watcher w;
	bool watching;
	int err;

	watching = watch_start(&w, lt);
	if (lt->rt)
		rsp_replay_target_prepare(lt->rt, false);
	if (lt->rec)
		hist_recording_hold_walks(lt->rec, true);
	err = lt->src->live->resume(lt->l, r, &lt->last);
	if (lt->rec)
		hist_recording_hold_walks(lt->rec, false);
	if (watching)
		watch_end(&w);
	if (!err)
		err = number_threads(lt);
	to_rsp_stop(lt, &lt->last, st);
	if (!err && lt->src->live->tracing(lt->l) &&
	    (err = sync_trace(lt, false)) < 0) {
		/* The program stopped all the same: say so, and why the
		 * history could not follow. */
		fprintf(stderr, "ptrr serve: the history stops here: %s\n",
			ptrr_errmsg(err));
		err = 0;
	}
	if (!err && lt->src->live->tracing(lt->l))
		list_overflows(lt, OVF_STOP, stderr, NULL);
	/* The call segments of what the run added, while the program is
	 * stopped: the first reverse step waits only for what is left.
	 * (Also after a resume of some threads, gdb's non-stop mode.
	 * 8387cd2 left it out there after gdb.btrace/enable-running.exp
	 * failed with it; the failures came back without it: they were
	 * live.c's forgotten SIGINT (d2f4548), which anything slow at the
	 * start of a resume, as stopping this pass, makes likelier.) */
	if (!err && lt->rt)
		rsp_replay_target_prepare(lt->rt, true);
	if (!err)
		note_killed(lt);
	return err;
}

/* Runs the process as gdb asks (all-stop): every thread, or thread @thr
 * one instruction. */
static int run_live(struct live_target *lt, size_t thr, bool step,
		    struct rsp_stop *st)
{
	struct live_resume r = { .signo = lt->base.signal,
				 .others_run = lt->base.others_run };

	if (step && thr < lt->ntids)
		r.step_tid = lt->tids[thr];
	return resume_live(lt, &r, st);
}

/* True if @pc is an inserted breakpoint. */
static bool is_breakpoint(const struct live_target *lt, uint64_t pc)
{
	for (size_t i = 0; i < lt->nbps; i++)
		if (lt->bps[i] == pc)
			return true;
	return false;
}

/* Puts every thread back at its present. */
static int all_to_present(struct live_target *lt)
{
	return lt->rt ? rsp_replay_target_present(lt->rt) : 0;
}

/* Moves thread @thr (replay thread @r) through its history in direction
 * @dir; forward onto its present, a step stops there and a continue goes
 * on live. */
static int run_history(struct live_target *lt, size_t thr, size_t r,
		       int dir, bool step, struct rsp_stop *st)
{
	uint64_t vals[HIST_NREGS];
	bool known[HIST_NREGS];
	int err;

	lt->rt->interrupted = lt->base.interrupted;	/* gdb's Ctrl-C */
	lt->rt->interrupted_arg = lt->base.interrupted_arg;
	err = lt->rt->ops->resume(lt->rt, r, dir, step, st);
	st->thr = thr;
	if (err || dir < 0 || thr_replaying(lt, thr) ||
	    st->why == RSP_STOP_WATCH || st->why == RSP_STOP_AWATCH)
		return err;
	/* At the present. */
	if (step || st->why == RSP_STOP_SIGNAL) {
		if (st->why == RSP_STOP_END)
			*st = (struct rsp_stop) { .thr = thr,
						  .why = RSP_STOP_SIGNAL,
						  .signal = SIGTRAP };
		return 0;
	}
	lt->rt->ops->regs(lt->rt, r, vals, known);
	if (is_breakpoint(lt, vals[HIST_RIP])) {
		*st = (struct rsp_stop) { .thr = thr, .why = RSP_STOP_SWBREAK,
					  .signal = SIGTRAP };
		return 0;
	}
	err = all_to_present(lt);
	return err ? err : run_live(lt, thr, false, st);
}

static int op_resume(struct rsp_target *t, size_t thr, int dir, bool step,
		     struct rsp_stop *st)
{
	struct live_target *lt = lt_of(t);
	size_t r;
	int err;

	if (!lt->l)
		return no_process();
	if (dir < 0 || thr_replaying(lt, thr)) {
		if (replay_thr(lt, thr, &r))
			return run_history(lt, thr, r, dir, step, st);
		/* Nothing traced in this thread: no history. */
		*st = (struct rsp_stop) { .thr = thr, .why = RSP_STOP_BEGIN,
					  .signal = SIGTRAP };
		return 0;
	}
	err = all_to_present(lt);
	return err ? err : run_live(lt, thr, step, st);
}

/* Non-stop mode: the threads @run says run, the others stay stopped. */
static int op_resume_threads(struct rsp_target *t, const bool *run, size_t n,
			     size_t step, size_t sig_thr, struct rsp_stop *st)
{
	struct live_target *lt = lt_of(t);
	struct live_resume r = { 0 };
	pid_t *tids;
	int err;

	if (!lt->src->live->threads_apart)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "non-stop mode needs "
				 "threads that run apart: this backend's "
				 "sessions are all-stop (use "
				 "--backend=soft)");
	if (!n)
		return 0;
	if (!lt->l)
		return no_process();
	if (!(tids = calloc(n, sizeof(*tids))))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n && i < lt->ntids; i++)
		if (run[i])
			tids[r.nrun++] = lt->tids[i];
	r.run_tids = tids;
	if (step < lt->ntids) {
		r.step_tid = lt->tids[step];
		r.others_run = r.nrun > 1;
	}
	if (sig_thr < lt->ntids) {
		r.signo = t->signal;
		r.sig_tid = lt->tids[sig_thr];
	}
	err = all_to_present(lt);
	if (!err)
		err = resume_live(lt, &r, st);
	free(tids);
	if (!err && lt->last.kind == LIVE_STOP_INTERRUPTED)
		st->thr = SIZE_MAX;	/* stopped for gdb's next request */
	return err;
}

/* The svr4 library list of the process (target @t) as gdb reads it: the
 * files mapped executable now, placed as libs.c places a bundle's
 * modules. */
static int libraries_svr4(struct rsp_target *t, char **doc, size_t *len)
{
	const struct tsrc_live_ops *ops = lt_of(t)->src->live;
	struct hist_bundle *b = NULL;
	struct cap_map *maps = NULL;
	char exe[4096];
	size_t n = 0;
	int err;

	if (ops->program(lt_of(t)->l, exe, sizeof(exe))) {
		ptrr_clear_error();
		exe[0] = 0;
	}
	err = hist_bundle_new(&b);
	if (!err)
		err = ops->maps(lt_of(t)->l, &maps, &n);
	if (!err && !(b->exe = strdup(exe)))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; !err && i < n; i++)
		if (maps[i].executable && cap_map_is_file(&maps[i]))
			err = hist_bundle_add_module(b, maps[i].path,
						     maps[i].start, maps[i].end -
						     maps[i].start,
						     maps[i].offset);
	cap_maps_free(maps, n);
	*doc = err ? NULL : rsp_libraries_svr4(b, t);
	hist_bundle_free(b);
	if (!err && !*doc)
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	*len = *doc ? strlen(*doc) : 0;
	return err;
}

static int op_xfer(struct rsp_target *t, const char *object,
		   const char *annex, char **doc, size_t *len)
{
	struct tsrc *l = lt_of(t)->l;
	int err;

	(void) annex;
	if (!l)
		return no_process();
	if (!strcmp(object, "auxv"))
		return lt_of(t)->src->live->auxv(l, doc, len);
	if (!strcmp(object, "libraries-svr4"))
		return libraries_svr4(t, doc, len);
	if (strcmp(object, "exec-file"))
		return PTRR_ERR_UNSUPPORTED;
	*doc = malloc(4096);
	if (!*doc)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	err = lt_of(t)->src->live->program(l, *doc, 4096);
	if (err) {
		free(*doc);
		*doc = NULL;
		return err;
	}
	*len = strlen(*doc);
	return 0;
}

/* The files the process has mapped (the source says which). */
static int op_open_file(struct rsp_target *t, const char *path)
{
	if (!lt_of(t)->l)
		return no_process();
	return lt_of(t)->src->live->open_file(lt_of(t)->l, path);
}

/* Adds the writable memory of the process to bundle @b, as ptrr record
 * does after a crash: what a replay shows of variables at the end. */
static int add_snapshot(struct live_target *lt, struct hist_bundle *b)
{
	uint64_t budget = LIVE_SNAPSHOT_MAX;
	struct cap_map *maps = NULL;
	size_t n = 0;
	int err = lt->src->live->maps(lt->l, &maps, &n);

	if (err) {
		ptrr_clear_error();
		return hist_bundle_add_note(b, "the process was gone: no "
					    "memory snapshot");
	}
	for (size_t i = 0; !err && i < n; i++) {
		const struct cap_map *m = &maps[i];
		uint64_t size = m->end - m->start;
		uint8_t *data;

		if (!m->readable || !m->writable)
			continue;
		if (size > budget) {
			err = hist_bundle_add_note(b, "snapshot: %s at 0x%"
						   PRIx64 " left out (over "
						   "%d MiB)", m->path[0] ?
						   m->path : "anonymous",
						   m->start,
						   LIVE_SNAPSHOT_MAX >> 20);
			continue;
		}
		data = malloc(size ? size : 1);
		if (!data) {
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
			break;
		}
		if (lt->src->live->mem_read(lt->l, m->start, data, size) ==
		    (ssize_t) size) {
			budget -= size;
			err = hist_bundle_add_snapshot(b, m->path, m->start,
						       data, size);
		} else {
			ptrr_clear_error();
		}
		free(data);
	}
	cap_maps_free(maps, n);
	return err;
}

/* Removes the snapshot add_snapshot() put into @b, and its notes. */
static void drop_snapshot(struct hist_bundle *b, size_t nnotes)
{
	for (size_t i = 0; i < b->nsnapshot; i++) {
		free(b->snapshot[i].name);
		free(b->snapshot[i].file);
		free(b->snapshot[i].data);
	}
	free(b->snapshot);
	b->snapshot = NULL;
	b->nsnapshot = 0;
	for (size_t i = nnotes; b->notes && b->notes[i]; i++) {
		free(b->notes[i]);
		b->notes[i] = NULL;
	}
}

/* Error @err of a save that could not write its bundle, which says
 * that the trace is still there to save elsewhere. */
static int save_failed(int err)
{
	char *msg = strdup(ptrr_errmsg(err));

	if (!msg)
		return err;
	err = ptrr_fail(err, "%s; the trace is kept: pt save can try again",
			msg);
	free(msg);
	return err;
}

/* `pt save DIR`: the trace so far as a bundle `ptrr replay` opens. */
static int save(struct live_target *lt, FILE *out, const char *dir)
{
	struct hist_bundle *b;
	size_t nnotes = 0;
	uint64_t insns = 0;
	int err, ierr;

	if (!*dir)
		return ptrr_fail(PTRR_ERR_USAGE, "usage: pt save DIR (a new "
				 "directory, conventionally NAME.ptrr)");
	if (!lt->rec)
		return ptrr_fail(PTRR_ERR_USAGE, "nothing is traced yet: %s",
				 lt->src->live->tracing(lt->l) ? "tracing is on, and "
				 "the trace grows as the program runs" :
				 "pt start (or gdb's record pt) begins "
				 "tracing, and pt save keeps what was traced "
				 "since");
	err = hist_bundle_check_target(dir);
	if (err)
		return err;
	b = hist_recording_bundle_mut(lt->rec);
	while (b->notes && b->notes[nnotes])
		nnotes++;
	b->stop = thread_stop(lt, lt->last.tid);
	err = add_snapshot(lt, b);
	if (!err && lt->l)
		err = list_overflows(lt, OVF_NOTES, NULL, b);
	if (!err && (ierr = hist_recording_make_index(lt->rec)))
		fprintf(stderr, "ptrr serve: %s: the bundle is saved without "
			"its index (opening it decodes the trace again)\n",
			ptrr_errmsg(ierr));
	if (!err)
		err = hist_bundle_save(b, dir, 0);
	hist_recording_drop_index(lt->rec);
	drop_snapshot(b, nnotes);
	if (err)
		return err == PTRR_ERR_IO ? save_failed(err) : err;
	for (size_t i = 0; i < b->nthreads; i++) {
		struct history *h;

		if (hist_recording_history(lt->rec, i, &h) == 0)
			insns += hist_insn_count(h);
	}
	ptrr_clear_error();
	fprintf(out, "Saved %zu thread%s, %" PRIu64 " instructions, to %s "
		"(ptrr replay %s opens it).\n", b->nthreads,
		b->nthreads == 1 ? "" : "s", insns, dir, dir);
	return 0;
}

/* The end of `pt info`: how the tracing stepped (or traced), and in a
 * run after the first, that its history is the run's own. */
static void run_note(const struct live_target *lt, FILE *out)
{
	uint64_t insns, steps;
	bool blocks;

	if (lt->l && lt->src->live->tracer) {
		lt->src->live->step_counts(lt->l, &insns, &steps, &blocks);
		fprintf(out, "Tracing: %s: %" PRIu64 " instructions.\n",
			lt->src->live->tracer, insns);
	} else if (lt->l) {
		lt->src->live->step_counts(lt->l, &insns, &steps, &blocks);
		fprintf(out, "Stepping: %s: %" PRIu64 " instructions, %" PRIu64
			" of them single-stepped.\n", blocks ?
			"blocks run natively up to each branch "
			"(--soft-step=block)" : "one instruction at a time "
			"(--soft-step=insn)", insns, steps);
	}
	if (lt->run > 1)
		fprintf(out, "The program was started again (run %u): the "
			"history before that was dropped.\n", lt->run);
}

/* `pt info` without a trace: tracing on or off, or between runs. */
static void info_untraced(const struct live_target *lt, FILE *out)
{
	if (!lt->l) {
		fprintf(out, "%s: the program is not being run (run starts it "
			"again); the history of its last run was dropped.\n",
			lt->name);
		return;
	}
	fprintf(out, "%s: tracing %s, nothing traced yet (pt start begins "
		"tracing).\n", lt->name, lt->src->live->tracing(lt->l) ? "on" : "off");
	run_note(lt, out);
}

/* The monitor commands of a live session: tracing on and off, saving,
 * and the replay target's listings and goto for the trace so far. */
static int op_monitor(struct rsp_target *t, size_t thr, FILE *out, char *cmd)
{
	struct live_target *lt = lt_of(t);
	const struct tsrc_live_ops *ops = lt->src->live;
	struct tsrc *l = lt->l;
	char *args = cmd + strcspn(cmd, " ");
	size_t r;
	int err = 0;

	if (!l && *cmd && strcmp(cmd, "help") && strcmp(cmd, "info"))
		return no_process();
	if (!strncmp(cmd, "save", 4) && (!cmd[4] || cmd[4] == ' '))
		return save(lt, out, args + strspn(args, " "));
	if (!strcmp(cmd, "start") || !strcmp(cmd, "stop")) {
		if (!strcmp(cmd, "start"))
			err = ops->trace_start(l);
		else
			ops->trace_stop(l);
		if (!err)
			fprintf(out, "tracing %s\n",
				ops->tracing(l) ? "on" : "off");
		return err;
	}
	if (!lt->rt) {
		if (!strcmp(cmd, "help") || !*cmd)
			return rsp_replay_monitor(NULL, thr, out, cmd);
		if (!strcmp(cmd, "info")) {
			info_untraced(lt, out);
			return 0;
		}
		return ptrr_fail(PTRR_ERR_USAGE, "pt %s: nothing is traced "
				 "yet: pt start (or gdb's record pt) begins "
				 "tracing", cmd);
	}
	if (!replay_thr(lt, thr, &r))
		return ptrr_fail(PTRR_ERR_NOTFOUND, "pt %s: thread %d has no "
				 "trace", cmd, lt_of(t)->tids[thr]);
	err = lt->rt->ops->monitor(lt->rt, r, out, cmd);
	if (err >= 0 && !strcmp(cmd, "info")) {
		fprintf(out, "Tracing is %s.\n", ops->tracing(l) ?
			"on" : "off");
		if (l)
			list_overflows(lt, OVF_INFO, out, NULL);
		run_note(lt, out);
	}
	return err;
}

static int op_trace(struct rsp_target *t, size_t thr,
		    const struct hist_cpu **cpu, const uint8_t **data,
		    size_t *size)
{
	struct live_target *lt = lt_of(t);
	struct live_thread_trace tr;
	int err;

	if (thr >= lt->ntids)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %zu", thr);
	*cpu = &lt->cpu;
	if (!lt->src->live->has_trace(lt->l, lt->tids[thr])) {
		/* Not run since tracing began: gdb's "No trace." */
		*data = NULL;
		*size = 0;
		return 0;
	}
	err = lt->src->live->trace_get(lt->l, lt->tids[thr], &tr);
	if (err)
		return err;
	*data = tr.data;
	*size = tr.size;
	return 0;
}

/* Tracing on: `pt start`, gdb's record pt, --record-from-start. */
static int op_trace_start(struct rsp_target *t)
{
	return lt_of(t)->l ? lt_of(t)->src->live->trace_start(lt_of(t)->l) : no_process();
}

int rsp_live_target_record_from_start(struct rsp_target *t)
{
	lt_of(t)->from_start = true;
	return lt_of(t)->l ? op_trace_start(t) : 0;
}

/* ---- Runs ---- */

/* Instructions between two progress points of a traced run. */
#define PROGRESS_EVERY 100000

/* How long a progress point may spend on the call segments: the
 * program may reach its stop meanwhile, which then waits for it. */
#define PROGRESS_BUDGET_MS 100

/* A flag set once PROGRESS_BUDGET_MS have passed, unless ended first. */
struct budget {
	bool over;
	bool ended;
	pthread_mutex_t lock;
	pthread_cond_t end;
	pthread_t thread;
	bool started;
};

static void *budget_timer(void *arg)
{
	struct budget *b = arg;
	struct timespec at;

	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_nsec += PROGRESS_BUDGET_MS * 1000000L;
	at.tv_sec += at.tv_nsec / 1000000000L;
	at.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&b->lock);
	while (!b->ended &&
	       pthread_cond_timedwait(&b->end, &b->lock, &at) == 0)
		;
	__atomic_store_n(&b->over, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* Starts @b (without a timer thread, it is never over). */
static void budget_start(struct budget *b)
{
	*b = (struct budget) { .over = false };
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->end, NULL);
	b->started = !pthread_create(&b->thread, NULL, budget_timer, b);
}

static void budget_end(struct budget *b)
{
	pthread_mutex_lock(&b->lock);
	b->ended = true;
	pthread_cond_signal(&b->end);
	pthread_mutex_unlock(&b->lock);
	if (b->started)
		pthread_join(b->thread, NULL);
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->end);
}

/* A traced run's progress point (live_set_progress): the trace so far
 * goes into the recording, and the call segments are brought up to date
 * while the program runs, for at most PROGRESS_BUDGET_MS (the next
 * progress point goes on from there), so that a stop has only what is
 * left to do and the first reverse step after it does not wait for a
 * pass over the whole run, and a stop that comes meanwhile waits for
 * no more than that.  With the ptrace stepper, the pass keeps up (it
 * costs about 0.1 us an instruction, the stepping a hundred times
 * more); under QEMU it falls behind, and the stop does not wait for it.
 * What fails here is left for the stop to find again. */
static int progress(void *arg)
{
	struct live_target *lt = arg;
	struct budget budget;
	struct history *h;

	if (lt->rec)
		hist_recording_hold_walks(lt->rec, false);
	if (sync_trace(lt, true) < 0)
		ptrr_clear_error();
	/* Not beside this budgeted pass: a replay made by sync_trace()
	 * starts its own (replay_new). */
	if (lt->rt)
		rsp_replay_target_prepare(lt->rt, false);
	budget_start(&budget);
	for (size_t i = 0; lt->rec &&
	     !__atomic_load_n(&budget.over, __ATOMIC_ACQUIRE) &&
	     i < hist_recording_bundle(lt->rec)->nthreads; i++)
		if (hist_recording_history(lt->rec, i, &h) ||
		    hist_calls_prepare(h, &budget.over) < 0)
			ptrr_clear_error();
	budget_end(&budget);
	if (lt->rec)
		hist_recording_hold_walks(lt->rec, true);
	return 0;
}

/* Names the session after the program of the run's header. */
static int name_session(struct live_target *lt)
{
	free(lt->name);
	if (asprintf(&lt->name, "(live session of %s)",
		     lt->launch ? lt->launch->argv[0] : "no program yet") < 0) {
		lt->name = NULL;
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	return 0;
}

/* Begins the run of process lt->l, stopped at @tid (launched or just
 * attached): the session's passed signals, progress points, its
 * threads numbered, traced from now on if @trace. */
static int begin_run(struct live_target *lt, pid_t tid, bool trace)
{
	lt->last = (struct live_stop) { .kind = LIVE_STOP_STEP, .tid = tid };
	lt->src->live->pass_signals(lt->l, lt->pass, lt->npass);
	lt->src->live->set_progress(lt->l, progress, lt, PROGRESS_EVERY);
	int err = number_threads(lt);

	if (!err && trace)
		err = lt->src->live->trace_start(lt->l);
	return err;
}

/* Starts a run: the program of the run's header stopped at its first
 * instruction, with the session's passed signals, traced from there
 * if the session is. */
static int start_run(struct live_target *lt)
{
	int err = name_session(lt);

	lt->attached = false;
	if (!err)
		err = lt->src->live->launch(lt->launch->argv, &lt->opt, &lt->l);
	return err ? err : begin_run(lt, lt->src->live->pid(lt->l),
				     lt->from_start);
}

/* The program and arguments restart() is given, completed from the
 * last run's as target.h says: a malloc'd vector of borrowed strings,
 * NULL if out of memory. */
static char **restart_argv(const struct live_target *lt, char *const argv[])
{
	static char *const none[] = { "", NULL };
	char *const *last = lt->launch ? lt->launch->argv : none, *const *args;
	size_t n = 0, nlast = 0, k = 0;
	char **v;

	while (argv && argv[n])
		n++;
	while (last[nlast])
		nlast++;
	v = calloc(n + nlast + 1, sizeof(*v));
	if (!v)
		return NULL;
	v[k++] = n && argv[0][0] ? argv[0] : last[0];
	for (args = n > 1 ? argv + 1 : last + 1; *args; args++)
		v[k++] = *args;
	return v;
}

static int op_restart(struct rsp_target *t, char *const argv[])
{
	struct live_target *lt = lt_of(t);
	struct hist_bundle *launch = NULL;
	char **v = restart_argv(lt, argv);
	int err = v ? new_header(lt, v, &launch) :
		  ptrr_fail(PTRR_ERR_NOMEM, "out of memory");

	free(v);
	if (!err && !launch->argv[0][0])
		err = ptrr_fail(PTRR_ERR_USAGE, "no program to run: set remote "
				"exec-file PROG names it");
	if (err) {
		hist_bundle_free(launch);
		return err;
	}
	end_run(lt, RSP_DISCONNECT_KILL);
	hist_bundle_free(lt->launch);
	lt->launch = launch;
	lt->run++;
	err = start_run(lt);
	if (err)
		end_run(lt, RSP_DISCONNECT_KILL);
	return err;
}

/* Attaches to process @pid (gdb's vAttach, --attach), ending the run
 * there is first, and traces it from there: its history begins at the
 * attach.  The program of the run is the process's executable, which
 * gdb's run starts afresh. */
static int op_attach(struct rsp_target *t, int pid)
{
	struct live_target *lt = lt_of(t);
	char exe[4096], path[64];
	char *argv[] = { exe, NULL };
	struct hist_bundle *launch = NULL;
	ssize_t n;
	int err;

	if (!lt->src->live->attach)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "cannot attach with "
				 "the %s backend, which traces only the "
				 "programs it starts: use --backend=soft",
				 lt->src->name);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = '\0';
	else
		snprintf(exe, sizeof(exe), "process %d", pid);
	err = new_header(lt, argv, &launch);
	if (err)
		return err;
	end_run(lt, lt->attached ? RSP_DISCONNECT_DETACH : RSP_DISCONNECT_KILL);
	hist_bundle_free(lt->launch);
	lt->launch = launch;
	lt->run++;
	err = name_session(lt);
	if (!err)
		err = lt->src->live->attach((pid_t) pid, &lt->opt, &lt->l);
	lt->attached = !err;
	if (!err)
		err = begin_run(lt, (pid_t) pid, true);
	if (err && lt->l)
		end_run(lt, RSP_DISCONNECT_DETACH);
	if (err)
		lt->last = (struct live_stop) { .kind = LIVE_STOP_EXITED };
	return err;
}

static bool op_attached(struct rsp_target *t)
{
	return lt_of(t)->attached;
}

static int op_release(struct rsp_target *t, bool detach)
{
	struct live_target *lt = lt_of(t);

	/* A detached program the server started stays its child, as
	 * with gdbserver (whose pid stays too): its exit is reaped by the
	 * server's next wait for any child (the capture's), which ignores
	 * a task not its own. */
	end_run(lt, detach ? RSP_DISCONNECT_DETACH : RSP_DISCONNECT_KILL);
	lt->attached = false;
	return 0;
}

void rsp_live_target_on_disconnect(struct rsp_target *t,
				   enum rsp_on_disconnect how)
{
	lt_of(t)->on_close = how;
}

static const struct rsp_target_ops live_ops = {
	.close = op_close,
	.nthreads = op_nthreads,
	.tid = op_tid,
	.find_tid = op_find_tid,
	.status = op_status,
	.replaying = op_replaying,
	.regs = op_regs,
	.write_reg = op_write_reg,
	.read_memory = op_read_memory,
	.write_memory = op_write_memory,
	.breakpoint = op_breakpoint,
	.resume = op_resume,
	.xfer = op_xfer,
	.open_file = op_open_file,
	.monitor = op_monitor,
	.resume_threads = op_resume_threads,
	.trace = op_trace,
	.pass_signals = op_pass_signals,
	.trace_start = op_trace_start,
	.restart = op_restart,
	.release = op_release,
	.attach = op_attach,
	.attached = op_attached,
};

int rsp_live_target_open(const struct tsrc_ops *src, char *const argv[],
			 const struct live_options *opt,
			 struct rsp_target **out)
{
	struct live_target *lt = calloc(1, sizeof(*lt));
	int err;

	*out = NULL;
	if (!lt)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	lt->base.ops = &live_ops;
	lt->src = src;
	lt->run = argv ? 1 : 0;
	if (opt)
		lt->opt = *opt;
	/* No program yet: as after a run that exited (gdb's `?` W00). */
	lt->last = (struct live_stop) { .kind = LIVE_STOP_EXITED };
	err = new_header(lt, argv ? argv : (char *const[]) { "", NULL },
			 &lt->launch);
	if (!err)
		lt->cpu = lt->launch->cpu;
	if (!err && !argv) {
		hist_bundle_free(lt->launch);
		lt->launch = NULL;
		err = name_session(lt);
	}
	if (!err && argv)
		err = start_run(lt);
	if (err) {
		op_close(&lt->base);
		return err;
	}
	*out = &lt->base;
	return 0;
}
