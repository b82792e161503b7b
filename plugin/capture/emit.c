/* The software PT packet emitter; the packet rules are listed in emit.h. */
#include <config.h>

#include "capture/emit.h"
#include "error.h"
#include "history.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>


void cap_emit_config_default(struct cap_emit_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->psb_period = CAP_PSB_PERIOD_DEFAULT;
	cfg->ret_compression = true;
}

/* Decoders apply errata workarounds by CPU (libipt's pt_cpu_errata), and
 * GDB refuses a CPU that libipt does not know (-pte_bad_cpu), so a model
 * must be named.  Every family-6 model of libipt 2.0.5 has at least one
 * erratum; Goldmont Plus (6/0x7a) has only APL11 ("OVF may be followed by
 * TIP.PGD"), whose workaround runs only when an OVF is followed by a
 * TIP.PGD — the emitter follows OVF with FUP or TIP.PGE — so no
 * workaround ever changes how this trace decodes. */
void cap_emit_cpu(struct hist_cpu *cpu)
{
	static const struct hist_cpu soft = {
		.vendor = "GenuineIntel", .family = 6, .model = 0x7a,
		.stepping = 1,
	};

	*cpu = soft;
}

/* A libipt encoder into @e's scratch buffer. */
static int new_encoder(struct cap_emit *e)
{
	struct pt_config config;

	pt_config_init(&config);
	config.begin = e->scratch;
	config.end = e->scratch + sizeof(e->scratch);
	e->enc = pt_alloc_encoder(&config);
	if (!e->enc)
		return ptrr_fail(PTRR_ERR_NOMEM, "cannot allocate a PT encoder");
	return 0;
}

int cap_emit_init(struct cap_emit *e, struct cap_ring *ring,
		  const struct cap_emit_config *cfg)
{
	if (cfg->nfilters > CAP_EMIT_MAX_FILTERS || !cfg->psb_period)
		return ptrr_fail(PTRR_ERR_USAGE, "bad PT configuration: %u IP "
				 "filters (at most %d), PSB period %u",
				 cfg->nfilters, CAP_EMIT_MAX_FILTERS,
				 cfg->psb_period);
	memset(e, 0, sizeof(*e));
	e->cfg = *cfg;
	e->ring = ring;
	return new_encoder(e);
}

int cap_emit_rebind(struct cap_emit *e, struct cap_ring *ring)
{
	e->ring = ring;
	e->psbs.v = NULL;
	return new_encoder(e);
}

void cap_emit_fini(struct cap_emit *e)
{
	pt_free_encoder(e->enc);
	e->enc = NULL;
}

int cap_emit_set_psbs(struct cap_emit *e, struct hist_psb *v,
		      uint64_t cap, int grow)
{
	e->psbs = (struct cap_psb_table) { .v = v, .cap = cap, .grow = grow };
	if (grow && !v) {
		e->psbs.cap = 256;
		e->psbs.v = malloc(e->psbs.cap * sizeof(*v));
		if (!e->psbs.v)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	return 0;
}

void cap_emit_psbs_free(struct cap_emit *e)
{
	if (e->psbs.grow)
		free(e->psbs.v);
	e->psbs = (struct cap_psb_table) { 0 };
}

int cap_psbs_window(const struct hist_psb *v, uint64_t cap, uint64_t n,
		    uint64_t total, uint64_t size, struct hist_psb **out,
		    size_t *nout)
{
	uint64_t start = total - size, k = n > cap ? n - cap : 0;
	struct hist_psb *o = NULL;
	size_t m = 0;

	*nout = 0;
	if (!v || !cap || k == n)
		return 0;
	o = realloc(*out, (size_t) (n - k) * sizeof(*o));
	if (!o)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	*out = o;
	for (; k < n; k++) {
		struct hist_psb e = v[k % cap];

		if (e.offset >= start && e.offset + HIST_PSB_SIZE <= total) {
			e.offset -= start;
			o[m++] = e;
		}
	}
	*nout = m;
	return 0;
}

/* Lists a PSB about to be written at ring total @at in @e's table, if
 * it keeps one.  A growing table that cannot grow is dropped (the
 * history then decodes the trace to number it, as without one). */
static void list_psb(struct cap_emit *e, uint64_t at)
{
	struct cap_psb_table *t = &e->psbs;
	struct hist_psb ent = {
		.offset = at,
		.insns = e->stats.insns |
			 (e->seg_inexact || e->cfg.nfilters ?
			  HIST_PSB_INEXACT : 0),
	};

	e->seg_inexact = 0;
	if (!t->v)
		return;
	if (t->grow && t->n == t->cap) {
		struct hist_psb *v = realloc(t->v, 2 * t->cap *
						  sizeof(*v));

		if (!v) {
			cap_emit_psbs_free(e);
			return;
		}
		t->v = v;
		t->cap *= 2;
	}
	t->v[t->n % t->cap] = ent;
	__atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELEASE);
}

/* Encodes @pkt with libipt and appends it to the ring. */
static int put(struct cap_emit *e, const struct pt_packet *pkt)
{
	int n;

	pt_enc_sync_set(e->enc, 0);
	n = pt_enc_next(e->enc, pkt);
	if (n < 0)
		return ptrr_fail(PTRR_ERR_INTERNAL, "PT encoder refused packet "
				 "type %d: %s", pkt->type,
				 pt_errstr(pt_errcode(n)));
	return cap_ring_write(e->ring, e->scratch, (size_t) n);
}

/* Appends a packet that has no payload (PSB, PSBEND, OVF). */
static int put_plain(struct cap_emit *e, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	return put(e, &pkt);
}

/* The smallest IP compression that reproduces @ip from the decoder's
 * last IP (SDM "IP packets": IPBytes 001b/010b update 16/32 bits, 011b
 * sign-extends 48 bits, 100b updates 48, 110b is the full IP). */
static enum pt_ip_compression ip_compression(const struct cap_emit *e,
					     uint64_t ip)
{
	uint64_t diff = ip ^ e->last_ip;
	int64_t sext48 = (int64_t) (ip << 16) >> 16;

	if (e->have_last_ip && !(diff >> 16))
		return pt_ipc_update_16;
	if (e->have_last_ip && !(diff >> 32))
		return pt_ipc_update_32;
	if ((uint64_t) sext48 == ip)
		return pt_ipc_sext_48;
	if (e->have_last_ip && !(diff >> 48))
		return pt_ipc_update_48;
	return pt_ipc_full;
}

/* Writes into @out the IP packet whose opcode byte is @op (TIP 0x0d,
 * TIP.PGE 0x11, TIP.PGD 0x01, FUP 0x1d) for @ip, compressed against the
 * decoder's last IP: the compression in the opcode's bits 7:5, then that
 * many bytes of the IP, little-endian (SDM "IP packets"; what libipt's
 * encoder writes, without its per-packet cost: a TIP for every indirect
 * branch and unmatched return).  Returns the packet's size, at most
 * 9 bytes; the caller makes @ip the last IP once it is written. */
static size_t ip_packet(const struct cap_emit *e, uint8_t op, uint64_t ip,
			uint8_t *out)
{
	static const uint8_t payload[] = {
		[pt_ipc_update_16] = 2, [pt_ipc_update_32] = 4,
		[pt_ipc_sext_48] = 6, [pt_ipc_update_48] = 6,
		[pt_ipc_full] = 8,
	};
	enum pt_ip_compression ipc = ip_compression(e, ip);
	size_t n = payload[ipc];

	out[0] = (uint8_t) (op | (unsigned) ipc << 5);
	for (size_t i = 0; i < n; i++)
		out[1 + i] = (uint8_t) (ip >> 8 * i);
	return 1 + n;
}

/* The opcode byte of IP packet @type, without its compression bits. */
static uint8_t ip_opcode(enum pt_packet_type type)
{
	switch (type) {
	case ppt_tip:
		return 0x0d;
	case ppt_tip_pge:
		return 0x11;
	case ppt_tip_pgd:
		return 0x01;
	default:	/* ppt_fup */
		return 0x1d;
	}
}

/* Appends the IP packet @type (TIP, FUP, TIP.PGE, TIP.PGD) for @ip. */
static int put_ip(struct cap_emit *e, enum pt_packet_type type, uint64_t ip)
{
	uint8_t pkt[9];
	int err = cap_ring_write(e->ring, pkt,
				 ip_packet(e, ip_opcode(type), ip, pkt));

	if (!err) {
		e->last_ip = ip;
		e->have_last_ip = true;
	}
	return err;
}

/* Appends IP packet @type with its IP suppressed (the last IP stays). */
static int put_noip(struct cap_emit *e, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	pkt.payload.ip.ipc = pt_ipc_suppressed;
	return put(e, &pkt);
}

/* Appends MODE.Exec for 64-bit code (CS.L=1, CS.D=0). */
static int put_mode_exec(struct cap_emit *e)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec.csl = 1;
	return put(e, &pkt);
}

/* Writes the pending TNT bits as one short TNT packet: one byte, the
 * bits (oldest highest) under a stop bit, shifted past the 0 that marks
 * the packet (SDM "Short TNT"; what libipt's encoder writes for
 * ppt_tnt_8, without its per-packet cost: TNT is most of a trace). */
static int flush_tnt(struct cap_emit *e)
{
	uint8_t byte = (uint8_t) (((1u << e->ntnt) | e->tnt) << 1);

	int err;

	if (!e->ntnt)
		return 0;
	err = cap_ring_write(e->ring, &byte, 1);
	if (!err) {
		e->tnt = 0;
		e->ntnt = 0;
	}
	return err;
}

/* Adds one TNT bit; the decoder reads the oldest bit first, from the top
 * of the payload. */
static int add_tnt(struct cap_emit *e, bool taken)
{
	e->tnt = (uint8_t) (e->tnt << 1 | taken);
	e->ntnt++;
	e->stats.tnt_bits++;
	if (e->ntnt == CAP_EMIT_SHORT_TNT_BITS)
		return flush_tnt(e);
	return 0;
}

/* Forgets the calls seen so far: no return can be compressed against
 * them any more. */
static void retstack_clear(struct cap_emit *e)
{
	e->ret_top = 0;
	e->ret_count = 0;
}

/* Logs a call returning to @ip; the oldest entry gives way when full. */
static void retstack_push(struct cap_emit *e, uint64_t ip)
{
	e->retstack[e->ret_top] = ip;
	e->ret_top = (e->ret_top + 1) % CAP_RETSTACK_DEPTH;
	if (e->ret_count < CAP_RETSTACK_DEPTH)
		e->ret_count++;
}

/* Pops the top entry if it is @ip: the return is then compressible. */
static bool retstack_pop_match(struct cap_emit *e, uint64_t ip)
{
	unsigned top = (e->ret_top + CAP_RETSTACK_DEPTH - 1) %
		       CAP_RETSTACK_DEPTH;

	if (!e->ret_count || e->retstack[top] != ip)
		return false;
	e->ret_top = top;
	e->ret_count--;
	return true;
}

/* True if @ip is inside the IP filters (or there are none). */
static bool in_filter(const struct cap_emit *e, uint64_t ip)
{
	if (!e->cfg.nfilters)
		return true;
	for (uint32_t i = 0; i < e->cfg.nfilters; i++)
		if (ip - e->cfg.filters[i].start < e->cfg.filters[i].size)
			return true;
	return false;
}

/* Appends a TSC packet with the time-stamp counter now: the time the
 * software backend reached this point of the program, as the hardware's
 * is when its packet generation reached it. */
static int put_tsc(struct cap_emit *e)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = __rdtsc() & ((1ull << 56) - 1);
	return put(e, &pkt);
}

/* PSB+: a synchronization point.  FUP(@ip) is part of it only while
 * packets are enabled; TSC with TSCEn, right after the PSB as the SDM
 * orders PSB+ (TSC, then MODE.Exec, then FUP).  Decoding may start here,
 * so last-IP and the return stack start afresh. */
static int psb_plus(struct cap_emit *e, uint64_t ip)
{
	int err;

	err = flush_tnt(e);
	e->psb_at = cap_ring_total(e->ring);
	if (!err)
		list_psb(e, e->psb_at);
	e->have_last_ip = false;
	retstack_clear(e);
	e->stats.psbs++;
	if (!err)
		err = put_plain(e, ppt_psb);
	if (!err && e->cfg.tsc)
		err = put_tsc(e);
	if (!err)
		err = put_mode_exec(e);
	if (!err && e->state == CAP_EMIT_ON)
		err = put_ip(e, ppt_fup, ip);
	if (!err)
		err = put_plain(e, ppt_psbend);
	return err;
}

/* Packets (re)start with the thread at @ip, if @ip passes the filters:
 * MODE.Exec + TIP.PGE(ip). */
static int resume(struct cap_emit *e, uint64_t ip)
{
	int err;

	if (!in_filter(e, ip)) {
		e->state = CAP_EMIT_FILTERED;
		return 0;
	}
	err = put_mode_exec(e);
	if (!err)
		err = put_ip(e, ppt_tip_pge, ip);
	e->state = CAP_EMIT_ON;
	e->next_ip = ip;
	return err;
}

/* Packets stop because the thread entered the kernel (@with_fup: by an
 * asynchronous event before executing @ip) and become state @to. */
static int suspend(struct cap_emit *e, bool with_fup, uint64_t ip,
		   enum cap_emit_state to)
{
	int err = 0;

	if (e->state == CAP_EMIT_ON && e->owes_tip) {
		/* The branch whose TIP did not fit took the thread to
		 * tip_owed, and tracing stops there: TIP.PGD(target) is
		 * the branch's packet (an FUP where the decoder wants the
		 * branch's target does not decode). */
		err = flush_tnt(e);
		if (!err)
			err = put_ip(e, ppt_tip_pgd, e->tip_owed);
		e->owes_tip = false;
		e->stats.disables++;
	} else if (e->state == CAP_EMIT_ON) {
		/* A decoder walks from where the last instruction went to @ip:
		 * instructions the emitter was not fed (a live session's
		 * thread moved while not stepped). */
		if (with_fup && ip != e->next_ip)
			e->seg_inexact = 1;
		err = flush_tnt(e);
		if (!err && with_fup)
			err = put_ip(e, ppt_fup, ip);
		if (!err)
			err = put_noip(e, ppt_tip_pgd);
		e->stats.disables++;
	}
	e->state = to;
	return err;
}

int cap_emit_enable(struct cap_emit *e, uint64_t ip)
{
	int err;

	if (e->state != CAP_EMIT_OFF)
		return ptrr_fail(PTRR_ERR_USAGE, "PT emitter enabled twice");
	err = psb_plus(e, ip);
	if (!err)
		err = resume(e, ip);
	return err;
}

/* A taken branch to @target left the filters: TIP.PGD(target)
 * stands in for the branch's own packet. */
static int leave_filter(struct cap_emit *e, uint64_t target)
{
	int err = flush_tnt(e);

	if (!err)
		err = put_ip(e, ppt_tip_pgd, target);
	if (err) {		/* the end of the trace owes it */
		e->owes_tip = true;
		e->tip_owed = target;
		return err;
	}
	/* Whether libipt logged or popped anything for the branch does not
	 * matter once the stack is empty: no return is compressed then. */
	retstack_clear(e);
	e->stats.disables++;
	e->state = CAP_EMIT_FILTERED;
	return err;
}

/* An indirect transfer to @target: TIP, after the pending TNT bits,
 * written together (nothing of either if the ring refuses them). */
static int emit_tip(struct cap_emit *e, uint64_t target)
{
	uint8_t pkt[10];
	size_t n = 0;
	int err;

	if (e->ntnt)
		pkt[n++] = (uint8_t) (((1u << e->ntnt) | e->tnt) << 1);
	n += ip_packet(e, 0x0d, target, pkt + n);
	err = cap_ring_write(e->ring, pkt, n);
	e->owes_tip = err != 0;
	e->tip_owed = target;
	if (!err) {
		e->tnt = 0;
		e->ntnt = 0;
		e->last_ip = target;
		e->have_last_ip = true;
		e->stats.tips++;
	}
	return err;
}

/* A near return to @target: a taken TNT bit if compressible, else TIP.
 * Decoders differ on what an uncompressed return does to their stack of
 * calls: libipt keeps it, perf's decoder pops its top.  After one (a
 * signal handler returning to the restorer, a return to a pushed
 * address), the stack is forgotten, so that no later return is
 * compressed against calls the two would see differently. */
static int emit_ret(struct cap_emit *e, uint64_t target)
{
	if (e->cfg.ret_compression && retstack_pop_match(e, target)) {
		e->stats.compressed_rets++;
		return add_tnt(e, true);
	}
	retstack_clear(e);
	return emit_tip(e, target);
}

/* True if branch @insn at @ip transferred control to @next: always for
 * unconditional ones (even to the next instruction). */
static bool is_taken(uint64_t ip, const struct cap_insn *insn, uint64_t next)
{
	return insn->iclass != CAP_IC_COND || next != ip + insn->len;
}

/* The packets of @insn at @ip, continuing at @next, with packets on. */
static int emit_traced(struct cap_emit *e, uint64_t ip,
		       const struct cap_insn *insn, uint64_t next)
{
	bool taken = is_taken(ip, insn, next);

	if (insn->logs_call)
		retstack_push(e, ip + insn->len);
	if (insn->iclass == CAP_IC_KERNEL)
		return suspend(e, false, 0, CAP_EMIT_KERNEL);
	if (insn->iclass == CAP_IC_OTHER)
		return 0;
	if (taken && !in_filter(e, next))
		return leave_filter(e, next);
	switch (insn->iclass) {
	case CAP_IC_COND:
		return add_tnt(e, taken);
	case CAP_IC_RET:
		return emit_ret(e, next);
	case CAP_IC_JUMP_IND:
	case CAP_IC_CALL_IND:
	case CAP_IC_FAR:
		return emit_tip(e, next);
	default:		/* direct jmp/call: the decoder knows */
		return 0;
	}
}

/* While filtered out: a taken branch into the filters resumes packets;
 * entering the kernel makes the next user instruction a resume point. */
static int emit_filtered(struct cap_emit *e, uint64_t ip,
			 const struct cap_insn *insn, uint64_t next)
{
	if (insn->iclass == CAP_IC_KERNEL) {
		e->state = CAP_EMIT_KERNEL;
		return 0;
	}
	if (insn->iclass == CAP_IC_OTHER || !is_taken(ip, insn, next) ||
	    !in_filter(e, next))
		return 0;
	return resume(e, next);
}

/* Brings the state up to the thread being at @ip, about to execute:
 * notices transfers nobody told us about, inserts a due PSB+, and
 * resumes packets after the kernel. */
static int before_insn(struct cap_emit *e, uint64_t ip)
{
	int err = 0;

	if (e->state == CAP_EMIT_ON && ip != e->next_ip) {
		e->stats.resyncs++;
		err = suspend(e, true, e->next_ip, CAP_EMIT_KERNEL);
	}
	if (!err && cap_ring_total(e->ring) - e->psb_at >= e->cfg.psb_period)
		err = psb_plus(e, ip);
	if (!err && e->state == CAP_EMIT_KERNEL)
		err = resume(e, ip);
	return err;
}

int cap_emit_decoded(struct cap_emit *e, uint64_t ip,
		     const struct cap_insn *insn, uint64_t next_ip)
{
	int err;

	if (e->state == CAP_EMIT_OFF)
		return ptrr_fail(PTRR_ERR_USAGE, "PT emitter fed an "
				 "instruction while disabled");
	err = before_insn(e, ip);
	if (err)
		return err;
	e->stats.insns++;
	if (e->state == CAP_EMIT_FILTERED)
		return emit_filtered(e, ip, insn, next_ip);
	e->next_ip = next_ip;
	return emit_traced(e, ip, insn, next_ip);
}

int cap_emit_block_begin(struct cap_emit *e, uint64_t start)
{
	if (e->state == CAP_EMIT_OFF)
		return cap_emit_enable(e, start);
	return before_insn(e, start);
}

int cap_emit_block_end(struct cap_emit *e, uint64_t last,
		       const struct cap_insn *insn, uint64_t next_ip,
		       uint32_t ninsns)
{
	e->stats.insns += ninsns;
	if (e->state == CAP_EMIT_FILTERED)
		return emit_filtered(e, last, insn, next_ip);
	if (e->state != CAP_EMIT_ON)
		return 0;
	e->next_ip = next_ip;
	return emit_traced(e, last, insn, next_ip);
}

int cap_emit_insn(struct cap_emit *e, uint64_t ip, const uint8_t *code,
		  size_t len, uint64_t next_ip)
{
	struct cap_insn insn;
	int n = cap_insn_decode(code, len, &insn);

	if (n < 0)
		return ptrr_fail(n, "cannot decode the instruction at 0x%llx",
				 (unsigned long long) ip);
	return cap_emit_decoded(e, ip, &insn, next_ip);
}

int cap_emit_async(struct cap_emit *e, uint64_t ip)
{
	if (e->state == CAP_EMIT_OFF)
		return 0;
	return suspend(e, true, ip, CAP_EMIT_KERNEL);
}

int cap_emit_disable(struct cap_emit *e, uint64_t ip)
{
	return suspend(e, true, ip, CAP_EMIT_OFF);
}

int cap_emit_stop(struct cap_emit *e, uint64_t ip)
{
	int err = 0;

	if (e->state == CAP_EMIT_KERNEL)
		err = resume(e, ip);
	return err ? err : cap_emit_disable(e, ip);
}

int cap_emit_overflow(struct cap_emit *e, uint64_t resume_ip)
{
	int err;

	if (e->state == CAP_EMIT_OFF)
		return ptrr_fail(PTRR_ERR_USAGE, "PT emitter overflow while "
				 "disabled");
	err = flush_tnt(e);
	if (!err)
		err = put_plain(e, ppt_ovf);
	e->seg_inexact = 1;
	e->have_last_ip = false;
	e->owes_tip = false;	/* lost with the rest */
	retstack_clear(e);
	if (err)
		return err;
	if (!in_filter(e, resume_ip)) {
		e->state = CAP_EMIT_FILTERED;
		return 0;
	}
	e->state = CAP_EMIT_ON;
	e->next_ip = resume_ip;
	return put_ip(e, ppt_fup, resume_ip);
}
