/* `ptrr record`'s progress on a terminal: while the program runs, one
 * line on stderr, rewritten in place at most twice a second, with the
 * instructions recorded so far, the trace's size, the time and the rate;
 * nothing when stderr is not a terminal.  And the rates of the final
 * summary, which never read "0 .../s". */
#include <config.h>

#include "record.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

/* Events between two looks at the clock (a power of two). */
#define PROGRESS_EVERY 1024

/* Seconds between two rewrites of the line. */
#define PROGRESS_PERIOD 0.5

/* Seconds from @a to @b. */
static double seconds(const struct timespec *a, const struct timespec *b)
{
	return (double) (b->tv_sec - a->tv_sec) +
	       (double) (b->tv_nsec - a->tv_nsec) / 1e9;
}

void rec_rate_text(char *buf, size_t size, uint64_t count, double secs,
		   const char *unit)
{
	double rate = secs > 0 ? (double) count / secs : 0;

	buf[0] = '\0';
	/* Below a hundredth of a second the clock says little. */
	if (count == 0 || secs < 0.01)
		return;
	snprintf(buf, size, rate >= 10 ? "%.0f %s/s" : "%.2g %s/s", rate,
		 unit);
}

void rec_progress_start(struct recorder *r)
{
	r->progress.on = isatty(STDERR_FILENO);
	r->progress.ticks = 0;
	r->progress.shown = false;
	r->progress.last = r->t0;
}

void rec_progress_tick(struct recorder *r)
{
	uint64_t bytes, lost, resyncs, dropped;
	struct timespec now;
	char rate[64];
	double secs;
	unsigned long whole;

	if (!r->progress.on || ++r->progress.ticks % PROGRESS_EVERY)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds(&r->progress.last, &now) < PROGRESS_PERIOD)
		return;
	r->progress.last = now;
	secs = seconds(&r->t0, &now);
	whole = (unsigned long) secs;
	rec_trace_totals(r, &bytes, &lost, &resyncs, &dropped);
	rec_rate_text(rate, sizeof(rate), r->st.insns, secs, "instructions");
	/* \r and erase to the end of the line: the line is rewritten. */
	fprintf(stderr, "\rptrr record: %" PRIu64 " instructions, %" PRIu64
		" bytes of trace, %lu:%02lu:%02lu elapsed%s%s%s\033[K",
		r->st.insns, bytes, whole / 3600, whole / 60 % 60, whole % 60,
		rate[0] ? " (" : "", rate, rate[0] ? ")" : "");
	fflush(stderr);
	r->progress.shown = true;
}

void rec_progress_end(struct recorder *r)
{
	if (r->progress.shown)
		fputs("\r\033[K", stderr);
	r->progress.on = r->progress.shown = false;
}
