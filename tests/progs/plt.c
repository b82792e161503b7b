/* Calls into a shared library through the PLT (lazy binding on the first
 * call, a direct GOT jump afterwards). */
int ptrr_lib_twice(int x);
int ptrr_lib_sum(int n);

int main(void)
{
	int r = ptrr_lib_twice(4);

	r += ptrr_lib_sum(5);
	r += ptrr_lib_twice(r);
	return r == 0;
}
