/* Watchpoints of a live session (live.h): the x86 debug registers DR0-3
 * and DR7 of every thread, set through ptrace(PTRACE_POKEUSER), with DR6
 * telling at a SIGTRAP which one fired; or, where the debug registers do
 * not fire (some hypervisors do not pass them through), single-stepping
 * with the watched bytes compared after each instruction.
 *
 * A watchpoint is cut into naturally aligned pieces of 1, 2, 4 or 8
 * bytes, one debug register each, as gdbserver does.  Threads the kernel
 * makes start without ptrace's debug registers: each new thread gets
 * them when the stepper first sees it (live_watch_thread). */
#include <config.h>

#include "live/live_internal.h"
#include "error.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* The offset of debug register @i in struct user (PTRACE_POKEUSER). */
#define DR_OFFSET(i) offsetof(struct user, u_debugreg[i])

/* DR7's LEN field for a piece of @len bytes (1, 2, 4 or 8). */
static unsigned dr7_len(size_t len)
{
	return len == 1 ? 0 : len == 2 ? 1 : len == 8 ? 2 : 3;
}

uint64_t live_dr7(const struct live_wpiece *p, size_t n)
{
	uint64_t dr7 = 0;

	for (size_t i = 0; i < n && i < LIVE_WATCH_SLOTS; i++) {
		dr7 |= 1ull << (2 * i);			/* L0..L3 */
		dr7 |= (uint64_t) p[i].kind << (16 + 4 * i);	/* RW */
		dr7 |= (uint64_t) dr7_len(p[i].len) << (18 + 4 * i);
	}
	return dr7;
}

size_t live_watch_cut(uint64_t addr, size_t len, enum live_watch_kind kind,
		      size_t watch, struct live_wpiece *out, size_t max)
{
	size_t n = 0;

	while (len) {
		size_t size = 8;

		while (size > len || addr % size)
			size /= 2;
		if (n < max)
			out[n] = (struct live_wpiece) { addr, size, kind,
							watch };
		n++;
		addr += size;
		len -= size;
	}
	return n;
}

/* Tries the debug registers in a child: a write watchpoint on a
 * variable the child then writes must stop it with SIGTRAP. */
static bool probe_debug_registers(void)
{
	static volatile uint64_t probe;
	uint64_t dr7 = 1 | (1ull << 16) | (2ull << 18);
	bool fired = false;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		probe = 1;
		_exit(0);
	}
	if (pid < 0)
		return false;
	if (waitpid(pid, &status, 0) == pid && WIFSTOPPED(status) &&
	    ptrace(PTRACE_POKEUSER, pid, DR_OFFSET(0), (void *) &probe) == 0 &&
	    ptrace(PTRACE_POKEUSER, pid, DR_OFFSET(7), (void *) (uintptr_t) dr7) == 0 &&
	    ptrace(PTRACE_CONT, pid, NULL, NULL) == 0 &&
	    waitpid(pid, &status, 0) == pid)
		fired = WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP;
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == pid && !WIFEXITED(status) &&
	       !WIFSIGNALED(status))
		;
	return fired;
}

bool live_watch_hw(void)
{
	static int works = -1;
	const char *env = getenv("PTRR_LIVE_WATCH");

	if (env && !strcmp(env, "soft"))
		return false;
	if (works < 0)
		works = probe_debug_registers();
	return works;
}

/* Writes the debug registers of stopped thread @tid for the session's
 * pieces (DR7 off first: the kernel checks each address against the
 * enabled ones). */
static int apply(struct live *l, pid_t tid)
{
	uint64_t dr7 = live_dr7(l->wpieces, l->nwpieces);

	errno = 0;
	ptrace(PTRACE_POKEUSER, tid, DR_OFFSET(7), NULL);
	for (size_t i = 0; !errno && i < l->nwpieces; i++)
		ptrace(PTRACE_POKEUSER, tid, DR_OFFSET(i),
		       (void *) (uintptr_t) l->wpieces[i].addr);
	if (!errno)
		ptrace(PTRACE_POKEUSER, tid, DR_OFFSET(6), NULL);
	if (!errno && dr7)
		ptrace(PTRACE_POKEUSER, tid, DR_OFFSET(7),
		       (void *) (uintptr_t) dr7);
	if (errno)
		return ptrr_fail(errno == ESRCH ? PTRR_ERR_GONE : PTRR_ERR_IO,
				 "cannot set the debug registers of thread "
				 "%d: %s", (int) tid, strerror(errno));
	return 0;
}

int live_watch_thread(struct live *l, pid_t tid)
{
	return l->watch_hw && l->nwatches ? apply(l, tid) : 0;
}

/* Reads the bytes of watchpoint @w into @buf through thread @tid. */
static bool read_watched(pid_t tid, const struct live_watch *w, uint8_t *buf)
{
	struct iovec local = { buf, w->len };
	struct iovec remote = { (void *) (uintptr_t) w->addr, w->len };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) ==
	       (ssize_t) w->len;
}

void live_watch_snapshot(struct live *l)
{
	pid_t tid = cap_stepper_mem_tid(&l->s);

	for (size_t i = 0; tid && !l->watch_hw && i < l->nwatches; i++)
		l->watches[i].readable = read_watched(tid, &l->watches[i],
						      l->watches[i].old);
}

/* Cuts every watchpoint into pieces; PTRR_ERR_USAGE if they need more
 * than the four debug registers. */
static int cut_all(struct live *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nwatches; i++)
		n += live_watch_cut(l->watches[i].addr, l->watches[i].len,
				    l->watches[i].kind, i, l->wpieces + n,
				    n < LIVE_WATCH_SLOTS ?
				    LIVE_WATCH_SLOTS - n : 0);
	if (n > LIVE_WATCH_SLOTS)
		return ptrr_fail(PTRR_ERR_USAGE, "the watchpoints need %zu "
				 "debug registers; x86 has %d", n,
				 LIVE_WATCH_SLOTS);
	l->nwpieces = n;
	return 0;
}

/* Applies the pieces to every stopped thread. */
static int apply_all(struct live *l)
{
	int err = 0;

	for (size_t i = 0; !err && l->watch_hw && i < l->s.nthreads; i++)
		if (l->s.threads[i]->state == CAP_TS_STOPPED)
			err = apply(l, l->s.threads[i]->tid);
	return err;
}

/* The index of watchpoint (@addr, @len, @kind), or -1. */
static ssize_t watch_find(const struct live *l, uint64_t addr, size_t len,
			  enum live_watch_kind kind)
{
	for (size_t i = 0; i < l->nwatches; i++)
		if (l->watches[i].addr == addr && l->watches[i].len == len &&
		    l->watches[i].kind == kind)
			return (ssize_t) i;
	return -1;
}

int live_watch_set(struct live *l, uint64_t addr, size_t len,
		   enum live_watch_kind kind)
{
	int err;

	if (len == 0 || len > 8 * LIVE_WATCH_SLOTS)
		return ptrr_fail(PTRR_ERR_USAGE, "cannot watch %zu bytes (1 "
				 "to %d)", len, 8 * LIVE_WATCH_SLOTS);
	if (watch_find(l, addr, len, kind) >= 0)
		return 0;
	l->watch_hw = live_watch_hw();
	if (!l->watch_hw && kind != LIVE_WATCH_WRITE)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "the debug registers "
				 "do not work on this machine: only writes "
				 "can be watched");
	if (l->nwatches == LIVE_WATCH_SLOTS)
		return ptrr_fail(PTRR_ERR_USAGE, "at most %d watchpoints (the "
				 "x86 debug registers)", LIVE_WATCH_SLOTS);
	l->watches[l->nwatches++] = (struct live_watch) { .addr = addr,
							  .len = len,
							  .kind = kind };
	err = cut_all(l);
	if (err) {
		l->nwatches--;
		cut_all(l);
		return err;
	}
	live_watch_snapshot(l);
	return apply_all(l);
}

int live_watch_clear(struct live *l, uint64_t addr, size_t len,
		     enum live_watch_kind kind)
{
	ssize_t i = watch_find(l, addr, len, kind);

	if (i < 0)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no watchpoint at 0x%"
				 PRIx64, addr);
	l->watches[i] = l->watches[--l->nwatches];
	cut_all(l);
	return apply_all(l);
}

void live_watch_forget(struct live *l)
{
	if (!l->nwatches)
		return;
	l->nwatches = l->nwpieces = 0;
	if (apply_all(l))
		ptrr_clear_error();
}

/* The watchpoint whose debug register fired in thread @tid (DR6, then
 * cleared), or -1. */
static ssize_t hw_hit(struct live *l, pid_t tid)
{
	long dr6;

	errno = 0;
	dr6 = ptrace(PTRACE_PEEKUSER, tid, DR_OFFSET(6), NULL);
	if (errno || !(dr6 & 0xf))
		return -1;
	ptrace(PTRACE_POKEUSER, tid, DR_OFFSET(6), NULL);
	for (size_t i = 0; i < l->nwpieces; i++)
		if (dr6 & (1l << i))
			return (ssize_t) l->wpieces[i].watch;
	return -1;
}

/* The address of memory operand @op of @insn, at @ip, run by a thread
 * now with registers @r; false if it cannot be told from them (an
 * implicit operand such as a push's or a string operation's, whose
 * registers the instruction moved). */
static bool operand_address(const ZydisDecodedInstruction *insn,
			    const ZydisDecodedOperand *op, uint64_t ip,
			    const struct user_regs_struct *r, uint64_t *addr)
{
	static const ZydisRegister gpr[] = {
		ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RBX, ZYDIS_REGISTER_RCX,
		ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
		ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_R8,
		ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
		ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14,
		ZYDIS_REGISTER_R15,
	};
	const uint64_t val[] = {
		r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp,
		r->rsp, r->r8, r->r9, r->r10, r->r11, r->r12, r->r13,
		r->r14, r->r15,
	};
	static ZydisRegisterContext ctx;

	if (op->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
		return false;
	for (size_t i = 0; i < sizeof(gpr) / sizeof(gpr[0]); i++)
		ctx.values[gpr[i]] = val[i];
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddressEx(insn, op, ip, &ctx,
						     addr)))
		return false;
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		*addr += r->fs_base;
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		*addr += r->gs_base;
	return true;
}

/* True if the @len bytes at @addr overlap watchpoint @w. */
static bool overlaps(const struct live_watch *w, uint64_t addr, uint64_t len)
{
	return addr < w->addr + w->len && w->addr < addr + len;
}

/* True if the system call thread registers @r were just left by may
 * have written watchpoint @w: any but the few a thread makes around
 * another's start and end (rt_sigprocmask in pthread_create, futex in
 * pthread_join), whose writes go only where their arguments point,
 * which is checked.  (The kernel keeps the call's number in orig_rax
 * and its arguments in their registers after it returns.)  Without
 * this a write by a thread just started was blamed on the thread that
 * made it, which was in rt_sigprocmask at that moment. */
static bool syscall_may_write(const struct user_regs_struct *r,
			      const struct live_watch *w)
{
	switch (r->orig_rax) {
	case SYS_rt_sigprocmask:	/* the old mask, at rdx */
		return r->rdx && overlaps(w, r->rdx, r->r10 ? r->r10 : 8);
	case SYS_futex:			/* the futex words, at rdi and r8 */
		return overlaps(w, r->rdi, 4) || overlaps(w, r->r8, 4);
	case SYS_getpid:
	case SYS_gettid:
	case SYS_sched_yield:
		return false;
	default:
		return true;
	}
}

/* True if instruction @ev, just retired, may have written watchpoint
 * @w: a memory operand it writes that covers it, or one whose address
 * cannot be told, or a system call (the kernel writes). */
static bool may_write(const struct cap_event *ev, const struct live_watch *w)
{
	static ZydisDecoder dec;
	static bool ready;
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	if (!ready)
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
				 ZYDIS_STACK_WIDTH_64);
	ready = true;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, ev->code, ev->insn.len,
						 &insn, ops)))
		return true;	/* unknown: it may */
	if (insn.mnemonic == ZYDIS_MNEMONIC_SYSCALL)
		return syscall_may_write(&ev->thread->regs, w);
	for (unsigned i = 0; i < insn.operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		uint64_t addr;

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    op->mem.type == ZYDIS_MEMOP_TYPE_AGEN ||
		    !(op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (!operand_address(&insn, op, ev->ip, &ev->thread->regs,
				     &addr) ||
		    overlaps(w, addr, op->size / 8))
			return true;
	}
	return false;
}

/* The watchpoint whose bytes changed, seen through thread @tid, its new
 * bytes kept; or -1.  Threads step at the same time: a change seen
 * after instruction @ev of @tid (NULL at a signal stop) that cannot
 * have made it is another thread's, left to be seen again after that
 * thread's instruction. */
static ssize_t soft_hit(struct live *l, pid_t tid, const struct cap_event *ev)
{
	uint8_t now[8 * LIVE_WATCH_SLOTS];

	for (size_t i = 0; i < l->nwatches; i++) {
		struct live_watch *w = &l->watches[i];
		bool readable = read_watched(tid, w, now);

		if ((readable == w->readable &&
		     (!readable || !memcmp(now, w->old, w->len))) ||
		    (ev && !may_write(ev, w)))
			continue;
		w->readable = readable;
		memcpy(w->old, now, w->len);
		return (ssize_t) i;
	}
	return -1;
}

bool live_watch_hit(struct live *l, pid_t tid, const struct cap_event *ev,
		    struct live_stop *stop)
{
	ssize_t i;

	if (!l->nwatches)
		return false;
	i = l->watch_hw ? hw_hit(l, tid) : soft_hit(l, tid, ev);
	if (i < 0)
		return false;
	stop->addr = l->watches[i].addr;
	stop->watch = l->watches[i].kind;
	return true;
}
