/* Sleeps N seconds (given N; 1 without), then exits 0: a recording that
 * lasts long while its program executes next to nothing, for
 * tests/record-progress.sh (its rates per second are tiny). */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts = { argc > 1 ? atoi(argv[1]) : 1, 0 };

	nanosleep(&ts, NULL);
	return 0;
}
