/* Threads for gdb's non-stop mode (tests/gdb-nonstop.sh): the main
 * thread and a worker run the same loop, each stopping at the
 * breakpoints on its own (as GDB's gdb.btrace/non-stop.c); a third
 * thread naps until gdb clears `napping`, running while the others are
 * stopped. */
#include <pthread.h>
#include <unistd.h>

static volatile int global;
volatile int napping = 1;

static void *__attribute__((noinline)) work(void *arg)
{
	int i = 0;		/* bp.1 */

	for (; i < 10; ++i)
		global += i;	/* loop */
	return arg;		/* bp.2 */
}

static void *nap(void *arg)
{
	while (napping)
		sleep(1);
	return arg;
}

int main(void)
{
	pthread_t worker, napper;

	pthread_create(&napper, NULL, nap, NULL);
	pthread_create(&worker, NULL, work, NULL);
	work(NULL);
	pthread_join(worker, NULL);
	pthread_join(napper, NULL);
	return global == 0;	/* bp.3 */
}
