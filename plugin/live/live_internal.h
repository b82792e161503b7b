/* plugin/live — what the session's files share; see live.h. */
#ifndef PTRR_LIVE_INTERNAL_H
#define PTRR_LIVE_INTERNAL_H

#include "live/live.h"
#include "capture/emit.h"
#include "capture/ring.h"
#include "capture/stepper_internal.h"

/* The trace of one thread (tracing with the software backend): its
 * packets, in a growing buffer capped at cap bytes. */
struct live_trace {
	pid_t tid;
	struct cap_ring ring;
	struct cap_emit em;
	bool on;			/* enabled: packets flow */
	bool ended;			/* the thread is gone */
	bool full;			/* reached the cap: OVF written, no more */
	uint64_t end_ip;		/* where it stopped */
};

/* One software breakpoint; orig is the byte under its int3 while
 * planted. */
struct live_bp {
	uint64_t addr;
	uint8_t orig;
	bool planted;
};

struct live {
	struct cap_stepper s;
	struct live_bp *bps;
	size_t nbps, bps_alloc;
	bool pass[NSIG];		/* signals passed without stopping */
	pid_t step_tid;			/* the thread single-stepping */
	pid_t last_tid;			/* the thread of the last stop */
	pid_t tracer;			/* our thread that ptrace()s */
	volatile sig_atomic_t sigint_sent;	/* by live_interrupt(), to
						 * drop when it arrives */
	struct live_stop stop;		/* the stop of the run under way */
	bool tracing;			/* live_trace_start() */
	size_t trace_cap;		/* bytes per thread */
	struct live_trace **traces;	/* every thread ever traced */
	size_t ntraces, traces_alloc;
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

#endif
