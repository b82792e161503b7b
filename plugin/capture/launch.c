/* Getting hold of a process and letting it go: launching a program,
 * attaching to a running one, and the end of the recording (the program
 * finishes as it would have, or is killed, or, attached, is detached and
 * keeps running).  See stepper.h. */
#include <config.h>

#include "capture/stepper_internal.h"
#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Launching                                                          */
/* ------------------------------------------------------------------ */

/* The child's side of cap_stepper_launch(): waits until it is traced
 * (a byte on @syncfd), then execs; on failure reports errno through
 * @errfd. */
static void __attribute__((noreturn)) child_exec(char *const argv[],
						 bool aslr, int syncfd,
						 int errfd)
{
	ssize_t n;
	char c;
	int err;

	do
		n = read(syncfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);	/* the tracer is gone */
	if (aslr || personality((unsigned long) personality(0xffffffff) |
				ADDR_NO_RANDOMIZE) >= 0)
		execvp(argv[0], argv);
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

/* Reads the errno the child sent if its exec failed; 0 if it worked. */
static int exec_error(int fd)
{
	int err = 0;
	ssize_t n;

	do
		n = read(fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	return n == sizeof(err) ? err : 0;
}

/* Waits for traced child @pid to stop after its exec (true) or to die
 * (false); signals it gets before are passed on. */
static bool await_exec(pid_t pid)
{
	int status, sig;

	while (waitpid(pid, &status, __WALL) == pid || errno == EINTR) {
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return false;
		if (status >> 16 == PTRACE_EVENT_EXEC)
			return true;
		sig = status >> 16 ? 0 : WSTOPSIG(status);
		ptrace(PTRACE_CONT, pid, NULL, (void *) (long) sig);
	}
	return false;
}

/* Forks the child that will exec @argv; *@sync and *@errfd are the
 * parent's ends of the pipes to it. */
static int fork_child(struct cap_stepper *s, char *const argv[], bool aslr,
		      int *sync, int *errfd)
{
	int sp[2], ep[2];

	if (pipe2(sp, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot create a pipe: %s",
				 strerror(errno));
	s->pid = fork();
	if (s->pid < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot fork: %s",
				 strerror(errno));
	if (s->pid == 0)
		child_exec(argv, aslr, sp[0], ep[1]);
	close(sp[0]);
	close(ep[1]);
	*sync = sp[1];
	*errfd = ep[0];
	return 0;
}

int cap_stepper_launch(struct cap_stepper *s, char *const argv[], bool aslr)
{
	long opts = CAP_PTRACE_OPTS | PTRACE_O_EXITKILL;
	int sync = -1, errfd = -1, err;
	struct cap_thread *t;

	memset(s, 0, sizeof(*s));
	err = fork_child(s, argv, aslr, &sync, &errfd);
	if (err)
		return err;
	s->live = true;
	if (ptrace(PTRACE_SEIZE, s->pid, NULL, (void *) opts) < 0) {
		err = errno;
		kill(s->pid, SIGKILL);
		return ptrr_fail(PTRR_ERR_IO, "cannot trace the program: "
				 "PTRACE_SEIZE: %s", strerror(err));
	}
	if (write(sync, "g", 1) != 1)
		return ptrr_fail(PTRR_ERR_IO, "cannot start the program: %s",
				 strerror(errno));
	close(sync);
	err = exec_error(errfd);
	close(errfd);
	if (!await_exec(s->pid) || err) {
		s->live = false;
		return ptrr_fail(PTRR_ERR_IO, "cannot run %s: %s", argv[0],
				 strerror(err ? err : ECHILD));
	}
	t = cap_thr_add(s, s->pid, CAP_TS_STOPPED);
	return t ? cap_get_regs(t, false) : PTRR_ERR_NOMEM;
}

/* ------------------------------------------------------------------ */
/* Attaching                                                          */
/* ------------------------------------------------------------------ */

/* Reads "Field:" of /proc/@pid/status as an integer; -1 if absent. */
static long status_field(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	f = fopen(path, "r");
	while (f && v < 0 && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':')
			v = strtol(line + flen + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* yama's ptrace_scope (0 when yama is absent). */
static int ptrace_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = 0;

	if (f && fscanf(f, "%d", &scope) != 1)
		scope = 0;
	if (f)
		fclose(f);
	return scope;
}

/* Why PTRACE_SEIZE of @pid failed with EPERM, and the fix. */
static int explain_eperm(pid_t pid)
{
	long tracer = status_field(pid, "TracerPid");
	long uid = status_field(pid, "Uid");
	int scope = ptrace_scope();

	if (tracer > 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot attach to process %d: it "
				 "is already traced by process %ld: detach "
				 "that debugger or tracer first", (int) pid,
				 tracer);
	if (status_field(pid, "Kthread") == 1)
		return ptrr_fail(PTRR_ERR_IO, "cannot attach to process %d: it "
				 "is a kernel thread; only user programs can "
				 "be recorded", (int) pid);
	if (scope > 0 && geteuid() != 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot attach to process %d: "
				 "Operation not permitted by "
				 "/proc/sys/kernel/yama/ptrace_scope = %d%s",
				 (int) pid, scope, scope == 1 ?
				 " (only a process's ancestors may trace it): "
				 "run ptrr as root, or 'echo 0 | sudo tee "
				 "/proc/sys/kernel/yama/ptrace_scope'" :
				 ": run ptrr as root");
	if (uid >= 0 && uid != (long) geteuid() && geteuid() != 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot attach to process %d: it "
				 "belongs to user %ld: run ptrr as that user "
				 "or as root", (int) pid, uid);
	return ptrr_fail(PTRR_ERR_IO, "cannot attach to process %d: "
			 "Operation not permitted: run ptrr as root (or "
			 "with CAP_SYS_PTRACE)", (int) pid);
}

/* Seizes thread @tid of the process and interrupts it.  A thread that
 * is gone, or that we trace already (a clone of a thread seized a
 * moment ago), is skipped. */
static int seize_thread(struct cap_stepper *s, pid_t tid)
{
	if (cap_thr_find(s, tid))
		return 0;
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *) CAP_PTRACE_OPTS) < 0) {
		if (errno == ESRCH ||
		    (tid != s->pid && status_field(tid, "TracerPid") ==
		     (long) getpid()))
			return 0;
		if (errno == EPERM)
			return explain_eperm(tid);
		return ptrr_fail(PTRR_ERR_IO, "cannot attach to thread %d of "
				 "process %d: %s", (int) tid, (int) s->pid,
				 strerror(errno));
	}
	s->live = true;
	if (!cap_thr_add(s, tid, CAP_TS_NEW))
		return PTRR_ERR_NOMEM;
	ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	return 0;
}

/* Seizes every thread listed in /proc/PID/task; *@added counts the new
 * ones. */
static int seize_listed(struct cap_stepper *s, size_t *added)
{
	char path[64];
	struct dirent *e;
	size_t before = s->nthreads;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int) s->pid);
	d = opendir(path);
	if (!d)
		return ptrr_fail(PTRR_ERR_IO, "cannot attach to process %d: "
				 "no such process", (int) s->pid);
	while (!err && (e = readdir(d)))
		if (e->d_name[0] != '.')
			err = seize_thread(s, (pid_t) atoi(e->d_name));
	closedir(d);
	*added = s->nthreads - before;
	return err;
}

/* The attached process @s runs 64-bit code (its code segment is the
 * kernel's 64-bit one, __USER_CS): 0, or an error saying it is not
 * (the caller lets it go). */
static int check_x86_64(const struct cap_stepper *s)
{
	struct user_regs_struct regs;
	pid_t tid = cap_stepper_mem_tid(s);

	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0 || regs.cs == 0x33)
		return 0;
	return ptrr_fail(PTRR_ERR_USAGE, "cannot attach to process %d: it "
			 "runs %s code, not x86-64: ptrr records x86-64 "
			 "programs only", (int) s->pid,
			 regs.cs == 0x23 ? "32-bit (i386)" : "other than 64-bit");
}

int cap_stepper_attach(struct cap_stepper *s, pid_t pid)
{
	size_t added = 1;
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->attached = true;
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return ptrr_fail(PTRR_ERR_IO, "cannot attach to process %d: "
				 "no such process", (int) pid);
	if (pid == getpid())
		return ptrr_fail(PTRR_ERR_USAGE, "cannot attach to process %d: "
				 "it is ptrr itself", (int) pid);
	while (!err && added)
		err = seize_listed(s, &added);
	if (err)
		return err;
	s->halting = true;
	err = cap_loop(s);
	s->halting = false;
	if (!err && !cap_stepper_mem_tid(s))
		err = ptrr_fail(PTRR_ERR_IO, "process %d ended while ptrr "
				"attached to it", (int) pid);
	return err ? err : check_x86_64(s);
}

/* ------------------------------------------------------------------ */
/* Letting go                                                         */
/* ------------------------------------------------------------------ */

/* Detaches every stopped thread with the signal it is to get; the
 * process runs on as if never traced. */
static int detach_all(struct cap_stepper *s)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct cap_thread *t = s->threads[i];

		if (t->state == CAP_TS_STOPPED)
			ptrace(PTRACE_DETACH, t->tid, NULL,
			       (void *) (long) t->sig);
	}
	s->live = false;
	return 0;
}

/* The tasks release_and_reap() waits for: the stepper's threads and
 * those that turn up as it reaps (a clone or fork at the kill). */
struct reap_set {
	pid_t *tids;
	size_t n, cap;
};

/* Adds @tid to @r unless it is there; false if out of memory. */
static bool reap_add(struct reap_set *r, pid_t tid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->tids[i] == tid)
			return true;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		pid_t *v = realloc(r->tids, cap * sizeof(*v));

		if (!v)
			return false;
		r->tids = v;
		r->cap = cap;
	}
	r->tids[r->n++] = tid;
	return true;
}

/* Removes @tid from @r (gone). */
static void reap_remove(struct reap_set *r, pid_t tid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->tids[i] == tid) {
			r->tids[i] = r->tids[--r->n];
			return;
		}
}

/* Resumes every stopped thread with its signal (a fault's is delivered
 * now), then reaps the process, passing on whatever signal stops it
 * still reports.  Waits for its tasks only: ptrr may have other children
 * (one a shell started before it exec'd ptrr), which may never end.
 * Returns the leader's wait status. */
static int release_and_reap(struct cap_stepper *s)
{
	struct reap_set r = { 0 };
	int status, leader = 0, sig;
	bool whole = true;
	pid_t tid;

	for (size_t i = 0; i < s->nthreads; i++) {
		whole = whole && reap_add(&r, s->threads[i]->tid);
		if (s->threads[i]->state == CAP_TS_STOPPED)
			ptrace(PTRACE_CONT, s->threads[i]->tid, NULL,
			       (void *) (long) s->threads[i]->sig);
	}
	whole = whole && reap_add(&r, s->pid);
	/* Out of memory, the set may be short: then every child is
	 * waited for, rather than one of the program's left behind. */
	while ((r.n || !whole) &&
	       ((tid = waitpid(-1, &status, __WALL)) > 0 || errno == EINTR)) {
		if (tid <= 0)
			continue;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == s->pid)
				leader = status;
			reap_remove(&r, tid);
			continue;
		}
		whole = whole && reap_add(&r, tid);
		sig = status >> 16 || WSTOPSIG(status) == SIGTRAP ? 0 :
		      WSTOPSIG(status);
		ptrace(PTRACE_CONT, tid, NULL, (void *) (long) sig);
	}
	free(r.tids);
	s->live = false;
	return leader;
}

int cap_stepper_finish(struct cap_stepper *s)
{
	if (!s->live)
		return 0;
	if (s->bp.set && cap_stepper_mem_tid(s))
		cap_bp_unplant(s, cap_stepper_mem_tid(s));
	cap_blk_finish(s);
	s->bp.set = false;
	if (s->attached)
		return detach_all(s);
	if (s->end.kind != CAP_END_EXITED && s->end.kind != CAP_END_SIGNALED &&
	    s->end.kind != CAP_END_FAULT)
		kill(s->pid, SIGKILL);
	return release_and_reap(s);
}
