/* plugin/capture — keeping the tracer and the traced threads on one CPU.
 *
 * Every single-step or block of the software backend is a round trip
 * between ptrr and a traced thread: the thread stops, ptrr wakes up,
 * reads and resumes it, the thread wakes up.  In a virtual machine a
 * wake-up on another virtual CPU is an inter-processor interrupt the
 * hypervisor delivers, and it dominates the round trip: measured on
 * these 2-CPU VMs, recording tests/progs/fnptr went from 2.7-3.1 s to
 * 0.31-0.33 s with ptrr and the program on one CPU (docs/performance.md).
 * So while the software backend steps, ptrr and every traced thread run
 * on the CPU ptrr was on; new threads inherit it.  PTRR_PIN=0 in the
 * environment turns this off (for measurements).
 */
#ifndef PTRR_CAP_AFFINITY_H
#define PTRR_CAP_AFFINITY_H

#include <sched.h>
#include <stdbool.h>

struct cap_stepper;

struct cap_affinity {
	bool pinned;
	cpu_set_t ours;		/* ptrr's own mask before */
	cpu_set_t theirs;	/* the process's mask before */
};

/* Pins ptrr and every thread of @s to the CPU ptrr runs on, remembering
 * the masks in @a.  Failing to pin is not an error (a CPU set given by
 * cgroups, say): the recording only runs slower. */
void cap_affinity_pin(struct cap_affinity *a, const struct cap_stepper *s);

/* Gives ptrr and the threads of @s that are left their masks back (an
 * attached process runs on as it did). */
void cap_affinity_restore(struct cap_affinity *a, const struct cap_stepper *s);

#endif
