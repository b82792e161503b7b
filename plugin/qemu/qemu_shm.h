/* plugin/qemu — what the QEMU plugin (ptrr-qemu.so, inside qemu-x86_64)
 * and `ptrr record --backend=qemu` (plugin/record_qemu.c) share.
 *
 * ptrr creates a directory and in it the file "header", sizeof(struct
 * qshm_header) bytes of zeros; the plugin maps it MAP_SHARED, and for
 * each guest thread it creates "t<SLOT>" (the thread's trace ring) and
 * maps that too.  Everything the plugin knows that ptrr needs is in these
 * mappings, written as it happens, so they hold the trace up to the last
 * block even when QEMU dies (a crash, SIGKILL): ptrr reads them after
 * QEMU has exited and finishes each thread's trace itself, with the
 * emitter state kept here.  Code the guest runs in anonymous memory (a
 * JIT's) exists nowhere after QEMU is gone: the plugin appends each
 * block of it it translates to "code" (struct qshm_code records).
 * With --filter, ptrr writes the ranges into "filters", one a line, in
 * the order of the options: "a START SIZE" (guest addresses) or
 * "f OFFSET SIZE PATH" (from an offset in file PATH, wherever QEMU maps
 * it); the plugin places each in guest addresses (the header's
 * filters[]) and traces only there, as the software backend does.
 *
 * Both sides are built from this header by the same compiler, so the
 * structures (including struct cap_emit and struct cap_ring, whose
 * pointers are only meaningful in the process that set them) have one
 * layout.
 */
#ifndef PTRR_QEMU_SHM_H
#define PTRR_QEMU_SHM_H

#include <stdint.h>

#include "capture/emit.h"
#include "capture/insn.h"
#include "capture/ring.h"

#define QSHM_MAGIC 0x554d455152525450ull	/* "PTRRQEMU" */
#define QSHM_VERSION 3
#define QSHM_MAX_THREADS 1024
#define QSHM_MAX_MODULES 512
#define QSHM_MAX_HANDLERS 64
/* Bytes of each ring kept back for the packets that end a trace after
 * full mode ran out of room. */
#define QSHM_RESERVE 64

/* The block a thread has begun and not yet been seen to leave. */
struct qshm_block {
	uint64_t start;		/* its first instruction */
	uint64_t last;		/* its last instruction */
	uint64_t target;	/* the last one's direct target, if any */
	uint16_t ninsns;	/* QEMU 7.2 translates at most 512 */
	uint8_t fast;		/* the plugin's own: which inline path
				 * ends it (ptrr-qemu.c, enum qfast) */
	uint8_t spare;
	struct cap_insn insn;	/* the last instruction */
};

/* Whether @next can follow @b's last instruction without an event the
 * plugin does not see (a signal, a fault inside the block): the plugin
 * checks each block it leaves, ptrr the last one of a thread stopped at
 * @next when QEMU died.  Indirect transfers can go anywhere. */
static inline int qshm_successor_ok(const struct qshm_block *b,
				    uint64_t next)
{
	uint64_t fall = b->last + b->insn.len;

	switch (b->insn.iclass) {
	case CAP_IC_COND:
		return next == fall || next == b->target;
	case CAP_IC_JUMP:
	case CAP_IC_CALL:
		return next == b->target;
	case CAP_IC_OTHER:
		return next == fall;
	default:	/* KERNEL, indirect, RET, FAR */
		return 1;
	}
}

enum qshm_thread_state {
	QSHM_FREE = 0,
	QSHM_RUNNING,		/* traced */
	QSHM_EXITED,		/* ran exit (or exit_group): code */
	QSHM_FULL,		/* full mode's cap reached: the rest is lost */
	QSHM_PAUSED,		/* a live session's tracing is off: runs
				 * untraced (ptrr switches it with RUNNING
				 * while the thread is stopped) */
	QSHM_HELD,		/* a live session holds it while another
				 * thread is stopped in QEMU's gdb stub: it
				 * waits (parked) at its next block's start;
				 * ptrr sets the state it had back, then
				 * wakes it (futex on state) */
};

/* Entries of the table of PSBs of a thread whose ring is @ring_size bytes
 * (its file "p<SLOT>", mapped by the plugin and read by ptrr; the
 * emitter's struct cap_psb_table, whose @n is in the thread's emitter):
 * enough for every PSB in the ring, which are psb_period bytes apart or
 * more. */
static inline uint64_t qshm_psbs_cap(uint64_t ring_size, uint32_t psb_period)
{
	return ring_size / psb_period + 2;
}

/* What every block reads and writes comes first: state, pending, cur,
 * the ring, the emitter's own first fields. */
struct qshm_thread {
	_Alignas(64) uint32_t state;	/* enum qshm_thread_state */
	uint32_t pending;	/* cur is begun, not ended */
	const void *curq;	/* the plugin's own: where it keeps cur's
				 * descriptor, which it reads rather than
				 * cur (written just before, by other
				 * sizes of stores) */
	struct qshm_block cur;
	struct cap_ring ring;
	struct cap_emit em;
	int32_t tid;
	int32_t exit_code;
	uint32_t in_execve;	/* its execve is under way */
	uint32_t parked;	/* HELD and waiting, at held_at: its block
				 * there not begun, nothing of the ring or
				 * the emitter in use */
	uint32_t over;		/* a live session's run filled its room in
				 * the ring (ring.alloc, which ptrr sets at
				 * each resume): the plugin writes nothing
				 * more, and ptrr ends the trace with an
				 * OVF where the thread stops */
	uint64_t dropped;	/* instructions run after QSHM_FULL */
	uint64_t gaps;		/* transfers no instruction explains */
	uint64_t held_at;	/* parked: the block it waits to run */
};

/* A block of code in anonymous memory, as QEMU translated it: one
 * record of the file "code", followed by the next at the next multiple
 * of 8 bytes. */
struct qshm_code {
	uint64_t addr;		/* guest address of bytes[0] */
	uint32_t len;
	uint32_t pad;
	uint8_t bytes[];
};

/* An executable mapping holding code the guest ran (guest addresses). */
struct qshm_module {
	uint64_t start, end, offset;
	char path[232];		/* "" for anonymous memory */
};

enum qshm_flags {
	QSHM_FORKED = 1,	/* a child process ran untraced */
	QSHM_TOO_MANY_THREADS = 2,
	QSHM_TOO_MANY_MODULES = 4,
	QSHM_ANON_CODE = 8,	/* code ran in anonymous memory */
};

struct qshm_header {
	uint64_t magic;		/* QSHM_MAGIC once the plugin is set up */
	uint32_t version;	/* QSHM_VERSION */
	uint32_t api;		/* QEMU's plugin API version */
	uint64_t guest_base;	/* host address - guest address */
	uint32_t nthreads;	/* slots used */
	uint32_t nmodules;
	uint32_t flags;		/* enum qshm_flags */
	uint32_t paused;	/* set by ptrr: new threads start PAUSED */
	uint64_t run_cap;	/* set by ptrr for a live session: the
				 * bytes one run may add to a thread's
				 * ring (0: a recording's, up to its end) */
	struct cap_filter filters[CAP_EMIT_MAX_FILTERS];
				/* each --filter's range in guest
				 * addresses, once placed (size 0: its
				 * file not mapped yet) */
	char error[256];	/* why the plugin stopped tracing, or "" */
	struct qshm_module modules[QSHM_MAX_MODULES];
	struct qshm_thread threads[QSHM_MAX_THREADS];
};

#endif
