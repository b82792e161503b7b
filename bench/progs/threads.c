/* bench/progs/threads N ROUNDS: N threads (1 if not given) each compute
 * ROUNDS rounds of a small loop (a mix of arithmetic, a call and
 * conditional branches), for the recording rate with threads
 * (bench/run-qemu.sh). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long rounds = 1000000;
static volatile long sink;

static long __attribute__((noinline)) mix(long v)
{
	for (int i = 0; i < 8; i++)
		v = (v & 1) ? v * 3 + 1 : v >> 1;
	return v;
}

static void *work(void *arg)
{
	long s = (long) arg;

	for (long i = 0; i < rounds; i++)
		s += mix(i + s);
	sink += s;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[256];

	if (argc > 2)
		rounds = atol(argv[2]);
	if (n < 1 || n > 256) {
		fprintf(stderr, "usage: threads [N (1-256)] [ROUNDS]\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, work, (void *) (long) i))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
