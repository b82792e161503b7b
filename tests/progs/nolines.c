/* Built without debug information for tests/progs/handler.c. */
long scramble(long x);

long scramble(long x)
{
	volatile long y = x;

	for (int i = 0; i < 5; i++)
		y = y * 3 + i;
	return y;
}
