/* What delivering a signal will do to the traced program, from the masks
 * the kernel shows in /proc/TID/status (signal(7)); see
 * stepper_internal.h. */
#include <config.h>

#include "capture/stepper_internal.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Reads mask @field ("SigCgt") of /proc/TID/status into @mask. */
static int status_mask(pid_t tid, const char *field, uint64_t *mask)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int) tid);
	f = fopen(path, "r");
	if (!f)
		return ptrr_fail(errno == ENOENT || errno == ESRCH ?
				 PTRR_ERR_GONE : PTRR_ERR_IO,
				 "cannot read %s: %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':')
			found = sscanf(line + flen + 1, "%" SCNx64, mask) == 1;
	fclose(f);
	return found ? 0 : ptrr_fail(PTRR_ERR_IO, "no %s in %s", field, path);
}

bool cap_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/* True if @sig's default action terminates the process (signal(7)). */
static bool default_kills(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
		return false;
	default:
		return !cap_stop_signal(sig);
	}
}

/* True if @si is a fault the kernel forces on the thread: it cannot be
 * blocked or ignored (force_sig_fault resets such a signal to SIG_DFL). */
static bool forced_fault(const siginfo_t *si)
{
	switch (si->si_signo) {
	case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP:
	case SIGSYS:
		return si->si_code > 0;
	default:
		return false;
	}
}

int cap_disposition(pid_t tid, const siginfo_t *si,
		    enum cap_disposition *out)
{
	uint64_t caught, ignored, blocked, bit = 1ull << (si->si_signo - 1);
	int err;

	err = status_mask(tid, "SigCgt", &caught);
	if (!err)
		err = status_mask(tid, "SigIgn", &ignored);
	if (!err)
		err = status_mask(tid, "SigBlk", &blocked);
	if (err)
		return err;
	if (forced_fault(si) && ((blocked | ignored) & bit))
		*out = CAP_DISP_FATAL;
	else if (caught & bit)
		*out = CAP_DISP_HANDLER;
	else if (ignored & bit || !default_kills(si->si_signo))
		*out = CAP_DISP_OTHER;
	else
		*out = CAP_DISP_FATAL;
	return 0;
}

uint64_t cap_fault_addr(const siginfo_t *si)
{
	return forced_fault(si) ? (uint64_t) (uintptr_t) si->si_addr : 0;
}

/* True if mask @field of /proc/TID/status has signal @sig. */
static bool mask_has(pid_t tid, const char *field, int sig)
{
	uint64_t mask;

	return status_mask(tid, field, &mask) == 0 && (mask >> (sig - 1) & 1);
}

bool cap_sig_pending(pid_t tid, int sig)
{
	return mask_has(tid, "SigPnd", sig);
}

bool cap_sig_shared_pending(pid_t pid, int sig)
{
	return mask_has(pid, "ShdPnd", sig);
}

bool cap_sig_blocked(pid_t tid, int sig)
{
	return mask_has(tid, "SigBlk", sig);
}
