/* The replay target (target.h): a bundle's recording, moved through by
 * replay/ — registers at the end of history and the PC elsewhere, memory
 * from the snapshot and the code, breakpoints as addresses that
 * replay_continue_until() searches for, stopping at gdb's interrupt. */
#include <config.h>

#include "gdbremote/target_replay.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_abi.h"

/* The replay target @t is. */
static struct replay_target *self(struct rsp_target *t)
{
	return (struct replay_target *) t;
}

/* Frees target @t. */
static void replay_target_close(struct rsp_target *t)
{
	struct replay_target *r = self(t);

	rsp_unwind_forget(r);
	replay_free(r->rp);
	if (r->owns_rec)
		hist_recording_close(r->rec);
	free(r);
}

/* Thread count. */
static size_t replay_target_nthreads(struct rsp_target *t)
{
	return replay_nthreads(self(t)->rp);
}

/* Task id of thread @thr. */
static int replay_target_tid(struct rsp_target *t, size_t thr)
{
	return replay_tid(self(t)->rp, thr);
}

/* The thread of task id @tid. */
static int replay_target_find_tid(struct rsp_target *t, int tid, size_t *thr)
{
	return replay_find_tid(self(t)->rp, tid, thr);
}

/* The signal thread @thr's recorded stop reports at its end. */
static int end_signal(const struct replay_target *r, size_t thr)
{
	const struct hist_thread *ht = &r->b->threads[thr];

	return ht->stop.kind == HIST_STOP_FAULT ? ht->stop.code : SIGTRAP;
}

/* A thread is stopped where it is: at its end by its recorded stop (a
 * crash's signal), elsewhere by a step.  SIZE_MAX: the thread that
 * crashed, else the first. */
static void replay_target_status(struct rsp_target *t, size_t thr,
				 struct rsp_stop *st)
{
	struct replay_target *r = self(t);

	if (thr == SIZE_MAX) {
		thr = 0;
		for (size_t i = 0; i < r->b->nthreads; i++)
			if (r->b->threads[i].stop.kind == HIST_STOP_FAULT) {
				thr = i;
				break;
			}
	}
	st->thr = thr;
	st->why = RSP_STOP_SIGNAL;
	st->signal = replay_at_end(r->rp, thr) ? end_signal(r, thr) : SIGTRAP;
}

/* Anywhere but the end of its history a thread is replaying. */
static bool replay_target_replaying(struct rsp_target *t, size_t thr)
{
	return !replay_at_end(self(t)->rp, thr);
}

/* replay_regs(). */
static void replay_target_regs(struct rsp_target *t, size_t thr,
			       uint64_t vals[HIST_NREGS],
			       bool known[HIST_NREGS])
{
	replay_regs(self(t)->rp, thr, vals, known);
}

/* A recording cannot be changed. */
static int replay_target_write_reg(struct rsp_target *t, size_t thr,
				   unsigned reg, uint64_t value)
{
	(void) t, (void) thr, (void) reg, (void) value;
	return ptrr_fail(PTRR_ERR_UNSUPPORTED, "registers cannot be "
			 "written in a recording");
}

/* A recording cannot be changed. */
static int replay_target_write_memory(struct rsp_target *t, uint64_t addr,
				      const uint8_t *buf, size_t len)
{
	(void) t, (void) addr, (void) buf, (void) len;
	return ptrr_fail(PTRR_ERR_UNSUPPORTED, "memory cannot be written "
			 "in a recording");
}

/* The unwind range, the loader's page, and what replay_read_memory()
 * says is known at thread @thr's position. */
static size_t replay_target_read_memory(struct rsp_target *t, size_t thr,
					uint64_t addr, uint8_t *buf,
					size_t len)
{
	struct replay_target *r = self(t);

	if (addr >= PTRR_UNWIND_ADDR &&
	    addr - PTRR_UNWIND_ADDR < PTRR_UNWIND_SIZE)
		return rsp_unwind_read(r, thr, addr - PTRR_UNWIND_ADDR,
				       buf, len);
	if (addr >= RSP_LOADER_ADDR && addr - RSP_LOADER_ADDR < RSP_LOADER_SIZE)
		return rsp_loader_read(r, addr - RSP_LOADER_ADDR, buf, len);
	return replay_read_memory(r->rp, thr, addr, buf, len);
}

/* Watchpoint @type of @len bytes at @addr inserted or removed: the
 * replay searches for the writes to them (replay_continue_watch). */
static int watchpoint(struct replay_target *r, enum rsp_break_type type,
		      uint64_t addr, unsigned len, bool insert)
{
	for (size_t i = 0; i < r->nwatches; i++) {
		if (r->watches[i].addr != addr || r->watches[i].len != len ||
		    r->watch_type[i] != type)
			continue;
		if (!insert) {
			r->nwatches--;
			r->watches[i] = r->watches[r->nwatches];
			r->watch_type[i] = r->watch_type[r->nwatches];
		}
		return 0;
	}
	if (!insert)
		return 0;
	if (r->nwatches == RSP_MAX_WATCHPOINTS)
		return ptrr_fail(PTRR_ERR_USAGE, "more than %d watchpoints",
				 RSP_MAX_WATCHPOINTS);
	r->watches[r->nwatches] = (struct replay_watch) {
		.addr = addr, .len = len ? len : 1 };
	r->watch_type[r->nwatches++] = type;
	return 0;
}

/* Execution breakpoints (Z0, Z1) are one set of addresses; write and
 * access watchpoints (Z2, Z4) are searched for as writes, as gdb's record
 * full sees them in its replay; Z3 (reads only) is refused: x86 cannot
 * watch reads alone, and the empty reply lets gdb say so. */
static int replay_target_breakpoint(struct rsp_target *t,
				    enum rsp_break_type type, uint64_t addr,
				    unsigned kind, bool insert)
{
	struct replay_target *r = self(t);

	if (type == RSP_WATCH_WRITE || type == RSP_WATCH_ACCESS)
		return watchpoint(r, type, addr, kind, insert);
	if (type != RSP_BREAK_SW && type != RSP_BREAK_HW)
		return PTRR_ERR_UNSUPPORTED;
	for (size_t i = 0; i < r->nbps; i++) {
		if (r->bps[i] != addr)
			continue;
		if (!insert)
			r->bps[i] = r->bps[--r->nbps];
		return 0;
	}
	if (!insert)
		return 0;
	if (r->nbps == RSP_MAX_BREAKPOINTS)
		return ptrr_fail(PTRR_ERR_USAGE, "more than %d breakpoints",
				 RSP_MAX_BREAKPOINTS);
	r->bps[r->nbps++] = addr;
	return 0;
}

/* True if every watched byte is known at thread @thr's position: gdb
 * then knows the old value and shows a change; where it does not, a stop
 * that is not a proven write is not worth a word on its console (gdb goes
 * on: the value is unknown on both sides; pt info still says why). */
static bool watched_known(struct replay_target *r, size_t thr)
{
	uint8_t buf[64];

	for (size_t i = 0; i < r->nwatches; i++)
		if (r->watches[i].len > sizeof(buf) ||
		    replay_read_memory(r->rp, thr, r->watches[i].addr, buf,
				       r->watches[i].len) < r->watches[i].len)
			return false;
	return r->nwatches > 0;
}

/* Marks the write watches that gdb read, unknown, at the last stop (a
 * watchpoint stop of thread @thr where it stands), so that the move
 * passes over the stops gdb would go on from (watch.c); none otherwise. */
static void mark_unreadable(struct replay_target *r, size_t thr)
{
	const char *pass = getenv("PTRR_WATCH_PASS");
	/* PTRR_WATCH_PASS=0: every such stop goes to gdb, as before (for
	 * tests/gdb-watch.sh, which compares the two). */
	bool here = r->unread.n && r->unread.thr == thr &&
		    r->unread.position == replay_position(r->rp, thr) &&
		    !(pass && !strcmp(pass, "0"));

	for (size_t i = 0; i < r->nwatches; i++) {
		struct replay_watch *w = &r->watches[i];

		w->unreadable = false;
		for (size_t j = 0; here && j < r->unread.n; j++)
			if (r->unread.w[j].addr == w->addr &&
			    r->unread.w[j].len == w->len &&
			    r->watch_type[i] == RSP_WATCH_WRITE)
				w->unreadable = true;
	}
}

/* After a watchpoint stop of thread @thr naming @addr: the write watches
 * gdb checks there (those containing @addr) whose value it will read as
 * unreadable, for mark_unreadable(). */
static void note_unreadable(struct replay_target *r, size_t thr,
			    uint64_t addr)
{
	uint8_t buf[64];

	r->unread.n = 0;
	r->unread.thr = thr;
	r->unread.position = replay_position(r->rp, thr);
	for (size_t i = 0; i < r->nwatches; i++) {
		const struct replay_watch *w = &r->watches[i];

		if (addr - w->addr >= w->len ||
		    r->watch_type[i] != RSP_WATCH_WRITE || w->len > sizeof(buf))
			continue;
		if (replay_read_memory(r->rp, thr, w->addr, buf, w->len) <
		    w->len)
			r->unread.w[r->unread.n++] = *w;
	}
}

/* The stop of a move of thread @thr in direction @dir that ended as @res
 * says; @arrived if it was not at the end before. */
static void moved(struct replay_target *r, size_t thr, int dir,
		  const struct replay_result *res, bool arrived,
		  struct rsp_stop *st)
{
	st->thr = thr;
	st->signal = SIGTRAP;
	st->note[0] = 0;
	switch (res->stop) {
	case REPLAY_STOP_WATCH:
		/* A write not proven is reported as a write, so that gdb
		 * reads the value here (<unavailable> where not known) and
		 * keeps it as the old value; the console says why. */
		st->why = RSP_STOP_WATCH;
		st->addr = res->watch_addr;
		for (size_t i = 0; i < r->nwatches; i++)
			if (res->watch_addr - r->watches[i].addr <
			    r->watches[i].len &&
			    r->watch_type[i] == RSP_WATCH_ACCESS)
				st->why = RSP_STOP_AWATCH;
		snprintf(r->watch_why, sizeof(r->watch_why), "%s", res->why);
		if (res->why[0] && r->watch_known)
			snprintf(st->note, sizeof(st->note), "ptrr: the "
				 "watched memory may have been written here: "
				 "%s.\n", res->why);
		break;
	case REPLAY_STOP_BREAK:
		st->why = RSP_STOP_SWBREAK;
		break;
	case REPLAY_STOP_BEGIN:
		st->why = RSP_STOP_BEGIN;
		break;
	case REPLAY_STOP_END:
		/* Arriving at a crash shows it as gdb shows a live one. */
		st->why = RSP_STOP_END;
		if (arrived && dir > 0 && end_signal(r, thr) != SIGTRAP) {
			st->why = RSP_STOP_SIGNAL;
			st->signal = end_signal(r, thr);
		}
		break;
	case REPLAY_STOP_INTERRUPT:
		/* gdb's Ctrl-C, as gdbserver reports it. */
		st->why = RSP_STOP_SIGNAL;
		st->signal = SIGINT;
		break;
	default:
		st->why = RSP_STOP_SIGNAL;
	}
}

/* Moves thread @thr: replay_step() or replay_continue() to the
 * breakpoints. */
static int replay_target_resume(struct rsp_target *t, size_t thr, int dir,
				bool step, struct rsp_stop *st)
{
	struct replay_target *r = self(t);
	struct replay_result res = { 0 };
	bool arrived = !replay_at_end(r->rp, thr);
	int err;

	if (replay_thread_empty(r->rp, thr)) {
		res.stop = dir < 0 ? REPLAY_STOP_BEGIN : REPLAY_STOP_END;
		moved(r, thr, dir, &res, false, st);
		return 0;
	}
	r->watch_why[0] = 0;
	r->watch_known = watched_known(r, thr);
	mark_unreadable(r, thr);
	r->unread.n = 0;
	err = step ? replay_step_watch(r->rp, thr, dir, r->watches,
				       r->nwatches, &res) :
		     replay_continue_watch(r->rp, thr, dir, r->bps, r->nbps,
					   r->watches, r->nwatches,
					   t->interrupted, t->interrupted_arg,
					   &res);
	if (err < 0)
		return err;
	r->watch_passed += res.passed;
	if (res.stop == REPLAY_STOP_WATCH)
		note_unreadable(r, thr, res.watch_addr);
	moved(r, thr, dir, &res, arrived, st);
	return 0;
}

/* auxv, exec-file and libraries-svr4 from the bundle's modules. */
static int replay_target_xfer(struct rsp_target *t, const char *object,
			      const char *annex, char **doc, size_t *len)
{
	struct replay_target *r = self(t);
	uint8_t *auxv = NULL;
	int err;

	(void) annex;
	if (!strcmp(object, "auxv")) {
		err = rsp_auxv(r->b, &auxv, len);
		*doc = (char *) auxv;
		return err;
	}
	if (!strcmp(object, "exec-file"))
		*doc = rsp_exec_file(r->b);
	else if (!strcmp(object, "libraries-svr4"))
		*doc = rsp_libraries_svr4(r->b, t);
	else
		return PTRR_ERR_UNSUPPORTED;
	if (!*doc)
		return PTRR_ERR_NOMEM;
	*len = strlen(*doc);
	return 0;
}

/* The bundle's modules (module_files.c). */
static int replay_target_open_file(struct rsp_target *t, const char *path)
{
	return rsp_bundle_open_file(self(t)->b, path);
}

/* The recorded trace of thread @thr. */
static int replay_target_trace(struct rsp_target *t, size_t thr,
			       const struct hist_cpu **cpu,
			       const uint8_t **data, size_t *size)
{
	struct replay_target *r = self(t);

	*cpu = &r->b->cpu;
	*data = r->b->threads[thr].trace;
	*size = r->b->threads[thr].trace_size;
	return 0;
}

static const struct rsp_target_ops replay_target_ops = {
	.close = replay_target_close,
	.nthreads = replay_target_nthreads,
	.tid = replay_target_tid,
	.find_tid = replay_target_find_tid,
	.status = replay_target_status,
	.replaying = replay_target_replaying,
	.regs = replay_target_regs,
	.write_reg = replay_target_write_reg,
	.read_memory = replay_target_read_memory,
	.write_memory = replay_target_write_memory,
	.breakpoint = replay_target_breakpoint,
	.resume = replay_target_resume,
	.xfer = replay_target_xfer,
	.open_file = replay_target_open_file,
	.monitor = rsp_replay_monitor,
	.trace = replay_target_trace,
};

int rsp_replay_target_open(const char *dir, struct rsp_target **out)
{
	struct replay_target *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return PTRR_ERR_NOMEM;
	r->base.ops = &replay_target_ops;
	r->bundle = dir;
	r->owns_rec = true;
	err = hist_recording_open(dir, &r->rec);
	if (err >= 0) {
		r->b = hist_recording_bundle(r->rec);
		if (r->b->nthreads == 0)
			err = ptrr_fail(PTRR_ERR_BUNDLE, "bundle %s has no "
					"thread to serve: record the program "
					"again", dir);
	}
	/* What the loader could not use, where the gdb user sees it. */
	for (size_t i = 0; err >= 0 && r->b->warnings && r->b->warnings[i];
	     i++)
		fprintf(stderr, "ptrr serve: warning: %s\n", r->b->warnings[i]);
	if (err >= 0)
		err = replay_new(r->rec, &r->rp);
	if (err < 0) {
		replay_free(r->rp);
		hist_recording_close(r->rec);
		free(r);
		return err;
	}
	*out = &r->base;
	return 0;
}

int rsp_replay_target_wrap(struct hist_recording *rec, const char *name,
			   struct rsp_target **out)
{
	struct replay_target *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	r->base.ops = &replay_target_ops;
	r->bundle = name;
	r->rec = rec;
	r->b = hist_recording_bundle(rec);
	err = replay_new(rec, &r->rp);
	if (err < 0) {
		free(r);
		return err;
	}
	*out = &r->base;
	return 0;
}

void rsp_replay_target_set_present(struct rsp_target *t,
				   replay_present_fn fn, void *arg)
{
	struct replay_target *r = self(t);

	r->present = fn;
	r->present_arg = arg;
	replay_set_present(r->rp, fn, arg);
}

int rsp_replay_target_grown(struct rsp_target *t)
{
	struct replay_target *r = self(t);
	struct replay *rp;
	int err = 0;

	rsp_unwind_forget(r);
	if (replay_nthreads(r->rp) != r->b->nthreads) {
		err = replay_new(r->rec, &rp);
		if (err < 0)
			return err;
		replay_free(r->rp);
		r->rp = rp;
		replay_set_present(rp, r->present, r->present_arg);
		if (r->outside)
			replay_set_outside_writes(rp);
		return 0;
	}
	for (size_t i = 0; !err && i < r->b->nthreads; i++)
		err = replay_refresh(r->rp, i, &r->b->threads[i].regs);
	return err;
}

void rsp_replay_target_prepare(struct rsp_target *t, bool run)
{
	replay_prepare(self(t)->rp, run);
}

void rsp_replay_target_outside_writes(struct rsp_target *t)
{
	struct replay_target *r = self(t);

	r->outside = true;
	replay_set_outside_writes(r->rp);
}

int rsp_replay_target_present(struct rsp_target *t)
{
	struct replay_target *r = self(t);
	int err = 0;

	for (size_t i = 0; !err && i < replay_nthreads(r->rp); i++)
		if (!replay_thread_empty(r->rp, i))
			err = replay_goto_end(r->rp, i);
	return err;
}
