/* plugin/timeline.h — the call history of every thread as a timeline:
 * function activations nested by caller, each with its start and end
 * entry, and the time of an entry (TSC ticks when the trace has timing
 * packets, else instructions).  `ptrr export --perfetto` and `--svg`
 * (timeline_json.c, timeline_svg.c) draw it.
 */
#ifndef PTRR_TIMELINE_H
#define PTRR_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "history.h"

/* One function activation: a function instance from the first entry of
 * its first call segment to the last entry of its last one, widened to
 * hold the activations it called (a callee that never returned). */
struct tl_act {
	uint64_t first;		/* entry numbers, inclusive */
	uint64_t last;
	uint64_t func;		/* as struct hist_call's func */
	const char *name;	/* symbol, or "??"; valid with the symtab */
	uint32_t depth;		/* nesting depth as drawn, 0 outermost */
	uint32_t segments;	/* call segments of the instance */
	bool tailcall;		/* entered by a jump */
};

/* A point where the history has a gap. */
struct tl_gap {
	uint64_t entry;
	char reason[160];	/* hist_gap_reason() */
};

/* Where the TSC was known: at entry @entry it read @tsc. */
struct tl_anchor {
	uint64_t entry;
	uint64_t tsc;
};

struct tl_thread {
	int tid;
	uint64_t entries;	/* hist_size() */
	struct tl_act *acts;	/* by first entry, an activation before */
	size_t nacts;		/* those it holds */
	struct tl_gap *gaps;
	size_t ngaps;
	uint32_t max_depth;
	struct tl_anchor *anchors;	/* by entry; none without TSC */
	size_t nanchors;
};

struct tl_timeline {
	const char *exe;	/* the program, as the bundle names it */
	int pid;		/* the process (its first thread's id) */
	bool tsc;		/* times are TSC ticks, else instructions */
	double tsc_base;	/* the earliest TSC of any thread */
	struct tl_thread *threads;
	size_t nthreads;
};

/* Builds the timeline of every thread of @r. */
int tl_build(struct hist_recording *r, struct tl_timeline *out);
void tl_free(struct tl_timeline *t);

/* Reads the TSC at each PSB of thread @th's trace into @t's anchors, as
 * the entry that starts the segment of history @h at that PSB; none if
 * the trace has no TSC packets (timeline_time.c). */
int tl_read_tsc(const struct hist_cpu *cpu, const struct hist_thread *th,
		struct history *h, struct tl_thread *t);

/* Chooses TSC time if every thread with entries has anchors, else
 * instructions, and sets the base of TSC time. */
void tl_settle_time(struct tl_timeline *tl);

/* The time at which entry @entry of @t starts (entries() + 1 is the end
 * of the last one): TSC ticks since the timeline's earliest, interpolated
 * by instruction between the points where the trace said the TSC, or the
 * number of entries before it. */
double tl_time(const struct tl_timeline *tl, const struct tl_thread *t,
	       uint64_t entry);

/* Time at which the last thread's history ends. */
double tl_end_time(const struct tl_timeline *tl);

/* Writes @path through @write(FILE, @ctx) into a temporary file beside
 * it, renamed over @path only once complete: @path is the old file or the
 * new one, never half of one. */
int tl_write_file(const char *path, int (*write)(FILE *out, void *ctx),
		  void *ctx);

/* The Chrome trace-event JSON of @tl (timeline_json.c) and its SVG
 * flame timeline (timeline_svg.c), written to @path. */
int tl_write_perfetto(const struct tl_timeline *tl, const char *path);
int tl_write_svg(const struct tl_timeline *tl, const char *path);

/* `ptrr export --perfetto=@json --svg=@svg BUNDLE` (either may be NULL):
 * returns 0 or a negative error with its message set. */
int tl_export(const char *bundle, const char *json, const char *svg);

#endif
