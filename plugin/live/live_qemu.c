/* The QEMU source's live session (source.h: struct tsrc_live_ops;
 * docs/sources.md): the program runs under qemu-x86_64 with ptrr's TCG
 * plugin (plugin/qemu/ptrr-qemu.c) and QEMU's own gdb stub (-g SOCKET),
 * of which this session is the only client.  Forward control — stops,
 * registers, memory, breakpoints, resuming and stepping — goes to the
 * stub (plugin/live/qemu_stub.c); the trace comes from the plugin's
 * rings, which this process maps.
 *
 * At each stop the stopped thread is in QEMU's stub, not in the plugin:
 * its trace is ended here, in the shared ring, where the thread stands
 * (qhost_end_trace(), as the ptrace session ends each run's trace with
 * FUP + TIP.PGD), and the plugin enables it again (PSB+, TIP.PGE) at the
 * next block the thread runs, so that every stop's trace is the last
 * one with bytes appended.  Tracing off is each thread slot PAUSED (the
 * plugin counts and does not trace it).
 *
 * QEMU 7.2's user-mode stub does not stop the other threads when one
 * stops (they run on while gdb looks at it), has no watchpoints, no
 * QPassSignals and reads no interrupt byte while the guest runs;
 * docs/sources.md says what this session does about each.
 */
#include <config.h>

#include "live/qemu_stub.h"
#include "capture/emit.h"
#include "capture/insn.h"
#include "capture/operand.h"
#include "gdbremote/live_target.h"
#include "gdbremote/server.h"
#include "launch.h"
#include "qemu/qemu_code.h"
#include "qemu/qemu_host.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

/* Each thread's ring (a sparse file: only what is written takes room),
 * unless --buffer-size says otherwise. */
#define QLIVE_RING_DEFAULT (1ull << 30)

/* How often a traced run hands its trace so far to the progress call
 * (live_set_progress): the trace grows by millions of instructions a
 * second under QEMU. */
#define QLIVE_PROGRESS_MS 250

#define QLIVE_MAX_BPS 256

/* A mapping of QEMU's process and whether it is the guest's (asked of
 * the stub once). */
struct qmap_seen {
	uint64_t start, end;
	char *path;
	bool guest;
	size_t ncode;		/* the file's code in it: */
	uint64_t code[QHOST_MAX_CODE][2];	/* [from, to) file offsets */
};

struct qlive {
	struct tsrc base;		/* a live session of tsrc_qemu */
	struct qstub stub;
	char prog[PATH_MAX];		/* the program's real path */
	char qemu[PATH_MAX];
	char *plugin;
	char dir[PATH_MAX];		/* the shared directory */
	struct qshm_header *hdr;
	size_t ring_size;
	uint8_t *rings[QSHM_MAX_THREADS];	/* mapped here, or NULL */
	const struct hist_psb *psbs[QSHM_MAX_THREADS];	/* their tables of
							 * PSBs, or NULL */
	pid_t pid;
	bool reaped, ended, detached;
	bool running;			/* in resume(): the stub is not to be
					 * asked anything (progress calls) */
	pid_t *tids;			/* the threads at the last stop */
	size_t ntids, tids_alloc;
	pid_t stop_tid;			/* the thread of the last stop */
	bool have_stop_ip;
	uint64_t stop_ip;		/* where it stands */
	uint32_t held[QSHM_MAX_THREADS];	/* slots held at this stop:
						 * the state to give back, or 0 */
	uint64_t held_at[QSHM_MAX_THREADS];	/* where a parked one waits
						 * (its trace ends there), or 0 */
	struct qover {
		unsigned runs;		/* runs that filled their room */
		uint64_t lost;		/* instructions those runs lost */
		uint64_t run_lost;	/* ... the last run's (0: it did not
					 * fill) */
		uint64_t mark;		/* the slot's dropped count as the
					 * last run began */
	} over[QSHM_MAX_THREADS];	/* each slot's runs that filled */
	size_t run_cap;			/* bytes a run may add to a ring */
	uint64_t bps[QLIVE_MAX_BPS], hbps[QLIVE_MAX_BPS];
	size_t nbps, nhbps;
	struct qwatch {
		uint64_t addr;
		size_t len;
		uint8_t old[8 * LIVE_WATCH_SLOTS];
	} watches[LIVE_WATCH_SLOTS];	/* write watchpoints */
	size_t nwatches;
	bool pass[NSIG];
	bool tracing;
	bool described;			/* the stub's target.xml was read */
	volatile sig_atomic_t interrupting;
	struct qmap_seen *seen;
	size_t nseen;
	uint64_t code_off;		/* DIR/code read up to here */
	int (*progress)(void *arg);
	void *progress_arg;
};

static struct qlive *ql_of(struct tsrc *s)
{
	return (struct qlive *) s;
}

/* ---- the shared rings ---- */

/* Maps @size bytes of the file of slot @i whose name starts with @kind
 * (the plugin's: its ring 't', its table of PSBs 'p'), read-write if
 * @rw; NULL with the error set if it cannot be. */
static void *slot_map(const struct qlive *q, char kind, uint32_t i,
		      size_t size, bool rw)
{
	char path[PATH_MAX + 16];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%c%u", q->dir, kind, i);
	fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) {
		ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED,
		 fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		ptrr_fail(PTRR_ERR_IO, "cannot map %s: %s", path,
			  strerror(errno));
		return NULL;
	}
	return p;
}

/* The ring of thread slot @i, mapped here (read-write: a stop's end is
 * written into it), or NULL with the error set. */
static uint8_t *ring_map(struct qlive *q, uint32_t i)
{
	if (!q->rings[i])
		q->rings[i] = slot_map(q, 't', i, q->ring_size, true);
	return q->rings[i];
}

/* The number of entries of slot @i's table of PSBs (its file "p<i>"). */
static size_t psbs_cap(const struct qlive *q, uint32_t i)
{
	return qshm_psbs_cap(q->ring_size,
			     q->hdr->threads[i].em.cfg.psb_period);
}

/* The table of PSBs of slot @i, mapped here (read-only: the plugin writes
 * it), or NULL if it cannot be (its history is then numbered by decoding
 * its trace). */
static const struct hist_psb *psbs_map(struct qlive *q, uint32_t i)
{
	if (!q->psbs[i]) {
		q->psbs[i] = slot_map(q, 'p', i, psbs_cap(q, i) *
				      sizeof(struct hist_psb), false);
		if (!q->psbs[i])
			ptrr_clear_error();
	}
	return q->psbs[i];
}

/* The slots in use. */
static uint32_t nslots(const struct qlive *q)
{
	uint32_t n = __atomic_load_n(&q->hdr->nthreads, __ATOMIC_ACQUIRE);

	return n < QSHM_MAX_THREADS ? n : QSHM_MAX_THREADS;
}

/* The latest slot of thread @tid, or -1. */
static int slot_of(const struct qlive *q, pid_t tid)
{
	for (uint32_t i = nslots(q); i-- > 0;)
		if (q->hdr->threads[i].tid == tid)
			return (int) i;
	return -1;
}

/* Ends the trace of slot @i's run that filled its room (@t, a copy of
 * the slot with its ring mapped here), its thread stopped at @rip: as
 * the ptrace session ends such a run, an OVF and the thread at @rip
 * (the reserve behind the room holds them), then disabled; the next run
 * is traced again if the ring has room for one. */
static int end_over(struct qlive *q, uint32_t i, struct qshm_thread *t,
		    uint64_t rip)
{
	struct qover *o = &q->over[i];
	int err = cap_emit_rebind(&t->em, &t->ring);

	o->runs++;
	o->run_lost = t->dropped - o->mark;
	o->lost += o->run_lost;
	t->ring.alloc += QSHM_RESERVE;
	if (!err && t->em.state != CAP_EMIT_OFF)
		err = cap_emit_overflow(&t->em, rip);
	if (!err)
		err = cap_emit_stop(&t->em, rip);
	cap_emit_fini(&t->em);
	t->over = 0;
	if (t->ring.used + 4 * QSHM_RESERVE > q->ring_size - QSHM_RESERVE)
		t->state = QSHM_FULL;	/* the ring's end: no more runs */
	return err;
}

/* Ends the trace of slot @i, its thread stopped at @rip, in the shared
 * ring (see the top of this file).  The thread must be stopped. */
static int end_slot(struct qlive *q, uint32_t i, uint64_t rip)
{
	struct qshm_thread *shared = &q->hdr->threads[i];
	struct qshm_thread t;
	struct cap_ring *their_ring;
	struct pt_encoder *their_enc;
	struct hist_psb *their_psbs;
	uint8_t *their_buf, *buf;
	int err;

	if (shared->state != QSHM_RUNNING)
		return 0;
	buf = ring_map(q, i);
	if (!buf)
		return -1;
	t = *shared;
	/* The plugin's pointers, meaningful in QEMU only: kept. */
	their_ring = t.em.ring;
	their_enc = t.em.enc;
	their_psbs = t.em.psbs.v;
	their_buf = t.ring.buf;
	t.ring.buf = buf;
	err = t.over ? end_over(q, i, &t, rip) :
		       qhost_end_trace(&t, &t.ring, true, rip, true);
	t.ring.buf = their_buf;
	t.em.ring = their_ring;
	t.em.enc = their_enc;
	t.em.psbs.v = their_psbs;
	*shared = t;
	return err;
}

/* How long a stop waits for the other threads to park. */
#define QLIVE_HOLD_MS 50

/* True if held slot @t waits, or is in the kernel (it then waits at its
 * next block): nothing of its trace moves until it is let go. */
static bool quiet(const struct qshm_thread *t)
{
	return __atomic_load_n(&t->parked, __ATOMIC_ACQUIRE) || !t->pending;
}

/* Ends the trace of held slot @i where it waits. */
static int end_held(struct qlive *q, uint32_t i)
{
	struct qshm_thread *shared = &q->hdr->threads[i];
	uint64_t at = shared->held_at;
	int err;

	/* end_slot() ends a RUNNING slot's; the thread waits as long as
	 * the state is HELD, which it sees again once written back. */
	shared->state = QSHM_RUNNING;
	err = end_slot(q, i, at);
	if (shared->state == QSHM_FULL)
		q->held[i] = QSHM_FULL;		/* given back so */
	shared->state = QSHM_HELD;
	q->held_at[i] = at;
	return err;
}

/* Holds every thread but the one stopped in the stub (QEMU's user-mode
 * stub lets them run): each waits at its next block; a traced one that
 * parks within QLIVE_HOLD_MS has its trace ended there.  One in the
 * kernel waits when it comes back; one that does neither (blocked in
 * QEMU) keeps its trace as far as it goes. */
static int hold_others(struct qlive *q)
{
	struct timespec pause = { 0, 100000 };
	uint32_t n = nslots(q);
	int err = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t st = __atomic_load_n(&q->hdr->threads[i].state,
					      __ATOMIC_ACQUIRE);

		if (q->hdr->threads[i].tid != q->stop_tid &&
		    (st == QSHM_RUNNING || st == QSHM_PAUSED ||
		     st == QSHM_FULL) &&
		    __atomic_compare_exchange_n(&q->hdr->threads[i].state, &st,
						QSHM_HELD, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			q->held[i] = st;
	}
	for (int k = 0; k < QLIVE_HOLD_MS * 10; k++) {
		bool all = true;

		for (uint32_t i = 0; i < n && all; i++)
			all = q->held[i] != QSHM_RUNNING ||
			      quiet(&q->hdr->threads[i]);
		if (all)
			break;
		nanosleep(&pause, NULL);
	}
	for (uint32_t i = 0; i < n && !err; i++)
		if (q->held[i] == QSHM_RUNNING &&
		    __atomic_load_n(&q->hdr->threads[i].parked,
				    __ATOMIC_ACQUIRE))
			err = end_held(q, i);
	return err;
}

/* A run begins: each traced thread may add up to run_cap bytes to its
 * ring (the reserve for the trace's end behind them), as far as the
 * ring goes; what the plugin has dropped so far is not this run's. */
static void arm_runs(struct qlive *q)
{
	for (uint32_t i = 0; i < nslots(q); i++) {
		struct qshm_thread *t = &q->hdr->threads[i];
		size_t room = q->ring_size - QSHM_RESERVE;
		uint32_t st = t->state == QSHM_HELD ? q->held[i] : t->state;

		q->over[i].run_lost = 0;
		if (t->over || st == QSHM_FULL || st == QSHM_EXITED)
			continue;	/* (an over one's drops go on) */
		q->over[i].mark = t->dropped;
		if (t->ring.used + q->run_cap < room)
			room = t->ring.used + q->run_cap;
		t->ring.alloc = room;
	}
}

/* Lets the held threads go on, in the state each had. */
static void release_others(struct qlive *q)
{
	for (uint32_t i = 0; i < QSHM_MAX_THREADS; i++) {
		uint32_t held = QSHM_HELD;

		q->held_at[i] = 0;
		if (!q->held[i])
			continue;
		__atomic_compare_exchange_n(&q->hdr->threads[i].state, &held,
					    q->held[i], false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
		syscall(SYS_futex, &q->hdr->threads[i].state, FUTEX_WAKE,
			INT_MAX, NULL, NULL, 0);
		q->held[i] = 0;
	}
}

/* ---- the stub ---- */

/* Fails with the stub's error reply @r for request @what. */
static int stub_refused(const char *what, const char *r)
{
	return ptrr_fail(PTRR_ERR_IO, "QEMU's gdb stub refused %s (%s)", what,
			 *r ? r : "not supported");
}

/* Selects thread @tid for register requests. */
static int select_thread(struct qlive *q, pid_t tid)
{
	const char *r;
	int err = qstub_request(&q->stub, &r, "Hg%x", (unsigned) tid);

	if (!err && strcmp(r, "OK"))
		err = stub_refused("Hg", r);
	return err;
}

/* Refreshes the thread list (qfThreadInfo, qsThreadInfo). */
static int list_threads(struct qlive *q)
{
	const char *r;
	int err = qstub_request(&q->stub, &r, "qfThreadInfo");

	q->ntids = 0;
	while (!err && r[0] == 'm') {
		for (const char *p = r + 1; *p;) {
			pid_t tid = qstub_thread_id(p, &p);

			if (q->ntids == q->tids_alloc) {
				size_t n = q->tids_alloc ? 2 * q->tids_alloc :
					   16;
				pid_t *v = realloc(q->tids, n * sizeof(*v));

				if (!v)
					return ptrr_fail(PTRR_ERR_NOMEM,
							 "out of memory");
				q->tids = v;
				q->tids_alloc = n;
			}
			if (tid > 0)
				q->tids[q->ntids++] = tid;
			while (*p && *p != ',')
				p++;
			if (*p == ',')
				p++;
		}
		err = qstub_request(&q->stub, &r, "qsThreadInfo");
	}
	return err;
}

/* ---- registers ---- */

/* Where each user_regs_struct register is in QEMU's g reply (byte
 * offset, size), -1 for none (orig_rax, which QEMU does not show), and
 * its number for P. */
static const struct { int off, size, num; } greg[27] = {
	/* r15 .. r8 */
	{ 120, 8, 15 }, { 112, 8, 14 }, { 104, 8, 13 }, { 96, 8, 12 },
	/* rbp, rbx */
	{ 48, 8, 6 }, { 8, 8, 1 },
	/* r11 .. r8 */
	{ 88, 8, 11 }, { 80, 8, 10 }, { 72, 8, 9 }, { 64, 8, 8 },
	/* rax, rcx, rdx, rsi, rdi */
	{ 0, 8, 0 }, { 16, 8, 2 }, { 24, 8, 3 }, { 32, 8, 4 }, { 40, 8, 5 },
	/* orig_rax */
	{ -1, 0, -1 },
	/* rip, cs, eflags, rsp, ss */
	{ 128, 8, 16 }, { 140, 4, 18 }, { 136, 4, 17 }, { 56, 8, 7 },
	{ 144, 4, 19 },
	/* fs_base, gs_base, ds, es, fs, gs */
	{ 164, 8, 24 }, { 172, 8, 25 }, { 148, 4, 20 }, { 152, 4, 21 },
	{ 156, 4, 22 }, { 160, 4, 23 },
};

#define GREG_MIN_BYTES 180

/* The error of a request the stub cannot take now, or 0. */
static int not_stopped(const struct qlive *q)
{
	if (q->ended)
		return ptrr_fail(PTRR_ERR_USAGE, "the process has ended");
	if (q->running)
		return ptrr_fail(PTRR_ERR_USAGE, "the program is running");
	return 0;
}

static int regs_get(struct tsrc *s, pid_t tid, struct user_regs_struct *regs)
{
	struct qlive *q = ql_of(s);
	uint64_t v[27];
	uint8_t raw[GREG_MIN_BYTES];
	const char *r;
	int err = not_stopped(q), slot;

	if (err)
		return err;
	err = select_thread(q, tid);
	if (!err)
		err = qstub_request(&q->stub, &r, "g");
	if (err)
		return err;
	if (qstub_unhex(r, raw, sizeof(raw)) < sizeof(raw))
		return stub_refused("g", r);
	for (size_t i = 0; i < 27; i++) {
		v[i] = 0;
		if (greg[i].off >= 0)
			memcpy(&v[i], raw + greg[i].off, (size_t) greg[i].size);
	}
	_Static_assert(sizeof(*regs) == sizeof(v), "27 registers");
	memcpy(regs, v, sizeof(v));
	/* A held thread waits at a block's start, where QEMU may not have
	 * written its rip yet. */
	if ((slot = slot_of(q, tid)) >= 0 && q->held_at[slot])
		regs->rip = q->held_at[slot];
	return 0;
}

static int regs_set(struct tsrc *s, pid_t tid,
		    const struct user_regs_struct *regs)
{
	struct qlive *q = ql_of(s);
	struct user_regs_struct now;
	uint64_t a[27], b[27];
	int err = regs_get(s, tid, &now);

	memcpy(a, &now, sizeof(a));
	memcpy(b, regs, sizeof(b));
	for (size_t i = 0; !err && i < 27; i++) {
		char hex[17];
		const char *r;

		if (a[i] == b[i] || greg[i].num < 0)
			continue;
		qstub_hex(&b[i], (size_t) greg[i].size, hex);
		err = qstub_request(&q->stub, &r, "P%x=%s", greg[i].num, hex);
		if (!err && strcmp(r, "OK"))
			err = stub_refused("P", r);
	}
	return err;
}

/* ---- memory ---- */

static ssize_t mem_read(struct tsrc *s, uint64_t addr, void *buf, size_t size)
{
	struct qlive *q = ql_of(s);
	size_t done = 0;
	int err = not_stopped(q);

	if (err)
		return err;
	while (done < size) {
		uint64_t at = addr + done;
		/* Within a page: a read QEMU refuses fails whole. */
		size_t n = 4096 - (at & 4095), got;
		const char *r;

		if (n > size - done)
			n = size - done;
		if (n > QSTUB_MAX_MEM)
			n = QSTUB_MAX_MEM;
		err = qstub_request(&q->stub, &r, "m%" PRIx64 ",%zx", at, n);
		if (err)
			return done ? (ssize_t) done : err;
		got = r[0] == 'E' ? 0 : qstub_unhex(r, (uint8_t *) buf + done, n);
		done += got;
		if (got < n)
			break;
	}
	if (!done && size)
		return ptrr_fail(PTRR_ERR_IO, "cannot read memory at 0x%" PRIx64,
				 addr);
	return (ssize_t) done;
}

static int mem_write(struct tsrc *s, uint64_t addr, const void *buf,
		     size_t size)
{
	struct qlive *q = ql_of(s);
	char hex[2 * QSTUB_MAX_MEM + 1];

	int err = not_stopped(q);

	if (err)
		return err;
	for (size_t done = 0; done < size;) {
		size_t n = size - done < QSTUB_MAX_MEM ? size - done :
			   QSTUB_MAX_MEM;
		const char *r;

		qstub_hex((const uint8_t *) buf + done, n, hex);
		err = qstub_request(&q->stub, &r, "M%" PRIx64 ",%zx:%s",
				    addr + done, n, hex);
		if (!err && strcmp(r, "OK"))
			err = ptrr_fail(PTRR_ERR_IO, "cannot write memory at "
					"0x%" PRIx64 " (QEMU's gdb stub does "
					"not write to read-only pages)",
					addr + done);
		if (err)
			return err;
		done += n;
	}
	return 0;
}

/* ---- breakpoints ---- */

/* Adds @addr to (@add) or removes it from set @v[0..*@n). */
static void note_addr(uint64_t *v, size_t *n, uint64_t addr, bool add)
{
	size_t i = 0;

	while (i < *n && v[i] != addr)
		i++;
	if (add && i == *n && *n < QLIVE_MAX_BPS)
		v[(*n)++] = addr;
	else if (!add && i < *n)
		v[i] = v[--*n];
}

static bool has_addr(const uint64_t *v, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == addr)
			return true;
	return false;
}

/* Z@type / z@type at @addr (@len) through the stub. */
static int stub_break(struct qlive *q, char op, int type, uint64_t addr,
		      size_t len)
{
	const char *r;
	int err = qstub_request(&q->stub, &r, "%c%d,%" PRIx64 ",%zx", op, type,
				addr, len);

	if (err)
		return err;
	if (!*r)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "QEMU's gdb stub has no "
				 "Z%d in user mode", type);
	return strcmp(r, "OK") ? stub_refused("a breakpoint", r) : 0;
}

/* Sets (@set) or clears a breakpoint of gdb's type @type (0: software,
 * 1: hardware) at @addr, kept in @v[*@n] to tell the stops apart. */
static int bp_op(struct qlive *q, int type, uint64_t *v, size_t *n,
		 uint64_t addr, bool set)
{
	int err;

	if (has_addr(v, *n, addr) == set)
		return 0;
	err = stub_break(q, set ? 'Z' : 'z', type, addr, 1);
	if (!err || !set)
		note_addr(v, n, addr, set);
	return err;
}

static int bp_set(struct tsrc *s, uint64_t addr)
{
	return bp_op(ql_of(s), 0, ql_of(s)->bps, &ql_of(s)->nbps, addr, true);
}

static int bp_clear(struct tsrc *s, uint64_t addr)
{
	return bp_op(ql_of(s), 0, ql_of(s)->bps, &ql_of(s)->nbps, addr, false);
}

static int hbp_set(struct tsrc *s, uint64_t addr)
{
	return bp_op(ql_of(s), 1, ql_of(s)->hbps, &ql_of(s)->nhbps, addr,
		     true);
}

static int hbp_clear(struct tsrc *s, uint64_t addr)
{
	return bp_op(ql_of(s), 1, ql_of(s)->hbps, &ql_of(s)->nhbps, addr,
		     false);
}

/* Write watchpoints: QEMU 7.2's user-mode stub has none (Z2-Z4 are
 * system-mode only), so a continue with one set single-steps through
 * the stub and compares the watched bytes after each instruction (as
 * the ptrace session does without debug registers: it sees writes that
 * change the bytes).  Reads cannot be watched so. */
static ssize_t watch_find(const struct qlive *q, uint64_t addr, size_t len)
{
	for (size_t i = 0; i < q->nwatches; i++)
		if (q->watches[i].addr == addr && q->watches[i].len == len)
			return (ssize_t) i;
	return -1;
}

static int watch_set(struct tsrc *s, uint64_t addr, size_t len,
		     enum live_watch_kind kind)
{
	struct qlive *q = ql_of(s);
	struct qwatch *w;

	if (kind != LIVE_WATCH_WRITE)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "QEMU's gdb stub has no "
				 "watchpoints: only writes can be watched");
	if (len == 0 || len > sizeof(w->old))
		return ptrr_fail(PTRR_ERR_USAGE, "cannot watch %zu bytes (1 "
				 "to %zu)", len, sizeof(w->old));
	if (watch_find(q, addr, len) >= 0)
		return 0;
	if (q->nwatches == LIVE_WATCH_SLOTS)
		return ptrr_fail(PTRR_ERR_USAGE, "at most %d watchpoints",
				 LIVE_WATCH_SLOTS);
	w = &q->watches[q->nwatches];
	*w = (struct qwatch) { .addr = addr, .len = len };
	if (mem_read(s, addr, w->old, len) != (ssize_t) len)
		return ptrr_fail(PTRR_ERR_USAGE, "cannot watch 0x%" PRIx64
				 ": not readable", addr);
	q->nwatches++;
	return 0;
}

static int watch_clear(struct tsrc *s, uint64_t addr, size_t len,
		       enum live_watch_kind kind)
{
	struct qlive *q = ql_of(s);
	ssize_t i = kind == LIVE_WATCH_WRITE ? watch_find(q, addr, len) : -1;

	if (i < 0)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no watchpoint at 0x%"
				 PRIx64, addr);
	q->watches[i] = q->watches[--q->nwatches];
	return 0;
}

/* The watchpoint whose bytes changed (kept as they are now), or -1. */
static ssize_t watch_hit(struct qlive *q)
{
	for (size_t i = 0; i < q->nwatches; i++) {
		struct qwatch *w = &q->watches[i];
		uint8_t now[sizeof(w->old)];

		if (mem_read(&q->base, w->addr, now, w->len) !=
		    (ssize_t) w->len) {
			ptrr_clear_error();
			continue;
		}
		if (memcmp(now, w->old, w->len)) {
			memcpy(w->old, now, w->len);
			return (ssize_t) i;
		}
	}
	return -1;
}

static void pass_signals(struct tsrc *s, const int *sigs, size_t n)
{
	struct qlive *q = ql_of(s);

	memset(q->pass, 0, sizeof(q->pass));
	for (size_t i = 0; i < n; i++)
		if (sigs[i] > 0 && sigs[i] < NSIG)
			q->pass[sigs[i]] = true;
}

/* ---- the process ---- */

/* Reaps QEMU (it has ended or is ending); its wait status. */
static int reap(struct qlive *q)
{
	int status = 0;

	if (q->reaped)
		return 0;
	while (waitpid(q->pid, &status, 0) < 0 && errno == EINTR)
		;
	q->reaped = true;
	return status;
}

/* QEMU went away without a stop reply (killed from outside): the stop
 * says how. */
static void gone(struct qlive *q, struct live_stop *stop)
{
	int status = reap(q);

	q->ended = true;
	stop->tid = q->pid;
	if (WIFEXITED(status)) {
		stop->kind = LIVE_STOP_EXITED;
		stop->code = WEXITSTATUS(status);
	} else {
		stop->kind = LIVE_STOP_KILLED;
		stop->signo = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	}
}

/* True if signal @sig is a fault an instruction raised (as the ptrace
 * session's crashes). */
static bool is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	       sig == SIGILL;
}

/* Ends the trace of the thread that stopped, where it stands. */
static int end_stopped_trace(struct qlive *q)
{
	int i = slot_of(q, q->stop_tid);

	if (i < 0 || !q->have_stop_ip)
		return 0;
	return end_slot(q, (uint32_t) i, q->stop_ip);
}

/* CR2, the register QEMU's x86-64 description numbers 28 (0x1c). */
#define QLIVE_CR2 "p1c"

/* The address SIGSEGV's fault in the selected thread, about to run the
 * instruction at @regs' rip, is QEMU's guest si_addr, or 0 if it cannot
 * be told.  QEMU 7.2's user-mode stub has no siginfo; but QEMU keeps the
 * address a page fault was at in the vCPU's CR2, whose value becomes the
 * signal's si_addr, and its stub reads CR2.  A fault that is no page
 * fault (a general protection fault, si_addr 0) leaves an earlier CR2
 * there: CR2 is taken only where the instruction may access it (a
 * memory operand of it covers it, or its own bytes). */
static uint64_t fault_address(struct qlive *q,
			      const struct user_regs_struct *regs)
{
	uint8_t code[CAP_INSN_MAX], cr2[8];
	const char *r;
	uint64_t addr;
	ssize_t n;

	/* The stub reads single registers once its client has read the
	 * target description. */
	if (!q->described && !qstub_request(&q->stub, &r,
			"qXfer:features:read:target.xml:0,%x", 0xf00))
		q->described = true;
	if (qstub_request(&q->stub, &r, QLIVE_CR2) ||
	    qstub_unhex(r, cr2, sizeof(cr2)) != sizeof(cr2)) {
		ptrr_clear_error();
		return 0;
	}
	memcpy(&addr, cr2, sizeof(addr));	/* little-endian */
	n = mem_read(&q->base, regs->rip, code, sizeof(code));
	if (n < 0) {
		ptrr_clear_error();
		n = 0;
	}
	_Static_assert(sizeof(*regs) == HIST_NREGS * sizeof(uint64_t),
		       "user_regs_struct in HIST_* order");
	return cap_operand_covers(code, (size_t) n, regs->rip,
				  (const uint64_t *) regs, addr) ? addr : 0;
}

/* Stop reply @r (T or S) into @stop; *@again: a passed signal, to be
 * delivered at once. */
static int take_signal_stop(struct qlive *q, const char *r, bool stepping,
			    struct live_stop *stop, int *again)
{
	struct user_regs_struct regs;
	unsigned sig = 0;
	const char *t = strstr(r, "thread:");
	int err;

	sscanf(r + 1, "%2x", &sig);
	sig = (unsigned) rsp_host_signal((int) sig);	/* gdb's numbering */
	q->stop_tid = t ? qstub_thread_id(t + 7, NULL) : q->stop_tid;
	err = list_threads(q);
	if (!err)
		err = regs_get(&q->base, q->stop_tid, &regs);
	if (err)
		return err;
	q->have_stop_ip = true;
	q->stop_ip = regs.rip;
	*stop = (struct live_stop) { .tid = q->stop_tid, .pc = regs.rip,
				     .signo = (int) sig };
	*again = 0;
	if (sig == SIGINT && q->interrupting) {
		q->interrupting = 0;
		stop->kind = LIVE_STOP_INTERRUPTED;
		stop->signo = 0;
	} else if (sig == SIGTRAP && stepping) {
		stop->kind = LIVE_STOP_STEP;
	} else if (sig == SIGTRAP && (has_addr(q->bps, q->nbps, regs.rip) ||
				      has_addr(q->hbps, q->nhbps, regs.rip))) {
		stop->kind = LIVE_STOP_BREAKPOINT;
		stop->hw = !has_addr(q->bps, q->nbps, regs.rip);
	} else if (sig > 0 && sig < NSIG && q->pass[sig] && !stepping) {
		*again = (int) sig;
	} else {
		stop->kind = is_fault((int) sig) ? LIVE_STOP_CRASH :
			     LIVE_STOP_SIGNAL;
		if (sig == SIGSEGV)
			stop->addr = fault_address(q, &regs);
	}
	return 0;
}

/* Waits for the stub's stop reply into q->stub's buffer (*@r): every
 * QLIVE_PROGRESS_MS while tracing, the progress call has the trace so
 * far.  1 with *@r set, 0 if QEMU went away, or an error. */
static int wait_stop(struct qlive *q, const char **r)
{
	for (;;) {
		int ready = qstub_wait(&q->stub, q->progress && q->tracing ?
					QLIVE_PROGRESS_MS : -1);

		if (ready < 0)
			return ready;
		if (ready > 0)
			return qstub_read(&q->stub, r) ? 0 : 1;
		/* Not once a stop is asked for: it is to come soon. */
		if (!q->interrupting && q->progress(q->progress_arg) < 0)
			ptrr_clear_error();
	}
}

/* After one instruction of a continue with watchpoints (@stop a step):
 * true to go on stepping; false with *@stop the watchpoint hit or the
 * breakpoint reached. */
static bool watch_stepped(struct qlive *q, struct live_stop *stop)
{
	ssize_t w = watch_hit(q);

	if (w >= 0) {
		stop->kind = LIVE_STOP_WATCH;
		stop->addr = q->watches[w].addr;
		stop->watch = LIVE_WATCH_WRITE;
		return false;
	}
	if (has_addr(q->bps, q->nbps, stop->pc) ||
	    has_addr(q->hbps, q->nhbps, stop->pc)) {
		stop->kind = LIVE_STOP_BREAKPOINT;
		stop->hw = !has_addr(q->bps, q->nbps, stop->pc);
		return false;
	}
	return true;
}

static int resume(struct tsrc *s, const struct live_resume *res,
		  struct live_stop *stop)
{
	struct qlive *q = ql_of(s);
	pid_t sig_tid = res->sig_tid ? res->sig_tid : q->stop_tid;
	int signo = res->signo, err = 0;
	bool stepping = res->step_tid != 0;
	/* A continue with watchpoints steps the thread of the last stop. */
	bool watching = !stepping && q->nwatches;
	pid_t step_tid = watching ? q->stop_tid : res->step_tid;

	if (q->ended)
		return ptrr_fail(PTRR_ERR_USAGE, "the process has ended");
	if (res->run_tids)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "QEMU sessions are "
				 "all-stop");
	arm_runs(q);
	release_others(q);
	for (;;) {
		const char *r;
		int got;

		if ((stepping || watching) && signo)
			err = qstub_send(&q->stub, "vCont;S%02x:%x",
					 rsp_gdb_signal(signo),
					 (unsigned) step_tid);
		else if (stepping || watching)
			err = qstub_send(&q->stub, "vCont;s:%x",
					 (unsigned) step_tid);
		else if (signo)
			err = qstub_send(&q->stub, "vCont;C%02x:%x;c",
					 rsp_gdb_signal(signo),
					 (unsigned) sig_tid);
		else
			err = qstub_send(&q->stub, "vCont;c");
		q->have_stop_ip = false;
		q->running = true;
		got = err ? err : wait_stop(q, &r);
		q->running = false;
		if (got <= 0) {
			if (got == 0 || err) {
				ptrr_clear_error();
				gone(q, stop);
				return 0;
			}
			return got;
		}
		if (r[0] == 'W' || r[0] == 'X') {
			unsigned v = 0;

			sscanf(r + 1, "%x", &v);
			reap(q);
			q->ended = true;
			*stop = (struct live_stop) {
				.kind = r[0] == 'W' ? LIVE_STOP_EXITED :
						      LIVE_STOP_KILLED,
				.tid = q->pid, .code = (int) v,
				.signo = rsp_host_signal((int) v) };
			return 0;
		}
		if (r[0] != 'T' && r[0] != 'S')
			return stub_refused("vCont", r);
		err = take_signal_stop(q, r, stepping || watching, stop, &signo);
		if (!err && watching && !signo && stop->kind == LIVE_STOP_STEP &&
		    watch_stepped(q, stop))
			continue;
		if (err || !signo)
			break;
		sig_tid = step_tid = q->stop_tid;
	}
	if (!err)
		err = hold_others(q);
	if (!err && q->tracing)
		err = end_stopped_trace(q);
	return err;
}

/* Async-signal-safe: QEMU's user-mode stub reads nothing while the
 * guest runs, so the interrupt is a SIGINT to QEMU, which stops in the
 * stub as it delivers it (and drops it: the next resume does not pass
 * it). */
static void interrupt(struct tsrc *s)
{
	struct qlive *q = ql_of(s);

	if (q->pid > 0 && !q->ended) {
		q->interrupting = 1;
		kill(q->pid, SIGINT);
	}
}

/* ---- tracing ---- */

static int trace_start(struct tsrc *s)
{
	struct qlive *q = ql_of(s);

	if (q->ended)
		return ptrr_fail(PTRR_ERR_USAGE, "the process is not running: "
				 "start it again");
	__atomic_store_n(&q->hdr->paused, 0, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < nslots(q); i++) {
		if (q->hdr->threads[i].state == QSHM_PAUSED)
			q->hdr->threads[i].state = QSHM_RUNNING;
		if (q->held[i] == QSHM_PAUSED)
			q->held[i] = QSHM_RUNNING;	/* given back so */
	}
	q->tracing = true;
	return 0;
}

static void trace_stop(struct tsrc *s)
{
	struct qlive *q = ql_of(s);

	if (!q->tracing)
		return;
	if (end_stopped_trace(q))
		ptrr_clear_error();
	__atomic_store_n(&q->hdr->paused, 1, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < nslots(q); i++) {
		if (q->hdr->threads[i].state == QSHM_RUNNING &&
		    q->hdr->threads[i].em.state == CAP_EMIT_OFF)
			q->hdr->threads[i].state = QSHM_PAUSED;
		if (q->held[i] == QSHM_RUNNING && q->held_at[i])
			q->held[i] = QSHM_PAUSED;	/* its trace ended */
	}
	q->tracing = false;
}

static bool tracing(struct tsrc *s)
{
	return ql_of(s)->tracing;
}

static void set_progress(struct tsrc *s, int (*fn)(void *arg), void *arg,
			 uint64_t every)
{
	(void) every;
	ql_of(s)->progress = fn;
	ql_of(s)->progress_arg = arg;
}

static size_t traced_threads(struct tsrc *s, pid_t *tids, size_t max)
{
	struct qlive *q = ql_of(s);
	uint32_t n = nslots(q);

	for (uint32_t i = 0; i < n && i < max; i++)
		tids[i] = q->hdr->threads[i].tid;
	return n;
}

static bool has_trace(struct tsrc *s, pid_t tid)
{
	return slot_of(ql_of(s), tid) >= 0;
}

static int trace_get(struct tsrc *s, pid_t tid, struct live_thread_trace *out)
{
	struct qlive *q = ql_of(s);
	int i = slot_of(q, tid);
	const struct qshm_thread *t;
	uint8_t *buf;

	memset(out, 0, sizeof(*out));
	if (i < 0)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "thread %d has no trace: "
				 "start tracing first", (int) tid);
	buf = ring_map(q, (uint32_t) i);
	if (!buf)
		return -1;
	t = &q->hdr->threads[i];
	out->data = buf;
	out->size = __atomic_load_n(&t->ring.used, __ATOMIC_ACQUIRE);
	/* The ring does not wrap (full=1): its offsets are its totals. */
	out->psbs = psbs_map(q, (uint32_t) i);
	out->npsbs = out->psbs ? __atomic_load_n(&t->em.psbs.n,
						 __ATOMIC_ACQUIRE) : 0;
	if (out->npsbs > psbs_cap(q, (uint32_t) i))
		out->npsbs = 0;
	out->ended = t->state == QSHM_EXITED;
	out->have_end_ip = (tid == q->stop_tid && q->have_stop_ip) ||
			   q->held_at[i];
	out->end_ip = q->held_at[i] ? q->held_at[i] : q->stop_ip;
	out->overflows = q->over[i].runs;
	out->lost = q->over[i].lost;
	out->run_lost = q->over[i].run_lost;
	return 0;
}

static void step_counts(struct tsrc *s, uint64_t *insns, uint64_t *steps,
			bool *blocks)
{
	struct qlive *q = ql_of(s);

	*insns = 0;
	for (uint32_t i = 0; i < nslots(q); i++)
		*insns += q->hdr->threads[i].em.stats.insns;
	*steps = 0;
	*blocks = false;
}

/* ---- what the program is ---- */

static int program(struct tsrc *s, char *buf, size_t n)
{
	snprintf(buf, n, "%s", ql_of(s)->prog);
	return 0;
}

/* What is known of QEMU's mapping @m: whether the guest has it (its
 * first byte readable through the stub), and if it maps a file, where
 * the file's code is in it (QEMU maps a guest's ELF file in one host
 * mapping, code without PROT_EXEC); asked once per mapping. */
static const struct qmap_seen *seen(struct qlive *q, const struct cap_map *m,
				    uint64_t base)
{
	struct qmap_seen *v;
	uint8_t byte;

	for (size_t i = 0; i < q->nseen; i++)
		if (q->seen[i].start == m->start && q->seen[i].end == m->end &&
		    !strcmp(q->seen[i].path, m->path))
			return &q->seen[i];
	if (q->running)
		return NULL;	/* asked at the next stop */
	v = realloc(q->seen, (q->nseen + 1) * sizeof(*v));
	if (!v)
		return NULL;
	q->seen = v;
	v += q->nseen;
	v->path = strdup(m->path);
	if (!v->path)
		return NULL;
	q->nseen++;
	v->start = m->start;
	v->end = m->end;
	v->guest = m->start >= base && m->readable &&
		   mem_read(&q->base, m->start - base, &byte, 1) == 1;
	if (!v->guest)
		ptrr_clear_error();
	v->ncode = 0;
	if (v->guest && cap_map_is_file(m))
		v->ncode = qhost_code_segments(m->path, m->offset,
					       m->end - m->start, v->code);
	return v;
}

/* Appends @m to @v[*@n], growing it (*@alloc). */
static int push_map(struct cap_map **v, size_t *n, size_t *alloc,
		    const struct cap_map *m)
{
	if (*n == *alloc) {
		size_t k = *alloc ? 2 * *alloc : 64;
		struct cap_map *w = realloc(*v, k * sizeof(*w));

		if (!w)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		*v = w;
		*alloc = k;
	}
	(*v)[(*n)++] = *m;
	return 0;
}

/* The guest's mappings, at its addresses: QEMU's own mappings that its
 * stub can read (never QEMU's code, its libraries or the plugin's
 * rings); of a file, the pieces holding its code apart and executable,
 * as the kernel would have mapped them (the history places a file by
 * the segment its mapping's offset falls in). */
static int maps(struct tsrc *s, struct cap_map **out, size_t *n)
{
	struct qlive *q = ql_of(s);
	uint64_t base = q->hdr->guest_base;
	size_t dirlen = strlen(q->dir), k = 0, alloc = 0;
	struct cap_map *all = NULL, *v = NULL;
	size_t nall = 0;
	int err;

	if (q->ended)
		return ptrr_fail(PTRR_ERR_USAGE, "the process has ended");
	err = cap_maps_read(q->pid, &all, &nall);
	for (size_t i = 0; !err && i < nall; i++) {
		struct cap_map m = all[i];
		const struct qmap_seen *w;
		uint64_t at = m.offset;

		if (!strncmp(m.path, q->dir, dirlen) ||
		    !(w = seen(q, &m, base)) || !w->guest)
			continue;
		m.start -= base;
		m.end -= base;
		m.executable = false;
		for (size_t c = 0; !err && c <= w->ncode; c++) {
			struct cap_map piece = m;
			uint64_t to = c < w->ncode ? w->code[c][0] :
				      m.offset + (m.end - m.start);

			/* The bytes before code piece c, then the piece. */
			piece.start = m.start + (at - m.offset);
			piece.end = m.start + (to - m.offset);
			piece.offset = at;
			if (piece.start < piece.end &&
			    !(piece.path = strdup(m.path)))
				err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
			else if (piece.start < piece.end)
				err = push_map(&v, &k, &alloc, &piece);
			if (err || c == w->ncode)
				break;
			piece.start = m.start + (w->code[c][0] - m.offset);
			piece.end = m.start + (w->code[c][1] - m.offset);
			piece.offset = w->code[c][0];
			piece.executable = true;
			piece.path = strdup(m.path);
			err = piece.path ? push_map(&v, &k, &alloc, &piece) :
			      ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
			at = w->code[c][1];
		}
	}
	cap_maps_free(all, nall);
	if (err) {
		cap_maps_free(v, k);
		return err;
	}
	*out = v;
	*n = k;
	return 0;
}

/* The plugin writes each block QEMU translates in anonymous memory to
 * DIR/code (as for ptrr record): the ones written since the last call. */
static int anon_code(struct tsrc *s,
		     int (*add)(void *arg, uint64_t addr,
				const uint8_t *bytes, size_t len),
		     void *arg)
{
	struct qlive *q = ql_of(s);

	return qcode_each(q->dir, &q->code_off, add, arg);
}

static int auxv(struct tsrc *s, char **doc, size_t *len)
{
	return qstub_xfer(&ql_of(s)->stub, "auxv", doc, len);
}

/* The files the guest has mapped with code (never QEMU's own, nor
 * QEMU's /proc files, which show the emulator). */
static int open_file(struct tsrc *s, const char *path)
{
	struct cap_map *m = NULL;
	size_t n = 0;
	int fd = maps(s, &m, &n);

	if (!fd)
		fd = rsp_open_mapped_file(m, n, path);
	cap_maps_free(m, n);
	return fd;
}

static pid_t pid(struct tsrc *s)
{
	return ql_of(s)->pid;
}

static bool ended(struct tsrc *s)
{
	return ql_of(s)->ended;
}

static size_t threads(struct tsrc *s, pid_t *tids, size_t max)
{
	struct qlive *q = ql_of(s);

	if (q->ended)
		return 0;
	for (size_t i = 0; i < q->ntids && i < max; i++)
		tids[i] = q->tids[i];
	return q->ntids;
}

/* The software emitter's CPU and PT configuration (the plugin's is the
 * same emitter, with its defaults). */
static void header(struct hist_bundle *b)
{
	live_ptrace.header(b);
}

/* ---- launching and letting go ---- */

/* Where the shared directory goes: memory-backed if there is one. */
static const char *shared_parent(void)
{
	const char *tmp = getenv("TMPDIR");

	if (access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	return tmp && *tmp ? tmp : "/tmp";
}

/* Starts QEMU on @argv with the plugin and the stub on socket @sock,
 * held at the first instruction. */
static int start_qemu(struct qlive *q, char *const argv[], const char *sock,
		      bool aslr)
{
	char pluginarg[PATH_MAX * 2];
	size_t nargs = 0, n = 0;
	char **v;
	int err;

	while (argv[nargs])
		nargs++;
	v = calloc(nargs + 10, sizeof(*v));
	if (!v)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	snprintf(pluginarg, sizeof(pluginarg), "%s,dir=%s,size=%zu,full=1,"
		 "psb=%u,retcomp=1,tsc=0", q->plugin, q->dir, q->ring_size,
		 CAP_PSB_PERIOD_DEFAULT);
	v[n++] = q->qemu;
	v[n++] = "-g";
	v[n++] = (char *) sock;
	v[n++] = "-plugin";
	v[n++] = pluginarg;
	v[n++] = "-0";
	v[n++] = argv[0];
	v[n++] = q->prog;
	for (size_t i = 1; i < nargs; i++)
		v[n++] = argv[i];
	/* No guest core: the session has the registers and memory. */
	err = qhost_spawn(v, aslr, false, "ptrr serve", &q->pid);
	free(v);
	return err;
}

/* Seconds a live QEMU has to open its gdb stub's socket. */
#define STUB_WAIT_S 60

/* Connects to QEMU's stub on @sock (QEMU creates it as it starts) and
 * takes its first stop. */
static int connect_stub(struct qlive *q, const char *sock)
{
	struct timespec pause = { 0, 5000000 }, t0, now;
	const char *r;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int status;

		err = qstub_connect(&q->stub, sock);
		if (!err)
			break;
		if (waitpid(q->pid, &status, WNOHANG) == q->pid) {
			q->reaped = true;
			ptrr_clear_error();
			return ptrr_fail(PTRR_ERR_USAGE, "%s exited before its "
					 "gdb stub listened (see its message "
					 "above; --backend=soft may run the "
					 "program)", q->qemu);
		}
		/* QEMU is alive but not listening yet: a loaded machine
		 * took over 10 s here (CI); give it a minute. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > STUB_WAIT_S)
			return err;
		ptrr_clear_error();
		nanosleep(&pause, NULL);
	}
	if (q->hdr->magic != QSHM_MAGIC)
		return ptrr_fail(PTRR_ERR_USAGE, "%s runs without ptrr's plugin "
				 "(a QEMU without TCG plugin support? install "
				 "Debian's qemu-user 7.2 or newer, or use "
				 "--backend=soft)", q->qemu);
	err = qstub_request(&q->stub, &r, "?");
	if (!err && r[0] != 'T')
		err = stub_refused("?", r);
	if (!err) {
		const char *t = strstr(r, "thread:");

		q->stop_tid = t ? qstub_thread_id(t + 7, NULL) : q->pid;
		err = list_threads(q);
	}
	return err;
}

static void qlive_free(struct tsrc *s)
{
	struct qlive *q = ql_of(s);

	if (!q)
		return;
	if (q->pid > 0 && !q->reaped && !q->detached) {
		kill(q->pid, SIGKILL);
		reap(q);
	}
	qstub_close(&q->stub);
	for (uint32_t i = 0; i < QSHM_MAX_THREADS; i++) {
		if (q->rings[i])
			munmap(q->rings[i], q->ring_size);
		if (q->psbs[i])
			munmap((void *) q->psbs[i],
			       psbs_cap(q, i) * sizeof(struct hist_psb));
	}
	qhost_remove_shared(q->dir, &q->hdr);
	for (size_t i = 0; i < q->nseen; i++)
		free(q->seen[i].path);
	free(q->seen);
	free(q->tids);
	free(q->plugin);
	free(q);
}

/* Lets the program run on under QEMU, untraced (no breakpoint left):
 * the stub's D; with @stopped, SIGSTOPped first. */
static void detach(struct tsrc *s, bool stopped)
{
	struct qlive *q = ql_of(s);
	const char *r;

	if (!q->ended) {
		release_others(q);
		trace_stop(s);
		for (uint32_t i = 0; i < nslots(q); i++)
			if (q->hdr->threads[i].state == QSHM_RUNNING)
				q->hdr->threads[i].state = QSHM_PAUSED;
		if (qstub_request(&q->stub, &r, "D"))
			ptrr_clear_error();
		/* After D: QEMU stopped would not answer it. */
		if (stopped)
			kill(q->pid, SIGSTOP);
		q->detached = true;
	}
	qlive_free(s);
}

static int launch(char *const argv[], const struct live_options *opt,
		  struct tsrc **out)
{
	struct qlive *q = calloc(1, sizeof(*q));
	char sock[PATH_MAX + 16];
	int err;

	*out = NULL;
	if (!q)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	qstub_init(&q->stub);
	if (opt && opt->insn_step) {
		free(q);
		return ptrr_fail(PTRR_ERR_USAGE, "--soft-step is for the "
				 "software backend: QEMU traces each block "
				 "as it runs it (use --backend=soft)");
	}
	/* Room for many runs in each ring, whatever a run may add. */
	q->run_cap = opt && opt->trace_cap ? opt->trace_cap :
		     QLIVE_RING_DEFAULT;
	q->ring_size = q->run_cap > QLIVE_RING_DEFAULT / 2 ? 2 * q->run_cap :
		       QLIVE_RING_DEFAULT;
	err = qhost_check(argv[0], q->qemu, q->prog, &q->plugin);
	if (!err)
		err = qhost_make_shared(shared_parent(), q->prog, q->dir,
					sizeof(q->dir), &q->hdr);
	if (!err) {
		/* Tracing off until trace_start(). */
		q->hdr->paused = 1;
		q->hdr->run_cap = q->run_cap;
		snprintf(sock, sizeof(sock), "%s/gdb.sock", q->dir);
		err = start_qemu(q, argv, sock, opt && opt->aslr);
	}
	if (!err)
		err = connect_stub(q, sock);
	if (err) {
		qlive_free(&q->base);
		return err;
	}
	*out = &q->base;
	return 0;
}

const struct tsrc_live_ops live_qemu = {
	.launch = launch,
	.header = header,
	.program = program,
	.maps = maps,
	.anon_code = anon_code,
	.auxv = auxv,
	.open_file = open_file,
	.free = qlive_free,
	.detach = detach,
	.pid = pid,
	.ended = ended,
	.threads = threads,
	.regs_get = regs_get,
	.regs_set = regs_set,
	.mem_read = mem_read,
	.mem_write = mem_write,
	.bp_set = bp_set,
	.bp_clear = bp_clear,
	.hbp_set = hbp_set,
	.hbp_clear = hbp_clear,
	.watch_set = watch_set,
	.watch_clear = watch_clear,
	.pass_signals = pass_signals,
	.resume = resume,
	.interrupt = interrupt,
	.trace_start = trace_start,
	.trace_stop = trace_stop,
	.tracing = tracing,
	.set_progress = set_progress,
	.traced_threads = traced_threads,
	.has_trace = has_trace,
	.trace_get = trace_get,
	.step_counts = step_counts,
	.tracer = "qemu-x86_64 runs the program and ptrr's TCG plugin traces "
		  "it",
};
