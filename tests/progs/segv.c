/* A crash with something to find in the memory snapshot: a global and a
 * stack variable hold known values, a second thread waits in the kernel,
 * and the main thread writes through a bad pointer. */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

volatile uint64_t ptrr_marker;	/* 0x5054525221474553 at the crash */

static int pipefd[2];
static volatile int started;

static void *sleeper(void *arg)
{
	char c;

	(void) arg;
	started = 1;
	return (void *) read(pipefd[0], &c, 1);	/* never returns */
}

static void __attribute__((noinline)) crash(volatile uint64_t *p)
{
	*p = ptrr_marker;		/* SIGSEGV */
}

int main(void)
{
	volatile uint64_t on_stack = 0x4b43415453525450;	/* "PTRSTACK" */
	pthread_t t;

	if (pipe(pipefd) < 0)
		return 2;
	pthread_create(&t, NULL, sleeper, NULL);
	/* The crash comes after the sleeper has begun, whatever the
	 * scheduling (tests/record-block.sh compares the functions each
	 * thread ran in two recordings). */
	while (!started)
		;
	ptrr_marker = 0x5054525221474553;	/* "SEG!RRTP" */
	crash((volatile uint64_t *) (uintptr_t) (0x10 + (on_stack & 0)));
	return 1;
}
