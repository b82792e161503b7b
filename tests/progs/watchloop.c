/* A global written in a loop from another global that the loop then
 * increments, and once more after it, as gdb's watch-reverse.exp does,
 * then a crash; built -O0 for tests/gdb-watch.sh.  Back before the last
 * store, ival3 is 3: the loop's last store took count before count++
 * made it 4 (ptrr once showed 4 there, resolving the stored register
 * from count as it is at the end). */
int ival3 = -1;
int count;

static void __attribute__((noinline)) marker(void)
{
	__asm__ volatile("");
}

int main(void)
{
	for (count = 0; count < 4; count++)
		ival3 = count;
	ival3 = count;
	marker();
	return *(volatile int *) (long) (ival3 - 4);
}
