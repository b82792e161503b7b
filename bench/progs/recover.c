/* A long loop, then a crash: the value recovery's cost at a past
 * position far from the end (docs/performance.md, "Value recovery at
 * past positions").  PROG [N [AT]]: N calls of update(), marker() once
 * after call AT (default N - 10000); the crash comes after the loop. */
#include <stdlib.h>

int counter;
long total;
/* Set by a plain store: what it held before a later store is known only
 * from the earlier store (replay/forward.c), not by undoing. */
int last;

__attribute__((noinline)) void marker(int i)
{
	total += i;
}

__attribute__((noinline)) void update(int i)
{
	counter++;
	total += (long) i * i;
	last = i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000000;
	int at = argc > 2 ? atoi(argv[2]) : n - 10000;

	for (int i = 0; i < n; i++) {
		update(i);
		if (i == at)
			marker(i);
	}
	return *(volatile int *) (long) (total & 1 ? 0 : 8);
}
