/* plugin/capture — what the files of the stepper share (stepper.h is the
 * public side):
 *   stepper.c  one thread's single-step: what a stop after it means;
 *   signals.c  what delivering a signal will do to the program;
 *   threads.c  the thread table and the events of a thread's life
 *              (clone, fork, exit, death, execve);
 *   loop.c     waiting for stops, resuming, stopping every thread;
 *   launch.c   launching, attaching, letting go;
 *   runto.c    running at native speed to the start address;
 *   block.c    block stepping: native runs to an int3 on the branch;
 *   native.c   running at native speed, stopped only by events.
 */
#ifndef PTRR_CAP_STEPPER_INTERNAL_H
#define PTRR_CAP_STEPPER_INTERNAL_H

#include "capture/stepper.h"

#include <stdbool.h>

/* The ptrace options of every task: threads are followed, children are
 * caught at birth to be detached, exec and exit are reported. */
#define CAP_PTRACE_OPTS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | \
			 PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | \
			 PTRACE_O_TRACEEXIT | PTRACE_O_TRACEVFORKDONE)

/* ---- threads.c ---- */

/* The thread with task id @tid, or NULL. */
struct cap_thread *cap_thr_find(const struct cap_stepper *s, pid_t tid);

/* Adds thread @tid in @state; NULL when out of memory (ptrr_fail set). */
struct cap_thread *cap_thr_add(struct cap_stepper *s, pid_t tid,
			       enum cap_thread_state state);

/* Number of threads whose trace has not ended. */
size_t cap_thr_active(const struct cap_stepper *s);

/* Calls the event callback (only while single-stepping); a positive
 * verdict stops the run. */
int cap_report(struct cap_stepper *s, struct cap_event *ev);

/* Reports that thread @t starts being traced, once. */
int cap_thr_start(struct cap_stepper *s, struct cap_thread *t);

/* Handles a wait @status of known thread @t other than a plain signal
 * stop: ptrace events and death. */
int cap_thr_event(struct cap_stepper *s, struct cap_thread *t, int status);

/* The first stop of task @tid, not known yet: kept until its parent's
 * event says what it is, or handled if that was said already. */
int cap_newborn_stop(struct cap_stepper *s, pid_t tid, int status);

/* ---- loop.c ---- */

/* True once the run is to end: every thread is being stopped. */
bool cap_stopping(const struct cap_stepper *s);

/* Waits for stops and resumes threads until the run ends and every
 * thread is stopped or gone. */
int cap_loop(struct cap_stepper *s);

/* Reads the registers of @t; rip becomes t->ip unless @keep_ip. */
int cap_get_regs(struct cap_thread *t, bool keep_ip);

/* Makes t->regs (and t->ip, if it is rip) show the thread as it will
 * resume: a system call the kernel is to restart (rax -ERESTART*) about
 * to run again at rip - 2. */
void cap_restart_view(struct cap_thread *t);

/* Reads the registers of @t at a stop from inside the kernel (an
 * interrupt, a first stop) as cap_restart_view() shows them; rip becomes
 * t->ip unless @keep_ip. */
int cap_interrupt_regs(struct cap_thread *t, bool keep_ip);

/* Gets the siginfo of @t's stop, all zero (si_signo 0) for a group-stop,
 * which has none.  PTRR_ERR_GONE if @t is no longer in the stop: killed,
 * or woken from it by a SIGKILL (it is in its PTRACE_EVENT_EXIT stop, and
 * the siginfo there is that stop's, not this one's). */
int cap_get_siginfo(const struct cap_thread *t, siginfo_t *si);

/* ---- stepper.c ---- */

/* Makes t->cur the instruction at @ip. */
void cap_fetch_insn(struct cap_thread *t, uint64_t ip);

/* A signal stop (@stopsig) of @t after a single-step from @prev. */
int cap_step_stop(struct cap_stepper *s, struct cap_thread *t,
		  uint64_t prev, int stopsig);

/* Reports the instruction at @ip as retired, continuing at @next. */
int cap_report_insn(struct cap_stepper *s, struct cap_thread *t,
		    uint64_t ip, uint64_t next);

/* Writes t->regs into thread @t. */
int cap_set_regs(const struct cap_thread *t);

/* Reports the instruction at @ip (bytes @code, class @insn) as retired,
 * continuing at @next. */
int cap_report_code(struct cap_stepper *s, struct cap_thread *t,
		    uint64_t ip, uint64_t next, const uint8_t *code,
		    const struct cap_insn *insn);

/* The same, for the instruction that left @t in the state t->regs holds
 * (the last one a step ran, a branch emulated): the event says so
 * (regs_after) when t->regs is that state, before @next. */
int cap_report_settled(struct cap_stepper *s, struct cap_thread *t,
		       uint64_t ip, uint64_t next, const uint8_t *code,
		       const struct cap_insn *insn);

/* A signal-delivery stop of @t for @si, before the instruction at t->ip
 * ran. */
int cap_signal_stop(struct cap_stepper *s, struct cap_thread *t,
		    const siginfo_t *si);

/* Reads up to @size bytes at @addr through task @tid as the program
 * would see them (without our int3s). */
ssize_t cap_read_task(const struct cap_stepper *s, pid_t tid, uint64_t addr,
		      void *buf, size_t size);

/* True if the instruction t->cur, about to run, is an execve. */
bool cap_about_to_exec(const struct cap_thread *t);

/* ---- signals.c ---- */

enum cap_disposition { CAP_DISP_FATAL, CAP_DISP_HANDLER, CAP_DISP_OTHER };

/* What delivering @si to thread @tid will do to the program. */
int cap_disposition(pid_t tid, const siginfo_t *si,
		    enum cap_disposition *out);

/* The fault address @si carries, or 0 for a signal that has none. */
uint64_t cap_fault_addr(const siginfo_t *si);

/* True if signal @sig is pending for thread @tid itself. */
bool cap_sig_pending(pid_t tid, int sig);

/* True if signal @sig is pending for process @pid as a whole (kill()). */
bool cap_sig_shared_pending(pid_t pid, int sig);

/* True if thread @tid blocks signal @sig. */
bool cap_sig_blocked(pid_t tid, int sig);

/* True if @sig stops the process by default (a group-stop signal). */
bool cap_stop_signal(int sig);

/* ---- runto.c ---- */

/* Replaces the byte at @addr in the memory of task @tid by @byte,
 * returning the old byte in @old. */
int cap_poke_byte(pid_t tid, uint64_t addr, uint8_t byte, uint8_t *old);

/* A signal stop of @t while running to the start address. */
int cap_run_stop(struct cap_stepper *s, struct cap_thread *t);

/* Removes the start breakpoint, if planted, from the memory task @tid
 * sees (a forked child's copy, or the process's own). */
void cap_bp_unplant(const struct cap_stepper *s, pid_t tid);

/* ---- block.c ---- */

/* Sets up block stepping if s->block_mode. */
int cap_blk_init(struct cap_stepper *s);

/* Frees the block cache and int3 table (after cap_blk_finish). */
void cap_blk_free(struct cap_stepper *s);

/* An execve replaced the image: its blocks and int3s are gone. */
void cap_blk_exec(struct cap_stepper *s);

/* True if our int3 is at @addr. */
bool cap_blk_planted(const struct cap_stepper *s, uint64_t addr);

/* After @t's system call (t->regs): if it unmapped or replaced memory,
 * the blocks decoded there are forgotten, and so are the int3s that
 * went with the code. */
int cap_blk_remapped(struct cap_stepper *s, const struct cap_thread *t);

/* Puts the original bytes back into @buf, @n bytes read at @addr. */
void cap_blk_mask(const struct cap_stepper *s, uint64_t addr, void *buf,
		  size_t n);

/* Writes the original bytes over every int3 in the memory task @tid
 * sees (a forked child's copy). */
void cap_blk_unplant_in(const struct cap_stepper *s, pid_t tid);

/* Takes every int3 out of the program for good (the run is over). */
void cap_blk_finish(struct cap_stepper *s);

/* Decides how stopped thread @t goes on: t->in_block set to run a block
 * natively, else single-step; branches on our int3s are emulated on the
 * spot.  1 if @t is to stay stopped for now. */
int cap_blk_prepare(struct cap_stepper *s, struct cap_thread *t);

/* A signal stop (@stopsig) of @t while in a block. */
int cap_blk_stop(struct cap_stepper *s, struct cap_thread *t, int stopsig);

/* A PTRACE_EVENT_STOP of @t while in a block. */
int cap_blk_event_stop(struct cap_stepper *s, struct cap_thread *t);

/* @t, in a block, stopped (t->regs read) before the block's end: the
 * instructions before t->regs.rip are reported, the block left. */
int cap_blk_cut(struct cap_stepper *s, struct cap_thread *t);

/* A child shares our memory (@vfork: until PTRACE_EVENT_VFORK_DONE;
 * else for good): no block starts any more. */
void cap_blk_share(struct cap_stepper *s, bool vfork);

/* Child @child, sharing our memory, is at its first stop: it is let go
 * by cap_blk_sync() once the int3s are out.  False if block stepping is
 * off (let it go now). */
bool cap_blk_hold_child(struct cap_stepper *s, pid_t child);

/* PTRACE_EVENT_VFORK_DONE: a vfork child left our memory. */
void cap_blk_vfork_done(struct cap_stepper *s);

/* Once no thread is in a block, takes the int3s out for the children
 * held and lets them go. */
void cap_blk_sync(struct cap_stepper *s);

/* ---- native.c ---- */

/* A signal stop of @t while running at native speed. */
int cap_native_stop(struct cap_stepper *s, struct cap_thread *t);

#endif
