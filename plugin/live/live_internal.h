/* plugin/live — what the session's files share; see live.h. */
#ifndef PTRR_LIVE_INTERNAL_H
#define PTRR_LIVE_INTERNAL_H

#include "live/live.h"
#include "capture/emit.h"
#include "capture/ring.h"
#include "capture/stepper_internal.h"
#include "source.h"

/* The trace of one thread (tracing with the software backend): its
 * packets, in a growing buffer to which each run adds at most
 * trace_cap bytes (live.h). */
struct live_trace {
	pid_t tid;
	struct cap_ring ring;
	struct cap_emit em;
	bool on;			/* enabled: packets flow */
	bool ended;			/* the thread is gone */
	bool over;			/* this run filled its area: the rest
					 * of the run is lost to an OVF */
	size_t run_from;		/* the buffer's size when the run began */
	unsigned overflows;		/* runs that filled their area */
	uint64_t lost;			/* instructions not traced in them */
	uint64_t run_lost;		/* ... in the last run */
	uint64_t end_ip;		/* where it stopped */
};

/* One breakpoint, set as a software one (sw), gdb's hardware one (hw)
 * or both; orig is the byte under its int3 while planted. */
struct live_bp {
	uint64_t addr;
	uint8_t orig;
	bool planted;
	bool sw, hw;
};

/* One watchpoint; old is its bytes as last seen (without debug
 * registers). */
struct live_watch {
	uint64_t addr;
	size_t len;
	enum live_watch_kind kind;
	bool readable;
	uint8_t old[8 * LIVE_WATCH_SLOTS];
};

/* A naturally aligned piece of watchpoint @watch: one debug register. */
struct live_wpiece {
	uint64_t addr;
	size_t len;			/* 1, 2, 4 or 8 */
	enum live_watch_kind kind;
	size_t watch;
};

/* Thread @tid came to breakpoint @pc (not run yet). */
struct live_hit {
	pid_t tid;
	uint64_t pc;
};

struct live {
	struct tsrc base;		/* a live session of tsrc_soft
					 * (live_source.c) */
	struct cap_stepper s;
	struct live_bp *bps;
	size_t nbps, bps_alloc;
	bool pass[NSIG];		/* signals passed without stopping */
	pid_t step_tid;			/* the thread single-stepping */
	pid_t last_tid;			/* the thread of the last stop */
	pid_t tracer;			/* our thread that ptrace()s */
	int sigint_sent;		/* SIGINTs live_interrupt() sent
					 * (from another thread, __atomic)
					 * not yet seen: to drop */
	int sigint_sending;		/* live_interrupt() calls between
					 * counting a SIGINT and sending it
					 * (__atomic) */
	unsigned sigint_delay_us;	/* before sending one (tests) */
	struct live_stop stop;		/* the stop of the run under way */
	bool tracing;			/* live_trace_start() */
	bool insn_step;			/* never block-step (live_options) */
	size_t trace_cap;		/* bytes per thread */
	struct live_trace **traces;	/* every thread ever traced */
	size_t ntraces, traces_alloc;
	struct live_watch watches[LIVE_WATCH_SLOTS];
	size_t nwatches;
	struct live_wpiece wpieces[LIVE_WATCH_SLOTS];
	size_t nwpieces;
	bool watch_hw;			/* in the debug registers, else by
					 * single-stepping */
	bool others_run;		/* the threads but step_tid run too */
	struct live_hit *hits;		/* breakpoints threads reached in a
					 * traced run after its stop: told
					 * at the next resume */
	size_t nhits, hits_alloc;
	int (*progress)(void *arg);	/* live_set_progress() */
	void *progress_arg;
	uint64_t progress_every, progress_left;
};

/* The index of the breakpoint at @addr, or -1. */
ssize_t live_bp_find(const struct live *l, uint64_t addr);

/* Tracing: before a traced run, every stopped thread's trace is enabled
 * where it is; the run's events feed the emitter (live_trace_event
 * returns > 0 to stop the run at a breakpoint); after the run each trace
 * is stopped where its thread is. */
int live_trace_begin_run(struct live *l);
int live_trace_event(struct live *l, const struct cap_event *ev);
int live_trace_end_run(struct live *l);
void live_trace_free_all(struct live *l);

/* Watchpoints (live_watch.c).  DR7 for pieces @p[0..@n). */
uint64_t live_dr7(const struct live_wpiece *p, size_t n);
/* Cuts [@addr, @addr + @len) into naturally aligned pieces of watchpoint
 * @watch, writing up to @max into @out; returns how many it takes. */
size_t live_watch_cut(uint64_t addr, size_t len, enum live_watch_kind kind,
		      size_t watch, struct live_wpiece *out, size_t max);
/* Gives new thread @tid the session's debug registers. */
int live_watch_thread(struct live *l, pid_t tid);
/* Takes every watchpoint out (before letting the process go). */
void live_watch_forget(struct live *l);
/* Keeps the watched bytes as they are now (without debug registers). */
void live_watch_snapshot(struct live *l);
/* True if thread @tid, stopped by a SIGTRAP (@ev NULL) or after
 * instruction @ev, accessed a watchpoint: its address and kind in
 * @stop. */
bool live_watch_hit(struct live *l, pid_t tid, const struct cap_event *ev,
		    struct live_stop *stop);
/* True if runs single-step because software watchpoints are set. */
static inline bool live_watch_stepping(const struct live *l)
{
	return l->nwatches && !l->watch_hw;
}

#endif
