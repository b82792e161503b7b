/* Signals as a program sees them: a handler that does work, run for
 * raise() and kill(); an ignored signal; a blocked one delivered when it
 * is unblocked; a timer signal ending a sigsuspend(); and a SIGSTOP the
 * program sends itself, continued by a child it forks (which runs
 * untraced). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long work;
static volatile sig_atomic_t alarms;

static long __attribute__((noinline)) busy(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += i ^ (i >> 1);
	return s;
}

static void on_usr(int sig)
{
	work += busy(sig * 3);
}

static void on_alarm(int sig)
{
	(void) sig;
	alarms++;
}

/* Waits until process @pid is stopped (state T, or t under a tracer),
 * for at most ten seconds. */
static void await_stopped(pid_t pid)
{
	struct timespec ts = { 0, 1000000 };
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && (p[2] == 'T' || p[2] == 't'))
			return;
		nanosleep(&ts, NULL);
	}
}

/* Stops itself; a child continues it a moment after it has stopped
 * (a SIGCONT sent before the stop, by a child that ran ahead of a
 * parent slowed down by single-stepping, would leave it stopped). */
static void stop_and_continue(void)
{
	pid_t parent = getpid(), child = fork();

	if (child == 0) {
		struct timespec ts = { 0, 20000000 };

		await_stopped(parent);
		nanosleep(&ts, NULL);
		kill(parent, SIGCONT);
		_exit(0);
	}
	raise(SIGSTOP);
	waitpid(child, NULL, 0);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr };
	struct itimerval it = { { 0, 0 }, { 0, 5000 } };
	sigset_t set, old;

	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR1);
	kill(getpid(), SIGUSR2);
	signal(SIGHUP, SIG_IGN);
	raise(SIGHUP);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR1);
	work += busy(5);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGALRM, on_alarm);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, &old);
	setitimer(ITIMER_REAL, &it, NULL);
	while (!alarms)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	stop_and_continue();
	return work == 0;
}
