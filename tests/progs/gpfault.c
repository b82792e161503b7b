/* A page fault a handler catches (at 0x20), then a general protection
 * fault that kills: hlt in user mode.  The fatal SIGSEGV's si_addr is 0,
 * natively and under QEMU, whose vCPU still holds the caught fault's
 * address in CR2 (tests/gdb-live-reverse.sh). */
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

static sigjmp_buf escape;

static void on_segv(int sig)
{
	siglongjmp(escape, sig);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_segv };

	sigaction(SIGSEGV, &sa, NULL);
	if (!sigsetjmp(escape, 1))
		*(volatile int *) 0x20 = 1;	/* caught */
	sa.sa_handler = SIG_DFL;
	sigaction(SIGSEGV, &sa, NULL);
	__asm__ volatile("hlt");		/* SIGSEGV, si_addr 0 */
	return 0;
}
