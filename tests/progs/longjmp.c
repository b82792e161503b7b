/* setjmp/longjmp: deep() recurses four frames down, and the innermost
 * longjmp()s straight back to main, unwinding all of them at once.  The
 * store after the recursive call keeps it from becoming a loop. */
#include <setjmp.h>

static jmp_buf env;
volatile int depth;

static void __attribute__((noinline)) deep(int n)
{
	depth = n;
	if (n == 0)
		longjmp(env, 7);
	deep(n - 1);
	depth = -n;
}

int main(void)
{
	int r = setjmp(env);

	if (r == 0)
		deep(3);
	return r != 7;
}
