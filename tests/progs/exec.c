/* Replaces itself with another program: `exec PROG ARGS` execs at once;
 * `exec --from-thread PROG ARGS` does it from a second thread while the
 * main thread waits in pthread_join (the kernel ends the waiting thread
 * and the execing one takes over the process's id).  A failing execve
 * comes first, to show the program going on after it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char **target;

static void *exec_thread(void *arg)
{
	(void) arg;
	execv(target[0], target);
	perror("execv");
	return NULL;
}

int main(int argc, char **argv)
{
	char *none[] = { "/nonexistent/ptrr-test", NULL };
	pthread_t t;

	if (argc < 2)
		return 2;
	execv(none[0], none);	/* fails: ENOENT */
	if (strcmp(argv[1], "--from-thread") != 0) {
		target = argv + 1;
		exec_thread(NULL);
		return 1;
	}
	target = argv + 2;
	pthread_create(&t, NULL, exec_thread, NULL);
	pthread_join(t, NULL);
	return 1;
}
