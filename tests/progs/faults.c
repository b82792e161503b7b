/* Signals that interrupt the program between two instructions, not at a
 * system call: faults a handler catches (one it leaves with siglongjmp,
 * one it repairs and returns from, so that the faulting instruction runs
 * again, which gets the siginfo) and a timer signal arriving while the program computes.  Prints
 * its handlers' addresses (tests/qemu-record.sh finds their entries in
 * QEMU's execution log by them). */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

static sigjmp_buf escape;
static char *page;
static volatile sig_atomic_t ticks;
static volatile long work;

static void on_segv_jump(int sig)
{
	siglongjmp(escape, sig);
}

/* Makes the page writable: the faulting store runs again and succeeds
 * (an SA_SIGINFO handler: QEMU writes the siginfo into its frame). */
static void on_segv_repair(int sig, siginfo_t *si, void *uc)
{
	(void) sig; (void) uc;
	if (si->si_addr == page)
		mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static void on_tick(int sig)
{
	(void) sig;
	ticks++;
}

static long __attribute__((noinline)) poke(volatile int *p, int v)
{
	long s = v;

	for (int i = 0; i < 4; i++)
		s += i * v;
	*p = (int) s;			/* faults on a read-only page */
	return s + *p;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_segv_jump };
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	long sum = 0;

	printf("handlers %p %p %p\n", (void *) (uintptr_t) on_segv_jump,
	       (void *) (uintptr_t) on_segv_repair,
	       (void *) (uintptr_t) on_tick);
	fflush(stdout);
	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (page == MAP_FAILED)
		return 2;
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(escape, 1) == 0)
		sum += poke((volatile int *) page, 3);	/* leaves by the jump */
	sa.sa_sigaction = on_segv_repair;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sum += poke((volatile int *) page, 5);		/* repaired, returns */
	sa.sa_handler = on_tick;
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (ticks < 3)				/* no system call */
		work += work % 7 + 1;
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	return sum != 70;	/* poke(page, 5): 35 stored, 35 + 35 */
}
