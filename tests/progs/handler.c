/* A signal handler that calls a function with no debug information
 * (tests/progs/nolines.c, built without -g), for tests/gdb-unwind.sh:
 * in the past, inside scramble(), neither frame has a CFA the history
 * proves. */
#include <signal.h>
#include <stdlib.h>

long scramble(long x);

static volatile long sink;

static void on_usr(int sig)
{
	long local = sig * 7;
	long r = scramble(local);

	sink += r + local;
}

int main(void)
{
	signal(SIGUSR1, on_usr);
	for (int i = 0; i < 3; i++)
		raise(SIGUSR1);
	abort();
}
