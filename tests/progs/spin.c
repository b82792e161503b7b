/* Runs until it is killed (or for N rounds, given N): two threads at
 * different work, one computing, one sleeping in short system calls,
 * while the main thread waits in pthread_join.  For attaching, killing
 * and interrupting a recording, and for the stepping rate. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static long rounds = -1;
static volatile long sink;

static long __attribute__((noinline)) mix(long v)
{
	for (int i = 0; i < 16; i++)
		v = v * 31 + (v >> 3) + i;
	return v;
}

static void *computer(void *arg)
{
	(void) arg;
	for (long i = 0; rounds < 0 || i < rounds; i++)
		sink += mix(i);
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 1000000 };

	(void) arg;
	for (long i = 0; rounds < 0 || i < rounds / 100; i++)
		nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		rounds = atol(argv[1]);
	pthread_create(&a, NULL, computer, NULL);
	pthread_create(&b, NULL, sleeper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
