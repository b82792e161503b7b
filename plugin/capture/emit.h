/* plugin/capture — the software PT packet emitter.
 *
 * Fed one retired instruction at a time (and the few events a user-mode
 * tracer sees: entering the kernel, signal delivery, the end), it writes
 * exactly the packets an Intel PT CPU configured with BranchEn=1, OS=0,
 * USER=1 (user-only), no timing packets, would write, encoded with
 * libipt's encoder into a struct cap_ring.  libipt's decoders, given the
 * bytes and the memory image, reconstruct the instruction sequence.
 *
 * The packet rules, with their references (SDM = Intel SDM vol. 3C
 * chapter "Intel Processor Trace"):
 *  - conditional branch: one TNT bit; up to 6 bits are buffered in one
 *    short TNT and flushed before any other packet (SDM "TNT packet");
 *  - near indirect jmp/call: TIP(target) (SDM "Indirect transfer COFI");
 *  - near ret: with return compression, a taken TNT bit if the target is
 *    the top of a 64-entry stack of the calls seen since the last PSB,
 *    else TIP (SDM "RET compression"; the stack mirrors libipt's
 *    pt_retstack: calls push, only compressed returns pop, calls to the
 *    next instruction are not pushed; an uncompressed return empties
 *    it, because perf's decoder pops there and libipt does not);
 *  - direct jmp/call: nothing;
 *  - far transfer into the kernel (syscall, int n): TIP.PGD with the IP
 *    suppressed, since the target is filtered out by CPL (SDM 36.2.4.1);
 *    the next user instruction gets MODE.Exec + TIP.PGE(ip);
 *  - asynchronous event (signal delivery, the thread stopping in the
 *    kernel): FUP(ip of the next instruction) + TIP.PGD suppressed;
 *  - every psb_period bytes, at the next instruction boundary: PSB,
 *    MODE.Exec, FUP(ip) if packets are enabled, PSBEND; last-IP and the
 *    return stack restart there (SDM "PSB", "Last IP");
 *  - IP filters: a taken branch out of every range gives TIP.PGD(target),
 *    a taken branch (or a resume from the kernel) into one gives
 *    MODE.Exec + TIP.PGE(target) (SDM 36.2.4.3: FilterEn toggles on taken
 *    branches and events only);
 *  - IP payloads use the smallest last-IP compression that is exact.
 */
#ifndef PTRR_CAP_EMIT_H
#define PTRR_CAP_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "capture/insn.h"
#include "capture/ring.h"
#include "history.h"

/* Bytes between PSBs by default: perf's psb_period=1 (2^(1+11)).  perf
 * itself defaults to psb_period=3 (16 KiB); ptrr prefers 4 KiB because
 * every PSB is a place where its index can start decoding, and a PSB+
 * costs about 30 bytes (under 1%). */
#define CAP_PSB_PERIOD_DEFAULT 4096

#define CAP_EMIT_MAX_FILTERS 4
#define CAP_EMIT_SHORT_TNT_BITS 6	/* bits a short TNT packet carries */
#define CAP_RETSTACK_DEPTH 64	/* as the hardware's and libipt's */

struct cap_filter {
	uint64_t start, size;	/* traced: start <= ip < start + size */
};

struct cap_emit_config {
	uint32_t psb_period;	/* bytes of trace between PSBs */
	bool ret_compression;
	bool tsc;		/* TSCEn: a TSC packet in every PSB+ */
	uint32_t nfilters;	/* 0: trace every user-mode IP */
	struct cap_filter filters[CAP_EMIT_MAX_FILTERS];
};

/* psb_period 4096, return compression on, no filters. */
void cap_emit_config_default(struct cap_emit_config *cfg);

struct hist_cpu;

/* The CPU the emitter's trace claims to come from (*@cpu), for a bundle's
 * header and gdb's btrace: the same whether it was recorded by ptrr
 * record or in a live session. */
void cap_emit_cpu(struct hist_cpu *cpu);

enum cap_emit_state {
	CAP_EMIT_OFF = 0,	/* not enabled (TraceEn=0) */
	CAP_EMIT_ON,		/* packets flow (PacketEn=1) */
	CAP_EMIT_KERNEL,	/* in the kernel: resumes at the next user
				 * instruction */
	CAP_EMIT_FILTERED,	/* outside the IP filters: resumes at a taken
				 * branch into one */
};

struct cap_emit_stats {
	uint64_t insns;		/* instructions fed */
	uint64_t tnt_bits;	/* conditional branches and compressed rets */
	uint64_t tips;		/* TIP packets (indirect branches, rets) */
	/* Not beside tnt_bits: the compiler would add to the two at once
	 * with a vector store, which the next load of tnt_bits alone
	 * cannot take its value from without a stall. */
	uint64_t compressed_rets;
	uint64_t psbs;
	uint64_t disables;	/* TIP.PGD packets */
	uint64_t resyncs;	/* instructions that did not follow from the
				 * one before: traced as an async event */
};

struct pt_encoder;

/* The table of PSBs (docs/history.md, "Segments numbered from the
 * emitter's table of PSBs"): an entry (struct hist_psb) per PSB+ written,
 * with its offset the ring's total then and the instructions fed before
 * it, so that a history can number every segment without decoding it.
 * A ring of @cap entries at @v (entry k of all ever written is
 * v[k % cap]), or, with @grow, an array reallocated as it fills (the
 * software backend).  @v NULL: no table. */
struct cap_psb_table {
	struct hist_psb *v;
	uint64_t cap;
	uint64_t n;		/* entries ever written (the QEMU plugin's
				 * readers load it with acquire) */
	int grow;
};

/* The fields the block fast paths below use come first, together. */
struct cap_emit {
	enum cap_emit_state state;
	uint8_t tnt;			/* pending TNT bits, oldest highest */
	uint8_t ntnt;
	bool have_last_ip;
	uint64_t next_ip;		/* ON: where the next instruction is */
	uint64_t last_ip;		/* the decoder's last IP */
	uint64_t psb_at;		/* ring total at the last PSB */
	unsigned ret_top, ret_count;
	bool owes_tip;			/* a branch's TIP did not fit (full
					 * ring): the trace can only end, with
					 * TIP.PGD(tip_owed) */
	uint64_t tip_owed;
	struct cap_emit_stats stats;
	struct cap_ring *ring;
	struct cap_emit_config cfg;
	struct pt_encoder *enc;		/* encodes into scratch */
	uint8_t scratch[32];
	uint64_t retstack[CAP_RETSTACK_DEPTH];
	struct cap_psb_table psbs;	/* where its PSBs are, if v is set */
	int seg_inexact;		/* since the last PSB: an overflow */
};

/* Prepares @e to write into @ring. */
int cap_emit_init(struct cap_emit *e, struct cap_ring *ring,
		  const struct cap_emit_config *cfg);
void cap_emit_fini(struct cap_emit *e);

/* Makes @e list its PSBs in @v, a ring of @cap entries (@grow 0) or a
 * malloc'd array of @cap entries it reallocates as it fills (@grow 1;
 * @v may then be NULL and @cap 0 to start one).  cap_emit_psbs_free()
 * frees a growing one. */
int cap_emit_set_psbs(struct cap_emit *e, struct hist_psb *v,
		      uint64_t cap, int grow);
void cap_emit_psbs_free(struct cap_emit *e);

/* The entries of a table of PSBs (@v, @cap, @n as in struct
 * cap_psb_table, @v read from wherever the caller sees it) for the PSBs
 * whole within the last @size bytes of a ring that wrote @total, with
 * their offsets made offsets into those bytes, oldest first: into *@out,
 * reallocated (the caller's scratch, freed by it), their number into
 * *@nout. */
int cap_psbs_window(const struct hist_psb *v, uint64_t cap, uint64_t n,
		    uint64_t total, uint64_t size, struct hist_psb **out,
		    size_t *nout);

/* Tracing starts with the thread about to execute @ip: PSB+ (without
 * FUP: packets are not yet enabled), then MODE.Exec + TIP.PGE(ip). */
int cap_emit_enable(struct cap_emit *e, uint64_t ip);

/* The instruction at @ip (@len bytes at @code) retired and the thread
 * continued at @next_ip. */
int cap_emit_insn(struct cap_emit *e, uint64_t ip, const uint8_t *code,
		  size_t len, uint64_t next_ip);

/* The same, for an instruction already classified. */
int cap_emit_decoded(struct cap_emit *e, uint64_t ip,
		     const struct cap_insn *insn, uint64_t next_ip);

/* An asynchronous event (a signal being delivered) took the thread into
 * the kernel before it executed @ip: FUP(ip) + TIP.PGD.  Packets resume
 * with the next instruction fed. */
int cap_emit_async(struct cap_emit *e, uint64_t ip);

/* Tracing stops with the thread in the kernel before @ip (a ptrace stop,
 * the end of the recording): FUP(ip) + TIP.PGD, and pending packets are
 * flushed.  cap_emit_enable() starts again. */
int cap_emit_disable(struct cap_emit *e, uint64_t ip);

/* The thread stopped in user mode before executing @ip (the end of the
 * recording, with the thread still there): as cap_emit_disable(), but
 * a thread that was in the kernel first comes back at @ip (MODE.Exec +
 * TIP.PGE), so the trace shows where it stopped, also when that is a
 * system call it is to run again. */
int cap_emit_stop(struct cap_emit *e, uint64_t ip);

/* Block-at-a-time feeding, for tracers that see basic blocks rather than
 * instructions (the QEMU plugin): every instruction of a block but the
 * last is known not to change the flow.
 * cap_emit_block_begin(): the thread is about to execute the block at
 * @start (a due PSB+ and a resume after the kernel happen here);
 * cap_emit_block_end(): its @ninsns instructions retired, the last, at
 * @last, being @insn, and the thread continued at @next_ip. */
int cap_emit_block_begin(struct cap_emit *e, uint64_t start);
int cap_emit_block_end(struct cap_emit *e, uint64_t last,
		       const struct cap_insn *insn, uint64_t next_ip,
		       uint32_t ninsns);

#define CAP_EMIT_FAST static inline __attribute__((always_inline))

/* The common cases of the two, inline, for the QEMU plugin's per-block
 * path.  Each cap_emit_fast_*() has the effect cap_emit_block_end()
 * would have for a block's last instruction, with packets on (state
 * CAP_EMIT_ON) and no IP filters, into @r (@e's ring, passed so that
 * the caller that has it at hand saves a load); where one returns
 * false it has done nothing at all, and the caller calls
 * cap_emit_block_end() instead.  None counts the block's instructions
 * or moves next_ip: cap_emit_fast_retired() does, once the block's
 * packets are done. */

/* Appends short TNT byte @byte if the ring has room without wrapping or
 * growing; false (nothing written) if not. */
CAP_EMIT_FAST bool cap_emit_fast_put1(struct cap_ring *r, uint8_t byte)
{
	if (!cap_ring_room(r))
		return false;
	cap_ring_put(r, &byte, 1);
	return true;
}

/* One TNT bit (a conditional branch, @taken; a compressed return),
 * written out as a short TNT once it holds 6 (flush_tnt()). */
CAP_EMIT_FAST bool cap_emit_fast_tnt(struct cap_emit *e, struct cap_ring *r,
				     bool taken)
{
	unsigned tnt = (unsigned) e->tnt << 1 | taken;

	if (e->ntnt + 1 == CAP_EMIT_SHORT_TNT_BITS) {
		if (!cap_emit_fast_put1(r, (uint8_t)
					((1u << CAP_EMIT_SHORT_TNT_BITS |
					  tnt) << 1)))
			return false;
		e->tnt = 0;
		e->ntnt = 0;
	} else {
		e->tnt = (uint8_t) tnt;
		e->ntnt++;
	}
	e->stats.tnt_bits++;
	return true;
}

/* A near call that logs its return (insn->logs_call) to @ret_ip. */
CAP_EMIT_FAST void cap_emit_fast_call(struct cap_emit *e, uint64_t ret_ip)
{
	e->retstack[e->ret_top] = ret_ip;
	e->ret_top = (e->ret_top + 1) % CAP_RETSTACK_DEPTH;
	if (e->ret_count < CAP_RETSTACK_DEPTH)
		e->ret_count++;
}

/* A near return to @next that is compressed: return compression on, and
 * @next the return address of the last call logged (a taken TNT bit). */
CAP_EMIT_FAST bool cap_emit_fast_ret(struct cap_emit *e, struct cap_ring *r,
				     uint64_t next)
{
	unsigned top = (e->ret_top + CAP_RETSTACK_DEPTH - 1) %
		       CAP_RETSTACK_DEPTH;

	if (!e->ret_count || e->retstack[top] != next ||
	    !e->cfg.ret_compression || !cap_emit_fast_tnt(e, r, true))
		return false;
	e->ret_top = top;
	e->ret_count--;
	e->stats.compressed_rets++;
	return true;
}

/* An indirect jump or call to @target (after cap_emit_fast_call() for a
 * call that logs its return): TIP(target), after the pending TNT bits,
 * where the target is within 4 GiB of the last IP (IPBytes 001b or
 * 010b: 2 or 4 bytes of payload, SDM "IP packets"), as emit_tip()
 * writes it. */
CAP_EMIT_FAST bool cap_emit_fast_tip(struct cap_emit *e, struct cap_ring *r,
				     uint64_t target)
{
	uint64_t diff = target ^ e->last_ip;
	uint8_t *to;
	size_t n = 0;

	if (!e->have_last_ip || diff >> 32 || cap_ring_room(r) < 6)
		return false;
	to = cap_ring_at(r);
	/* Written into the ring as they are made, a store each: bytes
	 * gathered in a buffer first would be read back in wider loads,
	 * which cannot be forwarded from the byte stores. */
	if (e->ntnt)
		to[n++] = (uint8_t) (((1u << e->ntnt) | e->tnt) << 1);
	if (diff >> 16) {
		uint32_t ip = (uint32_t) target;

		to[n] = 0x0d | 2 << 5;
		memcpy(to + n + 1, &ip, sizeof(ip));
		n += 5;
	} else {
		uint16_t ip = (uint16_t) target;

		to[n] = 0x0d | 1 << 5;
		memcpy(to + n + 1, &ip, sizeof(ip));
		n += 3;
	}
	cap_ring_advance(r, n);
	e->tnt = 0;
	e->ntnt = 0;
	e->last_ip = target;
	e->stats.tips++;
	return true;
}

/* The block's @ninsns instructions retired, the thread going on at
 * @next. */
CAP_EMIT_FAST void cap_emit_fast_retired(struct cap_emit *e, uint32_t ninsns,
					 uint64_t next)
{
	e->stats.insns += ninsns;
	e->next_ip = next;
}

/* Whether a block beginning at @start needs cap_emit_block_begin():
 * packets off, @start not where the last block went, or a PSB+ due. */
CAP_EMIT_FAST bool cap_emit_begin_slow(const struct cap_emit *e,
				       const struct cap_ring *r,
				       uint64_t start)
{
	return e->state != CAP_EMIT_ON || start != e->next_ip ||
	       cap_ring_total(r) - e->psb_at >= e->cfg.psb_period;
}

static inline int cap_emit_block_begin_fast(struct cap_emit *e,
					    uint64_t start)
{
	if (!cap_emit_begin_slow(e, e->ring, start))
		return 0;
	return cap_emit_block_begin(e, start);
}

static inline int cap_emit_block_end_fast(struct cap_emit *e, uint64_t last,
					  const struct cap_insn *insn,
					  uint64_t next_ip, uint32_t ninsns)
{
	struct cap_ring *r = e->ring;
	uint64_t fall = last + insn->len;
	bool done;

	if (e->state != CAP_EMIT_ON || e->cfg.nfilters)
		return cap_emit_block_end(e, last, insn, next_ip, ninsns);
	switch (insn->iclass) {
	case CAP_IC_COND:
		done = !insn->logs_call &&
		       cap_emit_fast_tnt(e, r, next_ip != fall);
		break;
	case CAP_IC_RET:
		done = !insn->logs_call && cap_emit_fast_ret(e, r, next_ip);
		break;
	case CAP_IC_CALL:
		if (insn->logs_call)
			cap_emit_fast_call(e, fall);
		done = true;
		break;
	case CAP_IC_OTHER:
	case CAP_IC_JUMP:
		done = !insn->logs_call;
		break;
	case CAP_IC_JUMP_IND:
		done = !insn->logs_call && cap_emit_fast_tip(e, r, next_ip);
		break;
	case CAP_IC_CALL_IND:
		done = insn->logs_call && cap_emit_fast_tip(e, r, next_ip);
		if (done)
			cap_emit_fast_call(e, fall);
		break;
	default:
		done = false;
		break;
	}
	if (!done)
		return cap_emit_block_end(e, last, insn, next_ip, ninsns);
	cap_emit_fast_retired(e, ninsns, next_ip);
	return 0;
}

/* @e was copied from another process (its encoder pointer is not valid
 * here): gives it a new encoder writing into @ring, keeping its state,
 * so that the trace can be finished (the QEMU backend, after QEMU died).
 * Its table of PSBs, being the other process's, is not written here (a
 * PSB it would have listed is not written either: finishing a trace
 * writes none).  cap_emit_fini() releases it. */
int cap_emit_rebind(struct cap_emit *e, struct cap_ring *ring);

/* Packets were lost: OVF, then FUP(resume_ip) as a CPU writes once its
 * internal overflow resolves with the thread about to execute
 * @resume_ip. */
int cap_emit_overflow(struct cap_emit *e, uint64_t resume_ip);

#endif
