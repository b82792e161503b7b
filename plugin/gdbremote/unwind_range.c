/* The unwind range of a replay (unwind_abi.h, target_replay.h): the call
 * stack ptrr's JIT-reader unwinder reads through memory reads. */
#include <config.h>

#include "gdbremote/target_replay.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_abi.h"

/* At most this many frames are served. */
#define MAX_FRAMES 256

/* The frames the unwinder gets for thread @thr: none where gdb unwinds
 * by itself (at the present, with the registers and memory known), else
 * the call history's with their CFAs where proven.  Their number in @n. */
static void unwind_frames(struct replay *rp, size_t thr,
			  struct replay_frame *frames, size_t *n)
{
	uint64_t vals[HIST_NREGS];
	bool known[HIST_NREGS];

	*n = 0;
	/* Without the registers and memory (anywhere but the present: the
	 * past, and the end of a thread that exited) gdb needs the call
	 * history's frames. */
	replay_regs(rp, thr, vals, known);
	if (!(replay_at_present(rp, thr) && known[HIST_RSP]) &&
	    replay_frames_known(rp, thr, frames, MAX_FRAMES, n) < 0)
		*n = 0;
}

/* The synthetic stack address, just below PTRR_UNWIND_STACK_TOP, of a
 * frame at depth @rel (>= 0, outer frames lower) and instance @inst. */
static uint64_t high_sp(int64_t rel, uint32_t inst)
{
	return PTRR_UNWIND_STACK_TOP - (((uint64_t) rel + 1) << 32) + inst;
}

/* The frame id stack addresses of @frames[0..*@n): a frame's proven CFA,
 * or a synthetic address (unwind_abi.h) that keeps them growing outward:
 * low (under 64 KiB) for a frame with a proven frame further out, high
 * for one with none.  A proven CFA not above the frame before (a stack
 * switched, e.g. to a signal stack) ends the stack there, as gdb would
 * end it ("previous frame inner to this frame"). */
static void frame_sps(const struct replay_frame *frames, size_t *n,
		      uint64_t *sp, uint32_t *flags)
{
	int32_t min_level = INT32_MAX;
	bool high = false;

	for (size_t k = 0; k < *n; k++)
		if (frames[k].level < min_level)
			min_level = frames[k].level;
	for (size_t k = 0; k < *n; k++) {
		uint64_t prev = k ? sp[k - 1] : 0;
		size_t j = k + 1;

		flags[k] = 0;
		if (!high && frames[k].cfa_known) {
			if (frames[k].cfa <= prev) {
				*n = k;
				return;
			}
			sp[k] = frames[k].cfa;
			flags[k] = PTRR_UNWIND_CFA;
			continue;
		}
		while (j < *n && !frames[j].cfa_known)
			j++;
		if (!high && j < *n && (!k || !frames[k - 1].cfa_known) &&
		    frames[j].level < frames[k].level &&
		    (uint64_t) (frames[k].level - frames[j].level) <
		    PTRR_UNWIND_LOW_TOP / PTRR_UNWIND_LOW_STEP / 2) {
			sp[k] = PTRR_UNWIND_LOW_TOP - PTRR_UNWIND_LOW_STEP *
				(uint64_t) (frames[k].level - frames[j].level);
			continue;
		}
		high = true;
		sp[k] = high_sp(frames[k].level - (int64_t) min_level,
				frames[k].instance);
		if (sp[k] <= prev) {
			*n = k;
			return;
		}
	}
}

/* Ends the @n frames (stack addresses' @flags from frame_sps) at the
 * first whose CFA is not proven: that frame gets PTRR_UNWIND_NOBASE and
 * the reader declines it, so gdb gets no frame base, no rsp and no frame
 * address for it rather than a synthetic one (docs/unwinder.md, "Frames
 * whose CFA is not proven").  The reader knows that frame by its pc and
 * its undefined rsp, as it knows frame 0: where the two pcs are the same
 * it could not tell them apart, and the stack ends before it.  The new
 * number of frames. */
static size_t end_at_unproven(const struct replay_frame *frames, size_t n,
			      uint32_t *flags)
{
	for (size_t k = 0; k < n; k++) {
		if (flags[k] & PTRR_UNWIND_CFA)
			continue;
		if (k && frames[k].pc == frames[0].pc)
			return k;
		flags[k] |= PTRR_UNWIND_NOBASE;
		return k + 1;
	}
	return n;
}

/* The unwind range of thread @thr of @rp where it is now: malloc'd, its
 * length in @len; NULL if out of memory. */
static uint8_t *make_doc(struct replay *rp, size_t thr, size_t *len)
{
	struct ptrr_unwind_header h = {
		.magic = PTRR_UNWIND_MAGIC,
		.tid = (uint64_t) replay_tid(rp, thr),
		.position = replay_position(rp, thr),
		.frame_size = sizeof(struct ptrr_unwind_frame),
	};
	struct replay_frame frames[MAX_FRAMES];
	uint64_t sp[MAX_FRAMES];
	uint32_t flags[MAX_FRAMES];
	size_t n;
	uint8_t *doc;

	unwind_frames(rp, thr, frames, &n);
	frame_sps(frames, &n, sp, flags);
	/* Not where no register was ever recorded (an imported perf.data):
	 * there every frame would be declined, and with it every backtrace
	 * and reverse-finish (docs/unwinder.md). */
	if (replay_thread_has_regs(rp, thr))
		n = end_at_unproven(frames, n, flags);
	h.nframes = (uint32_t) n;
	*len = sizeof(h) + n * sizeof(struct ptrr_unwind_frame);
	doc = calloc(1, *len);
	if (!doc)
		return NULL;
	memcpy(doc, &h, sizeof(h));
	for (size_t i = 0; i < n; i++) {
		struct ptrr_unwind_frame f = {
			.pc = frames[i].pc, .func = frames[i].func,
			.level = frames[i].level,
			.instance = frames[i].instance,
			.sp = sp[i], .flags = flags[i],
			.saved_mask = frames[i].saved_known,
			.clobbered_mask = frames[i].clobbered_known,
		};

		memcpy(f.saved, frames[i].saved, sizeof(f.saved));
		memcpy(f.clobbered, frames[i].clobbered, sizeof(f.clobbered));

		memcpy(doc + sizeof(h) + i * sizeof(f), &f, sizeof(f));
	}
	return doc;
}

void rsp_unwind_forget(struct replay_target *r)
{
	free(r->unwind.doc);
	r->unwind = (struct rsp_unwind_doc) { 0 };
}

size_t rsp_unwind_read(struct replay_target *r, size_t thr, uint64_t off,
		       uint8_t *buf, size_t len)
{
	struct rsp_unwind_doc *u = &r->unwind;
	uint64_t position = replay_position(r->rp, thr);

	if (!u->doc || u->rp != r->rp || u->thr != thr ||
	    u->position != position) {
		rsp_unwind_forget(r);
		u->doc = make_doc(r->rp, thr, &u->len);
		if (!u->doc)
			return 0;
		u->rp = r->rp;
		u->thr = thr;
		u->position = position;
	}
	if (off >= u->len)
		return 0;
	if (len > u->len - off)
		len = u->len - off;
	memcpy(buf, u->doc + off, len);
	return len;
}
