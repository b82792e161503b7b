/* Updates globals and heap fields in a loop, then crashes (with an
 * argument: exits normally): what gdb shows
 * at past positions through ptrr is held against gdb's own record full of
 * the same run (tests/gdb-values.sh).  Built -O0, -O2 with frame
 * pointers and -O2 without. */
#include <stdlib.h>

struct acc {
	long sum;
	int calls;
	int last;
};

/* Read-only data: known at every position. */
static const char greeting[] = "values of the past";
const int squares[5] = { 0, 1, 4, 9, 16 };

/* A pointer to it, in writable memory. */
const char *volatile motto = greeting;

int counter;
long total;
struct acc *heap_acc;

__attribute__((noinline)) void update(struct acc *a, int i)
{
	int sq = i * i;

	counter++;
	total += sq;
	a->sum += sq + i;
	a->calls = counter;
	a->last = i;
}

__attribute__((noinline)) int run(int n)
{
	int local_n = n;

	for (int i = 1; i <= local_n; i++)
		update(heap_acc, i);
	return local_n;
}

int main(int argc, char **argv)
{
	int *bad = NULL;

	(void) argv;
	heap_acc = calloc(1, sizeof(*heap_acc));
	run(9);
	if (argc > 1)
		return 0;
	if (heap_acc->calls == 9)
		bad = (int *) (long) heap_acc->sum;
	return *bad;
}
