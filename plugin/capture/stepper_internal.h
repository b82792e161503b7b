/* plugin/capture — what the files of the stepper share (stepper.h is the
 * public side):
 *   stepper.c  one thread's single-step: what a stop after it means;
 *   signals.c  what delivering a signal will do to the program;
 *   threads.c  the thread table and the events of a thread's life
 *              (clone, fork, exit, death, execve);
 *   loop.c     waiting for stops, resuming, stopping every thread;
 *   launch.c   launching, attaching, letting go;
 *   runto.c    running at native speed to the start address.
 */
#ifndef PTRR_CAP_STEPPER_INTERNAL_H
#define PTRR_CAP_STEPPER_INTERNAL_H

#include "capture/stepper.h"

#include <stdbool.h>

/* The ptrace options of every task: threads are followed, children are
 * caught at birth to be detached, exec and exit are reported. */
#define CAP_PTRACE_OPTS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | \
			 PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | \
			 PTRACE_O_TRACEEXIT)

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

/* Gets the siginfo of @t's stop; false for a group-stop. */
bool cap_get_siginfo(const struct cap_thread *t, siginfo_t *si);

/* ---- stepper.c ---- */

/* Makes t->cur the instruction at @ip. */
void cap_fetch_insn(struct cap_thread *t, uint64_t ip);

/* A signal stop (@stopsig) of @t after a single-step from @prev. */
int cap_step_stop(struct cap_stepper *s, struct cap_thread *t,
		  uint64_t prev, int stopsig);

/* Reports the instruction at @ip as retired, continuing at @next. */
int cap_report_insn(struct cap_stepper *s, struct cap_thread *t,
		    uint64_t ip, uint64_t next);

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

/* True if @sig stops the process by default (a group-stop signal). */
bool cap_stop_signal(int sig);

/* ---- runto.c ---- */

/* A signal stop of @t while running to the start address. */
int cap_run_stop(struct cap_stepper *s, struct cap_thread *t);

/* Removes the start breakpoint, if planted, from the memory task @tid
 * sees (a forked child's copy, or the process's own). */
void cap_bp_unplant(const struct cap_stepper *s, pid_t tid);

#endif
