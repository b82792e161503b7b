/* Indirect calls through function pointers. */
typedef int (*op_fn)(int, int);

static int __attribute__((noinline)) add(int a, int b) { return a + b; }
static int __attribute__((noinline)) sub(int a, int b) { return a - b; }
static int __attribute__((noinline)) mul(int a, int b) { return a * b; }

static op_fn ops[] = { add, sub, mul };

int main(void)
{
	int acc = 1;

	for (int i = 0; i < 6; i++)
		acc = ops[i % 3](acc, i + 1);
	return acc == 12345;
}
