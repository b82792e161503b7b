/* Helpers of tests/progs/valuesfar.c and valuesput.c (one each). */

/* Clobbers the argument registers. */
__attribute__((noipa)) int sink(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

/* About 200 instructions in registers only. */
__attribute__((noipa)) unsigned spin(unsigned x)
{
	for (int k = 0; k < 40; k++) {
		__asm__ volatile("" : "+r"(x));
		x = x * 33 + 7;
	}
	return x;
}
