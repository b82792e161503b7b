/* The signal frame QEMU builds for a guest's handler (qemu_frame.h). */
#define _GNU_SOURCE
#include <config.h>

#include "qemu/qemu_frame.h"

#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

/* QEMU's frame (linux-user, x86-64, as the kernel's rt_sigframe): at
 * the handler's first instruction rsp points at the return address (the
 * restorer), the ucontext (304 bytes) follows, its mcontext holding the
 * interrupted rip, then the siginfo (written only for SA_SIGINFO
 * handlers); rdi is the signal, rsi points at the siginfo, rdx at the
 * ucontext, rax is 0.  The vCPU's CPUX86State begins with the 16
 * general registers, then eip. */
#define FRAME_UC 8				/* rsp + 8: ucontext */
#define FRAME_UC_SIZE 304
#define FRAME_RIP (FRAME_UC + 40 + 16 * 8)	/* uc_mcontext.rip */
enum { REG_AX = 0, REG_DX = 2, REG_SP = 4, REG_SI = 6, REG_DI = 7,
       REG_IP = 16 };

/* Copies @n bytes at address @addr of this process if they are
 * readable (false, not a fault, if they are not). */
static bool peek(uint64_t addr, void *out, size_t n)
{
	struct iovec local = { out, n };
	struct iovec remote = { (void *) (uintptr_t) addr, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
	       (ssize_t) n;
}

/* A SIGSEGV, SIGBUS, SIGFPE or SIGILL is a fault (the instruction did
 * not complete) or was sent (kill): si_code tells, > 0 for the kernel's
 * (QEMU's) own, SI_USER, SI_TKILL... <= 0.  SIGTRAP reports the
 * instruction after a trap. */
bool qframe_read(const uint64_t *env, uint64_t handler, uint64_t guest_base,
		 uint64_t siginfo_mask, struct qframe *f)
{
	uint64_t r[REG_IP + 1];
	int32_t si[3];		/* si_signo, si_errno, si_code */

	if (!peek((uintptr_t) env, r, sizeof(r)) || r[REG_IP] != handler ||
	    r[REG_AX] || r[REG_DI] - 1 >= 64 ||
	    r[REG_DX] != r[REG_SP] + FRAME_UC ||
	    r[REG_SI] != r[REG_DX] + FRAME_UC_SIZE ||
	    !peek(r[REG_SP] + FRAME_RIP + guest_base, &f->ip, sizeof(f->ip)))
		return false;
	f->sig = (int) r[REG_DI];
	f->fault = 0;
	if (f->sig == SIGSEGV || f->sig == SIGBUS || f->sig == SIGFPE ||
	    f->sig == SIGILL) {
		f->fault = -1;
		if ((siginfo_mask >> (f->sig - 1) & 1) &&
		    peek(r[REG_SI] + guest_base, si, sizeof(si)) &&
		    si[0] == f->sig)
			f->fault = si[2] > 0;
	}
	return true;
}
