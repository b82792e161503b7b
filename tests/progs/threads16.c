/* Sixteen threads computing at once: each waits at a barrier until all
 * are there, then runs its own number of rounds of a branchy loop (thread
 * i: 200 * (i + 1)), so that each thread's instructions in this program
 * are its own and the same in every run. */
#include <pthread.h>
#include <stdio.h>

#define NTHREADS 16

static pthread_barrier_t start;

static unsigned long __attribute__((noinline)) step(unsigned long v)
{
	return (v & 1) ? v * 3 + 1 : v >> 1;
}

static void *work(void *arg)
{
	long n = (long) arg;
	unsigned long v = (unsigned long) n + 7;

	pthread_barrier_wait(&start);
	for (long i = 0; i < 200 * (n + 1); i++)
		v = step(v) + (i % 3 == 0);
	return (void *) v;
}

int main(void)
{
	pthread_t t[NTHREADS];
	unsigned long sum = 0;

	pthread_barrier_init(&start, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, work, (void *) i);
	for (int i = 0; i < NTHREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		sum += (unsigned long) r;
	}
	printf("%lu\n", sum);
	return 0;
}
