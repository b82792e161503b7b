/* Tail calls: leaf() is reached by a jump from middle(), not a call. */
volatile int sink;

static int __attribute__((noinline)) leaf(int x)
{
	sink = x;
	return x * 3;
}

static int __attribute__((noinline)) middle(int x)
{
	sink = x + 1;
	return leaf(x + 2);	/* compiled as jmp leaf at -O2 */
}

int main(void)
{
	int r = 0;

	for (int i = 0; i < 3; i++)
		r += middle(i);
	return r == 0;
}
