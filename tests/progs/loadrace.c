/* Two loads of the same global with another thread's store between
 * them, for tests/gdb-values.sh: reader() loads `shared` (1) into a
 * register it then reuses, lets the writer store 2, loads it again and
 * crashes with the second value in a register.  What the second load
 * read says nothing about what the first one read. */
#include <pthread.h>
#include <stddef.h>

volatile long shared = 1;
volatile long sink;
volatile int go, done;

static void *writer(void *arg)
{
	(void) arg;
	while (!go)
		;
	shared = 2;
	done = 1;
	return NULL;
}

static int __attribute__((noinline)) finished(void)
{
	return done;
}

static long __attribute__((noinline)) reader(void)
{
	long a = shared;	/* first load */

	sink = a;		/* after the first load */
	go = 1;
	while (!finished())
		;
	a = shared;
	*(volatile long *) 0 = a;	/* crash */
	return a;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, writer, NULL);
	reader();
	pthread_join(t, NULL);
	return 0;
}
