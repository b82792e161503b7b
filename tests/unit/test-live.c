/* A live session (plugin/live) on real programs, given their directory:
 * launched stopped at the first instruction, breakpoints at functions
 * (addresses from the ELF symbols and the load base in /proc/PID/maps),
 * continue and single-step checked against the registers and the
 * instruction decoder, memory written and read back, signals stopped and
 * passed on, a crash stopped before delivery, threads all stopped, and
 * an interrupt from another thread.  Run by tests/live.sh. */
#include <config.h>

#include "live/live_internal.h"
#include "capture/elfsym.h"
#include "capture/insn.h"
#include "gdbremote/live_target.h"
#include "history.h"
#include "test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *progs;
static const char *truth_path;

/* The path of test program @name. */
static const char *prog_path(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", progs, name);
	return path;
}

/* The load base of @path in process @pid: the start of its mapping at
 * file offset 0. */
static uint64_t load_base(pid_t pid, const char *path)
{
	char maps[64], line[4608], file[4096];
	unsigned long long start, off;
	uint64_t base = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int) pid);
	f = fopen(maps, "r");
	if (!f)
		return 0;
	while (!base && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %4095s", &start,
			   &off, file) == 3 && off == 0 &&
		    strstr(file, strrchr(path, '/')))
			base = start;
	fclose(f);
	return base;
}

/* The run-time address of function @sym of program @name in process
 * @pid. */
static uint64_t pid_sym_addr(pid_t pid, const char *name, const char *sym)
{
	struct cap_elf_sym s;

	if (cap_elf_find_symbol(prog_path(name), sym, &s)) {
		fprintf(stderr, "no symbol %s in %s\n", sym, name);
		return 0;
	}
	return s.value + (s.pie ? load_base(pid, prog_path(name)) : 0);
}

/* The same in session @l. */
static uint64_t sym_addr(struct live *l, const char *name, const char *sym)
{
	return pid_sym_addr(live_pid(l), name, sym);
}

/* Launches program @name stopped. */
static struct live *launch(const char *name)
{
	char *argv[] = { (char *) prog_path(name), NULL };
	struct live_options opt = { .aslr = false };
	struct live *l = NULL;

	CHECK(live_launch(&l, argv, &opt) == 0);
	return l;
}

/* Continues every thread, passing @signo; returns the stop kind. */
static enum live_stop_kind cont(struct live *l, int signo,
				struct live_stop *stop)
{
	struct live_resume r = { .signo = signo };

	CHECK(live_resume(l, &r, stop) == 0);
	return stop->kind;
}

/* Launched: one thread, stopped; a breakpoint at step() is hit 20 times
 * (the loop calls it 20 times), each time with rip at step(); then the
 * program exits 0. */
static void test_breakpoints(void)
{
	struct live *l = launch("loops");
	struct user_regs_struct regs;
	struct live_stop stop;
	pid_t tid;
	uint64_t step;
	int hits = 0;

	CHECK(live_threads(l, &tid, 1) == 1);
	CHECK(tid == live_pid(l));
	step = sym_addr(l, "loops", "step");
	CHECK(step != 0);
	CHECK(live_bp_set(l, step) == 0);
	while (cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT) {
		CHECK_EQ_U64(stop.pc, step);
		CHECK(live_regs_get(l, stop.tid, &regs) == 0);
		CHECK_EQ_U64(regs.rip, step);
		hits++;
	}
	CHECK(hits == 20);
	CHECK(stop.kind == LIVE_STOP_EXITED);
	CHECK(stop.code == 0);
	CHECK(live_ended(l));
	live_free(l);
}

/* Single steps from step(): each lands where the decoder says a
 * straight-line instruction ends (or, for a branch, where rip is), and a
 * breakpoint's bytes read as the program's own. */
static void test_step(void)
{
	struct live *l = launch("recursion");
	struct user_regs_struct regs;
	struct live_resume r = { 0 };
	struct live_stop stop;
	struct cap_insn insn;
	uint8_t code[16];
	uint64_t fact = sym_addr(l, "recursion", "fact");

	CHECK(live_mem_read(l, fact, code, sizeof(code)) == sizeof(code));
	CHECK(live_bp_set(l, fact) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	for (int i = 0; i < 8; i++) {
		uint8_t now[16];

		CHECK(live_regs_get(l, stop.tid, &regs) == 0);
		CHECK(live_mem_read(l, regs.rip, now, sizeof(now)) == 16);
		CHECK(cap_insn_decode(now, sizeof(now), &insn) > 0);
		r.step_tid = stop.tid;
		CHECK(live_resume(l, &r, &stop) == 0);
		CHECK(stop.kind == LIVE_STOP_STEP);
		if (insn.iclass == CAP_IC_OTHER)
			CHECK_EQ_U64(stop.pc, regs.rip + insn.len);
		CHECK(live_regs_get(l, stop.tid, &regs) == 0);
		CHECK_EQ_U64(regs.rip, stop.pc);
	}
	{
		uint8_t again[16];

		CHECK(live_mem_read(l, fact, again, sizeof(again)) == 16);
		CHECK(memcmp(code, again, sizeof(code)) == 0);
	}
	live_free(l);
}

/* Memory and registers written at a stop read back; the program goes on
 * with the registers restored. */
static void test_write(void)
{
	struct live *l = launch("loops");
	struct user_regs_struct regs, mod, back;
	uint64_t word = 0x1122334455667788ull, orig, got;
	struct live_stop stop;

	CHECK(live_bp_set(l, sym_addr(l, "loops", "step")) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK(live_regs_get(l, stop.tid, &regs) == 0);
	CHECK(live_mem_read(l, regs.rsp, &orig, 8) == 8);
	CHECK(live_mem_write(l, regs.rsp, &word, 8) == 0);
	CHECK(live_mem_read(l, regs.rsp, &got, 8) == 8);
	CHECK_EQ_U64(got, word);
	CHECK(live_mem_write(l, regs.rsp, &orig, 8) == 0);
	mod = regs;
	mod.rax = 0xdeadbeef;
	CHECK(live_regs_set(l, stop.tid, &mod) == 0);
	CHECK(live_regs_get(l, stop.tid, &back) == 0);
	CHECK_EQ_U64(back.rax, 0xdeadbeef);
	CHECK(live_regs_set(l, stop.tid, &regs) == 0);
	CHECK(live_bp_clear(l, sym_addr(l, "loops", "step")) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_EXITED);
	CHECK(stop.code == 0);
	live_free(l);
}

/* signals: SIGUSR1 stops the program before delivery; passed on, its
 * handler on_usr runs (a breakpoint there); every later signal passed
 * on, the program ends well (exit 0 needs the handlers' work). */
static void test_signals(void)
{
	struct live *l = launch("signals");
	uint64_t on_usr = sym_addr(l, "signals", "on_usr");
	struct live_stop stop;
	int signo = 0, stops = 0;

	CHECK(cont(l, 0, &stop) == LIVE_STOP_SIGNAL);
	CHECK(stop.signo == SIGUSR1);
	CHECK(live_bp_set(l, on_usr) == 0);
	CHECK(cont(l, SIGUSR1, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK_EQ_U64(stop.pc, on_usr);
	CHECK(live_bp_clear(l, on_usr) == 0);
	while (cont(l, signo, &stop) == LIVE_STOP_SIGNAL && stops++ < 50)
		signo = stop.signo;
	CHECK(stop.kind == LIVE_STOP_EXITED);
	CHECK(stop.code == 0);
	live_free(l);
}

/* crash: the SIGSEGV stops before delivery with the fault address, rip
 * at the faulting instruction; passed on, it kills the program. */
static void test_crash(void)
{
	struct live *l = launch("crash");
	struct user_regs_struct regs;
	struct live_stop stop;

	CHECK(cont(l, 0, &stop) == LIVE_STOP_CRASH);
	CHECK(stop.signo == SIGSEGV);
	CHECK(live_regs_get(l, stop.tid, &regs) == 0);
	CHECK_EQ_U64(regs.rip, stop.pc);
	CHECK(cont(l, SIGSEGV, &stop) == LIVE_STOP_KILLED);
	CHECK(stop.signo == SIGSEGV);
	live_free(l);
}

/* A breakpoint on crash's faulting instruction (lookup's load, fine the
 * first time): stepping over it the second time, by a single-step or by
 * a continue, stops with the SIGSEGV, not as a plain step. */
static void test_step_crash(void)
{
	for (int by_step = 0; by_step < 2; by_step++) {
		struct live *l = launch("crash");
		struct live_resume r = { 0 };
		struct live_stop stop;
		uint64_t pc;

		CHECK(cont(l, 0, &stop) == LIVE_STOP_CRASH);
		pc = stop.pc;
		live_free(l);
		l = launch("crash");
		CHECK(live_bp_set(l, pc) == 0);
		CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
		CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
		CHECK_EQ_U64(stop.pc, pc);
		r.step_tid = by_step ? stop.tid : 0;
		CHECK(live_resume(l, &r, &stop) == 0);
		CHECK(stop.kind == LIVE_STOP_CRASH);
		CHECK(stop.signo == SIGSEGV);
		CHECK_EQ_U64(stop.pc, pc);
		CHECK(stop.addr == 0x10);
		live_free(l);
	}
}

/* watch: a thread made after the stop at writer's breakpoint; stepping
 * the main thread with the others running lets writer end (with them
 * held it never would). */
static void test_others_run(void)
{
	struct live *l = launch("watch");
	struct live_resume r = { .others_run = true };
	struct live_stop stop;
	pid_t tids[8];
	int steps = 0;

	CHECK(live_bp_set(l, sym_addr(l, "watch", "writer")) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK(stop.tid != live_pid(l));
	CHECK(live_bp_clear(l, stop.pc) == 0);
	r.step_tid = live_pid(l);
	while (live_threads(l, tids, 8) > 1 && steps++ < 100000) {
		CHECK(live_resume(l, &r, &stop) == 0);
		if (stop.kind != LIVE_STOP_STEP)
			break;
	}
	CHECK(stop.kind == LIVE_STOP_STEP);
	CHECK(live_threads(l, tids, 8) == 1);
	live_free(l);
}

/* watch: a write watchpoint on counter stops in bump() after each
 * write, with the new value in memory, at the instruction after the
 * store; one on shared, set before the writer thread exists, stops in
 * that thread.  Debug registers or not. */
static void test_watch(void)
{
	struct live *l = launch("watch");
	uint64_t counter = sym_addr(l, "watch", "counter");
	uint64_t shared = sym_addr(l, "watch", "shared");
	uint64_t bump = sym_addr(l, "watch", "bump");
	struct live_stop stop;
	int v = 0;

	printf("debug registers %s\n", live_watch_hw() ? "work" :
	       "do not fire: watchpoints by single-stepping");
	CHECK(live_watch_set(l, counter, 4, LIVE_WATCH_WRITE) == 0);
	for (int i = 1; i <= 3; i++) {
		CHECK(cont(l, 0, &stop) == LIVE_STOP_WATCH);
		CHECK_EQ_U64(stop.addr, counter);
		CHECK(stop.pc > bump && stop.pc < bump + 16);
		CHECK(live_mem_read(l, counter, &v, 4) == 4);
		CHECK(v == i);
	}
	CHECK(live_watch_clear(l, counter, 4, LIVE_WATCH_WRITE) == 0);
	CHECK(live_watch_set(l, shared, 4, LIVE_WATCH_WRITE) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_WATCH);
	CHECK(stop.tid != live_pid(l));
	CHECK_EQ_U64(stop.addr, shared);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_EXITED);
	live_free(l);
}

/* The debug register encoding: DR7's enable, RW and LEN bits, and
 * watchpoints cut into aligned pieces as x86 needs them. */
static void test_dr7(void)
{
	struct live_wpiece p[LIVE_WATCH_SLOTS];

	CHECK(live_watch_cut(0x1000, 8, LIVE_WATCH_WRITE, 0, p, 4) == 1);
	CHECK_EQ_U64(live_dr7(p, 1), 0x1 | (1 << 16) | (2 << 18));
	CHECK(live_watch_cut(0x1001, 3, LIVE_WATCH_ACCESS, 1, p, 4) == 2);
	CHECK(p[0].addr == 0x1001 && p[0].len == 1);
	CHECK(p[1].addr == 0x1002 && p[1].len == 2 && p[1].watch == 1);
	CHECK_EQ_U64(live_dr7(p, 2), 0x1 | 0x4 | (3 << 16) | (0 << 18) |
		     (3ull << 20) | (1ull << 22));
	CHECK(live_watch_cut(0x1004, 12, LIVE_WATCH_WRITE, 0, p, 4) == 2);
	CHECK(p[0].len == 4 && p[1].addr == 0x1008 && p[1].len == 8);
	CHECK_EQ_U64(live_dr7(p, 2) >> 18 & 3, 3);	/* 4 bytes */
	CHECK(live_watch_cut(0x1001, 32, LIVE_WATCH_WRITE, 0, p, 4) == 7);
}

/* threads: at a breakpoint in producer (a second thread) every
 * thread is stopped and readable; the program then ends well. */
static void test_threads(void)
{
	struct live *l = launch("threads");
	struct user_regs_struct regs;
	struct live_stop stop;
	pid_t tids[16];
	size_t n;

	CHECK(live_bp_set(l, sym_addr(l, "threads", "producer")) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK(stop.tid != live_pid(l));
	n = live_threads(l, tids, 16);
	CHECK(n >= 2 && n <= 16);
	for (size_t i = 0; i < n && i < 16; i++)
		CHECK(live_regs_get(l, tids[i], &regs) == 0);
	CHECK(live_bp_clear(l, stop.pc) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_EXITED);
	CHECK(stop.code == 0);
	live_free(l);
}

/* Interrupts @arg's session after a moment. */
static void *interrupter(void *arg)
{
	usleep(200000);
	live_interrupt(arg);
	return NULL;
}

/* spin runs forever: live_interrupt() from another thread stops it with
 * every thread stopped. */
static void test_interrupt(void)
{
	struct live *l = launch("spin");
	struct user_regs_struct regs;
	struct live_stop stop;
	pthread_t th;

	pthread_create(&th, NULL, interrupter, l);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_INTERRUPTED);
	pthread_join(th, NULL);
	CHECK(live_regs_get(l, stop.tid, &regs) == 0);
	CHECK_EQ_U64(regs.rip, stop.pc);
	live_free(l);
}

/* The stepper's must_stop hook, which runs as a block is begun: asks
 * the run to stop there, as gdb's interrupt (sent from the server's
 * watcher thread) can at that moment. */
static bool stop_at_block(void *arg, uint64_t from, uint64_t to)
{
	(void) from;
	(void) to;
	((struct cap_stepper *) arg)->stop_requested = 1;
	return false;
}

static int no_event(void *arg, const struct cap_event *ev)
{
	(void) arg;
	(void) ev;
	return 0;
}

/* A block-stepped run stopped just as a thread's block was begun (its
 * int3 planted, the thread not yet resumed) leaves no thread "in" that
 * block: the native run that follows (tracing off) runs loops to its
 * end.  Before, that thread's first stop in the native run was taken
 * for a stop inside the block: "not at an instruction of the block it
 * ran ... code changed under ptrr" (tests/gdb-tty.sh, 1 run in 8). */
static void test_block_interrupted(void)
{
	char *argv[] = { (char *) prog_path("loops"), NULL };
	struct cap_stepper s;

	CHECK(cap_stepper_launch(&s, argv, false) == 0);
	s.block_mode = true;
	s.must_stop = stop_at_block;
	CHECK(cap_stepper_run(&s, no_event, &s) == 0);
	CHECK(s.end.kind == CAP_END_STOPPED);
	for (size_t i = 0; i < s.nthreads; i++)
		CHECK(!s.threads[i]->in_block);
	cap_blk_finish(&s);	/* as live.c's run() does after each run */
	s.must_stop = NULL;
	s.block_mode = false;
	s.stop_requested = 0;
	s.end.kind = 0;
	CHECK(cap_stepper_run_native(&s, no_event, &s) == 0);
	CHECK(s.end.kind == CAP_END_EXITED);
	cap_stepper_finish(&s);
	cap_stepper_free(&s);
}

/* The code of program @name as mapped in @l (its executable mapping),
 * as a history image. */
static struct hist_image *code_image(struct live *l, const char *name)
{
	char maps[64], line[4608], file[4096], perm[8];
	unsigned long long start, end;
	struct hist_image *img = NULL;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int) live_pid(l));
	f = fopen(maps, "r");
	CHECK(f && hist_image_new(&img) == 0);
	while (f && img && fgets(line, sizeof(line), f)) {
		uint8_t *buf;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %4095s", &start,
			   &end, perm, file) != 4 || perm[2] != 'x' ||
		    !strstr(file, name))
			continue;
		buf = malloc(end - start);
		CHECK(live_mem_read(l, start, buf, end - start) ==
		      (ssize_t) (end - start));
		CHECK(hist_image_add_copy(img, start, buf, end - start) == 0);
		free(buf);
	}
	if (f)
		fclose(f);
	return img;
}

/* The instruction addresses of the ground truth file (one a line). */
static uint64_t *read_truth(size_t *n)
{
	FILE *f = fopen(truth_path, "r");
	uint64_t *v = NULL, ip;
	size_t alloc = 0;

	*n = 0;
	CHECK(f != NULL);
	while (f && fscanf(f, "%" SCNx64, &ip) == 1) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			v = realloc(v, alloc * sizeof(*v));
		}
		v[(*n)++] = ip;
	}
	if (f)
		fclose(f);
	return v;
}

/* Every entry of @h is an instruction, the same as the ground truth's
 * (which starts where tracing started), and the last is at @pc. */
static void check_history(struct history *h, const uint64_t *truth,
			  size_t ntruth, uint64_t pc)
{
	struct hist_cursor *c;
	uint64_t n = hist_size(h), bad = 0;

	CHECK(n > 1 && n <= ntruth);
	CHECK(hist_cursor_new(h, &c) == 0);
	for (uint64_t i = 1; i <= n && i <= ntruth; i++) {
		const struct hist_entry *e;

		CHECK(hist_cursor_seek(c, i) == 0);
		e = hist_cursor_entry(c);
		if (e->kind != HIST_ENTRY_INSN || e->ip != truth[i - 1]) {
			if (!bad++)
				fprintf(stderr, "entry %" PRIu64 ": 0x%" PRIx64
					", truth 0x%" PRIx64 "\n", i, e->ip,
					truth[i - 1]);
		}
		if (i == n)
			CHECK_EQ_U64(e->ip, pc);
	}
	CHECK(bad == 0);
	hist_cursor_free(c);
}

/* Tracing loops from the first call of step() (as `ptrr record
 * --start=step` did for the ground truth): at each of the next five
 * stops at step() the history, opened at the first and extended at the
 * others, is the ground truth up to the stop pc; then, tracing off, the
 * program runs natively to its end. */
static void test_trace(void)
{
	struct live *l = launch("loops");
	uint64_t step = sym_addr(l, "loops", "step"), *truth;
	struct hist_config cfg = { 0 };
	struct history *h = NULL;
	struct live_thread_trace tr;
	struct live_stop stop;
	size_t ntruth, size = 0;

	truth = read_truth(&ntruth);
	CHECK(live_bp_set(l, step) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	cfg.image = code_image(l, "loops");
	CHECK(live_trace_start(l) == 0);
	for (int k = 0; k < 5 && cfg.image; k++) {
		CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
		CHECK_EQ_U64(stop.pc, step);
		CHECK(live_trace_get(l, stop.tid, &tr) == 0);
		CHECK(tr.size > size);
		CHECK_EQ_U64(tr.end_ip, step);
		size = tr.size;
		if (!h) {
			cfg.trace = tr.data;
			cfg.size = tr.size;
			cfg.have_end_ip = true;
			cfg.end_ip = tr.end_ip;
			CHECK(hist_open(&cfg, &h) == 0);
		} else {
			CHECK(hist_extend(h, tr.data, tr.size, true,
					  tr.end_ip) == 0);
		}
		if (h)
			check_history(h, truth, ntruth, stop.pc);
	}
	live_trace_stop(l);
	CHECK(live_bp_clear(l, step) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_EXITED);
	CHECK(stop.code == 0);
	hist_close(h);
	live_free(l);
	hist_image_free(cfg.image);
	free(truth);
}

/* What test_trace_progress()'s progress points do. */
struct progress {
	struct live *l;
	pid_t tid;
	struct hist_config cfg;
	struct history *h;
	unsigned calls;
	size_t size;		/* of the trace at the last one */
};

/* A progress point: the history so far, opened at the first and extended
 * at the others, ending where the trace leaves it (no end PC: the
 * thread's last branches are not in the trace yet). */
static int grow(void *arg)
{
	struct progress *p = arg;
	struct live_thread_trace tr;

	p->calls++;
	CHECK(live_trace_get(p->l, p->tid, &tr) == 0);
	CHECK(tr.size >= p->size);
	p->size = tr.size;
	if (!p->h) {
		p->cfg.trace = tr.data;
		p->cfg.size = tr.size;
		CHECK(hist_open(&p->cfg, &p->h) == 0);
	} else {
		CHECK(hist_extend(p->h, tr.data, tr.size, false, 0) == 0);
	}
	return 0;
}

/* live_set_progress(): in traced runs of loops from step() to its next
 * call, a point every 5 instructions (several a run) extends the
 * history as the run goes; at the stop, one
 * more extension with the end PC gives exactly the ground truth, as a
 * history made at the stop alone does. */
static void test_trace_progress(void)
{
	struct live *l = launch("loops");
	uint64_t step = sym_addr(l, "loops", "step"), *truth;
	struct progress p = { .l = l };
	struct live_thread_trace tr;
	struct live_stop stop;
	size_t ntruth;

	truth = read_truth(&ntruth);
	CHECK(live_bp_set(l, step) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	p.tid = stop.tid;
	p.cfg.image = code_image(l, "loops");
	CHECK(live_trace_start(l) == 0);
	live_set_progress(l, grow, &p, 5);
	for (int k = 0; k < 3 && p.cfg.image; k++) {
		unsigned before = p.calls;

		CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
		CHECK(p.calls > before);
		CHECK(live_trace_get(l, stop.tid, &tr) == 0);
		if (p.h)
			CHECK(hist_extend(p.h, tr.data, tr.size, true,
					  tr.end_ip) == 0);
		if (p.h)
			check_history(p.h, truth, ntruth, stop.pc);
	}
	live_set_progress(l, NULL, NULL, 0);
	live_trace_stop(l);
	CHECK(live_bp_clear(l, step) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_EXITED);
	hist_close(p.h);
	live_free(l);
	hist_image_free(p.cfg.image);
	free(truth);
}

/* The history of thread @tid's trace so far, on image @img. */
static struct history *history_of(struct live *l, pid_t tid,
				  struct hist_image *img)
{
	struct hist_config cfg = { .image = img, .have_end_ip = true };
	struct live_thread_trace tr;
	struct history *h = NULL;

	CHECK(live_trace_get(l, tid, &tr) == 0);
	cfg.trace = tr.data;
	cfg.size = tr.size;
	cfg.end_ip = tr.end_ip;
	CHECK(hist_open(&cfg, &h) == 0);
	return h;
}

/* Where in @truth (of @n addresses) the first instruction after @from
 * that is at @ip lies; @n if none. */
static size_t truth_find(const uint64_t *truth, size_t n, size_t from,
			 uint64_t ip)
{
	while (from < n && truth[from] != ip)
		from++;
	return from;
}

/* Full mode's overflow (live.h): loops traced from the first call of
 * step() with a cap of 30 bytes a run.  A run's first packets (PSB+,
 * TIP.PGE: 25 bytes) fit; a continue to the next call (37 bytes with its
 * branches, FUP and TIP.PGD) does not, a single step does.  Each continue then ends in an overflow gap
 * just before its stop at step(), counted as lost instructions, and the
 * history goes on after it: every stretch between gaps is the ground
 * truth from its run's start, the one after the last gap exactly (the
 * three single steps fit). */
static void test_trace_overflow(void)
{
	char *argv[] = { (char *) prog_path("loops"), NULL };
	struct live_options opt = { .aslr = false, .trace_cap = 30 };
	struct live_resume one = { 0 };
	struct live_thread_trace tr;
	struct live_stop stop;
	struct live *l = NULL;
	struct hist_image *img;
	struct hist_cursor *c;
	struct history *h;
	uint64_t step, *truth, lost = 0, gaps = 0, n;
	size_t ntruth, at = 0, stretch = 0;

	CHECK(live_launch(&l, argv, &opt) == 0);
	if (!l)
		return;
	step = sym_addr(l, "loops", "step");
	truth = read_truth(&ntruth);
	CHECK(live_bp_set(l, step) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	img = code_image(l, "loops");
	CHECK(live_trace_start(l) == 0);
	for (unsigned k = 1; k <= 5; k++) {
		CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
		CHECK_EQ_U64(stop.pc, step);
		CHECK(live_trace_get(l, stop.tid, &tr) == 0);
		CHECK_EQ_U64(tr.overflows, k);
		CHECK(tr.run_lost > 0);
		lost += tr.run_lost;
		CHECK_EQ_U64(tr.lost, lost);
	}
	one.step_tid = stop.tid;
	for (int k = 0; k < 3; k++) {
		CHECK(live_resume(l, &one, &stop) == 0);
		CHECK(stop.kind == LIVE_STOP_STEP);
	}
	CHECK(live_trace_get(l, stop.tid, &tr) == 0);
	CHECK_EQ_U64(tr.overflows, 5);
	CHECK_EQ_U64(tr.run_lost, 0);
	h = history_of(l, stop.tid, img);
	n = h ? hist_size(h) : 0;
	CHECK(h && hist_cursor_new(h, &c) == 0);
	for (uint64_t i = 1; h && i <= n; i++) {
		const struct hist_entry *e;

		CHECK(hist_cursor_seek(c, i) == 0);
		e = hist_cursor_entry(c);
		if (e->kind == HIST_ENTRY_GAP) {
			CHECK_EQ_U64(e->gap_code, HIST_GAP_OVERFLOW);
			CHECK(stretch > 0);
			/* The run after it starts at the next call of step(),
			 * past what was lost of this one. */
			at = truth_find(truth, ntruth, at, step);
			stretch = 0;
			gaps++;
			continue;
		}
		if (at >= ntruth || e->ip != truth[at]) {
			fprintf(stderr, "entry %" PRIu64 ": 0x%" PRIx64 ", truth "
				"0x%" PRIx64 "\n", i, e->ip,
				at < ntruth ? truth[at] : 0);
			CHECK(0);
			break;
		}
		at++;
		stretch++;
	}
	CHECK_EQ_U64(gaps, 5);
	CHECK_EQ_U64(stretch, 4);	/* step(), then three single steps */
	if (h)
		hist_cursor_free(c);
	hist_close(h);
	live_trace_stop(l);
	CHECK(live_bp_clear(l, step) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_EXITED);
	live_free(l);
	hist_image_free(img);
	free(truth);
}

/* crash traced from clobber(): the SIGSEGV stops before delivery, and
 * the history ends at the faulting instruction (in lookup, lookup.isra.0
 * as compiled), gap-free. */
static void test_trace_crash(void)
{
	struct live *l = launch("crash");
	uint64_t lookup, clobber = sym_addr(l, "crash", "clobber");
	struct hist_image *img;
	struct hist_cursor *c;
	struct history *h;
	struct live_stop stop;

	lookup = sym_addr(l, "crash", "lookup.isra.0");
	CHECK(live_bp_set(l, clobber) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK(live_bp_clear(l, clobber) == 0);
	img = code_image(l, "crash");
	CHECK(live_trace_start(l) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_CRASH);
	CHECK(stop.signo == SIGSEGV);
	CHECK(stop.pc >= lookup && stop.pc < lookup + 16);
	h = history_of(l, stop.tid, img);
	CHECK(h && hist_insn_count(h) == hist_size(h));
	if (h && hist_cursor_new(h, &c) == 0) {
		CHECK(hist_cursor_seek(c, hist_size(h)) == 0);
		CHECK_EQ_U64(hist_cursor_entry(c)->ip, stop.pc);
		CHECK(hist_cursor_seek(c, 1) == 0);
		CHECK_EQ_U64(hist_cursor_entry(c)->ip, clobber);
		hist_cursor_free(c);
	}
	hist_close(h);
	CHECK(cont(l, SIGSEGV, &stop) == LIVE_STOP_KILLED);
	live_free(l);
	hist_image_free(img);
}

/* threads traced from producer's start to the end: every thread that
 * ran has a trace; at a traced stop every thread is stopped. */
static void test_trace_threads(void)
{
	struct live *l = launch("threads");
	uint64_t producer = sym_addr(l, "threads", "producer");
	uint64_t fib = sym_addr(l, "threads", "fib");
	struct live_thread_trace tr;
	struct live_stop stop;
	pid_t tids[16];
	size_t n, traced = 0;

	CHECK(live_bp_set(l, producer) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK(live_bp_clear(l, producer) == 0);
	CHECK(live_trace_start(l) == 0);
	CHECK(live_bp_set(l, fib) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK_EQ_U64(stop.pc, fib);
	CHECK(live_trace_get(l, stop.tid, &tr) == 0);
	CHECK_EQ_U64(tr.end_ip, fib);
	n = live_threads(l, tids, 16);
	CHECK(n >= 2);
	CHECK(live_bp_clear(l, fib) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_EXITED);
	CHECK(stop.code == 0);
	n = live_traced_threads(l, tids, 16);
	for (size_t i = 0; i < n && i < 16; i++)
		traced += live_trace_get(l, tids[i], &tr) == 0 && tr.size > 0;
	CHECK(n >= 3 && traced == n);
	live_free(l);
}

/* spin traced from its first instruction: an interrupt from another
 * thread stops it; the trace ends where the thread is. */
static void test_trace_interrupt(void)
{
	struct live *l = launch("spin");
	struct user_regs_struct regs;
	struct live_thread_trace tr;
	struct live_stop stop;
	pthread_t th;

	CHECK(live_trace_start(l) == 0);
	pthread_create(&th, NULL, interrupter, l);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_INTERRUPTED);
	pthread_join(th, NULL);
	CHECK(live_regs_get(l, stop.tid, &regs) == 0);
	CHECK(live_trace_get(l, stop.tid, &tr) == 0);
	CHECK(tr.size > 0);
	CHECK_EQ_U64(tr.end_ip, regs.rip);
	live_free(l);
}

/* signals traced from main: SIGUSR1 still stops before delivery; passed
 * on, the traced run reaches the handler's breakpoint; the trace ends
 * there; tracing off, every later signal passed, the program ends
 * well. */
static void test_trace_signals(void)
{
	struct live *l = launch("signals");
	uint64_t on_usr = sym_addr(l, "signals", "on_usr");
	uint64_t main_addr = sym_addr(l, "signals", "main");
	struct live_thread_trace tr;
	struct live_stop stop;
	int signo = 0, stops = 0;

	CHECK(live_bp_set(l, main_addr) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK(live_bp_clear(l, main_addr) == 0);
	CHECK(live_trace_start(l) == 0);
	CHECK(cont(l, 0, &stop) == LIVE_STOP_SIGNAL);
	CHECK(stop.signo == SIGUSR1);
	CHECK(live_bp_set(l, on_usr) == 0);
	CHECK(cont(l, SIGUSR1, &stop) == LIVE_STOP_BREAKPOINT);
	CHECK_EQ_U64(stop.pc, on_usr);
	CHECK(live_trace_get(l, stop.tid, &tr) == 0);
	CHECK_EQ_U64(tr.end_ip, on_usr);
	live_trace_stop(l);
	CHECK(live_bp_clear(l, on_usr) == 0);
	while (cont(l, signo, &stop) == LIVE_STOP_SIGNAL && stops++ < 50)
		signo = stop.signo;
	CHECK(stop.kind == LIVE_STOP_EXITED);
	CHECK(stop.code == 0);
	live_free(l);
}

/* The live target of the server (gdbremote/live_target.c) on loops:
 * a breakpoint, a continue and a step through its ops, tracing by the
 * monitor command, the raw trace, the end. */
static void test_target(void)
{
	char *argv[] = { (char *) prog_path("loops"), NULL };
	uint64_t vals[HIST_NREGS], step, rip, rsp, rax;
	bool known[HIST_NREGS];
	const struct hist_cpu *cpu;
	const uint8_t *data;
	struct rsp_target *t = NULL;
	struct rsp_stop st;
	size_t size = 0;
	FILE *out = fopen("/dev/null", "w");

	CHECK(rsp_live_target_open(&tsrc_soft, argv, NULL, &t) == 0);
	if (!t)
		return;
	CHECK(t->ops->nthreads(t) == 1);
	step = pid_sym_addr(t->ops->tid(t, 0), "loops", "step");
	CHECK(t->ops->breakpoint(t, RSP_BREAK_SW, step, 1, true) == 0);
	CHECK(t->ops->resume(t, 0, 1, false, &st) == 0);
	CHECK(st.why == RSP_STOP_SWBREAK && st.thr == 0);
	t->ops->regs(t, 0, vals, known);
	CHECK(known[HIST_RIP]);
	CHECK_EQ_U64(vals[HIST_RIP], step);
	CHECK(t->ops->resume(t, 0, 1, true, &st) == 0);
	CHECK(st.why == RSP_STOP_SIGNAL && st.signal == SIGTRAP);
	t->ops->regs(t, 0, vals, known);
	rip = vals[HIST_RIP];
	CHECK(rip > step && rip < step + 16);
	/* Nothing traced yet: no history to go back in. */
	CHECK(t->ops->resume(t, 0, -1, false, &st) == 0);
	CHECK(st.why == RSP_STOP_BEGIN);
	CHECK(!t->ops->replaying(t, 0));
	CHECK(t->ops->monitor(t, 0, out, (char[]) { "start" }) == 0);
	CHECK(t->ops->resume(t, 0, 1, false, &st) == 0);
	CHECK(st.why == RSP_STOP_SWBREAK);
	CHECK(t->ops->trace(t, 0, &cpu, &data, &size) == 0);
	CHECK(size > 0);
	t->ops->regs(t, 0, vals, known);
	CHECK(known[HIST_RSP] && known[HIST_RAX]);
	rsp = vals[HIST_RSP];
	rax = vals[HIST_RAX];
	/* Backward through what was traced: one instruction back is the
	 * call of step, where the PC is known and rsp is proven (the
	 * callee's CFA, 8 above its rsp at entry); rax is recovered (a call
	 * does not write it: what it is at the stop) ... */
	CHECK(t->ops->resume(t, 0, -1, true, &st) == 0);
	CHECK(st.why == RSP_STOP_SIGNAL && st.signal == SIGTRAP);
	CHECK(t->ops->replaying(t, 0));
	t->ops->regs(t, 0, vals, known);
	CHECK(known[HIST_RIP] && known[HIST_RAX] && vals[HIST_RAX] == rax);
	CHECK(!known[HIST_EFLAGS]);	/* not tracked back */
	CHECK(known[HIST_RSP] && vals[HIST_RSP] == rsp + 8);
	CHECK(vals[HIST_RIP] != step);
	CHECK(t->ops->write_reg(t, 0, HIST_RAX, 1) == PTRR_ERR_UNSUPPORTED);
	/* ... back to where tracing began (after the breakpoint: the
	 * breakpoint's earlier executions were not traced) ... */
	CHECK(t->ops->resume(t, 0, -1, false, &st) == 0);
	CHECK(st.why == RSP_STOP_BEGIN);
	t->ops->regs(t, 0, vals, known);
	CHECK_EQ_U64(vals[HIST_RIP], rip);
	/* ... and forward again to the present: the breakpoint there. */
	CHECK(t->ops->resume(t, 0, 1, false, &st) == 0);
	CHECK(st.why == RSP_STOP_SWBREAK);
	CHECK(!t->ops->replaying(t, 0));
	t->ops->regs(t, 0, vals, known);
	CHECK(known[HIST_RSP]);
	CHECK_EQ_U64(vals[HIST_RIP], step);
	CHECK(t->ops->monitor(t, 0, out, (char[]) { "stop" }) == 0);
	CHECK(t->ops->breakpoint(t, RSP_BREAK_SW, step, 1, false) == 0);
	CHECK(t->ops->resume(t, 0, 1, false, &st) == 0);
	CHECK(st.why == RSP_STOP_EXITED && st.signal == 0);
	t->ops->close(t);
	fclose(out);
}

/* The calls the live target made through the live table of test
 * source "wrapped" (the software backend's, counted); the trace bytes
 * the last trace_get handed over. */
static unsigned through_launch, through_resume, through_trace,
		through_regs, through_bp, through_program, through_maps;
static size_t through_size;

static int w_launch(char *const argv[], const struct live_options *opt,
		    struct tsrc **out)
{
	through_launch++;
	return live_ptrace.launch(argv, opt, out);
}

static int w_resume(struct tsrc *s, const struct live_resume *r,
		    struct live_stop *stop)
{
	through_resume++;
	return live_ptrace.resume(s, r, stop);
}

static int w_trace_get(struct tsrc *s, pid_t tid,
		       struct live_thread_trace *out)
{
	int err = live_ptrace.trace_get(s, tid, out);

	through_trace++;
	through_size = err ? 0 : out->size;
	return err;
}

static int w_regs_get(struct tsrc *s, pid_t tid,
		      struct user_regs_struct *regs)
{
	through_regs++;
	return live_ptrace.regs_get(s, tid, regs);
}

static int w_bp_set(struct tsrc *s, uint64_t addr)
{
	through_bp++;
	return live_ptrace.bp_set(s, addr);
}

static int w_program(struct tsrc *s, char *buf, size_t n)
{
	through_program++;
	return live_ptrace.program(s, buf, n);
}

static int w_maps(struct tsrc *s, struct cap_map **maps, size_t *n)
{
	through_maps++;
	return live_ptrace.maps(s, maps, n);
}

/* The live target reaches the process and its trace only through the
 * source's live table (source.h): with the software backend's table
 * wrapped, the launch, the resumes, the registers, the breakpoint, the
 * program's path and mappings and the trace go through the wrappers, gdb's record pt gets the bytes
 * trace_get handed over, and pt save names the source. */
static void test_target_source(void)
{
	static struct tsrc_live_ops wlive;
	static struct tsrc_ops wsrc;
	char *argv[] = { (char *) prog_path("loops"), NULL };
	char dir[] = "/tmp/ptrr-test-live-XXXXXX", cmd[64], path[96];
	const struct hist_cpu *cpu;
	const uint8_t *data;
	struct rsp_target *t = NULL;
	struct hist_bundle *b;
	struct rsp_stop st;
	size_t size = 0;
	FILE *out = fopen("/dev/null", "w");

	wlive = live_ptrace;
	wlive.launch = w_launch;
	wlive.resume = w_resume;
	wlive.trace_get = w_trace_get;
	wlive.regs_get = w_regs_get;
	wlive.bp_set = w_bp_set;
	wlive.program = w_program;
	wlive.maps = w_maps;
	wsrc = tsrc_soft;
	wsrc.name = "wrapped";
	wsrc.live = &wlive;
	CHECK(mkdtemp(dir) != NULL);
	CHECK(rsp_live_target_open(&wsrc, argv, NULL, &t) == 0);
	if (!t)
		return;
	CHECK_EQ_U64(through_launch, 1);
	CHECK(t->ops->breakpoint(t, RSP_BREAK_SW, pid_sym_addr(
		t->ops->tid(t, 0), "loops", "step"), 1, true) == 0);
	CHECK(t->ops->monitor(t, 0, out, (char[]) { "start" }) == 0);
	CHECK(t->ops->resume(t, 0, 1, false, &st) == 0);
	CHECK(st.why == RSP_STOP_SWBREAK);
	CHECK(t->ops->trace(t, 0, &cpu, &data, &size) == 0);
	CHECK(through_bp > 0 && through_resume > 0 && through_regs > 0);
	CHECK(through_trace > 0 && through_program > 0 && through_maps > 0);
	CHECK(size > 0);
	CHECK_EQ_U64(size, through_size);
	snprintf(cmd, sizeof(cmd), "save %s/s.ptrr", dir);
	CHECK(t->ops->monitor(t, 0, out, cmd) == 0);
	snprintf(path, sizeof(path), "%s/s.ptrr", dir);
	if (hist_bundle_load(path, &b) == 0) {
		CHECK(!strcmp(b->pt.backend, "wrapped"));
		CHECK_EQ_U64(b->nthreads, 1);
		hist_bundle_free(b);
	} else {
		CHECK(!"pt save wrote a bundle");
	}
	t->ops->close(t);
	fclose(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test-live PROGS_DIR LOOPS_TRUTH\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	progs = argv[1];
	truth_path = argv[2];
	RUN(test_breakpoints);
	RUN(test_step);
	RUN(test_write);
	RUN(test_signals);
	RUN(test_crash);
	RUN(test_step_crash);
	RUN(test_others_run);
	RUN(test_watch);
	RUN(test_dr7);
	RUN(test_threads);
	RUN(test_interrupt);
	RUN(test_block_interrupted);
	RUN(test_trace);
	RUN(test_trace_progress);
	RUN(test_trace_overflow);
	RUN(test_trace_crash);
	RUN(test_trace_threads);
	RUN(test_trace_interrupt);
	RUN(test_trace_signals);
	RUN(test_target);
	RUN(test_target_source);
	return test_summary();
}
