/* Decoding one PSB segment with libipt's block decoder.
 *
 * A segment is the trace between one PSB and the next.  The decoder is
 * given exactly those bytes, so every segment decodes on its own: the
 * index pass, the on-demand materialization and parallel workers all run
 * this same function, which is what keeps instruction numbers consistent.
 * Blocks end at every branch (end_on_call, end_on_jump), so each block is
 * a run of instructions at consecutive addresses.
 */
#include "history_internal.h"

#include <stdlib.h>
#include <string.h>

/* Sets the summary bits of the 64-byte code lines [ip, end_ip] touch. */
void hist_summary_add(uint64_t summary[8], uint64_t ip, uint64_t end_ip)
{
	for (uint64_t line = ip >> 6; line <= end_ip >> 6; line++) {
		uint64_t a = (line * 0x9E3779B97F4A7C15ull) >> 55;
		uint64_t b = (line * 0xC2B2AE3D27D4EB4Full) >> 55;

		summary[a >> 6] |= 1ull << (a & 63);
		summary[b >> 6] |= 1ull << (b & 63);
	}
}

bool hist_segment_may_touch(const struct hist_segment *s, uint64_t ip)
{
	uint64_t line = ip >> 6;
	uint64_t a = (line * 0x9E3779B97F4A7C15ull) >> 55;
	uint64_t b = (line * 0xC2B2AE3D27D4EB4Full) >> 55;

	return (s->summary[a >> 6] >> (a & 63) & 1) &&
	       (s->summary[b >> 6] >> (b & 63) & 1);
}

/* Maps libipt's instruction class to ours. */
static uint8_t iclass_of(enum pt_insn_class c)
{
	switch (c) {
	case ptic_call: return HIST_IC_CALL;
	case ptic_return: return HIST_IC_RETURN;
	case ptic_jump: return HIST_IC_JUMP;
	case ptic_cond_jump: return HIST_IC_COND_JUMP;
	case ptic_far_call: return HIST_IC_FAR_CALL;
	case ptic_far_return: return HIST_IC_FAR_RETURN;
	case ptic_far_jump: return HIST_IC_FAR_JUMP;
	case ptic_ptwrite: return HIST_IC_PTWRITE;
	default: return HIST_IC_OTHER;
	}
}

/* The libipt configuration for decoding trace bytes [begin, end). */
static void segment_config(const struct hist_config *cfg, uint64_t begin,
			   uint64_t end, struct pt_config *config)
{
	pt_config_init(config);
	config->begin = (uint8_t *) cfg->trace + begin;
	config->end = (uint8_t *) cfg->trace + end;
	if (strcmp(cfg->cpu.vendor, "GenuineIntel") == 0) {
		config->cpu.vendor = pcv_intel;
		config->cpu.family = cfg->cpu.family;
		config->cpu.model = cfg->cpu.model;
		config->cpu.stepping = cfg->cpu.stepping;
		(void) pt_cpu_errata(&config->errata, &config->cpu);
	}
	config->flags.variant.block.end_on_call = 1;
	config->flags.variant.block.end_on_jump = 1;
}

#define INSN_MEMO 256

/* A decoded instruction, remembered by address. */
struct insn_memo {
	uint64_t ip;
	struct hist_insn_info info;
	bool ok;
};

/* Decoding state while walking one segment. */
struct seg_walk {
	struct insn_memo memo[INSN_MEMO];
	struct pt_block_decoder *dec;
	struct hist_seg_result *res;
	bool want_runs;
	bool want_summary;	/* with runs: the summary too */
	uint8_t pending_flags;	/* flags for the next instruction */
	uint64_t begin;		/* trace offset of the segment */
	int fatal;		/* a ptrr failure (out of memory) */
	struct hist_image *image;
	bool have_next;		/* the next segment starts at next_ip */
	uint64_t next_ip;
	struct hist_runs tail;	/* blocks decoded after the last packet */
	uint64_t tail_from;	/* entries before the tail */
	uint64_t last_end_ip;	/* last instruction of the last block */
	uint64_t stop_at;	/* stop once this many entries are decoded */
};

/* Records a gap entry. */
static int seg_add_gap(struct seg_walk *w, int code, uint64_t ip)
{
	struct hist_run r = {
		.ip = ip, .end_ip = ip, .ninsn = 1, .kind = HIST_ENTRY_GAP,
		.gap_code = code,
	};
	uint64_t off = 0;

	if (pt_blk_get_offset(w->dec, &off) >= 0)
		r.gap_offset = w->begin + off;
	else
		r.gap_offset = w->begin;
	w->res->count++;
	w->res->gaps++;
	if (w->want_runs)
		return hist_runs_push(&w->res->runs, &r);
	return 0;
}

/* Handles one libipt event. */
static int seg_event(struct seg_walk *w, const struct pt_event *ev)
{
	struct hist_seg_result *res = w->res;

	w->tail.n = 0;
	w->tail_from = res->count;

	switch (ev->type) {
	case ptev_enabled:
		res->enabled_at_end = true;
		res->async_end = false;
		w->pending_flags |= HIST_F_RESUMED;
		break;
	case ptev_disabled:
		res->enabled_at_end = false;
		break;
	case ptev_async_disabled:
		res->enabled_at_end = false;
		res->async_end = true;
		res->async_ip = ev->variant.async_disabled.at;
		break;
	case ptev_async_branch:
		w->pending_flags |= HIST_F_RESUMED | HIST_F_INTERRUPTED;
		break;
	case ptev_overflow:
		res->enabled_at_end = true;
		w->pending_flags |= HIST_F_RESUMED;
		return seg_add_gap(w, HIST_GAP_OVERFLOW,
				   ev->ip_suppressed ? 0 :
				   ev->variant.overflow.ip);
	default:
		break;
	}
	return 0;
}

/* Drains pending events while @status says there are some.  Returns the
 * libipt status; a ptrr failure is left in @w->fatal. */
static int seg_drain_events(struct seg_walk *w, int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;

		status = pt_blk_event(w->dec, &ev, sizeof(ev));
		if (status < 0)
			return status;
		w->fatal = seg_event(w, &ev);
		if (w->fatal)
			return -pte_internal;
	}
	return status;
}

/* Accounts one decoded block. */
static int seg_add_block(struct seg_walk *w, const struct pt_block *b,
			 uint8_t ic)
{
	struct hist_seg_result *res = w->res;

	if (!b->ninsn)
		return 0;
	if (!res->started) {
		res->started = true;
		res->start_ip = b->ip;
		res->first_resumed = w->pending_flags & HIST_F_RESUMED;
	}
	res->end_ip = b->end_ip;
	res->last_ip = b->end_ip;
	res->count += b->ninsn;
	res->enabled_at_end = true;
	res->async_end = false;
	if (ic == HIST_IC_CALL) {
		res->depth++;
	} else if (ic == HIST_IC_RETURN) {
		res->depth--;
		if (res->depth < res->min_depth)
			res->min_depth = res->depth;
	}
	/* The index's; the cursor's runs need none, unless the segment was
	 * numbered from a table of PSBs and this decode completes it. */
	if (!w->want_runs || w->want_summary)
		hist_summary_add(res->summary, b->ip, b->end_ip);
	if (w->want_runs) {
		struct hist_run r = {
			.ip = b->ip, .end_ip = b->end_ip, .ninsn = b->ninsn,
			.iclass = ic, .flags = w->pending_flags,
			.kind = HIST_ENTRY_INSN,
		};

		if (hist_runs_push(&res->runs, &r))
			return PTRR_ERR_NOMEM;
	}
	w->pending_flags = 0;
	return 0;
}

/* The instruction at @ip, decoded with Zydis; NULL if it cannot be read.
 * Answers are kept in a small direct-mapped memo: hot code asks again and
 * again. */
static const struct hist_insn_info *insn_at(struct seg_walk *w, uint64_t ip)
{
	struct insn_memo *m = &w->memo[(ip ^ ip >> 9) % INSN_MEMO];

	if (m->ip != ip) {
		m->ip = ip;
		m->ok = hist_insn_info_at(w->image, ip, &m->info) == 0;
	}
	return m->ok ? &m->info : NULL;
}

/* True if the instruction at @ip is a direct near jump or call. */
static bool is_direct_branch(struct seg_walk *w, uint64_t ip)
{
	const struct hist_insn_info *info = insn_at(w, ip);

	return info && info->has_target;
}

/* The class of block @b's last instruction.  libipt's block cache leaves
 * indirect jumps and far transfers as ptic_error ("decode it if you need
 * it"); those are decoded here. */
static uint8_t block_iclass(struct seg_walk *w, const struct pt_block *b)
{
	const struct hist_insn_info *info;

	if (b->iclass != ptic_error)
		return iclass_of(b->iclass);
	info = insn_at(w, b->end_ip);
	return info ? info->iclass : HIST_IC_OTHER;
}

/* True if a block ending in class @ic certainly consumed trace when it got
 * its packet: a conditional branch, a return, a far transfer.  Near calls
 * and jumps may be direct; they are settled later (tail_settle). */
static bool surely_traced(uint8_t ic)
{
	switch (ic) {
	case HIST_IC_COND_JUMP:
	case HIST_IC_RETURN:
	case HIST_IC_FAR_CALL:
	case HIST_IC_FAR_RETURN:
	case HIST_IC_FAR_JUMP:
		return true;
	default:
		return false;
	}
}

/* True if the successor of block @b's last instruction (of class @ic)
 * comes from trace. */
static bool needs_trace(struct seg_walk *w, const struct pt_block *b,
			uint8_t ic)
{
	if (ic == HIST_IC_CALL || ic == HIST_IC_JUMP)
		return !is_direct_branch(w, b->end_ip);
	return surely_traced(ic);
}

/* Keeps the list of blocks decoded since trace was certainly consumed
 * (an event, or a block that surely_traced()).  Near calls and jumps may
 * be indirect and have consumed a TIP too; that is settled once, when the
 * segment ends (tail_settle), rather than for every block. */
static int seg_track_tail(struct seg_walk *w, const struct pt_block *b,
			  uint8_t ic, int status)
{
	struct hist_run r = {
		.ip = b->ip, .end_ip = b->end_ip, .ninsn = b->ninsn,
		.iclass = ic,
	};

	if (!b->ninsn)
		return 0;
	w->last_end_ip = b->end_ip;
	if (status >= 0 && surely_traced(ic)) {
		w->tail.n = 0;
		w->tail_from = w->res->count;
		return 0;
	}
	return hist_runs_push(&w->tail, &r);
}

/* Starts the tail after its last indirect near call or jump (which got a
 * TIP), leaving out the last block if it is @pending. */
static void tail_settle(struct seg_walk *w, bool pending)
{
	size_t n = w->tail.n - (pending && w->tail.n ? 1 : 0);

	while (n-- > 0) {
		const struct hist_run *r = &w->tail.v[n];

		if ((r->iclass != HIST_IC_CALL && r->iclass != HIST_IC_JUMP) ||
		    is_direct_branch(w, r->end_ip))
			continue;
		for (size_t i = 0; i <= n; i++)
			w->tail_from += w->tail.v[i].ninsn;
		memmove(w->tail.v, w->tail.v + n + 1,
			(w->tail.n - n - 1) * sizeof(*w->tail.v));
		w->tail.n -= n + 1;
		return;
	}
}

/* Cuts the segment's entries down to @count, dropping whole runs and the
 * end of the run it falls in. */
static int seg_truncate(struct seg_walk *w, uint64_t count)
{
	struct hist_seg_result *res = w->res;
	uint64_t drop = res->count - count;

	res->count = count;
	while (w->want_runs && drop) {
		struct hist_run *r = &res->runs.v[res->runs.n - 1];

		if (r->ninsn <= drop) {
			drop -= r->ninsn;
			res->runs.n--;
			continue;
		}
		r->ninsn -= (uint32_t) drop;
		r->iclass = HIST_IC_OTHER;
		drop = 0;
		for (uint64_t ip = r->ip, j = 0; j < r->ninsn; j++) {
			struct hist_insn_info info;
			int err = hist_insn_info_at(w->image, ip, &info);

			if (err)
				return err;
			r->end_ip = ip;
			ip += info.size;
		}
	}
	return 0;
}

/* Position of @ip among the tail's instructions (those decoded after the
 * last packet), or -1. */
static int64_t tail_find(struct seg_walk *w, uint64_t ip)
{
	int64_t pos = 0;

	for (size_t i = 0; i < w->tail.n; i++) {
		const struct hist_run *r = &w->tail.v[i];
		uint64_t at = r->ip;

		for (uint32_t j = 0; j < r->ninsn; j++, pos++) {
			struct hist_insn_info info;

			if (at == ip)
				return pos;
			if (j + 1 < r->ninsn &&
			    hist_insn_info_at(w->image, at, &info))
				return -1;
			at += info.size;
		}
	}
	return -1;
}

/* The segment's trace is used up.  The decoder went on as far as it could
 * without trace: past the point where the next segment's PSB was written
 * (that segment starts with the same instructions), and up to an
 * instruction whose trace lies in the next segment.  Cut there. */
static int seg_finish(struct seg_walk *w, bool last_pending)
{
	struct hist_seg_result *res = w->res;
	int64_t pos = -1;
	uint64_t tail_len;

	tail_settle(w, last_pending);
	tail_len = res->count - w->tail_from;
	if (w->have_next)
		pos = tail_find(w, w->next_ip);
	if (pos >= 0) {
		res->reached_next = true;
		return seg_truncate(w, w->tail_from + (uint64_t) pos);
	}
	if (!last_pending || !tail_len)
		return 0;
	res->pending = true;
	res->pending_ip = w->last_end_ip;
	return seg_truncate(w, res->count - 1);
}

/* True if the block decoder has read further into the trace since *@at
 * (which becomes where it is now). */
static bool moved(struct seg_walk *w, uint64_t *at)
{
	uint64_t off;

	if (pt_blk_get_offset(w->dec, &off) < 0 || off == *at)
		return false;
	*at = off;
	return true;
}

/* HIST_NO_TRACE_LIMIT: instructions the block decoder may give without
 * reading any further into the trace.  Only a loop of direct branches
 * runs on no packets for long, and the CPU leaves one only by an event,
 * which is a packet: a trace that leads into such a loop and says
 * nothing more (damaged, or cut there) would be decoded for ever. */

/* Runs the block decoder to the end of the segment.  A decode error ends
 * the segment with a gap entry; decoding resumes at the next PSB. */
static int seg_run(struct seg_walk *w)
{
	int status = pt_blk_sync_set(w->dec, 0);
	bool block_pending = false;
	uint64_t at = UINT64_MAX, idle = 0;

	while (status >= 0) {
		struct pt_block block;
		uint8_t ic;

		status = seg_drain_events(w, status);
		if (status < 0)
			break;
		block.ninsn = 0;
		status = pt_blk_next(w->dec, &block, sizeof(block));
		ic = block.ninsn ? block_iclass(w, &block) : HIST_IC_OTHER;
		block_pending = status == -pte_eos && block.ninsn &&
				needs_trace(w, &block, ic);
		/* Even on error, the block may hold instructions. */
		w->fatal = seg_add_block(w, &block, ic);
		if (!w->fatal)
			w->fatal = seg_track_tail(w, &block, ic, status);
		if (w->fatal)
			break;
		if (w->stop_at && w->res->count >= w->stop_at) {
			w->res->partial = true;
			return 0;
		}
		if (status >= 0 && !moved(w, &at)) {
			idle += block.ninsn;
			if (idle > HIST_NO_TRACE_LIMIT)
				status = HIST_GAP_ENDLESS;
		} else {
			idle = 0;
		}
	}
	if (w->fatal)
		return w->fatal;
	if (status == -pte_eos)
		return seg_finish(w, block_pending);
	w->res->error_end = true;
	w->res->enabled_at_end = false;
	return seg_add_gap(w, status, 0);
}

/* Decodes a segment; see hist_decode_segment(). */
static int decode(const struct hist_config *cfg, struct pt_image *image,
		  uint64_t begin, uint64_t end, const uint64_t *next_ip,
		  bool want_runs, bool want_summary, uint64_t stop_at,
		  struct hist_seg_result *res)
{
	struct pt_config config;
	struct seg_walk w = {
		.res = res, .want_runs = want_runs,
		.want_summary = want_summary, .begin = begin,
		.image = cfg->image, .have_next = next_ip != NULL,
		.next_ip = next_ip ? *next_ip : 0, .stop_at = stop_at,
	};
	int err;

	memset(res, 0, sizeof(*res));
	if (begin >= end)
		return 0;
	segment_config(cfg, begin, end, &config);
	w.dec = pt_blk_alloc_decoder(&config);
	if (!w.dec)
		return ptrr_fail(PTRR_ERR_NOMEM, "cannot allocate a decoder");
	err = pt_blk_set_image(w.dec, image);
	if (err < 0)
		err = ptrr_fail(PTRR_ERR_INTERNAL, "cannot set the image: %s",
				pt_errstr(pt_errcode(err)));
	else
		err = seg_run(&w);
	pt_blk_free_decoder(w.dec);
	free(w.tail.v);
	return err;
}

int hist_decode_segment(const struct hist_config *cfg,
			struct pt_image *image, uint64_t begin, uint64_t end,
			const uint64_t *next_ip, bool want_runs,
			struct hist_seg_result *res)
{
	return decode(cfg, image, begin, end, next_ip, want_runs, false, 0,
		      res);
}

int hist_decode_segment_prefix(const struct hist_config *cfg,
			       struct pt_image *image, uint64_t begin,
			       uint64_t end, const uint64_t *next_ip,
			       uint64_t stop_at, bool want_summary,
			       struct hist_seg_result *res)
{
	return decode(cfg, image, begin, end, next_ip, true, want_summary,
		      stop_at, res);
}

void hist_seg_result_fini(struct hist_seg_result *res)
{
	free(res->runs.v);
	res->runs.v = NULL;
	res->runs.n = res->runs.cap = 0;
}

bool hist_psb_start_ip(const struct hist_config *cfg, uint64_t off,
		       uint64_t *ip)
{
	struct pt_config config;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	bool found = false;

	if (off >= cfg->size)
		return false;
	pt_config_init(&config);
	config.begin = (uint8_t *) cfg->trace + off;
	config.end = (uint8_t *) cfg->trace + cfg->size;
	dec = pt_pkt_alloc_decoder(&config);
	if (!dec)
		return false;
	if (pt_pkt_sync_set(dec, 0) < 0)
		goto out;
	while (pt_pkt_next(dec, &pkt, sizeof(pkt)) >= 0 &&
	       pkt.type != ppt_psbend) {
		if (pkt.type != ppt_fup ||
		    pkt.payload.ip.ipc == pt_ipc_suppressed)
			continue;
		/* The last IP is zero after a PSB: compression keeps the
		 * low bits, sext-48 also extends the sign. */
		*ip = pkt.payload.ip.ip;
		if (pkt.payload.ip.ipc == pt_ipc_sext_48 && (*ip >> 47 & 1))
			*ip |= 0xffff000000000000ull;
		found = true;
	}
out:
	pt_pkt_free_decoder(dec);
	return found;
}
