/* Running at native speed to the start address (--start): an int3
 * there, every thread continued; the first to hit it stops them all.
 * See stepper.h.  A forked child gets a copy of the int3, which is
 * removed before it is let go; a vfork child shares the parent's memory,
 * where the int3 must stay. */
#include <config.h>

#include "capture/stepper_internal.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/ptrace.h>

/* Through the word containing the byte; see stepper_internal.h. */
int cap_poke_byte(pid_t tid, uint64_t addr, uint8_t byte, uint8_t *old)
{
	uint64_t base = addr & ~7ull;
	unsigned shift = (unsigned) (addr - base) * 8;
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, tid, (void *) base, NULL);
	if (errno)
		return ptrr_fail(PTRR_ERR_IO, "cannot read the code at 0x%"
				 PRIx64 ": %s", addr, strerror(errno));
	*old = (uint8_t) ((uint64_t) word >> shift);
	word = (long) (((uint64_t) word & ~(0xffull << shift)) |
		       ((uint64_t) byte << shift));
	if (ptrace(PTRACE_POKETEXT, tid, (void *) base, (void *) word) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot write the code at 0x%"
				 PRIx64 ": %s", addr, strerror(errno));
	return 0;
}

void cap_bp_unplant(const struct cap_stepper *s, pid_t tid)
{
	uint8_t junk;

	if (s->bp.set)
		cap_poke_byte(tid, s->bp.addr, s->bp.orig, &junk);
}

int cap_run_stop(struct cap_stepper *s, struct cap_thread *t)
{
	int err = cap_get_regs(t, false);
	siginfo_t si;

	if (!err)
		err = cap_get_siginfo(t, &si);
	if (err || !si.si_signo)
		return err;
	if (s->bp.set && si.si_signo == SIGTRAP && si.si_code == SI_KERNEL &&
	    t->regs.rip == s->bp.addr + 1) {
		t->hit_bp = true;
		s->halting = true;
		return 0;
	}
	t->sig = si.si_signo;	/* the program's own signal: pass it on */
	return 0;
}

/* Takes the int3 out again (through any thread still there). */
static int unplant_all(struct cap_stepper *s)
{
	pid_t tid = cap_stepper_mem_tid(s);
	uint8_t junk;
	int err = 0;

	if (s->bp.set && tid)
		err = cap_poke_byte(tid, s->bp.addr, s->bp.orig, &junk);
	s->bp.set = false;
	return err;
}

/* Puts the threads that hit the int3 back on the instruction it
 * replaced, their SIGTRAP dropped. */
static int rewind_hits(struct cap_stepper *s)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct cap_thread *t = s->threads[i];

		if (!t->hit_bp)
			continue;
		t->hit_bp = false;
		t->sig = 0;
		t->regs.rip = s->bp.addr;
		t->ip = s->bp.addr;
		if (cap_set_regs(t))
			return PTRR_ERR_IO;
	}
	return 0;
}

/* Why the program did not reach @addr, in one line. */
static int not_reached(const struct cap_stepper *s, uint64_t addr)
{
	if (s->end.kind == CAP_END_STOPPED)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "interrupted before the "
				 "program reached the start address 0x%"
				 PRIx64, addr);
	if (s->end.kind == CAP_END_EXEC)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "the program called execve "
				 "before reaching the start address 0x%" PRIx64
				 ": check --start", addr);
	return ptrr_fail(PTRR_ERR_NOTFOUND, "the program %s %d before "
			 "reaching the start address 0x%" PRIx64 ": check "
			 "--start", s->end.kind == CAP_END_EXITED ?
			 "exited with status" : "was killed by signal",
			 s->end.code, addr);
}

int cap_stepper_run_to(struct cap_stepper *s, uint64_t addr)
{
	pid_t tid = cap_stepper_mem_tid(s);
	int err;

	if (!tid)
		return ptrr_fail(PTRR_ERR_USAGE, "no stopped thread to plant "
				 "the start breakpoint through");
	s->stepping = false;
	err = cap_poke_byte(tid, addr, 0xcc, &s->bp.orig);
	if (err)
		return err;
	s->bp.addr = addr;
	s->bp.set = true;
	err = cap_loop(s);
	if (!err)
		err = unplant_all(s);
	if (!err)
		err = rewind_hits(s);
	s->halting = false;
	if (!err && (s->end.kind || s->stop_requested)) {
		if (!s->end.kind)
			s->end.kind = CAP_END_STOPPED;
		err = not_reached(s, addr);
	}
	return err;
}
