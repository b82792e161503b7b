/* For watchpoints and hardware breakpoints in a live session: main
 * writes a global in a loop (watch counter: old and new value at each
 * write), then reads it (awatch), then a thread made afterwards writes
 * another global (a watchpoint set before the thread exists fires in
 * it); bump() is for hbreak.  Given an argument it also dereferences a
 * bad pointer, as the first instruction of a line (break there, then
 * continue: the SIGSEGV). */
#include <pthread.h>

volatile int counter;
volatile int shared;
volatile int sink;

static void __attribute__((noinline)) bump(void)
{
	counter = counter + 1;		/* counter written here */
}

static void *writer(void *arg)
{
	(void) arg;
	shared = 42;			/* shared written here */
	return NULL;
}

static int __attribute__((noinline)) fault(volatile int *p)
{
	return *p;			/* faults here */
}

int main(int argc, char **argv)
{
	pthread_t t;

	(void) argv;
	for (int i = 0; i < 10; i++)
		bump();
	sink = counter;			/* counter read here */
	pthread_create(&t, NULL, writer, NULL);
	pthread_join(t, NULL);
	if (argc > 1)
		return fault((volatile int *) 0x10);
	return 0;
}
