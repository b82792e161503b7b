/* Calls into a shared library through the PLT (lazy binding on the first
 * call, a direct GOT jump afterwards).  With any argument it then works on
 * its own for a while (6,000 indirect calls): tens of KiB of trace that
 * need none of the library's code, and leaves with _exit, so the
 * library's destructors do not run either. */
#include <unistd.h>

int ptrr_lib_twice(int x);
int ptrr_lib_sum(int n);

typedef int (*step_fn)(int);

static int __attribute__((noinline)) inc(int x) { return x + 1; }
static int __attribute__((noinline)) dec(int x) { return x - 1; }

static step_fn steps[] = { inc, dec, inc };

int main(int argc, char **argv)
{
	int r = ptrr_lib_twice(4);

	(void) argv;
	r += ptrr_lib_sum(5);
	r += ptrr_lib_twice(r);
	if (argc > 1) {
		for (int i = 0; i < 6000; i++)
			r = steps[i % 3](r);
		_exit(r == 0);
	}
	return r == 0;
}
