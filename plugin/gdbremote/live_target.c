/* The live target (live_target.h): the server's target interface
 * (target.h) over a live session (plugin/live/live.h).  Forward only for
 * now: reverse execution over the trace so far is the replay's, later.
 * Thread numbers are the order tasks were first seen and are never
 * reused; gdb's Ctrl-C reaches a running resume through a watcher thread
 * that polls the server's interrupted() and calls live_interrupt(). */
#include <config.h>

#include "gdbremote/live_target.h"
#include "gdbremote/target_replay.h"
#include "capture/procmaps.h"
#include "error.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct live_target {
	struct rsp_target base;
	struct live *l;
	pid_t *tids;			/* by thread number */
	size_t ntids, tids_alloc;
	struct live_stop last;		/* the last stop */
	struct hist_cpu cpu;		/* unknown: the software backend */
	volatile bool running;		/* a resume is under way */
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
	size_t n = live_threads(lt->l, now, 256);

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

static void op_close(struct rsp_target *t)
{
	struct live_target *lt = lt_of(t);

	live_free(lt->l);
	free(lt->tids);
	free(lt);
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
	size_t n = live_threads(lt->l, now, 256);

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
	if (thr != SIZE_MAX && thr != st->thr) {
		st->thr = thr;
		st->why = RSP_STOP_SIGNAL;
		st->signal = 0;
	}
}

static bool op_replaying(struct rsp_target *t, size_t thr)
{
	(void) t;
	(void) thr;
	return false;
}

static void op_regs(struct rsp_target *t, size_t thr,
		    uint64_t vals[HIST_NREGS], bool known[HIST_NREGS])
{
	struct live_target *lt = lt_of(t);
	struct user_regs_struct regs;
	bool ok = thr < lt->ntids &&
		  live_regs_get(lt->l, lt->tids[thr], &regs) == 0;

	_Static_assert(sizeof(regs) == HIST_NREGS * sizeof(uint64_t),
		       "user_regs_struct is in HIST_* order");
	if (ok)
		memcpy(vals, &regs, sizeof(regs));
	for (unsigned i = 0; i < HIST_NREGS; i++)
		known[i] = ok;
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
	err = live_regs_get(lt->l, lt->tids[thr], &regs);
	if (err)
		return err;
	memcpy(r, &regs, sizeof(regs));
	r[reg] = value;
	memcpy(&regs, r, sizeof(regs));
	return live_regs_set(lt->l, lt->tids[thr], &regs);
}

static size_t op_read_memory(struct rsp_target *t, size_t thr, uint64_t addr,
			     uint8_t *buf, size_t len)
{
	ssize_t n = live_mem_read(lt_of(t)->l, addr, buf, len);

	(void) thr;
	if (n < 0)
		ptrr_clear_error();
	return n > 0 ? (size_t) n : 0;
}

static int op_write_memory(struct rsp_target *t, uint64_t addr,
			   const uint8_t *buf, size_t len)
{
	return live_mem_write(lt_of(t)->l, addr, buf, len);
}

/* Inserts or removes a watchpoint of @len bytes at @addr for @kind: an
 * access watchpoint without working debug registers is unsupported (the
 * empty reply). */
static int watchpoint(struct live *l, enum live_watch_kind kind,
		      uint64_t addr, unsigned len, bool insert)
{
	int err;

	if (!insert) {
		if (live_watch_clear(l, addr, len, kind))
			ptrr_clear_error();	/* one not there: done */
		return 0;
	}
	err = live_watch_set(l, addr, len, kind);
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
	struct live *l = lt_of(t)->l;
	bool hw = type == RSP_BREAK_HW;

	if (type == RSP_WATCH_WRITE || type == RSP_WATCH_ACCESS)
		return watchpoint(l, type == RSP_WATCH_WRITE ?
				  LIVE_WATCH_WRITE : LIVE_WATCH_ACCESS, addr,
				  kind, insert);
	if (type != RSP_BREAK_SW && !hw)
		return PTRR_ERR_UNSUPPORTED;
	if (insert)
		return hw ? live_hbp_set(l, addr) : live_bp_set(l, addr);
	if (hw ? live_hbp_clear(l, addr) : live_bp_clear(l, addr))
		ptrr_clear_error();	/* removing one not there succeeds */
	return 0;
}

static void op_pass_signals(struct rsp_target *t, const int *sigs, size_t n)
{
	live_pass_signals(lt_of(t)->l, sigs, n);
}

/* While a resume runs: polls the server's interrupted() and stops the
 * run when gdb sent its interrupt. */
static void *watch_interrupt(void *arg)
{
	struct live_target *lt = arg;
	struct timespec pause = { 0, 20000000 };

	while (lt->running) {
		if (lt->base.interrupted &&
		    lt->base.interrupted(lt->base.interrupted_arg)) {
			live_interrupt(lt->l);
			break;
		}
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static int op_resume(struct rsp_target *t, size_t thr, int dir, bool step,
		     struct rsp_stop *st)
{
	struct live_target *lt = lt_of(t);
	struct live_resume r = { .signo = lt->base.signal,
				 .others_run = lt->base.others_run };
	pthread_t watcher;
	bool watching;
	int err;

	if (dir < 0)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "reverse execution of a "
				 "live process is not available yet: record it "
				 "with ptrr record and replay the bundle");
	if (step && thr < lt->ntids)
		r.step_tid = lt->tids[thr];
	lt->running = true;
	watching = pthread_create(&watcher, NULL, watch_interrupt, lt) == 0;
	err = live_resume(lt->l, &r, &lt->last);
	lt->running = false;
	if (watching)
		pthread_join(watcher, NULL);
	if (!err)
		err = number_threads(lt);
	to_rsp_stop(lt, &lt->last, st);
	return err;
}

/* Reads all of file @path into a malloc'd *@doc. */
static int read_file(const char *path, char **doc, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, alloc = 4096;
	char *buf = malloc(alloc);

	while (f && buf && (n += fread(buf + n, 1, alloc - n, f)) == alloc) {
		char *v = realloc(buf, 2 * alloc);

		if (!v) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = v;
		alloc *= 2;
	}
	if (f)
		fclose(f);
	if (!f || !buf) {
		free(buf);
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s", path);
	}
	*doc = buf;
	*len = n;
	return 0;
}

/* The svr4 library list of process @pid as gdb reads it: the files
 * mapped executable now, placed as libs.c places a bundle's modules. */
static int libraries_svr4(pid_t pid, char **doc, size_t *len)
{
	struct hist_bundle *b = NULL;
	struct cap_map *maps = NULL;
	char path[64], exe[4096];
	size_t n = 0;
	ssize_t k;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
	k = readlink(path, exe, sizeof(exe) - 1);
	exe[k > 0 ? k : 0] = 0;
	err = hist_bundle_new(&b);
	if (!err)
		err = cap_maps_read(pid, &maps, &n);
	if (!err && !(b->exe = strdup(exe)))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; !err && i < n; i++)
		if (maps[i].executable && cap_map_is_file(&maps[i]))
			err = hist_bundle_add_module(b, maps[i].path,
						     maps[i].start, maps[i].end -
						     maps[i].start,
						     maps[i].offset);
	cap_maps_free(maps, n);
	*doc = err ? NULL : rsp_libraries_svr4(b);
	hist_bundle_free(b);
	if (!err && !*doc)
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	*len = *doc ? strlen(*doc) : 0;
	return err;
}

static int op_xfer(struct rsp_target *t, const char *object,
		   const char *annex, char **doc, size_t *len)
{
	pid_t pid = live_pid(lt_of(t)->l);
	char path[64];
	ssize_t n;

	(void) annex;
	if (!strcmp(object, "auxv")) {
		snprintf(path, sizeof(path), "/proc/%d/auxv", (int) pid);
		return read_file(path, doc, len);
	}
	if (!strcmp(object, "libraries-svr4"))
		return libraries_svr4(pid, doc, len);
	if (strcmp(object, "exec-file"))
		return PTRR_ERR_UNSUPPORTED;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
	*doc = malloc(4096);
	if (!*doc)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	n = readlink(path, *doc, 4095);
	if (n < 0) {
		free(*doc);
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s", path);
	}
	*len = (size_t) n;
	return 0;
}

/* `monitor pt start` / `monitor pt stop`: tracing on and off. */
static int op_monitor(struct rsp_target *t, size_t thr, FILE *out, char *cmd)
{
	struct live *l = lt_of(t)->l;
	int err = 0;

	(void) thr;
	if (!strcmp(cmd, "start"))
		err = live_trace_start(l);
	else if (!strcmp(cmd, "stop"))
		live_trace_stop(l);
	else
		return PTRR_ERR_UNSUPPORTED;
	if (!err)
		fprintf(out, "tracing %s\n", live_tracing(l) ? "on" : "off");
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
	err = live_trace_get(lt->l, lt->tids[thr], &tr);
	if (err)
		return err;
	*cpu = &lt->cpu;
	*data = tr.data;
	*size = tr.size;
	return 0;
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
	.monitor = op_monitor,
	.trace = op_trace,
	.pass_signals = op_pass_signals,
};

int rsp_live_target_open(char *const argv[], const struct live_options *opt,
			 struct rsp_target **out)
{
	struct live_target *lt = calloc(1, sizeof(*lt));
	int err;

	*out = NULL;
	if (!lt)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	lt->base.ops = &live_ops;
	err = live_launch(&lt->l, argv, opt);
	if (!err) {
		lt->last.kind = LIVE_STOP_STEP;
		lt->last.tid = live_pid(lt->l);
		err = number_threads(lt);
	}
	if (err) {
		live_free(lt->l);
		free(lt);
		return err;
	}
	*out = &lt->base;
	return 0;
}
