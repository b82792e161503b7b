/* A switch dense enough that the compiler emits a jump table (each case
 * computes something different, so it cannot become a lookup array). */
static int __attribute__((noinline)) classify(int c, int x)
{
	switch (c) {
	case 0: return x + 7;
	case 1: return x * 5;
	case 2: return x ^ 0x55;
	case 3: return x << 3;
	case 4: return x - 11;
	case 5: return x / 3;
	case 6: return x | 0x100;
	case 7: return ~x;
	default: return -1;
	}
}

int main(int argc, char **argv)
{
	int sum = 0;

	(void) argv;
	for (int i = 0; i < 9; i++)
		sum += classify((i * 5 + argc) % 9, i);
	return sum == 0;
}
