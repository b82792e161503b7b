/* replay/ — what the files of the replay engine share: the state of a
 * thread being replayed.  Only the files of replay/ include this. */
#ifndef PTRR_REPLAY_INTERNAL_H
#define PTRR_REPLAY_INTERNAL_H

#include "replay.h"

/* One thread: its history, a cursor at its position, and what is known
 * of it at the end. */
struct replay_thread {
	int tid;
	struct history *h;
	struct hist_cursor *cur;	/* at the position */
	struct hist_cursor *look;	/* for reading other entries (frames) */
	uint64_t first;		/* first and last instruction entries, */
	uint64_t last;		/* 0 if the history has none */
	uint64_t pos;		/* the position, 0 if empty */
	uint64_t pc;		/* its instruction address */
	struct hist_regs end_regs;	/* recorded at the end, if valid */
	/* Call-segment instances (frames.c): inst[id - 1] is the id of the
	 * first segment of the activation segment id belongs to, for the
	 * call segments at @calls (recomputed when they change). */
	uint32_t *inst;
	uint64_t *ret;		/* ret[id - 1]: the return address after the
				 * call ending segment id, once read; 0 not
				 * yet, 1 if it does not end with a call */
	uint8_t *async;		/* async[id - 1]: 0 not known yet, 1 if
				 * segment id was entered by a call, jump or
				 * return, 2 if asynchronously (a signal) */
	const struct hist_call *calls;
	size_t ncalls;
};

struct replay {
	struct replay_thread *t;
	size_t n;
};

/* Frees the frame caches of thread @t (frames.c). */
void replay_frames_reset(struct replay_thread *t);

#endif
