/* ptrr-qemu.so: a TCG plugin for qemu-x86_64 (user mode) that writes an
 * Intel PT trace of each guest thread, for `ptrr record --backend=qemu`
 * (plugin/record_qemu.c starts QEMU with it; qemu_shm.h is what the two
 * share).
 *
 * Shape (as QEMU's contrib/plugins): everything about a block is decided
 * when QEMU translates it — its first and last instruction, the class of
 * the last one (conditional, direct, indirect, call, return, system call,
 * none), its direct target — into a descriptor the block's execution
 * callback receives.  At execution the callback only learns where the
 * thread went: the block that starts now is the previous block's
 * successor, which gives the previous block's last instruction its
 * packets (a TNT bit, a TIP, nothing) through the software backend's
 * emitter (plugin/capture/emit.c), so the packet rules are the same.  A
 * system call ends its block: the syscall callback emits it (TIP.PGD),
 * and the next block resumes (TIP.PGE) wherever it starts — after the
 * call, in a signal handler, after rt_sigreturn.
 *
 * What a block-level plugin does not see, and how it learns it:
 *  - a fault inside a block (QEMU leaves the block at the faulting
 *    instruction): if the program dies of it, QEMU's core gives the
 *    faulting instruction and ptrr ends the trace there (the block stays
 *    "pending" here, never claimed as executed); if a handler runs, the
 *    next block is not a successor of the last instruction, and the
 *    signal frame QEMU built for the handler (found through the vCPU's
 *    registers, checked) says which instruction faulted: the trace has
 *    the async event there, as the software backend writes it;
 *  - a signal delivered between blocks outside a system call: the same,
 *    when the handler's address (known from rt_sigaction) or an
 *    impossible successor shows it, at the instruction the frame says
 *    the thread was about to run; where no frame shows (QEMU's state
 *    not where this plugin expects it), a gap (OVF) rather than a guess;
 *  - REP string instructions end their block and run it again for each
 *    iteration: the block starting at the instruction it left is the
 *    same instruction going on.
 *
 * QEMU 7.2 (Debian 12) ships no plugin header: the few declarations used
 * are written below from QEMU's documented API (include/qemu/
 * qemu-plugin.h, API version 1), and the version QEMU offers is checked
 * at load.  Arguments: dir=DIR (the shared directory), size=BYTES,
 * full=0|1, psb=BYTES, retcomp=0|1, tsc=0|1, filters=N (--filter: N
 * ranges in DIR/filters), and for --start either
 * start=ADDR or startoff=OFFSET (in the program's file, whose path ptrr
 * writes into DIR/exe): no thread is
 * traced until one begins a block there.
 *
 * A live session (plugin/live/live_qemu.c) runs QEMU with its gdb stub
 * as well: it turns tracing off and on by switching thread slots between
 * QSHM_RUNNING and QSHM_PAUSED (a paused thread's blocks are only
 * counted; the header's `paused` is for threads still to come), and it
 * ends the trace of a thread stopped in the stub itself, in the ring.
 * While one thread is stopped there (QEMU 7.2's user mode lets the
 * others run), ptrr holds the others (QSHM_HELD): each waits at its
 * next block, where ptrr ends its trace too.
 */
#define _GNU_SOURCE
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/futex.h>

#include "capture/emit.h"
#include "capture/insn.h"
#include "capture/ring.h"
#include "qemu/qemu_frame.h"
#include "qemu/qemu_shm.h"

/* ---- QEMU's plugin API, version 1 (declared from its documentation) */

typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
	union { struct { int smp_vcpus, max_vcpus; } system; };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id,
					     unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(qemu_plugin_id_t id,
					      unsigned int vcpu_index,
					      int64_t num, uint64_t a1,
					      uint64_t a2, uint64_t a3,
					      uint64_t a4, uint64_t a5,
					      uint64_t a6, uint64_t a7,
					      uint64_t a8);
typedef void (*qemu_plugin_vcpu_syscall_ret_cb_t)(qemu_plugin_id_t id,
						  unsigned int vcpu_idx,
						  int64_t num, int64_t ret);

void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
				       qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_exit_cb(qemu_plugin_id_t id,
				       qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id,
					  qemu_plugin_vcpu_syscall_cb_t cb);
void qemu_plugin_register_vcpu_syscall_ret_cb(qemu_plugin_id_t id,
		qemu_plugin_vcpu_syscall_ret_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(
	const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv);

/* ---- state */

/* What the translator decided about one block. */
struct qblock {
	struct qshm_block b;
	uint64_t fallthrough;	/* after the last instruction */
};

/* A thread's state and pending read as one word (qshm_thread): traced,
 * in a block. */
#define QSHM_RUNNING_PENDING ((uint64_t) 1 << 32 | QSHM_RUNNING)
_Static_assert(offsetof(struct qshm_thread, pending) ==
	       offsetof(struct qshm_thread, state) + 4 &&
	       __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "state and pending make one little-endian word");

/* How on_exec() ends a block inline (struct qshm_block's `fast`), by its
 * last instruction: QF_SLOW never (a system call, a far transfer, a REP
 * string instruction, a call the return stack does not log). */
enum qfast {
	QF_SLOW = 0,
	QF_COND,	/* conditional branch: a TNT bit */
	QF_OTHER,	/* no change of flow: nothing */
	QF_JUMP,	/* direct jump, or a call not logged: nothing */
	QF_CALL,	/* direct call: its return logged */
	QF_RET,		/* return: compressed, a TNT bit */
	QF_JUMP_IND,	/* indirect jump: TIP */
	QF_CALL_IND,	/* indirect call: its return logged, TIP */
};

/* The inline path for a block ending with @insn. */
static enum qfast fast_kind(const struct cap_insn *insn)
{
	if (insn->rep_string)
		return QF_SLOW;
	switch (insn->iclass) {
	case CAP_IC_COND:
		return insn->logs_call ? QF_SLOW : QF_COND;
	case CAP_IC_OTHER:
		return insn->logs_call ? QF_SLOW : QF_OTHER;
	case CAP_IC_JUMP:
		return insn->logs_call ? QF_SLOW : QF_JUMP;
	case CAP_IC_CALL:
		return insn->logs_call ? QF_CALL : QF_JUMP;
	case CAP_IC_RET:
		return insn->logs_call ? QF_SLOW : QF_RET;
	case CAP_IC_JUMP_IND:
		return insn->logs_call ? QF_SLOW : QF_JUMP_IND;
	case CAP_IC_CALL_IND:
		return insn->logs_call ? QF_CALL_IND : QF_SLOW;
	default:
		return QF_SLOW;
	}
}

#define MAX_VCPUS 4096

static struct qshm_header *hdr;
static char dir[4096];
static size_t ring_size;
static bool full_mode;
static struct cap_emit_config emit_cfg;
/* The thread each vCPU runs, set by its first block (QEMU's user mode
 * runs a guest thread as a host thread with its own vCPU). */
static struct qshm_thread *vthread[MAX_VCPUS];
/* Set in a forked child: the rings are the parent's. */
static volatile bool untraced;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t handlers[QSHM_MAX_HANDLERS];
static unsigned nhandlers;
/* A bit for each handler's address (handler_bit()): a pc whose bit is
 * clear is no handler's, without the search. */
static uint64_t handler_bits;
/* Bit N-1: signal N's handler is an SA_SIGINFO one (QEMU writes the
 * siginfo into its frame). */
static uint64_t siginfo_handlers;
/* Per vCPU: the last system call was a fork-like clone. */
static bool forking[MAX_VCPUS];
/* --start: tracing begins when a thread reaches start_addr (start=ADDR,
 * or startoff=OFFSET in the program's file, placed once the program's
 * code is mapped); until then no thread is traced. */
static volatile bool started = true;
static uint64_t start_addr;
static bool start_in_file;
static uint64_t start_offset;
static char exe_path[4096];
/* --filter (qemu_shm.h, "filters"): the file and offset of each range
 * placed from one ("" for a guest address), and its size; placed into
 * emit_cfg, every thread's emitter and the header once QEMU maps that
 * file (place_filters()). */
static struct {
	char path[4096];
	uint64_t offset, size;
	bool placed;
} filter_at[CAP_EMIT_MAX_FILTERS];
static uint32_t filters_pending;

/* Records why tracing stopped (once); QEMU goes on untraced. */
static void fail(const char *msg)
{
	if (hdr && !hdr->error[0])
		snprintf(hdr->error, sizeof(hdr->error), "%s", msg);
}

/* ---- modules: the mappings guest code runs in */

/* The mapping already noted that holds @pc, or NULL. */
static const struct qshm_module *module_at(uint64_t pc)
{
	for (uint32_t i = 0; i < hdr->nmodules; i++)
		if (pc - hdr->modules[i].start <
		    hdr->modules[i].end - hdr->modules[i].start)
			return &hdr->modules[i];
	return NULL;
}

/* The guest address of offset @off of file @path in QEMU's mappings
 * (/proc/self/maps, host addresses), or 0 if no mapping of it holds
 * that offset. */
static uint64_t file_offset_addr(const char *path, uint64_t off)
{
	uint64_t start, end, offset, addr = 0;
	char line[4352], name[4096];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !addr && fgets(line, sizeof(line), f)) {
		const char *p = name;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64
			   " %*s %*u %4095[^\n]", &start, &end, &offset,
			   name) < 4)
			continue;
		while (*p == ' ')
			p++;
		if (!strcmp(p, path) && off - offset < end - start)
			addr = start + (off - offset) - hdr->guest_base;
	}
	if (f)
		fclose(f);
	return addr;
}

/* QEMU mapped file @path (a module noted; lock held): the filters in it
 * are placed.  Every emitter gets the range before any block in it runs
 * (the block's translation, which noted the mapping, comes first). */
static void place_filters(const char *path)
{
	for (uint32_t i = 0; filters_pending && i < emit_cfg.nfilters; i++) {
		struct cap_filter range;

		if (filter_at[i].placed || strcmp(filter_at[i].path, path))
			continue;
		range.start = file_offset_addr(path, filter_at[i].offset);
		range.size = filter_at[i].size;
		if (!range.start)
			continue;
		filter_at[i].placed = true;
		filters_pending--;
		emit_cfg.filters[i] = range;
		hdr->filters[i] = range;
		for (uint32_t t = 0; t < hdr->nthreads; t++)
			hdr->threads[t].em.cfg.filters[i] = range;
	}
}

/* Notes the mapping (from QEMU's own /proc/self/maps: the guest's
 * memory is QEMU's, at guest_base) holding guest code at @pc; returns
 * it (NULL if it cannot). */
static const struct qshm_module *note_module(uint64_t pc)
{
	uint64_t host = pc + hdr->guest_base, start, end, offset;
	char line[4352], perms[8], path[4096];
	const struct qshm_module *known = module_at(pc);
	FILE *f;

	if (known)
		return known;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
			   " %*s %*u %4095[^\n]", &start, &end, perms, &offset,
			   path) < 4 || host < start || host >= end)
			continue;
		if (hdr->nmodules == QSHM_MAX_MODULES) {
			hdr->flags |= QSHM_TOO_MANY_MODULES;
			break;
		}
		struct qshm_module *m = &hdr->modules[hdr->nmodules];
		const char *p = path;

		while (*p == ' ')
			p++;
		m->start = start - hdr->guest_base;
		m->end = end - hdr->guest_base;
		m->offset = offset;
		if (*p == '/')
			snprintf(m->path, sizeof(m->path), "%s", p);
		if (*p == '/' && start_in_file && !strcmp(p, exe_path) &&
		    start_offset - offset < end - start)
			start_addr = m->start + (start_offset - offset);
		if (*p != '/')
			hdr->flags |= QSHM_ANON_CODE;
		__atomic_store_n(&hdr->nmodules, hdr->nmodules + 1,
				 __ATOMIC_RELEASE);
		if (*p == '/')
			place_filters(p);
		known = m;
		break;
	}
	fclose(f);
	return known;
}

/* Block @tb's first @n instructions are code in anonymous memory (a
 * JIT's): their bytes, as QEMU translated them, go to DIR/code for the
 * bundle (qemu_shm.h), since nothing keeps them after QEMU exits. */
static void keep_code(const struct qemu_plugin_tb *tb, size_t n)
{
	static int fd = -1;
	static _Alignas(8) uint8_t rec[sizeof(struct qshm_code) + 512 * 16 +
				       8];
	struct qshm_code *c = (struct qshm_code *) rec;
	size_t len = 0, total;

	if (fd < 0) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/code", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			  0600);
		if (fd < 0) {
			fail("cannot create the code file in the shared "
			     "directory");
			return;
		}
	}
	c->addr = qemu_plugin_tb_vaddr(tb);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		size_t size = qemu_plugin_insn_size(insn);

		if (len + size > sizeof(rec) - sizeof(*c) - 8)
			break;
		memcpy(c->bytes + len, qemu_plugin_insn_data(insn), size);
		len += size;
	}
	c->len = (uint32_t) len;
	total = (sizeof(*c) + len + 7) & ~(size_t) 7;
	memset(c->bytes + len, 0, total - sizeof(*c) - len);
	if (write(fd, rec, total) != (ssize_t) total)
		fail("cannot write the code file in the shared directory");
}

/* ---- threads */

/* Maps (creating) the file of slot @slot whose name starts with @kind,
 * @size bytes: its ring ('t'), its table of PSBs ('p'). */
static void *map_slot_file(char kind, uint32_t slot, size_t size)
{
	char path[4200];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%c%u", dir, kind, slot);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t) size) < 0) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The first block of a new thread on @vcpu: a slot, a ring, an emitter.
 * Runs in the guest thread itself, so gettid() is its thread id. */
static struct qshm_thread *thread_begin(unsigned vcpu)
{
	struct qshm_thread *t;
	uint64_t psbs_cap = qshm_psbs_cap(ring_size, emit_cfg.psb_period);
	struct hist_psb *psbs;
	uint8_t *buf;
	uint32_t slot;

	if (untraced || hdr->error[0] || vcpu >= MAX_VCPUS)
		return NULL;
	pthread_mutex_lock(&lock);
	slot = hdr->nthreads;
	if (slot == QSHM_MAX_THREADS) {
		hdr->flags |= QSHM_TOO_MANY_THREADS;
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	buf = map_slot_file('t', slot, ring_size);
	psbs = map_slot_file('p', slot, psbs_cap * sizeof(*psbs));
	if (!buf || !psbs) {
		fail("cannot create a trace ring in the shared directory");
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	t = &hdr->threads[slot];
	memset(t, 0, sizeof(*t));
	t->tid = (int32_t) syscall(SYS_gettid);
	cap_ring_init_fixed(&t->ring, buf, full_mode ? ring_size -
			    QSHM_RESERVE : ring_size, !full_mode);
	if (full_mode && hdr->run_cap && hdr->run_cap < t->ring.alloc)
		t->ring.alloc = hdr->run_cap;
	if (cap_emit_init(&t->em, &t->ring, &emit_cfg) < 0 ||
	    cap_emit_set_psbs(&t->em, psbs, psbs_cap, 0) < 0) {
		fail("cannot set up a PT emitter");
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	t->state = __atomic_load_n(&hdr->paused, __ATOMIC_ACQUIRE) ?
		   QSHM_PAUSED : QSHM_RUNNING;
	__atomic_store_n(&hdr->nthreads, slot + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	vthread[vcpu] = t;
	return t;
}

/* Full mode ran out of room in @t's ring: the trace ends (the reserve
 * holds FUP + TIP.PGD) at @ip, where the thread was about to go.  In a
 * live session the run filled its room: the rest of it is only counted,
 * and ptrr ends the trace where the thread stops, with an OVF there, as
 * the ptrace session's runs end (docs/live.md). */
static void thread_full(struct qshm_thread *t, uint64_t ip)
{
	if (hdr->run_cap) {
		t->pending = 0;
		t->over = 1;
		return;
	}
	t->ring.alloc += QSHM_RESERVE;
	cap_emit_disable(&t->em, ip);
	t->pending = 0;
	t->state = QSHM_FULL;
}

static inline uint64_t handler_bit(uint64_t pc)
{
	return 1ull << ((pc ^ pc >> 6) & 63);
}

/* False if @pc is no handler's address; true if it may be. */
static inline bool maybe_handler(uint64_t pc)
{
	return __atomic_load_n(&handler_bits, __ATOMIC_RELAXED) &
	       handler_bit(pc);
}

static bool is_handler(uint64_t pc)
{
	if (!maybe_handler(pc))
		return false;
	for (unsigned i = 0; i < nhandlers; i++)
		if (handlers[i] == pc)
			return true;
	return false;
}

/* Whether @next can follow @b's last instruction as far as the plugin
 * knows: qshm_successor_ok(), and an indirect jump or return (a call
 * could be a program calling its handler) does not land on a signal
 * handler. */
static bool successor_ok(const struct qshm_block *b, uint64_t next)
{
	if (!qshm_successor_ok(b, next))
		return false;
	switch (b->insn.iclass) {
	case CAP_IC_RET:
	case CAP_IC_JUMP_IND:
	case CAP_IC_FAR:
		return !is_handler(next);
	default:
		return true;
	}
}

/* The instructions of block @b that ran before the one at @ip, inside
 * it (a fault there), are counted in @t's emitter (its table of PSBs
 * counts every instruction the trace shows): decoded from the block's
 * code in guest memory (all of it was translated, so mapped), from its
 * start up to @ip.  If they cannot be, the segment is marked inexact:
 * the history then decodes it to count it. */
static void count_before(struct qshm_thread *t, const struct qshm_block *b,
			 uint64_t ip)
{
	uint64_t at = b->start, end = b->last + b->insn.len, n = 0;

	while (at < ip && n < b->ninsns) {
		struct cap_insn insn;
		size_t avail = end - at < 15 ? (size_t) (end - at) : 15;

		if (cap_insn_decode((const uint8_t *) (uintptr_t)
				    (at + hdr->guest_base), avail,
				    &insn) < 0)
			break;
		at += insn.len;
		n++;
	}
	if (at == ip) {
		t->em.stats.insns += n;
		t->em.next_ip = ip;
	} else {
		t->em.seg_inexact = 1;
	}
}

/* The thread left its pending block for @next, which is not where the
 * block's last instruction goes: a signal's handler, if @env shows its
 * frame, traced as the software backend traces a signal (the thread
 * enters the kernel before the interrupted instruction: FUP + TIP.PGD;
 * the handler's first block resumes with TIP.PGE).  A fault whose frame
 * points inside the block is that instruction's: the block's
 * instructions before it ran.  A signal between blocks: all of the block
 * ran, its last instruction going where the frame says.  Where the
 * frame fits both and does not say which (a fault signal without its
 * siginfo, at a place the block's last instruction could go to), or
 * fits neither, or there is none: a gap. */
static int leave_block(struct qshm_thread *t, uint64_t next,
		       const uint64_t *env)
{
	const struct qshm_block *b = &t->cur;
	struct qframe f;
	bool inside, after;
	int err;

	if (qframe_read(env, next, hdr->guest_base,
			__atomic_load_n(&siginfo_handlers, __ATOMIC_RELAXED),
			&f)) {
		inside = f.fault && f.ip - b->start <= b->last - b->start;
		/* A return address follows a call, which ends a block: a
		 * RET does not go into the middle of its own block. */
		after = qshm_successor_ok(b, f.ip) &&
			!(b->insn.iclass == CAP_IC_RET && f.ip > b->start &&
			  f.ip <= b->last);
		if (inside && (f.fault > 0 || !after)) {
			count_before(t, b, f.ip);
			return cap_emit_async(&t->em, f.ip);
		}
		if (after && !inside) {
			err = cap_emit_block_end(&t->em, b->last, &b->insn,
						 f.ip, b->ninsns);
			return err ? err : cap_emit_async(&t->em, f.ip);
		}
	} else if (qshm_successor_ok(b, next)) {
		/* An indirect branch to a handler's address, not a signal. */
		return cap_emit_block_end(&t->em, b->last, &b->insn, next,
					  b->ninsns);
	}
	t->gaps++;
	return cap_emit_overflow(&t->em, next);
}

/* The thread left its pending block for @next (@env: leave_block()). */
static void end_block(struct qshm_thread *t, uint64_t next,
		      const uint64_t *env)
{
	const struct qshm_block *b = &t->cur;
	int err;

	t->pending = 0;
	if (__builtin_expect(!successor_ok(b, next), 0)) {
		err = leave_block(t, next, env);
	} else {
		err = cap_emit_block_end_fast(&t->em, b->last, &b->insn,
					      next, b->ninsns);
	}
	if (__builtin_expect(err < 0, 0))
		thread_full(t, next);
}

/* A live session holds thread @t (QSHM_HELD) while another is stopped
 * in QEMU's gdb stub: it waits here, about to run the block at @pc,
 * before anything of it is traced, until ptrr gives it its state back.
 * True if it is then traced. */
static bool hold(struct qshm_thread *t, uint64_t pc)
{
	t->held_at = pc;
	__atomic_store_n(&t->parked, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == QSHM_HELD)
		syscall(SYS_futex, &t->state, FUTEX_WAIT, QSHM_HELD, NULL,
			NULL, 0);
	__atomic_store_n(&t->parked, 0, __ATOMIC_RELEASE);
	return t->state == QSHM_RUNNING && !untraced;
}

/* Every execution of a block: the least possible.  TCG keeps the vCPU's
 * CPUX86State in rbp (TCG_AREG0 on x86-64 hosts) when it calls a
 * block's callback: on_block_exec passes it on as @env, which only
 * leave_block() reads, through qframe_read()'s checks. */
void on_block_exec(unsigned vcpu, void *userdata);
void on_exec(unsigned vcpu, void *userdata, const uint64_t *env);
__asm__(".text\n"
	".p2align 4\n"
	".type on_block_exec, @function\n"
	"on_block_exec:\n"
	"\tendbr64\n"
	"\tmov %rbp, %rdx\n"
	"\tjmp on_exec\n"
	".size on_block_exec, .-on_block_exec\n");

/* Every case on_exec() does not take inline: a thread's first block,
 * threads not traced (or held) now, a REP string instruction going on,
 * a block left for a place its last instruction does not go, packets
 * that do not fit the inline paths, a PSB due. */
static __attribute__((noinline)) void on_exec_slow(unsigned vcpu,
						    const struct qblock *qb,
						    const uint64_t *env)
{
	struct qshm_thread *t = vcpu < MAX_VCPUS ? vthread[vcpu] : NULL;

	if (!t) {
		if (!started) {
			if (qb->b.start != start_addr)
				return;
			started = true;
		}
		t = thread_begin(vcpu);
		if (!t)
			return;
	}
	if (((t->state != QSHM_RUNNING || untraced) &&
	     (t->state != QSHM_HELD || !hold(t, qb->b.start))) || t->over) {
		t->dropped += qb->b.ninsns;
		return;
	}
	if (t->pending) {
		/* A REP string instruction iterating: the same one. */
		if (t->cur.insn.rep_string && qb->b.start == t->cur.last)
			return;
		end_block(t, qb->b.start, env);
		if (t->state != QSHM_RUNNING)
			return;
	}
	if (cap_emit_block_begin_fast(&t->em, qb->b.start) < 0) {
		thread_full(t, qb->b.start);
		return;
	}
	t->cur = qb->b;
	t->curq = qb;
	t->pending = 1;
}

/* on_exec() ended @t's last block and the one at @qb begins, as
 * on_exec_slow() begins it (a PSB due). */
static __attribute__((noinline)) void begin_slow(struct qshm_thread *t,
						  const struct qblock *qb)
{
	t->pending = 0;
	if (t->state != QSHM_RUNNING)
		return;
	if (cap_emit_block_begin(&t->em, qb->b.start) < 0) {
		thread_full(t, qb->b.start);
		return;
	}
	t->cur = qb->b;
	t->curq = qb;
	t->pending = 1;
}

/* Every execution of a block, the common cases inline: the thread
 * traced with a block pending, that block's end one of the kinds of
 * enum qfast, going where its last instruction goes (and to no signal
 * handler where one could be), its packets fitting in the ring as they
 * are, and no PSB due.  Anything else goes to on_exec_slow() before
 * anything has changed.  (A forked child, not traced, has no threads in
 * vthread.) */
void on_exec(unsigned vcpu, void *userdata, const uint64_t *env)
{
	const struct qblock *qb = userdata;
	const struct qshm_block *c;
	struct qshm_thread *t;
	struct cap_emit *e;
	struct cap_ring *r;
	uint64_t next, fall, running;

	if (__builtin_expect(vcpu >= MAX_VCPUS, 0))
		goto slow;
	t = vthread[vcpu];
	if (__builtin_expect(!t, 0))
		goto slow;
	/* state and pending in one load: QSHM_RUNNING and 1. */
	memcpy(&running, &t->state, sizeof(running));
	if (__builtin_expect(running != QSHM_RUNNING_PENDING, 0))
		goto slow;
	c = &((const struct qblock *) t->curq)->b;
	e = &t->em;
	r = &t->ring;
	next = qb->b.start;
	fall = c->last + c->insn.len;
	if (__builtin_expect(c->fast == QF_COND, 1)) {
		if ((next != fall && next != c->target) ||
		    !cap_emit_fast_tnt(e, r, next != fall))
			goto slow;
	} else {
		switch (c->fast) {
		case QF_OTHER:
			if (next != fall)
				goto slow;
			break;
		case QF_JUMP:
			if (next != c->target)
				goto slow;
			break;
		case QF_CALL:
			if (next != c->target)
				goto slow;
			cap_emit_fast_call(e, fall);
			break;
		case QF_RET:
			if (maybe_handler(next) ||
			    !cap_emit_fast_ret(e, r, next))
				goto slow;
			break;
		case QF_JUMP_IND:
			if (maybe_handler(next) ||
			    !cap_emit_fast_tip(e, r, next))
				goto slow;
			break;
		case QF_CALL_IND:
			if (!cap_emit_fast_tip(e, r, next))
				goto slow;
			cap_emit_fast_call(e, fall);
			break;
		default:
			goto slow;
		}
	}
	cap_emit_fast_retired(e, c->ninsns, next);
	/* cap_emit_begin_slow(), knowing packets are on and the block
	 * starts where the last one went. */
	if (__builtin_expect(r->total - e->psb_at >= e->cfg.psb_period, 0)) {
		begin_slow(t, qb);
		return;
	}
	t->cur = qb->b;
	t->curq = qb;
	return;
slow:
	on_exec_slow(vcpu, qb, env);
}

/* ---- translation: decide everything about the block */

static bool have_base;

/* The displacement of direct branch @code (@len bytes): rel8 or rel32,
 * the instruction's last bytes, by its opcode after any prefixes. */
static int64_t rel_disp(const uint8_t *code, size_t len)
{
	size_t i = 0;
	bool rel8;

	while (i < len && (code[i] == 0x66 || code[i] == 0x67 ||
			   code[i] == 0xf2 || code[i] == 0xf3 ||
			   code[i] == 0x2e || code[i] == 0x3e ||
			   code[i] == 0x26 || code[i] == 0x36 ||
			   code[i] == 0x64 || code[i] == 0x65 ||
			   (code[i] & 0xf0) == 0x40))
		i++;
	if (i >= len)
		return 0;
	rel8 = (code[i] >= 0x70 && code[i] <= 0x7f) || code[i] == 0xeb ||
	       (code[i] >= 0xe0 && code[i] <= 0xe3);
	if (rel8)
		return (int8_t) code[len - 1];
	if (len < 4)
		return 0;
	return (int32_t) ((uint32_t) code[len - 4] |
			  (uint32_t) code[len - 3] << 8 |
			  (uint32_t) code[len - 2] << 16 |
			  (uint32_t) code[len - 1] << 24);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	const struct qshm_module *m;
	struct qemu_plugin_insn *last;
	struct qblock *qb;
	const uint8_t *code;
	size_t len;

	(void) id;
	if (!n || untraced)
		return;
	last = qemu_plugin_tb_get_insn(tb, n - 1);
	qb = calloc(1, sizeof(*qb));
	if (!qb) {
		fail("out of memory");
		return;
	}
	qb->b.start = qemu_plugin_tb_vaddr(tb);
	qb->b.last = qemu_plugin_insn_vaddr(last);
	qb->b.ninsns = (uint16_t) n;
	code = qemu_plugin_insn_data(last);
	len = qemu_plugin_insn_size(last);
	if (cap_insn_decode(code, len, &qb->b.insn) < 0 && n > 1) {
		/* An instruction running into the next page that QEMU
		 * (7.2) gave up translating in this block, after telling
		 * the plugin of it with the bytes of the first page only:
		 * the block ends before it (the next one starts there). */
		last = qemu_plugin_tb_get_insn(tb, --n - 1);
		qb->b.last = qemu_plugin_insn_vaddr(last);
		qb->b.ninsns = (uint16_t) n;
		code = qemu_plugin_insn_data(last);
		len = qemu_plugin_insn_size(last);
		if (cap_insn_decode(code, len, &qb->b.insn) < 0)
			n = 1;	/* not expected: as below */
	}
	if (qb->b.insn.len != len) {
		/* QEMU ran it, so it is an instruction; one Zydis does not
		 * know changes no flow that we could trace. */
		qb->b.insn.len = (uint8_t) len;
		qb->b.insn.iclass = CAP_IC_OTHER;
	}
	qb->fallthrough = qb->b.last + qb->b.insn.len;
	if (qb->b.insn.iclass == CAP_IC_COND ||
	    qb->b.insn.iclass == CAP_IC_JUMP ||
	    qb->b.insn.iclass == CAP_IC_CALL)
		qb->b.target = qb->fallthrough + (uint64_t) rel_disp(code,
								    len);
	/* The inline paths know nothing of filters. */
	qb->b.fast = (uint8_t) (emit_cfg.nfilters ? QF_SLOW :
				fast_kind(&qb->b.insn));
	if (!have_base) {
		hdr->guest_base = (uint64_t) (uintptr_t)
			qemu_plugin_insn_haddr(last) - qb->b.last;
		have_base = true;
	}
	pthread_mutex_lock(&lock);
	m = note_module(qb->b.start);
	if (m && !m->path[0])
		keep_code(tb, n);
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block_exec,
					     QEMU_PLUGIN_CB_NO_REGS, qb);
}

/* ---- system calls, threads, the end */

static void on_syscall(qemu_plugin_id_t id, unsigned vcpu, int64_t num,
		       uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
		       uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
	struct qshm_thread *t = vcpu < MAX_VCPUS ? vthread[vcpu] : NULL;

	(void) id; (void) a3; (void) a4; (void) a5; (void) a6; (void) a7;
	(void) a8;
	if (untraced || !t)
		return;
	if (t->pending && t->state == QSHM_RUNNING) {
		/* The block's last instruction is this system call. */
		t->pending = 0;
		if (cap_emit_block_end(&t->em, t->cur.last, &t->cur.insn,
				       t->cur.last + t->cur.insn.len,
				       t->cur.ninsns) < 0)
			thread_full(t, t->cur.last + t->cur.insn.len);
	}
	switch (num) {
	case SYS_exit:
	case SYS_exit_group:
		t->exit_code = (int32_t) a1;
		break;
	case SYS_rt_sigaction:
		/* struct sigaction: the handler, then the flags. */
		if (a2 && a1 - 1 < 64) {
			const uint64_t *sa = (const uint64_t *) (uintptr_t)
					     (a2 + hdr->guest_base);
			uint64_t bit = 1ull << (a1 - 1);

			if (sa[0] > 1 && !is_handler(sa[0]) &&
			    nhandlers < QSHM_MAX_HANDLERS) {
				handlers[nhandlers++] = sa[0];
				__atomic_or_fetch(&handler_bits,
						  handler_bit(sa[0]),
						  __ATOMIC_RELEASE);
			}
			if (sa[1] & SA_SIGINFO)
				__atomic_or_fetch(&siginfo_handlers, bit,
						  __ATOMIC_RELAXED);
			else
				__atomic_and_fetch(&siginfo_handlers, ~bit,
						   __ATOMIC_RELAXED);
		}
		break;
	case SYS_clone:
		/* QEMU runs a vfork (posix_spawn's clone(CLONE_VM |
		 * CLONE_VFORK)) as a fork: a process of its own. */
		forking[vcpu] = !(a1 & CLONE_VM) || (a1 & CLONE_VFORK);
		break;
#ifdef SYS_clone3
	case SYS_clone3:
		/* struct clone_args: the flags first. */
		if (a1) {
			uint64_t flags = *(const uint64_t *) (uintptr_t)
					 (a1 + hdr->guest_base);

			forking[vcpu] = !(flags & CLONE_VM) ||
					(flags & CLONE_VFORK);
		}
		break;
#endif
	case SYS_fork:
	case SYS_vfork:
		forking[vcpu] = true;
		break;
	case SYS_execve:
	case SYS_execveat:
		t->in_execve = 1;
		break;
	default:
		break;
	}
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned vcpu, int64_t num,
			   int64_t ret)
{
	struct qshm_thread *t = vcpu < MAX_VCPUS ? vthread[vcpu] : NULL;

	(void) id;
	if (untraced || !t)
		return;
	if (forking[vcpu]) {
		forking[vcpu] = false;
		if (ret == 0) {		/* the child: not ours to trace */
			untraced = true;
			memset(vthread, 0, sizeof(vthread));
			return;
		}
		if (ret > 0)
			__atomic_or_fetch(&hdr->flags, QSHM_FORKED,
					  __ATOMIC_RELAXED);
	}
	if (num == SYS_execve || num == SYS_execveat)
		t->in_execve = 0;	/* it failed */
}

/* A thread ran exit: its trace ended with that system call. */
static void on_vcpu_exit(qemu_plugin_id_t id, unsigned vcpu)
{
	struct qshm_thread *t = vcpu < MAX_VCPUS ? vthread[vcpu] : NULL;

	(void) id;
	if (!t || untraced)
		return;
	if (t->state == QSHM_RUNNING) {
		cap_emit_disable(&t->em, t->cur.last);
		t->state = QSHM_EXITED;
	} else if (t->state == QSHM_PAUSED || t->state == QSHM_HELD) {
		t->state = QSHM_EXITED;
	}
	vthread[vcpu] = NULL;
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned vcpu)
{
	(void) id;
	if (vcpu < MAX_VCPUS)
		vthread[vcpu] = NULL;
}

/* The program exited (exit_group, or the last thread's exit): every
 * thread stops where it is.  A thread still inside a block (another
 * thread ended the process) is known to have reached the block's last
 * instruction but not where that went: its trace ends before it. */
static void on_atexit(qemu_plugin_id_t id, void *userdata)
{
	(void) id; (void) userdata;
	if (untraced || !hdr)
		return;
	for (uint32_t i = 0; i < hdr->nthreads; i++) {
		struct qshm_thread *t = &hdr->threads[i];

		if (t->state == QSHM_PAUSED || t->state == QSHM_HELD)
			t->state = QSHM_EXITED;
		if (t->state != QSHM_RUNNING)
			continue;
		if (t->pending)
			cap_emit_stop(&t->em, t->cur.last);
		else
			cap_emit_disable(&t->em, t->cur.last);
		t->pending = 0;
		t->state = QSHM_EXITED;
	}
}

/* ---- loading */

/* Reads the @n ranges of DIR/filters (qemu_shm.h) into emit_cfg and
 * filter_at[]: a guest address range is placed now, in the header too.
 * False if the file does not say them. */
static bool read_filters(uint32_t n)
{
	char path[4200], line[4200], kind;
	uint32_t i = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/filters", dir);
	f = fopen(path, "r");
	while (f && i < n && i < CAP_EMIT_MAX_FILTERS &&
	       fgets(line, sizeof(line), f)) {
		uint64_t a, size;
		int at = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%c %" SCNx64 " %" SCNx64 " %n", &kind, &a,
			   &size, &at) < 3 || !size || !at)
			break;
		if (kind == 'a') {
			emit_cfg.filters[i] = (struct cap_filter){ a, size };
			hdr->filters[i] = emit_cfg.filters[i];
		} else if (kind == 'f' && line[at] == '/') {
			snprintf(filter_at[i].path, sizeof(filter_at[i].path),
				 "%s", line + at);
			filter_at[i].offset = a;
			filter_at[i].size = size;
			filters_pending++;
		} else {
			break;
		}
		i++;
	}
	if (f)
		fclose(f);
	emit_cfg.nfilters = i;
	return i == n;
}

/* The value of "NAME=VALUE" in @arg if its name is @name. */
static const char *arg_value(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && arg[n] == '=' ? arg + n + 1 : NULL;
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv)
{
	char path[4200];
	uint32_t nfilters = 0;
	const char *v;
	void *p;
	int fd;

	if (info->version.min > 1 || info->version.cur < 1) {
		fprintf(stderr, "ptrr-qemu: QEMU's plugin API is version "
			"%d-%d; this plugin needs version 1\n",
			info->version.min, info->version.cur);
		return -1;
	}
	if (info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "ptrr-qemu: only qemu-x86_64 (user mode) is "
			"supported, not %s\n", info->target_name);
		return -1;
	}
	cap_emit_config_default(&emit_cfg);
	for (int i = 0; i < argc; i++) {
		if ((v = arg_value(argv[i], "dir")))
			snprintf(dir, sizeof(dir), "%s", v);
		else if ((v = arg_value(argv[i], "size")))
			ring_size = strtoull(v, NULL, 0);
		else if ((v = arg_value(argv[i], "full")))
			full_mode = atoi(v) != 0;
		else if ((v = arg_value(argv[i], "psb")))
			emit_cfg.psb_period = (uint32_t) strtoul(v, NULL, 0);
		else if ((v = arg_value(argv[i], "retcomp")))
			emit_cfg.ret_compression = atoi(v) != 0;
		else if ((v = arg_value(argv[i], "tsc")))
			emit_cfg.tsc = atoi(v) != 0;
		else if ((v = arg_value(argv[i], "filters")))
			nfilters = (uint32_t) strtoul(v, NULL, 0);
		else if ((v = arg_value(argv[i], "start"))) {
			start_addr = strtoull(v, NULL, 0);
			started = false;
		} else if ((v = arg_value(argv[i], "startoff"))) {
			start_offset = strtoull(v, NULL, 0);
			start_in_file = true;
			start_addr = ~0ull;
			started = false;
		}
	}
	if (!dir[0] || ring_size < 4 * QSHM_RESERVE || !emit_cfg.psb_period) {
		fprintf(stderr, "ptrr-qemu: needs dir=DIR and size=BYTES "
			"(it is started by ptrr record --backend=qemu)\n");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/header", dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ptrr-qemu: %s: %s\n", path, strerror(errno));
		return -1;
	}
	p = mmap(NULL, sizeof(*hdr), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "ptrr-qemu: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (start_in_file) {
		/* ptrr wrote the program's real path into DIR/exe. */
		FILE *f;

		snprintf(path, sizeof(path), "%s/exe", dir);
		f = fopen(path, "r");
		if (!f || !fgets(exe_path, sizeof(exe_path), f)) {
			fprintf(stderr, "ptrr-qemu: cannot read %s\n", path);
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
	}
	/* QEMU writes the guest's core itself when the guest dies of a
	 * signal, then kills itself with that signal: the kernel would dump
	 * QEMU too (a core of the emulator, over 100 MiB, left in the
	 * working directory).  Not dumpable, it does not; the guest's core,
	 * which QEMU writes as a file, is not affected. */
	prctl(PR_SET_DUMPABLE, 0);
	hdr = p;
	if (nfilters > CAP_EMIT_MAX_FILTERS || !read_filters(nfilters)) {
		fprintf(stderr, "ptrr-qemu: cannot read %u filters from "
			"%s/filters\n", nfilters, dir);
		return -1;
	}
	hdr->version = QSHM_VERSION;
	hdr->api = (uint32_t) info->version.cur;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_exit_cb(id, on_vcpu_exit);
	qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
	__atomic_store_n(&hdr->magic, QSHM_MAGIC, __ATOMIC_RELEASE);
	return 0;
}
