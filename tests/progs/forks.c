/* Children that run the parent's code untraced, for block stepping's
 * int3s (tests/record-block.sh): the parent runs work() (so every branch
 * in it gets an int3), then a forked child runs it, then a vfork child
 * runs it in the parent's memory while a second thread runs it too, then
 * a clone(CLONE_VM) child without CLONE_THREAD.  Each child must exit 0,
 * not die of a SIGTRAP; the program exits 0 only if all of them did. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;
static volatile int stop;

/* Branches of every kind: loops, calls, returns, a table jump. */
static long __attribute__((noinline)) step(long v, int i)
{
	switch (i & 3) {
	case 0: return v * 3 + 1;
	case 1: return v ^ (v >> 2);
	case 2: return v + i;
	default: return v - 7;
	}
}

static long __attribute__((noinline)) work(int n)
{
	long v = 1;

	for (int i = 0; i < n; i++)
		v = step(v, i);
	return v;
}

/* The child's side: 0 if work() ran right. */
static int child_check(long want)
{
	return work(200) == want ? 0 : 1;
}

/* Waits for child @pid; true if it exited 0. */
static int exited_ok(pid_t pid, const char *what)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, __WALL) != pid) {
		perror(what);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	fprintf(stderr, "%s child: %s %d\n", what,
		WIFSIGNALED(status) ? "killed by signal" : "exit status",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return 0;
}

static void *spinner(void *arg)
{
	(void) arg;
	while (!stop)
		sink += work(50);
	return NULL;
}

static long want;

static int clone_child(void *arg)
{
	(void) arg;
	return child_check(want);
}

int main(void)
{
	static char stack[64 * 1024];
	pthread_t th;
	pid_t pid;
	int ok = 1;

	want = work(200);
	pid = fork();
	if (pid == 0)
		_exit(child_check(want));
	ok &= exited_ok(pid, "fork");

	pthread_create(&th, NULL, spinner, NULL);
	for (int i = 0; i < 20000 && !sink; i++)
		usleep(100);
	pid = vfork();
	if (pid == 0)
		_exit(child_check(want));
	ok &= exited_ok(pid, "vfork");
	sink += work(100);

	pid = clone(clone_child, stack + sizeof(stack), CLONE_VM | SIGCHLD,
		    NULL);
	ok &= exited_ok(pid, "clone");
	stop = 1;
	pthread_join(th, NULL);
	return ok ? 0 : 1;
}
