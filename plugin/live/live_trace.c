/* Tracing a live session with the software backend: each thread's
 * instructions, fed by the stepper's events, written as PT packets into
 * a growing buffer (as `ptrr record --mode=full` does), enabled when a
 * traced run starts and stopped (FUP + TIP.PGD) where the thread is when
 * it ends, so that each stop's trace is the previous one with bytes
 * appended.  A run that would add more than the cap ends in an overflow
 * instead, and the next run is traced again.  See live.h. */
#include <config.h>

#include "live/live_internal.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

int live_trace_start(struct live *l)
{
	if (live_ended(l))
		return ptrr_fail(PTRR_ERR_USAGE, "the process is not running: "
				 "start it again");
	l->tracing = true;
	return 0;
}

void live_trace_stop(struct live *l)
{
	l->tracing = false;
}

bool live_tracing(const struct live *l)
{
	return l->tracing;
}

/* The trace of thread @tid, or NULL. */
static struct live_trace *trace_find(const struct live *l, pid_t tid)
{
	for (size_t i = l->ntraces; i-- > 0;)
		if (l->traces[i]->tid == tid && !l->traces[i]->ended)
			return l->traces[i];
	for (size_t i = 0; i < l->ntraces; i++)
		if (l->traces[i]->tid == tid)
			return l->traces[i];
	return NULL;
}

/* Appends @lt to the session's traces. */
static int trace_add(struct live *l, struct live_trace *lt)
{
	if (l->ntraces == l->traces_alloc) {
		size_t n = l->traces_alloc ? 2 * l->traces_alloc : 8;
		struct live_trace **v = realloc(l->traces, n * sizeof(*v));

		if (!v)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		l->traces = v;
		l->traces_alloc = n;
	}
	l->traces[l->ntraces++] = lt;
	return 0;
}

/* The trace of thread @tid, made if it has none. */
static int trace_of(struct live *l, pid_t tid, struct live_trace **out)
{
	struct live_trace *lt = trace_find(l, tid);
	struct cap_emit_config cfg;
	int err;

	*out = lt;
	if (lt && !lt->ended)
		return 0;
	lt = calloc(1, sizeof(*lt));
	if (!lt)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	lt->tid = tid;
	cap_emit_config_default(&cfg);
	err = cap_ring_init(&lt->ring, 0);
	if (!err)
		err = cap_emit_init(&lt->em, &lt->ring, &cfg);
	if (!err)
		err = trace_add(l, lt);
	if (err) {
		cap_emit_fini(&lt->em);
		cap_ring_fini(&lt->ring);
		free(lt);
		return err;
	}
	*out = lt;
	return 0;
}

/* Enables @lt's packets with its thread about to execute @ip: a run
 * begins, with the whole cap to fill. */
static int trace_enable(struct live_trace *lt, uint64_t ip)
{
	if (lt->on)
		return 0;
	lt->on = true;
	lt->end_ip = ip;
	lt->run_from = cap_ring_size(&lt->ring);
	lt->run_lost = 0;
	return cap_emit_enable(&lt->em, ip);
}

/* Stops @lt's packets with its thread before @ip; @gone: it ended.  A
 * run that filled the cap first says where the lost part ends: an OVF,
 * then the thread at @ip. */
static int trace_disable(struct live_trace *lt, uint64_t ip, bool gone)
{
	int err = 0;

	if (!lt->on)
		return 0;
	lt->on = false;
	lt->end_ip = ip;
	if (lt->over) {
		lt->over = false;
		err = cap_emit_overflow(&lt->em, ip);
	}
	if (err)
		return err;
	return gone ? cap_emit_disable(&lt->em, ip) : cap_emit_stop(&lt->em, ip);
}

int live_trace_begin_run(struct live *l)
{
	struct live_trace *lt;
	int err = 0;

	for (size_t i = 0; !err && i < l->s.nthreads; i++) {
		struct cap_thread *t = l->s.threads[i];

		/* A thread at its exit stop has its whole trace. */
		if (t->state != CAP_TS_STOPPED || t->held || t->end.kind)
			continue;
		err = trace_of(l, t->tid, &lt);
		if (!err)
			err = trace_enable(lt, t->regs.rip);
	}
	return err;
}

int live_trace_end_run(struct live *l)
{
	int err = 0;

	for (size_t i = 0; !err && i < l->s.nthreads; i++) {
		struct cap_thread *t = l->s.threads[i];
		struct live_trace *lt = trace_find(l, t->tid);

		if (lt && !lt->ended && t->state == CAP_TS_STOPPED)
			err = trace_disable(lt, t->ip, false);
	}
	return err;
}

/* One retired instruction of @lt's thread.  Once the run has added the
 * cap's worth of bytes, as when the CPU finds perf's AUX area full, the
 * rest of the run is only counted (trace_disable() ends it in an OVF). */
static int trace_insn(struct live *l, struct live_trace *lt,
		      const struct cap_event *ev)
{
	size_t cap = l->trace_cap ? l->trace_cap : LIVE_TRACE_CAP_DEFAULT;

	if (!lt->on)
		return 0;
	lt->end_ip = ev->next_ip;
	if (!lt->over && cap_ring_size(&lt->ring) - lt->run_from >= cap) {
		lt->over = true;
		lt->overflows++;
	}
	if (lt->over) {
		lt->lost++;
		lt->run_lost++;
		return 0;
	}
	return cap_emit_decoded(&lt->em, ev->ip, &ev->insn, ev->next_ip);
}

int live_trace_event(struct live *l, const struct cap_event *ev)
{
	struct live_trace *lt = trace_find(l, ev->thread->tid);
	int err;

	switch (ev->kind) {
	case CAP_EV_THREAD:
	case CAP_EV_EXEC:
		err = trace_of(l, ev->thread->tid, &lt);
		return err ? err : trace_enable(lt, ev->ip);
	case CAP_EV_INSN:
		return lt ? trace_insn(l, lt, ev) : 0;
	case CAP_EV_SIGNAL:
		return lt && lt->on && !lt->over ?
			cap_emit_async(&lt->em, ev->ip) : 0;
	case CAP_EV_END:
		if (!lt)
			return 0;
		err = trace_disable(lt, ev->thread->ip, ev->thread->end.kind &&
				    ev->thread->end.kind != CAP_END_FAULT);
		lt->ended = true;
		return err;
	default:
		return 0;
	}
}

size_t live_traced_threads(const struct live *l, pid_t *tids, size_t max)
{
	for (size_t i = 0; i < l->ntraces && i < max; i++)
		tids[i] = l->traces[i]->tid;
	return l->ntraces;
}

bool live_has_trace(const struct live *l, pid_t tid)
{
	return trace_find(l, tid) != NULL;
}

int live_trace_get(const struct live *l, pid_t tid,
		   struct live_thread_trace *out)
{
	const struct live_trace *lt = trace_find(l, tid);

	memset(out, 0, sizeof(*out));
	if (!lt)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "thread %d has no trace: "
				 "start tracing first", (int) tid);
	out->data = lt->ring.buf;
	out->size = cap_ring_size(&lt->ring);
	out->have_end_ip = true;
	out->end_ip = lt->end_ip;
	out->ended = lt->ended;
	out->overflows = lt->overflows;
	out->lost = lt->lost;
	out->run_lost = lt->run_lost;
	return 0;
}

void live_trace_free_all(struct live *l)
{
	for (size_t i = 0; i < l->ntraces; i++) {
		cap_emit_fini(&l->traces[i]->em);
		cap_ring_fini(&l->traces[i]->ring);
		free(l->traces[i]);
	}
	free(l->traces);
	l->traces = NULL;
	l->ntraces = 0;
}
