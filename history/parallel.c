/* Running independent pieces of work on as many threads as cores: the
 * index file's chunks, compressed and inflated apart. */
#include "history_internal.h"

#include <stdatomic.h>
#include <unistd.h>

/* At most this many threads, the caller's included. */
#define PARALLEL_MAX 16

struct parallel_job {
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t n;
	atomic_size_t next;
};

/* Takes pieces of the job until none is left. */
static void *parallel_worker(void *arg)
{
	struct parallel_job *job = arg;

	for (;;) {
		size_t i = atomic_fetch_add(&job->next, 1);

		if (i >= job->n)
			return NULL;
		job->fn(job->ctx, i);
	}
}

void hist_parallel_for(size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
	struct parallel_job job = { .fn = fn, .ctx = ctx, .n = n };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nthreads = cores > 1 ? (size_t) cores : 1, started = 0;
	pthread_t tids[PARALLEL_MAX];

	atomic_init(&job.next, 0);
	if (nthreads > PARALLEL_MAX)
		nthreads = PARALLEL_MAX;
	if (nthreads > n)
		nthreads = n ? n : 1;
	/* A thread that cannot be started leaves its share to the others. */
	for (size_t i = 1; i < nthreads; i++)
		if (!pthread_create(&tids[started], NULL, parallel_worker, &job))
			started++;
	parallel_worker(&job);
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
}
