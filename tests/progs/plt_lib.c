/* A small shared library called through the PLT by plt.c. */
int ptrr_lib_twice(int x)
{
	return 2 * x;
}

int ptrr_lib_sum(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += ptrr_lib_twice(i);
	return s;
}
