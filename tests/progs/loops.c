/* Straight loops: a counted loop with a conditional inside. */
volatile int sink;

static int __attribute__((noinline)) step(int i)
{
	return (i % 3 == 0) ? i * 2 : i + 1;
}

int main(void)
{
	int sum = 0;

	for (int i = 0; i < 20; i++)
		sum += step(i);
	for (int j = 0; j < 5; j++)
		sink = sum - j;
	return sum == 0;
}
