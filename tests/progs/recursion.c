/* Recursion: fact(5) calls itself down to fact(1).  The store after the
 * recursive call keeps the compiler from turning it into a loop. */
volatile int unwound;

static int __attribute__((noinline)) fact(int n)
{
	int r;

	if (n <= 1)
		return 1;
	r = fact(n - 1);
	unwound = n;
	return n * r;
}

int main(void)
{
	return fact(5) != 120;
}
