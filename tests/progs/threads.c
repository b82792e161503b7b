/* Three threads doing different work, joined: a computing one that
 * hands a value to a waiting one through a condition variable (a futex
 * wait that must not stall the others), and one making system calls. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static long handed;
static int have;

static long __attribute__((noinline)) square_sum(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += (long) i * i;
	return s;
}

static long __attribute__((noinline)) fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* Computes, then hands its result to waiter(). */
static void *producer(void *arg)
{
	long v = square_sum(200);

	(void) arg;
	pthread_mutex_lock(&lock);
	handed = v;
	have = 1;
	pthread_cond_signal(&ready);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Blocks until producer() is done, then recurses. */
static void *waiter(void *arg)
{
	long v;

	(void) arg;
	pthread_mutex_lock(&lock);
	while (!have)
		pthread_cond_wait(&ready, &lock);
	v = handed;
	pthread_mutex_unlock(&lock);
	return (void *) (fib(8) + v % 7);
}

/* System calls: its pid, a short sleep. */
static void *caller(void *arg)
{
	struct timespec ts = { 0, 1000000 };
	long n = 0;

	(void) arg;
	for (int i = 0; i < 3; i++) {
		n += getpid() > 0;
		nanosleep(&ts, NULL);
	}
	return (void *) n;
}

int main(void)
{
	pthread_t t[3];
	void *r[3];

	pthread_create(&t[1], NULL, waiter, NULL);
	pthread_create(&t[2], NULL, caller, NULL);
	pthread_create(&t[0], NULL, producer, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], &r[i]);
	printf("%ld %ld\n", (long) r[1], (long) r[2]);
	return 0;
}
