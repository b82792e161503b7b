/* gdb's non-stop mode (server.h): threads that run and stop apart.
 *
 * gdb asks for it with QNonStop:1 (`set non-stop on`).  Then a vCont
 * resumes or stops (t) the threads it names and is answered OK at once;
 * each thread that stops later is told in a stop notification
 * (%Stop:T05...), one at a time: gdb acknowledges one with vStopped,
 * answered with the next stop not told yet, or OK when there is none
 * (gdbserver's notif_stop queue).  '?' starts such a sequence with every
 * stopped thread.
 *
 * The target runs the threads gdb resumed while the others stay stopped
 * (its resume_threads()), until one of them stops or gdb sends a request:
 * the server then stops them all, answers, and runs them again.  gdb
 * sees threads that run on; requests are served with the process at
 * rest, as all the other calls of the target expect.  A thread that
 * steps runs alone for its instruction, so that the stop of another one
 * cannot come in between.
 */
#include <config.h>

#include "gdbremote/server.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One thread as gdb sees it. */
struct ns_thread {
	bool running;		/* resumed and not stopped since */
	bool step;		/* by s/S: one instruction */
	int sig;		/* host signal to deliver as it goes on */
};

struct rsp_ns {
	struct ns_thread *thr;	/* by thread number */
	size_t n;
	struct rsp_stop *queue;	/* stops gdb has not acknowledged; the */
	size_t nqueue, cap;	/* first was sent if in_flight */
	bool in_flight;
};

/* True if thread @thr is still there. */
static bool alive(struct rsp_server *s, size_t thr)
{
	size_t found;

	return s->target->ops->find_tid(s->target,
					s->target->ops->tid(s->target, thr),
					&found) == 0 && found == thr;
}

/* Numbers the threads the target has now: new ones are @running (made
 * by a running thread: gdb takes threads it finds for running). */
static bool grow(struct rsp_server *s, bool running)
{
	struct rsp_ns *ns = s->ns;
	size_t n = s->target->ops->nthreads(s->target);
	struct ns_thread *v;

	if (n <= ns->n)
		return true;
	if (!(v = realloc(ns->thr, n * sizeof(*v))))
		return false;
	for (size_t i = ns->n; i < n; i++)
		v[i] = (struct ns_thread) { .running = running };
	ns->thr = v;
	ns->n = n;
	return true;
}

/* Adds @st to the stops gdb is to be told. */
static void queue_stop(struct rsp_server *s, const struct rsp_stop *st)
{
	struct rsp_ns *ns = s->ns;

	if (ns->nqueue == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 8;
		struct rsp_stop *v = realloc(ns->queue, cap * sizeof(*v));

		if (!v) {
			fprintf(stderr, "ptrr serve: out of memory: a stop "
				"of thread %zu is not told\n", st->thr);
			return;
		}
		ns->queue = v;
		ns->cap = cap;
	}
	ns->queue[ns->nqueue++] = *st;
}

/* True if a stop of thread @thr waits to be acknowledged: gdb's
 * resumptions leave such a thread alone (gdb has not seen it stop). */
static bool stop_pending(const struct rsp_server *s, size_t thr)
{
	for (size_t i = 0; i < s->ns->nqueue; i++)
		if (s->ns->queue[i].thr == thr)
			return true;
	return false;
}

/* Forgets every thread's state and every stop not told (the process is
 * gone, or gdb changes mode). */
static void forget(struct rsp_server *s)
{
	if (!s->ns)
		return;
	free(s->ns->thr);
	free(s->ns->queue);
	free(s->ns);
	s->ns = NULL;
}

void rsp_ns_free(struct rsp_server *s)
{
	forget(s);
	s->non_stop = false;
}

void rsp_ns_reset(struct rsp_server *s)
{
	if (!s->non_stop)
		return;
	forget(s);
	s->ns = calloc(1, sizeof(*s->ns));
	if (!s->ns || !grow(s, false))
		s->non_stop = false;
}

void rsp_ns_set(struct rsp_server *s, const char *arg)
{
	int err;

	if (!strcmp(arg, "0")) {
		rsp_ns_free(s);
		rsp_reply_str(s, "OK");
		return;
	}
	if (strcmp(arg, "1")) {
		rsp_reply_str(s, "E01");
		return;
	}
	if (rsp_proc_nalive(s) > 1) {
		rsp_reply_str(s, "E.ptrr's non-stop mode debugs one process "
			      "at a time.");
		return;
	}
	if (!s->target->ops->resume_threads) {
		rsp_reply_str(s, "E.A recording has no non-stop mode: its "
			      "threads do not run.");
		return;
	}
	err = s->target->ops->resume_threads(s->target, NULL, 0, SIZE_MAX,
					     SIZE_MAX, NULL);
	if (err < 0) {
		rsp_reply_printf(s, "E.%s", ptrr_errmsg(err));
		return;
	}
	s->non_stop = true;
	rsp_ns_reset(s);
	rsp_reply_str(s, s->non_stop ? "OK" : "E.Out of memory.");
}

/* Replies with the first stop not acknowledged, or OK if there is
 * none (the end of a vStopped sequence). */
static void reply_first(struct rsp_server *s)
{
	s->ns->in_flight = s->ns->nqueue > 0;
	if (s->ns->nqueue)
		rsp_reply_stop(s, &s->ns->queue[0]);
	else
		rsp_reply_str(s, "OK");
}

void rsp_ns_status(struct rsp_server *s)
{
	struct rsp_ns *ns = s->ns;
	struct rsp_stop st;

	ns->nqueue = 0;
	/* No process yet (--multi) or since a kill: nothing stopped (OK),
	 * as gdbserver says.  ("W00;process:0" made gdb take the stop of
	 * its next run for one of process 0's: gdb's internal error in
	 * select_thread_for_ambiguous_stop_reply.) */
	if (s->no_process || !rsp_process_id(s)) {
		reply_first(s);
		return;
	}
	s->target->ops->status(s->target, SIZE_MAX, &st);
	if (st.why == RSP_STOP_EXITED || st.why == RSP_STOP_KILLED) {
		queue_stop(s, &st);
	} else if (grow(s, false)) {
		for (size_t i = 0; i < ns->n; i++) {
			if (ns->thr[i].running || !alive(s, i))
				continue;
			s->target->ops->status(s->target, i, &st);
			queue_stop(s, &st);
		}
	}
	reply_first(s);
}

void rsp_ns_vstopped(struct rsp_server *s)
{
	struct rsp_ns *ns = s->ns;

	if (ns->in_flight && ns->nqueue)
		memmove(ns->queue, ns->queue + 1,
			--ns->nqueue * sizeof(*ns->queue));
	reply_first(s);
}

/* Applies vCont action @a to thread @thr. */
static void apply(struct rsp_server *s, const struct rsp_vcont_action *a,
		  size_t thr)
{
	struct ns_thread *t = &s->ns->thr[thr];

	if (stop_pending(s, thr))
		return;
	if (a->what == 't') {
		if (t->running) {
			*t = (struct ns_thread) { 0 };
			queue_stop(s, &(struct rsp_stop) {
				.thr = thr, .why = RSP_STOP_SIGNAL });
		}
		return;
	}
	if (t->running)
		return;
	*t = (struct ns_thread) { .running = true,
				  .step = a->what == 's' || a->what == 'S',
				  .sig = a->sig };
}

void rsp_ns_vcont(struct rsp_server *s, const char *args)
{
	struct rsp_ns *ns = s->ns;
	struct rsp_vcont_action a;
	bool *done;

	if (!grow(s, false) || !(done = calloc(ns->n + 1, sizeof(*done)))) {
		rsp_reply_str(s, "E.Out of memory.");
		return;
	}
	/* Each thread takes the first action that names it. */
	for (; *args == ';'; args += 1 + strcspn(args + 1, ";")) {
		if (!rsp_parse_vcont_action(s, args + 1, &a))
			break;
		for (size_t i = 0; i < ns->n; i++) {
			if (done[i] || (!a.all && a.thr != i) || !alive(s, i))
				continue;
			done[i] = true;
			apply(s, &a, i);
		}
	}
	free(done);
	rsp_reply_str(s, *args ? "E01" : "OK");
}

void rsp_ns_ctrlc(struct rsp_server *s)
{
	struct rsp_ns *ns = s->ns;

	for (size_t i = 0; i < ns->n; i++) {
		if (!ns->thr[i].running || !alive(s, i))
			continue;
		ns->thr[i] = (struct ns_thread) { 0 };
		queue_stop(s, &(struct rsp_stop) {
			.thr = i, .why = RSP_STOP_SIGNAL, .signal = SIGINT });
		break;
	}
	rsp_reply_str(s, "OK");
}

void rsp_ns_stopped(struct rsp_server *s, const struct rsp_stop *st)
{
	queue_stop(s, st);
	s->silent = true;
}

bool rsp_ns_running(struct rsp_server *s)
{
	if (!s->non_stop || !s->ns)
		return false;
	for (size_t i = 0; i < s->ns->n; i++) {
		if (!s->ns->thr[i].running)
			continue;
		if (alive(s, i))
			return true;
		s->ns->thr[i] = (struct ns_thread) { 0 };	/* it ended */
	}
	return false;
}

/* The threads to run next (@run[i]), the one that steps (*@step, or
 * SIZE_MAX) and the one given its signal (*@sig_thr): a stepping thread
 * alone, else every continuing one. */
static void choose(struct rsp_server *s, bool *run, size_t *step,
		   size_t *sig_thr)
{
	struct rsp_ns *ns = s->ns;

	*step = *sig_thr = SIZE_MAX;
	for (size_t i = 0; i < ns->n && *step == SIZE_MAX; i++)
		if (ns->thr[i].running && ns->thr[i].step)
			*step = i;
	for (size_t i = 0; i < ns->n; i++) {
		run[i] = ns->thr[i].running &&
			 (*step == SIZE_MAX ? !ns->thr[i].step : i == *step);
		if (run[i] && ns->thr[i].sig && *sig_thr == SIZE_MAX)
			*sig_thr = i;
	}
}

int rsp_ns_run(struct rsp_server *s)
{
	struct rsp_ns *ns = s->ns;
	struct rsp_stop st;
	size_t step, sig_thr;
	bool *run = calloc(ns->n + 1, sizeof(*run));
	int err;

	if (!run)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	choose(s, run, &step, &sig_thr);
	s->target->signal = sig_thr == SIZE_MAX ? 0 : ns->thr[sig_thr].sig;
	err = s->target->ops->resume_threads(s->target, run, ns->n, step,
					     sig_thr, &st);
	free(run);
	if (sig_thr != SIZE_MAX)
		ns->thr[sig_thr].sig = 0;
	if (err < 0) {
		/* gdb waits for their stops: they stopped, for this. */
		fprintf(stderr, "ptrr serve: %s\n", ptrr_errmsg(err));
		for (size_t i = 0; i < ns->n; i++)
			if (ns->thr[i].running)
				apply(s, &(struct rsp_vcont_action) {
					.what = 't' }, i);
		return 0;
	}
	if (st.why == RSP_STOP_EXITED || st.why == RSP_STOP_KILLED) {
		for (size_t i = 0; i < ns->n; i++)
			ns->thr[i] = (struct ns_thread) { 0 };
		queue_stop(s, &st);
		return 0;
	}
	if (!grow(s, true))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (st.thr < ns->n) {
		ns->thr[st.thr] = (struct ns_thread) { 0 };
		queue_stop(s, &st);
	}
	return 0;
}

int rsp_ns_notify(struct rsp_server *s)
{
	struct rsp_ns *ns = s->ns;

	if (!s->non_stop || !ns || ns->in_flight || !ns->nqueue)
		return 0;
	ns->in_flight = true;
	rsp_reply_reset(s);
	rsp_reply_str(s, "Stop:");
	rsp_reply_stop(s, &ns->queue[0]);
	return rsp_conn_notify(&s->conn, s->reply, s->reply_len);
}
