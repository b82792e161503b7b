/* replay/ — what the files of the replay engine share: the state of a
 * thread being replayed.  Only the files of replay/ include this. */
#ifndef PTRR_REPLAY_INTERNAL_H
#define PTRR_REPLAY_INTERNAL_H

#include "replay.h"

#include <pthread.h>

/* What frames.c has learned of one call segment. */
struct replay_memo {
	uint32_t id;		/* the segment's id, 0 if the slot is free */
	uint32_t back;		/* the segment whose call returned to its
				 * first instruction: 0 not searched yet,
				 * UINT32_MAX none */
	uint64_t ret;		/* the return address after the call that
				 * ends it; 0 not read yet, 1 if it does not
				 * end with a call */
	uint8_t async;		/* 0 not known yet, 1 if entered by a call,
				 * jump or return, 2 asynchronously (a
				 * signal) */
};

/* What frames.c keeps about the call segments of a thread's history: a
 * hash of the segments the stacks asked for so far passed through,
 * forgotten when the history changes. */
struct replay_call_tables {
	struct replay_memo *slots;
	size_t nslots, used;
};

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
	struct replay_call_tables ct;	/* frames.c */
	struct replay_known *known;	/* known.c: NULL until needed */
	struct replay_recover *recover;	/* recover.c: NULL until needed */
	struct replay_evidence *evidence;	/* evidence.c: NULL until
						 * needed */
	struct replay_local *local;	/* frames.c: the stack without the
					 * call segments, NULL until needed */
	bool prepared;		/* the replay's pass prepares the calls */
	bool calls_off;		/* at this position, what needs the call
				 * segments does without (replay.c:
				 * decide_calls) */
};

struct replay {
	struct replay_thread *t;
	size_t n;
	struct hist_recording *rec;	/* the recording, if replay_new()'s:
					 * its image, symbols and snapshot */
	replay_present_fn present;	/* memory as it is now, if set */
	void *present_arg;
	pthread_t prepare;	/* computing the call segments ahead */
	bool preparing;		/* it was started, */
	bool stop;		/* and is told to stop */
	bool outside_writes;	/* replay_set_outside_writes() */
};

/* ---- known.c, for recover.c ---- */

/* Memory at the present (the live process's, else the snapshot): the
 * bytes read at @addr. */
size_t known_present_read(struct replay *rp, uint64_t addr, uint8_t *buf,
			  size_t len);
/* Memory that never changes (code, read-only data): the bytes read. */
size_t known_image_read(struct replay *rp, uint64_t addr, uint8_t *buf,
			size_t len);
/* Instruction entry @number of @t into @e; false if not one. */
bool known_insn(struct replay_thread *t, uint64_t number,
		struct hist_entry *e);
/* The registers known before @t's last instruction @e (known.c). */
bool known_last_regs(struct replay *rp, struct replay_thread *t,
		     const struct hist_entry *e, uint64_t r[HIST_NREGS],
		     bool rk[HIST_NREGS]);
/* rsp and rbp before entry @pos of thread @thr where the frame proofs
 * give them (as replay_regs() does at the thread's position); only
 * those asked for (@want_rsp, @want_rbp): the walk asks at every step
 * where one is unknown, and rsp is the costly one. */
void known_frame_regs_at(struct replay *rp, size_t thr, uint64_t pos,
			 bool want_rsp, uint64_t *rsp, bool *rsp_ok,
			 bool want_rbp, uint64_t *rbp, bool *rbp_ok);
/* True if entry @e, where tracing resumed (HIST_F_RESUMED), goes on
 * from the state instruction entry @prev left: @e is where @prev leads by
 * itself (the next instruction, but not after a call, whose callee may
 * have run untraced; a direct jump's or call's destination), the
 * recording traced all code (no IP filter) and nothing changed the
 * program from outside (replay_set_outside_writes).  Tracing
 * resumes so after a system call, a debugger's stop, an interrupt or a
 * signal that ran no handler; elsewhere (a handler, untraced code) the
 * state before @e does not follow from @prev's. */
bool known_resume_continues(const struct replay *rp,
			    const struct hist_entry *prev,
			    const struct hist_entry *e);
/* True if thread @thr was still there when the recording stopped, so its
 * end is the present. */
bool known_alive_at_end(const struct replay *rp, size_t thr);
/* The stack of thread @thr at the last position of its history, alive
 * there, unwound with the call frame information through the present's
 * memory alone (no call segments): the pcs (frame 0's the position's,
 * callers' their return addresses) and CFAs of at most @max frames,
 * innermost first; their number (0 if not alive there). */
size_t known_end_frames(struct replay *rp, size_t thr, uint64_t *pc,
			uint64_t *cfa, size_t max);

/* ---- recover.c ---- */

/* Forgets what recover.c learned of thread @t. */
void replay_recover_reset(struct replay_thread *t);
/* The registers of thread @thr before entry @pos, as far as recovered:
 * @known has the known bytes of each. */
void replay_recover_regs(struct replay *rp, size_t thr, uint64_t pos,
			 uint64_t regs[HIST_NREGS], uint8_t known[HIST_NREGS]);
/* The memory at @addr before entry @pos of thread @thr: the number of
 * bytes known from @addr on, into @buf. */
size_t replay_recover_read(struct replay *rp, size_t thr, uint64_t pos,
			   uint64_t addr, uint8_t *buf, size_t len);
/* Forgets what evidence.c computed for thread @t. */
void replay_evidence_reset(struct replay_thread *t);
/* Bytes found to hold two values so far (never shown). */
uint64_t replay_recover_conflicts(const struct replay *rp, size_t thr);

/* Frees the frame caches of thread @t (frames.c), and what known.c
 * learned of it. */
void replay_frames_reset(struct replay_thread *t);

/* The call stack of thread @t at entry @pos (an instruction at @pc), as
 * replay_frames() gives it at the position (frames.c). */
/* The frames at thread @thr's position without the call segments
 * (frames.c: read back from the end's stack), innermost first, every
 * CFA proven, into @frames[*@n]; false (*@n = 0) where that cannot be
 * done: the call segments must give them. */
/* Thread @t uses the call segments again from now on (replay.c,
 * decide_calls), forgetting what was learned without them. */
void replay_calls_on(struct replay_thread *t);
bool replay_frames_local(struct replay *rp, size_t thr,
			 struct replay_frame *frames, size_t max, size_t *n);
int replay_frames_at(struct replay_thread *t, uint64_t pos, uint64_t pc,
		     struct replay_frame *frames, size_t max, size_t *n);

/* Frees what known.c learned of thread @t (its history changed). */
void replay_known_reset(struct replay_thread *t);

#endif
