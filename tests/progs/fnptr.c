/* Indirect calls through function pointers.  With any argument it makes
 * 10,000 of them: a trace dense in TIP packets, tens of KiB long. */
typedef int (*op_fn)(int, int);

static int __attribute__((noinline)) add(int a, int b) { return a + b; }
static int __attribute__((noinline)) sub(int a, int b) { return a - b; }
static int __attribute__((noinline)) mul(int a, int b) { return a * b; }

static op_fn ops[] = { add, sub, mul };

int main(int argc, char **argv)
{
	int acc = 1, n = argc > 1 ? 10000 : 6;

	(void) argv;
	for (int i = 0; i < n; i++)
		acc = ops[i % 3](acc, i + 1);
	return acc == 12345;
}
