/* setjmp/longjmp: deep() unwinds two frames at once back to main. */
#include <setjmp.h>

static jmp_buf env;
volatile int depth;

static void __attribute__((noinline)) deep(int n)
{
	depth = n;
	if (n == 0)
		longjmp(env, 7);
	deep(n - 1);
}

int main(void)
{
	int r = setjmp(env);

	if (r == 0)
		deep(3);
	return r != 7;
}
