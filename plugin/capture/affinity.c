/* Keeping the tracer and the traced threads on one CPU (affinity.h). */
#include <config.h>

#include "capture/affinity.h"

#include <stdlib.h>
#include <string.h>

#include "capture/stepper.h"

/* Sets the mask of every thread of @s still there to @mask. */
static void set_threads(const struct cap_stepper *s, const cpu_set_t *mask)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct cap_thread *t = s->threads[i];

		if (t && t->state != CAP_TS_EXITING)
			sched_setaffinity(t->tid, sizeof(*mask), mask);
	}
}

void cap_affinity_pin(struct cap_affinity *a, const struct cap_stepper *s)
{
	const char *env = getenv("PTRR_PIN");
	cpu_set_t one;
	int cpu;

	memset(a, 0, sizeof(*a));
	if ((env && !strcmp(env, "0")) || (cpu = sched_getcpu()) < 0 ||
	    sched_getaffinity(0, sizeof(a->ours), &a->ours) < 0 ||
	    sched_getaffinity(s->pid, sizeof(a->theirs), &a->theirs) < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		return;
	a->pinned = true;
	set_threads(s, &one);
}

void cap_affinity_restore(struct cap_affinity *a, const struct cap_stepper *s)
{
	if (!a->pinned)
		return;
	set_threads(s, &a->theirs);
	sched_setaffinity(0, sizeof(a->ours), &a->ours);
	a->pinned = false;
}
