/* The recording workload of bench/run-record.sh: ordinary C with the
 * control flow and memory traffic a debugged program has, in ROUNDS
 * rounds (first argument, default 100: about 500,000 instructions from
 * main to exit).  Each round
 *  - fills an array and insertion-sorts it (loops, loads and stores,
 *    data-dependent conditional branches);
 *  - runs a small bytecode interpreter (a switch: an indirect jump
 *    through a jump table);
 *  - calls operations through a table of function pointers (indirect
 *    calls) and a recursive function (calls and returns);
 *  - updates a small hash table (stores scattered over memory).
 * Between main and exit there are no system calls and no library calls,
 * so every recorder measured sees the same instructions, and nothing
 * needs instructions GDB 13's `record full` cannot record (glibc's AVX2
 * string functions).  Built like the test programs (-O2 -g). */
#define N 32
#define BUCKETS 64

typedef unsigned (*op_fn)(unsigned, unsigned);

static unsigned __attribute__((noinline)) op_add(unsigned a, unsigned b)
{ return a + b; }
static unsigned __attribute__((noinline)) op_xor(unsigned a, unsigned b)
{ return a ^ (b << 3); }
static unsigned __attribute__((noinline)) op_mul(unsigned a, unsigned b)
{ return a * (b | 1); }
static unsigned __attribute__((noinline)) op_rot(unsigned a, unsigned b)
{ return (a << (b & 7)) | (a >> (32 - (b & 7)) % 32); }

static op_fn ops[] = { op_add, op_xor, op_mul, op_rot };

static unsigned arr[N];
static unsigned table[BUCKETS];
static unsigned seed = 12345;

static unsigned __attribute__((noinline)) rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

static void __attribute__((noinline)) sort(unsigned *a, int n)
{
	for (int i = 1; i < n; i++) {
		unsigned v = a[i];
		int j = i - 1;

		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
}

enum { OP_PUSH, OP_ADD, OP_SUB, OP_DUP, OP_SWAP, OP_JNZ, OP_HALT };

static const unsigned char prog[] = {
	OP_PUSH, 20, OP_PUSH, 1, OP_SWAP,		/* acc=1, n=20 */
	OP_DUP, OP_ADD, OP_SWAP, OP_PUSH, 1, OP_SUB,	/* acc*=2, n-- */
	OP_DUP, OP_JNZ, 4, OP_HALT,			/* loop to SWAP */
};

static unsigned __attribute__((noinline)) interp(void)
{
	unsigned stack[16], t;
	int sp = 0;
	unsigned pc = 0;

	for (;;) {
		switch (prog[pc++]) {
		case OP_PUSH: stack[sp++] = prog[pc++]; break;
		case OP_ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case OP_SUB: sp--; stack[sp - 1] -= stack[sp]; break;
		case OP_DUP: stack[sp] = stack[sp - 1]; sp++; break;
		case OP_SWAP:
			t = stack[sp - 1];
			stack[sp - 1] = stack[sp - 2];
			stack[sp - 2] = t;
			break;
		case OP_JNZ:
			if (stack[--sp])
				pc = prog[pc];
			else
				pc++;
			break;
		default:
			return stack[sp - 1];
		}
	}
}

static unsigned __attribute__((noinline)) fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned round_once(void)
{
	unsigned acc = 0;

	for (int i = 0; i < N; i++)
		arr[i] = rnd() % 1000;
	sort(arr, N);
	acc += arr[N / 2] + interp();
	for (int i = 0; i < 64; i++)
		acc = ops[(acc ^ (unsigned) i) & 3](acc, (unsigned) i);
	acc += fib(10);
	for (int i = 0; i < 64; i++)
		table[(acc + (unsigned) i * 2654435761u) % BUCKETS] += acc;
	return acc;
}

int main(int argc, char **argv)
{
	int rounds = 0;
	unsigned acc = 0;

	for (const char *p = argc > 1 ? argv[1] : "100"; *p >= '0' &&
	     *p <= '9'; p++)
		rounds = rounds * 10 + (*p - '0');
	for (int r = 0; r < rounds; r++)
		acc ^= round_once();
	return (int) ((acc ^ table[acc % BUCKETS]) & 1);
}
