/* replay/ — reverse execution over the indexed instruction history.
 *
 * A replay holds, for each thread of a recording, a position in that
 * thread's history and moves it in both directions: one instruction at a
 * time, or on to the nearest execution of a breakpoint address.  It knows
 * history/ but nothing of packets, sockets or gdb (plugin/gdbremote maps
 * requests onto these calls, as rr's GdbServer does onto ReplayTimeline).
 *
 * Positions are entry numbers of the thread's history (1 .. hist_size()).
 * The last entry is where the thread was when the recording ended: the
 * instruction it was about to execute, or the one that faulted.  A thread
 * positioned there is "at the end": its registers are the recorded ones and
 * a debugger sees it as not replaying.  Anywhere else only what known.c
 * proves is known (replay_regs, replay_read_memory, replay_frames_known):
 * the PC, the stack pointer and frame addresses where the code's call
 * frame information and the instructions since prove them, and memory
 * that never changes (code and read-only data).
 *
 * Gap entries are never a position: moving crosses them and says so.
 *
 * Errors are negative enum ptrr_error values (history/error.h).
 */
#ifndef PTRR_REPLAY_H
#define PTRR_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"

struct replay;

/* Reads memory as it is now (at the end of every thread's history): the
 * number of bytes read at @addr, 0 or negative if none. */
typedef ssize_t (*replay_present_fn)(void *arg, uint64_t addr, uint8_t *buf,
				     size_t len);

/* A replay of every thread of recording @rec, each at its end.  @rec must
 * outlive the replay.  Threads whose history has no instruction at all are
 * still listed (replay_thread_empty()); moving them reports the end. */
int replay_new(struct hist_recording *rec, struct replay **out);
void replay_free(struct replay *rp);

/* Starts (@run) or stops the pass that computes the call segments of
 * @rp's threads in a background thread (hist_calls_prepare), which
 * replay_new() starts.  Starting it again after the histories grew
 * (hist_extend) walks what is new; stopping waits for the thread, which
 * ends within a few thousand entries.  A live session runs it while the
 * program is stopped, so that the first reverse step waits for less. */
void replay_prepare(struct replay *rp, bool run);

/* A replay over histories that are not a bundle's (a live session):
 * thread i has task id @tids[i], history @histories[i] (which must
 * outlive the replay) and, if @end_regs is not NULL, the registers
 * @end_regs[i] at the end of its history (used if valid and their RIP is
 * the last instruction's address).  Each thread starts at its end.  As
 * cheap as replay_new: nothing is decoded beyond the ends. */
int replay_new_threads(size_t nthreads, const int *tids,
		       struct history *const *histories,
		       const struct hist_regs *end_regs,
		       struct replay **out);

/* Tells the replay that thread @thr's history grew (hist_extend) and, if
 * @end_regs is not NULL, what its registers at the new end are.  A thread
 * that was at the end moves to the new end; any other keeps its
 * position.  Call it after every hist_extend of a replayed history,
 * before any other call on that thread. */
int replay_refresh(struct replay *rp, size_t thr,
		   const struct hist_regs *end_regs);

size_t replay_nthreads(const struct replay *rp);

/* Task id of thread @thr (0 .. replay_nthreads() - 1), as the debugger
 * knows it: a task id an earlier thread of the recording had (reused by
 * the kernel) is TID + k * 2^22 for its k-th reuse. */
int replay_tid(const struct replay *rp, size_t thr);

/* Index of the thread with task id @tid; PTRR_ERR_NOTFOUND if none. */
int replay_find_tid(const struct replay *rp, int tid, size_t *thr);

/* True if thread @thr's history holds no instruction. */
bool replay_thread_empty(struct replay *rp, size_t thr);

/* Current position of thread @thr (an entry number, 0 if empty). */
uint64_t replay_position(const struct replay *rp, size_t thr);

/* True if thread @thr is at the end of its history (not replaying). */
bool replay_at_end(const struct replay *rp, size_t thr);

/* The instruction address at thread @thr's position. */
uint64_t replay_pc(const struct replay *rp, size_t thr);

/* Moves thread @thr to entry @number, or to the nearest instruction after
 * it if @number is a gap.  PTRR_ERR_RANGE outside the history. */
int replay_goto(struct replay *rp, size_t thr, uint64_t number);

/* Moves thread @thr to the end of its history. */
int replay_goto_end(struct replay *rp, size_t thr);

/* Why a move stopped. */
enum replay_stop {
	REPLAY_STOP_STEP = 0,	/* moved one instruction */
	REPLAY_STOP_BREAK,	/* at an execution of a breakpoint address */
	REPLAY_STOP_BEGIN,	/* at the first instruction: nothing earlier
				 * (gdb: replaylog:begin) */
	REPLAY_STOP_END,	/* at the end of history (gdb: replaylog:end) */
	REPLAY_STOP_INTERRUPT,	/* a continue the caller stopped (gdb's
				 * Ctrl-C): where its search had come to */
	REPLAY_STOP_WATCH,	/* at (backward) or after (forward) an
				 * instruction that wrote watched memory, or
				 * may have (replay_continue_watch) */
};

struct replay_result {
	enum replay_stop stop;
	uint64_t number;	/* the position reached */
	uint64_t pc;
	bool crossed_gap;	/* the move passed over a gap in the trace */
	/* REPLAY_STOP_WATCH: the watched address written (in the first
	 * watch it overlaps), and where the write is not proven, why it
	 * cannot be ruled out (else empty). */
	uint64_t watch_addr;
	char why[160];
	/* Stops gdb would have passed over that the search passed over
	 * (replay_continue_watch). */
	uint64_t passed;
};

/* Moves thread @thr one instruction backward (@dir < 0) or forward
 * (@dir > 0).  Backward from the first instruction it stays and reports
 * REPLAY_STOP_BEGIN; forward onto the last entry it reports
 * REPLAY_STOP_END, and from there stays and reports it again. */
int replay_step(struct replay *rp, size_t thr, int dir,
		struct replay_result *res);

/* Runs thread @thr backward (@dir < 0) or forward (@dir > 0) to the
 * nearest instruction strictly before / after its position whose address
 * is one of @bps (REPLAY_STOP_BREAK), else to the first instruction
 * (REPLAY_STOP_BEGIN) or the end (REPLAY_STOP_END).  Uses the segment
 * summaries to skip stretches that never executed any of @bps.  Reaching
 * the end is reported as END even if a breakpoint is there, as gdb's
 * btrace does.  @nbps may be 0. */
int replay_continue(struct replay *rp, size_t thr, int dir,
		    const uint64_t *bps, size_t nbps,
		    struct replay_result *res);

/* replay_continue() that asks @stop(@arg) now and then (before each
 * segment of the history it searches) whether to stop; when it says
 * true, the thread stops where the search had come to, which executed
 * none of @bps on the way, and the result is REPLAY_STOP_INTERRUPT.
 * @stop may be NULL. */
int replay_continue_until(struct replay *rp, size_t thr, int dir,
			  const uint64_t *bps, size_t nbps,
			  bool (*stop)(void *arg), void *arg,
			  struct replay_result *res);

/* Memory a watchpoint watches: [addr, addr + len).  @unreadable: the
 * debugger's old value of it is unreadable (it read it, unknown, at the
 * stop where the move begins), so that a stop for it where its value is
 * unknown as well is one the debugger would go on from without a word. */
struct replay_watch {
	uint64_t addr;
	uint64_t len;
	bool unreadable;
};

/* replay_continue_until() that also stops at the nearest instruction on
 * the way that writes any of @watches[0 .. @nwatches) (watch.c):
 * backward at it (its write undone: the state before it), forward after
 * it (the next instruction), as gdb's record full stops, whatever the
 * value written.  Where the instruction's write cannot be ruled out (its
 * address is not known, a rep string, a system call that may write, a
 * gap in the trace, the kernel's signal frame) it stops there too and
 * res->why says so: no write is skipped.  Backward, the one exception is
 * a stop gdb would pass over itself: where every watch the stop would
 * name has an unreadable old value (replay_watch.unreadable) and its
 * value there is not known either, gdb finds "no change" and resumes at
 * once; the search goes on instead (res->passed counts them).  Only
 * thread @thr's own instructions are searched.  REPLAY_STOP_WATCH, else
 * as replay_continue_until(). */
int replay_continue_watch(struct replay *rp, size_t thr, int dir,
			  const uint64_t *bps, size_t nbps,
			  const struct replay_watch *watches,
			  size_t nwatches, bool (*stop)(void *arg),
			  void *arg, struct replay_result *res);

/* replay_step() that says REPLAY_STOP_WATCH where the instruction it
 * moved over writes any of @watches, as replay_continue_watch() stops
 * (a write not proven is not reported: a plain step). */
int replay_step_watch(struct replay *rp, size_t thr, int dir,
		      const struct replay_watch *watches, size_t nwatches,
		      struct replay_result *res);

/* ---- What is known at a position (known.c) ---- */

/* Where memory as it is now comes from: @fn(@arg, ...) (a live
 * process).  Without it, a replay_new() replay reads its bundle's memory
 * snapshot. */
void replay_set_present(struct replay *rp, replay_present_fn fn, void *arg);

/* The registers of thread @thr at its position.  known[i] says whether
 * regs[i] is proven.  At the end of history: all recorded registers (if
 * the bundle has them and their RIP is the last instruction's address:
 * not for a thread that exited, whose registers were read after its exit
 * system call).  Elsewhere: HIST_RIP, and HIST_RSP and HIST_RBP where
 * the frame's CFA is proven and the code's call frame information (or the
 * instructions since the function's entry) give them from it. */
void replay_regs(struct replay *rp, size_t thr, uint64_t regs[HIST_NREGS],
		 bool known[HIST_NREGS]);

/* What the value recovery (recover.c) knows at thread @thr's position,
 * for `pt info`: whether its walk reached it (@walked), whether memory
 * nothing wrote since is the present's (@present), the bytes of memory it
 * learned or kept there besides (@bytes), the sets of registers recorded
 * on the way in the thread (@sets) and the first entry at or after the
 * position with one (@next_set, 0 if none), and the values found to
 * conflict so far (@conflicts: never shown). */
struct replay_recovery_summary {
	bool walked, present;
	uint64_t bytes;
	size_t sets;
	uint64_t next_set;
	uint64_t conflicts;
};
void replay_recovery_summary(struct replay *rp, size_t thr,
			     struct replay_recovery_summary *s);

/* Reads [@addr, @addr + @len) as known at thread @thr's position: the
 * number of bytes read from @addr on, 0 if the first is not known.  At
 * the end of history, memory as it is now (replay_set_present, else the
 * bundle's snapshot) and the image; anywhere else only what cannot have
 * changed since: code, read-only data of the modules and copies of
 * anonymous code (hist_image_read).  Writable memory at a past position
 * is not known: nothing proves it held then what it holds now. */
/* True if thread @thr of @rp is at its present: at the end of its history,
 * and that end is when the recording stopped (not a thread that exited
 * before), so its memory is the recorded one. */
bool replay_at_present(const struct replay *rp, size_t thr);

size_t replay_read_memory(struct replay *rp, size_t thr, uint64_t addr,
			  uint8_t *buf, size_t len);

/* Says that registers or memory of the program were changed from outside
 * it (a debugger's write in a live session) at some stop: where tracing
 * resumed after a stop, what went before no longer proves what comes
 * after (known_resume_continues), for the rest of the replay. */
void replay_set_outside_writes(struct replay *rp);

/* True if the recording holds registers of thread @thr anywhere (where
 * its history began, or at its end): frame addresses are proven from
 * them.  A bundle imported from a plain perf.data has none. */
bool replay_thread_has_regs(struct replay *rp, size_t thr);

/* The call-clobbered registers of replay_frame.clobbered: rax, rdx,
 * rcx, rsi, rdi, r8, r9, r10, r11 (replay_clobbered_reg). */
#define REPLAY_NCLOBBERED 9

/* One frame of the call stack at a position, innermost first. */
struct replay_frame {
	uint64_t pc;		/* frame 0: the position's PC; outer frames:
				 * the return address of their call */
	uint64_t func;		/* function address (hist_call.func) */
	int32_t level;		/* call depth (hist_call.level) */
	uint32_t instance;	/* id of the first call segment of this
				 * function instance: stable while the
				 * position stays in the same activation;
				 * 0 for frames beyond the history
				 * (replay_frames_known) */
	uint64_t cfa;		/* its Canonical Frame Address (the caller's
				 * rsp before the call), if cfa_known */
	bool cfa_known;
	/* Its callee-saved registers (hist_cfi_saved_reg's order) where
	 * known (bit i of saved_known): frame 0's at the position, a
	 * caller's as its callee leaves them (replay_frames_known only). */
	uint8_t saved_known;
	uint64_t saved[HIST_CFI_NSAVED];
	/* A caller's call-clobbered registers (replay_clobbered_reg's
	 * order) at its call, where nothing since wrote them (bit i of
	 * clobbered_known; replay_frames_known only, never frame 0). */
	uint16_t clobbered_known;
	uint64_t clobbered[REPLAY_NCLOBBERED];
};

extern const int replay_clobbered_reg[REPLAY_NCLOBBERED];

/* The call stack of thread @thr at its position, from the function-call
 * segments: frame 0 is the position itself, frame k+1 the caller of frame
 * k (hist_call.up), ending at the outermost frame whose return address
 * the history shows, or at @max frames.  Sets @n to the number of frames
 * written (at least 1 unless the thread is empty).  The stack comes from
 * the history's call segments (hist_call_find), computed by one pass over
 * the history: replay_new() starts that pass in a background thread
 * (replay_prepare() stops and starts it again), and
 * a call that comes before it has finished waits for it; after
 * hist_extend() only the new part is walked.  Then a call costs a few
 * lookups per frame.  docs/replay.md says where the stack ends. */
int replay_frames(struct replay *rp, size_t thr, struct replay_frame *frames,
		  size_t max, size_t *n);

/* replay_frames() with each frame's CFA where it is proven (known.c):
 * from the registers and memory at the end of history for activations
 * still alive there (unwound with the call frame information, as gdb
 * unwinds), else from the caller's CFA and the caller's stack pointer at
 * the call.  When the outermost frame is alive at the end of history, the
 * frames beyond it (its callers then, which called it before the history
 * starts) follow, from that unwinding: instance 0, levels below. */
int replay_frames_known(struct replay *rp, size_t thr,
			struct replay_frame *frames, size_t max, size_t *n);

#endif
