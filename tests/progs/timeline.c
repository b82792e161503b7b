/* Three functions with long, distinct names, each running a few thousand
 * instructions and calling a helper, so that they are wide on a timeline:
 * tests/export-timeline.sh reads their names off a picture of it.  Their
 * bodies differ, or the compiler would fold them into one (-fipa-icf). */
volatile long sink;

static void __attribute__((noinline)) mix_words(int n)
{
	for (int i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

static void __attribute__((noinline)) parse_records(void)
{
	for (int i = 0; i < 4; i++)
		mix_words(150);
}

static void __attribute__((noinline)) compute_checksum(void)
{
	for (int i = 0; i < 3; i++)
		mix_words(200);
}

static void __attribute__((noinline)) render_summary(void)
{
	for (int i = 0; i < 2; i++)
		mix_words(300);
}

int main(void)
{
	parse_records();
	compute_checksum();
	render_summary();
	return 0;
}
