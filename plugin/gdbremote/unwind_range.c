/* The unwind range of a replay (unwind_abi.h, target_replay.h): the call
 * stack ptrr's JIT-reader unwinder reads through memory reads. */
#include <config.h>

#include "gdbremote/target_replay.h"

#include <stdlib.h>
#include <string.h>

#include "unwind_abi.h"

/* At most this many frames are served. */
#define MAX_FRAMES 256

/* The frames the unwinder gets for thread @thr: none where gdb unwinds
 * by itself (at the end of history with the registers known), else the
 * call history's.  Their number in @n. */
static void unwind_frames(struct replay *rp, size_t thr,
			  struct replay_frame *frames, size_t *n)
{
	uint64_t vals[HIST_NREGS];
	bool known[HIST_NREGS];

	*n = 0;
	/* Without the registers (anywhere but the end, and at the end of a
	 * thread that exited) gdb needs the call history's frames. */
	replay_regs(rp, thr, vals, known);
	if (!(replay_at_end(rp, thr) && known[HIST_RSP]) &&
	    replay_frames(rp, thr, frames, MAX_FRAMES, n) < 0)
		*n = 0;
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
	size_t n;
	uint8_t *doc;

	unwind_frames(rp, thr, frames, &n);
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
		};

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
