/* plugin/qemu — the signal frame QEMU builds for a guest's handler, as
 * ptrr's TCG plugin reads it when the handler's first block runs: which
 * instruction the signal interrupted, which QEMU's plugin API (version
 * 1) does not say. */
#ifndef PTRR_QEMU_FRAME_H
#define PTRR_QEMU_FRAME_H

#include <stdbool.h>
#include <stdint.h>

/* What a handler's frame says. */
struct qframe {
	uint64_t ip;		/* the interrupted instruction */
	int sig;
	int fault;		/* 1: raised by the instruction at ip, which
				 * did not complete; 0: not; -1: unknown */
};

/* Whether @env — what TCG_AREG0 (rbp on x86-64 hosts) held when TCG
 * called a block's callback: the vCPU's CPUX86State — shows a signal
 * just delivered to the handler at guest address @handler; then *@f is
 * what its frame says.  Guest address A is at A + @guest_base here.
 * @siginfo_mask: bit N-1 set if signal N's handler is an SA_SIGINFO one
 * (QEMU writes the siginfo, which tells a fault from a signal sent with
 * kill, only for those).  Reads nothing that is not readable: a wrong
 * @env gives false, not a crash. */
bool qframe_read(const uint64_t *env, uint64_t handler, uint64_t guest_base,
		 uint64_t siginfo_mask, struct qframe *f);

#endif
