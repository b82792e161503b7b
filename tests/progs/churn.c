/* Creates and joins N short threads (1,000 by default), eight alive at a
 * time: threads made and ended at a high rate while tracing (issue 6).
 * Each returns a sum of its own number; main prints the total, which the
 * caller can check. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 8

static long __attribute__((noinline)) work(long n)
{
	long s = 0;

	for (long i = 0; i < n % 5 + 3; i++)
		s += i * n;
	return s;
}

static void *worker(void *arg)
{
	return (void *) work((long) arg);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	pthread_t t[BATCH];
	long total = 0;

	for (int i = 0; i < n; i += BATCH) {
		int k = n - i < BATCH ? n - i : BATCH;
		void *r;

		for (int j = 0; j < k; j++)
			if (pthread_create(&t[j], NULL, worker,
					   (void *) (long) (i + j))) {
				perror("pthread_create");
				return 1;
			}
		for (int j = 0; j < k; j++) {
			pthread_join(t[j], &r);
			total += (long) r;
		}
	}
	printf("%d threads, total %ld\n", n, total);
	return 0;
}
