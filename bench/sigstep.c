/* bench/sigstep — counts the instructions a program runs natively
 * between two signals it sends itself, by single-stepping only there:
 * the native side of an instruction count (no PMU on these machines,
 * and QEMU's or valgrind's count is of their own CPU model).
 *
 * PROG runs at native speed under ptrace until it gets SIGUSR1, is
 * single-stepped from there until it gets SIGUSR2, and runs on to its
 * exit; each window prints "sigstep: STEPS steps".  A REP string
 * instruction counts once per iteration (as the CPU's single-step traps
 * it).  For python:
 *
 *   sigstep /usr/bin/python3 -c 'import os, signal; r = range(1000);
 *     os.kill(os.getpid(), signal.SIGUSR1); sum(r);
 *     os.kill(os.getpid(), signal.SIGUSR2)'
 *
 * and the same with range(2000): the difference over 1000 is what one
 * iteration of sum() costs (docs/performance.md, "Recording under QEMU").
 *
 * usage: sigstep PROG [ARGS]
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long steps = 0;
	bool stepping = false;
	int status, sig = 0;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: sigstep PROG [ARGS]\n");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "sigstep: cannot run %s: %s\n", argv[1],
			strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
		fprintf(stderr, "sigstep: cannot start %s\n", argv[1]);
		return 2;
	}
	for (;;) {
		ptrace(stepping ? PTRACE_SINGLESTEP : PTRACE_CONT, pid, NULL,
		       (void *) (long) sig);
		sig = 0;
		if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
			break;
		switch (WSTOPSIG(status)) {
		case SIGTRAP:
			if (stepping) {
				steps++;
				break;
			}
			sig = SIGTRAP;
			break;
		case SIGUSR1:
			stepping = true;
			steps = 0;
			break;
		case SIGUSR2:
			if (stepping)
				printf("sigstep: %lu steps\n", steps);
			stepping = false;
			break;
		default:
			sig = WSTOPSIG(status);
			break;
		}
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
