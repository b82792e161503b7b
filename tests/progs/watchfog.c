/* A watched global whose value the replay knows near the end, then
 * cannot know before a long string of writes it cannot bound (rep
 * strings into a scratch buffer), for tests/gdb-watch.sh: going back
 * with a watchpoint, each such write is a stop where the value is
 * unknown on both sides, which gdb passes over without a word; ptrr
 * passes over them itself. */
volatile int target;
static char scratch[64];

static void __attribute__((noinline)) fog(void)
{
	for (int i = 0; i < 400; i++) {
		char *p = scratch;
		unsigned long n = sizeof(scratch);

		__asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(i)
				 : "memory");
	}
}

int main(void)
{
	fog();
	target = 1;
	target = 2;
	return *(volatile int *) (long) (target - 2);
}
