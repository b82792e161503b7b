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

size_t rsp_unwind_read(struct replay *rp, size_t thr, uint64_t off,
		       uint8_t *buf, size_t len)
{
	struct ptrr_unwind_header h = {
		.magic = PTRR_UNWIND_MAGIC,
		.tid = (uint64_t) replay_tid(rp, thr),
		.position = replay_position(rp, thr),
		.frame_size = sizeof(struct ptrr_unwind_frame),
	};
	struct replay_frame frames[MAX_FRAMES];
	size_t n, total;
	uint8_t *doc;

	unwind_frames(rp, thr, frames, &n);
	h.nframes = (uint32_t) n;
	total = sizeof(h) + n * sizeof(struct ptrr_unwind_frame);
	if (off >= total)
		return 0;
	doc = calloc(1, total);
	if (!doc)
		return 0;
	memcpy(doc, &h, sizeof(h));
	for (size_t i = 0; i < n; i++) {
		struct ptrr_unwind_frame f = {
			.pc = frames[i].pc, .func = frames[i].func,
			.level = frames[i].level,
			.instance = frames[i].instance,
		};

		memcpy(doc + sizeof(h) + i * sizeof(f), &f, sizeof(f));
	}
	if (len > total - off)
		len = total - off;
	memcpy(buf, doc + off, len);
	free(doc);
	return len;
}
