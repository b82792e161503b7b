/* The thread table and the events of a thread's life: its first stop,
 * clone, fork and vfork (children are detached), exit, death, execve.
 * See stepper_internal.h.
 *
 * How Linux reports them to a PTRACE_SEIZE tracer (man 2 ptrace):
 *  - a new thread or child starts in a PTRACE_EVENT_STOP (SIGTRAP),
 *    which may be reported before or after its parent's PTRACE_EVENT_
 *    CLONE/FORK/VFORK stop, whose event message is the new task's id;
 *  - a thread leaving stops at PTRACE_EVENT_EXIT (the event message is
 *    its wait status; its memory is still there), then reports its death;
 *    the leader's death is reported after every other thread's;
 *  - an execve in any thread kills the others (PTRACE_EVENT_EXIT with
 *    status 0, then death, except the leader's, which is never reported),
 *    and the execing thread takes the leader's task id: its
 *    PTRACE_EVENT_EXEC stop comes with the pid, and the event message is
 *    the id it had before.
 */
#include <config.h>

#include "capture/stepper_internal.h"
#include "error.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* ------------------------------------------------------------------ */
/* The table                                                          */
/* ------------------------------------------------------------------ */

struct cap_thread *cap_thr_find(const struct cap_stepper *s, pid_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->tid == tid)
			return s->threads[i];
	return NULL;
}

struct cap_thread *cap_thr_add(struct cap_stepper *s, pid_t tid,
			       enum cap_thread_state state)
{
	struct cap_thread *t;

	if (s->nthreads == s->threads_alloc) {
		size_t n = s->threads_alloc ? 2 * s->threads_alloc : 8;
		struct cap_thread **v = realloc(s->threads, n * sizeof(*v));

		if (!v)
			goto nomem;
		s->threads = v;
		s->threads_alloc = n;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto nomem;
	t->tid = tid;
	t->state = state;
	t->owner = s;
	s->threads[s->nthreads++] = t;
	s->threads_seen++;
	return t;
nomem:
	ptrr_fail(PTRR_ERR_NOMEM, "out of memory for thread %d", (int) tid);
	return NULL;
}

/* Drops @t from the table. */
static void thr_remove(struct cap_stepper *s, struct cap_thread *t)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i] == t) {
			s->threads[i] = s->threads[--s->nthreads];
			break;
		}
	if (s->fault_thread == t)
		s->fault_thread = NULL;
	free(t);
}

size_t cap_thr_active(const struct cap_stepper *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nthreads; i++)
		n += !s->threads[i]->end.kind;
	return n;
}

void cap_stepper_free(struct cap_stepper *s)
{
	for (size_t i = 0; i < s->nthreads; i++)
		free(s->threads[i]);
	free(s->threads);
	free(s->newborn);
	free(s->detach);
	cap_blk_free(s);
	s->threads = NULL;
	s->newborn = NULL;
	s->detach = NULL;
	s->nthreads = s->nnewborn = s->ndetach = 0;
}

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

int cap_report(struct cap_stepper *s, struct cap_event *ev)
{
	int rc;

	if (!s->stepping || !s->fn)
		return 0;
	rc = s->fn(s->arg, ev);
	if (rc > 0) {
		if (!s->end.kind)
			s->end.kind = CAP_END_STOPPED;
		return 0;
	}
	return rc;
}

int cap_thr_start(struct cap_stepper *s, struct cap_thread *t)
{
	struct cap_event ev = { .kind = CAP_EV_THREAD, .thread = t,
				.ip = t->ip };

	if (t->started || !s->stepping)
		return 0;
	t->started = true;
	return cap_report(s, &ev);
}

/* The trace of @t is over, as @end says (unless it ended before); the
 * last thread's end is the process's, unless an execve replaces it
 * (@by_exec).  A thread that ended before (its exit stop) in a run that
 * stopped for something else, such as the single step of its
 * exit_group, ends the process now that it dies, with that end. */
static int thr_end(struct cap_stepper *s, struct cap_thread *t,
		   struct cap_end end, bool by_exec)
{
	struct cap_event ev = { .kind = CAP_EV_END, .thread = t,
				.ip = t->ip };

	if (t->end.kind) {
		if (!by_exec && t->end.kind != CAP_END_FAULT &&
		    !cap_thr_active(s) && !s->end.kind)
			s->end = t->end;
		return 0;
	}
	t->end = end;
	if (!by_exec && !cap_thr_active(s) && !s->end.kind)
		s->end = end;
	return t->started ? cap_report(s, &ev) : 0;
}

/* How a task ended, from its wait status. */
static struct cap_end end_of_status(int status)
{
	struct cap_end end = { CAP_END_EXITED, 0, 0 };

	if (WIFSIGNALED(status)) {
		end.kind = CAP_END_SIGNALED;
		end.code = WTERMSIG(status);
	} else {
		end.code = WEXITSTATUS(status);
	}
	return end;
}

/* ------------------------------------------------------------------ */
/* Children: detached at their first stop                             */
/* ------------------------------------------------------------------ */

/* Appends @v to the array *@arr of *@n (*@alloc allocated) @size-byte
 * elements. */
static int push(void *arr, size_t *n, size_t *alloc, size_t size,
		const void *v)
{
	char **a = arr;

	if (*n == *alloc) {
		size_t want = *alloc ? 2 * *alloc : 4;
		char *grown = realloc(*a, want * size);

		if (!grown)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		*a = grown;
		*alloc = want;
	}
	memcpy(*a + (*n)++ * size, v, size);
	return 0;
}

/* Lets child process @tid go untraced, without our breakpoints in its
 * copy of memory (@own_mm: it has one; a vfork child shares ours, and is
 * let go once block.c has taken its int3s out). */
static void detach_child(struct cap_stepper *s, pid_t tid, bool own_mm)
{
	if (own_mm) {
		cap_bp_unplant(s, tid);
		cap_blk_unplant_in(s, tid);
	} else if (cap_blk_hold_child(s, tid)) {
		return;
	}
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
}

/* Takes task @tid out of the newborn stops; its status in @status. */
static bool take_newborn(struct cap_stepper *s, pid_t tid, int *status)
{
	for (size_t i = 0; i < s->nnewborn; i++)
		if (s->newborn[i].tid == tid) {
			*status = s->newborn[i].status;
			s->newborn[i] = s->newborn[--s->nnewborn];
			return true;
		}
	return false;
}

/* The child processes to detach are kept with the sign of @own_mm:
 * negative ids share our memory (vfork). */
int cap_newborn_stop(struct cap_stepper *s, pid_t tid, int status)
{
	struct cap_newborn nb = { tid, status };

	for (size_t i = 0; i < s->ndetach; i++)
		if (s->detach[i] == tid || s->detach[i] == -tid) {
			detach_child(s, tid, s->detach[i] > 0);
			s->detach[i] = s->detach[--s->ndetach];
			return 0;
		}
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return 0;	/* not ours, or gone */
	return push(&s->newborn, &s->nnewborn, &s->newborn_alloc,
		    sizeof(nb), &nb);
}

/* The thread group of task @tid, from /proc; 0 if unknown. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	FILE *f;
	int tgid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int) tid);
	f = fopen(path, "r");
	while (f && !tgid && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) != 1)
			tgid = 0;
	if (f)
		fclose(f);
	return tgid;
}

/* A new process @child (fork, vfork (@vfork), clone without
 * CLONE_THREAD): it is detached at its first stop, and reported. */
static int new_process(struct cap_stepper *s, struct cap_thread *parent,
		       pid_t child, bool own_mm, bool vfork)
{
	struct cap_event ev = { .kind = CAP_EV_FORK, .thread = parent,
				.ip = parent->ip, .child = child };
	pid_t signed_id = own_mm ? child : -child;
	int status;

	if (!own_mm)
		cap_blk_share(s, vfork);
	if (take_newborn(s, child, &status))
		detach_child(s, child, own_mm);
	else if (push(&s->detach, &s->ndetach, &s->detach_alloc,
		      sizeof(signed_id), &signed_id))
		return PTRR_ERR_NOMEM;
	return cap_report(s, &ev);
}

/* True if the process @parent's clone or fork event created shares its
 * memory: clone (or clone3) with CLONE_VM, which without CLONE_VFORK and
 * with SIGCHLD is reported as a fork. */
static bool shares_memory(const struct cap_stepper *s,
			  const struct cap_thread *parent)
{
	struct user_regs_struct regs;
	uint64_t flags = 0;

	if (ptrace(PTRACE_GETREGS, parent->tid, NULL, &regs) < 0)
		return false;
	if (regs.orig_rax == SYS_clone)
		flags = regs.rdi;
	else if (regs.orig_rax == SYS_clone3 &&
		 cap_read_task(s, parent->tid, regs.rdi, &flags,
			       sizeof(flags)) != sizeof(flags))
		flags = 0;
	return flags & CLONE_VM;
}

/* A stop of @parent in clone, fork or vfork (@event): the new task is a
 * thread to trace or a process to let go.  The parent's system call has
 * not returned yet: nothing ran. */
static int spawn_event(struct cap_stepper *s, struct cap_thread *parent,
		       int event)
{
	unsigned long msg = 0;
	struct cap_thread *t;
	pid_t child;
	int status;

	if (ptrace(PTRACE_GETEVENTMSG, parent->tid, NULL, &msg) < 0)
		return 0;
	child = (pid_t) msg;
	if (event != PTRACE_EVENT_CLONE || tgid_of(child) != s->pid)
		return new_process(s, parent, child,
				   event != PTRACE_EVENT_VFORK &&
				   !shares_memory(s, parent),
				   event == PTRACE_EVENT_VFORK);
	t = cap_thr_add(s, child, CAP_TS_NEW);
	if (!t)
		return PTRR_ERR_NOMEM;
	if (take_newborn(s, child, &status))
		return cap_thr_event(s, t, status);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Leaving: exit, death                                               */
/* ------------------------------------------------------------------ */

/* True if @t was stepping an exit or exit_group system call (its
 * registers read at the exit stop). */
static bool exiting_by_syscall(struct cap_thread *t)
{
	cap_fetch_insn(t, t->ip);
	return t->cur.insn.iclass == CAP_IC_KERNEL &&
	       (t->regs.orig_rax == SYS_exit ||
		t->regs.orig_rax == SYS_exit_group);
}

/* The PTRACE_EVENT_EXIT stop of @t: the exit system call retired if it
 * was the instruction being stepped.  t->ip stays the instruction it
 * was about to execute: if a kill cut a step short, that did not run
 * as far as the trace knows.  The last thread to leave stays stopped
 * here, with its memory, until cap_stepper_finish(). */
static int exit_event(struct cap_stepper *s, struct cap_thread *t)
{
	unsigned long msg = 0;
	struct cap_end end;
	int err = cap_get_regs(t, true);

	if (!err)
		err = cap_blk_cut(s, t);
	if (err)
		return err;
	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	end = end_of_status((int) msg);
	if (s->execve_tid && s->execve_tid != t->tid)
		end = (struct cap_end){ CAP_END_SIGNALED, SIGKILL, 0 };
	else if (!t->end.kind && t->started && exiting_by_syscall(t))
		err = cap_report_insn(s, t, t->ip, t->ip + t->cur.insn.len);
	if (!err)
		err = thr_end(s, t, end, false);
	if (err || !cap_thr_active(s))
		return err;
	if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) == 0)
		t->state = CAP_TS_EXITING;
	return 0;
}

/* The death of @t (reaped). */
static int death(struct cap_stepper *s, struct cap_thread *t, int status)
{
	int err = thr_end(s, t, end_of_status(status), false);

	if (t->tid == s->pid)
		s->live = false;	/* the leader goes last */
	thr_remove(s, t);
	return err;
}

/* ------------------------------------------------------------------ */
/* execve                                                             */
/* ------------------------------------------------------------------ */

/* The old image is over: the execing thread @old retired its execve,
 * every other thread was killed by it. */
static int end_old_image(struct cap_stepper *s, struct cap_thread *old)
{
	struct cap_end killed = { CAP_END_SIGNALED, SIGKILL, 0 };
	struct cap_end exec = { CAP_END_EXEC, 0, 0 };
	int err = 0;

	if (old && old->started && !old->end.kind) {
		cap_fetch_insn(old, old->ip);
		err = cap_report_insn(s, old, old->ip,
				      old->ip + old->cur.insn.len);
	}
	if (!err && old)
		err = thr_end(s, old, exec, true);
	for (size_t i = 0; !err && i < s->nthreads; i++)
		err = thr_end(s, s->threads[i], killed, true);
	return err;
}

/* The new image starts with thread @t at its first instruction. */
static int report_exec(struct cap_stepper *s, struct cap_thread *t)
{
	struct cap_event ev = { .kind = CAP_EV_EXEC, .thread = t,
				.ip = t->ip };

	t->started = true;
	return cap_report(s, &ev);
}

/* The PTRACE_EVENT_EXEC stop, reported by the leader's task id @t (the
 * old leader's entry, or the execing thread's if it was the leader).
 * Both old entries go; the others are reaped as they die.  The new
 * image continues in a fresh thread entry.  Running to the start
 * address, an execve ends the run. */
static int exec_event(struct cap_stepper *s, struct cap_thread *t)
{
	unsigned long former = 0;
	struct cap_thread *old, *img;
	int err;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &former);
	old = cap_thr_find(s, (pid_t) former);
	err = end_old_image(s, old);
	cap_blk_exec(s);
	if (old && old != t)
		thr_remove(s, old);
	thr_remove(s, t);
	s->execve_tid = 0;
	if (!s->stepping && !s->end.kind)
		s->end.kind = CAP_END_EXEC;
	img = err ? NULL : cap_thr_add(s, s->pid, CAP_TS_STOPPED);
	if (!img)
		return err ? err : PTRR_ERR_NOMEM;
	err = cap_get_regs(img, false);
	if (err || !s->stepping)
		return err;
	return report_exec(s, img);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                           */
/* ------------------------------------------------------------------ */

/* The first stop of @t (a PTRACE_EVENT_STOP for a new thread; for an
 * attached one whatever came first, a signal being kept for it). */
static int first_stop(struct cap_stepper *s, struct cap_thread *t,
		      int status)
{
	int err = cap_interrupt_regs(t, false);

	if (err)
		return err;
	if (status >> 16 == 0 && WSTOPSIG(status) != SIGTRAP)
		t->sig = WSTOPSIG(status);
	return cap_thr_start(s, t);
}

int cap_thr_event(struct cap_stepper *s, struct cap_thread *t, int status)
{
	bool first = t->state == CAP_TS_NEW;

	if (WIFEXITED(status) || WIFSIGNALED(status))
		return death(s, t, status);
	t->state = CAP_TS_STOPPED;
	if (first)
		return first_stop(s, t, status);
	switch (status >> 16) {
	case PTRACE_EVENT_EXIT:
		return exit_event(s, t);
	case PTRACE_EVENT_EXEC:
		return exec_event(s, t);
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		return spawn_event(s, t, status >> 16);
	case PTRACE_EVENT_VFORK_DONE:
		cap_blk_vfork_done(s);
		return 0;
	default:
		return 0;	/* nothing ran */
	}
}
