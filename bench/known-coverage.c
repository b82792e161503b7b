/* How much of the call stack replay/known.c proves: for bundles given on
 * the command line, at N positions spread evenly over each thread's
 * history, the frames replay_frames_known() gives and how many have a
 * proven CFA, and at how many positions rsp is proven.  The time per
 * position (a stack with its CFAs, cold caches) is printed too.  With
 * -l L, the positions are spread over the last L entries only (where a
 * user stepping back from a crash is).  PTRR_KC_VERBOSE=1 prints a line
 * per position (thread, position, frames, rsp proven, time) on stderr;
 * PTRR_KC_ONLY=N asks only at position N (of those -n and -l pick).
 *
 *   bench/known-coverage [-n N] [-l L] BUNDLE...
 *
 * Results: docs/performance.md, "What is known at past positions". */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history.h"
#include "replay.h"

#define MAX_FRAMES 256

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One bundle: its totals as a table row. */
static int cover(const char *dir, unsigned n, uint64_t last)
{
	struct hist_recording *rec;
	struct replay *rp;
	struct replay_frame *f = calloc(MAX_FRAMES, sizeof(*f));
	uint64_t frames = 0, proven = 0, positions = 0, rsp = 0;
	double t0, spent = 0;

	if (!f || hist_recording_open(dir, &rec) < 0 ||
	    replay_new(rec, &rp) < 0) {
		fprintf(stderr, "%s: %s\n", dir, ptrr_errmsg(-1));
		return 1;
	}
	for (size_t thr = 0; thr < replay_nthreads(rp); thr++) {
		struct history *h;
		uint64_t size;

		if (replay_thread_empty(rp, thr) ||
		    hist_recording_history(rec, thr, &h) < 0)
			continue;
		size = hist_size(h);
		uint64_t base = last && last < size ? size - last : 1;
		for (unsigned i = 1; i <= n; i++) {
			uint64_t regs[HIST_NREGS];
			bool known[HIST_NREGS];
			size_t m = 0;

			uint64_t at = base + (size - base) * i / (n + 1);

			if (getenv("PTRR_KC_ONLY") &&
			    at != strtoull(getenv("PTRR_KC_ONLY"), NULL, 10))
				continue;
			if (replay_goto(rp, thr, at))
				continue;
			t0 = now();
			replay_frames_known(rp, thr, f, MAX_FRAMES, &m);
			replay_regs(rp, thr, regs, known);
			spent += now() - t0;
			if (getenv("PTRR_KC_VERBOSE"))
				fprintf(stderr, "%zu %" PRIu64 " %zu %d %.2f ms\n",
					thr, replay_position(rp, thr), m,
					known[HIST_RSP], (now() - t0) * 1e3);
			positions++;
			rsp += known[HIST_RSP];
			frames += m;
			for (size_t k = 0; k < m; k++)
				proven += f[k].cfa_known;
		}
	}
	printf("| %s | %llu | %llu of %llu (%.0f%%) | %llu (%.0f%%) | %.2f ms |\n",
	       strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir,
	       (unsigned long long) positions, (unsigned long long) proven,
	       (unsigned long long) frames,
	       frames ? 100.0 * proven / frames : 0.0,
	       (unsigned long long) rsp,
	       positions ? 100.0 * rsp / positions : 0.0,
	       positions ? 1e3 * spent / positions : 0.0);
	replay_free(rp);
	hist_recording_close(rec);
	free(f);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned n = 200;
	uint64_t last = 0;
	int i = 1, err = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-n"))
			n = (unsigned) atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-l"))
			last = strtoull(argv[i + 1], NULL, 10);
	}
	if (i >= argc) {
		fprintf(stderr, "usage: known-coverage [-n N] [-l L] "
			"BUNDLE...\n");
		return 1;
	}
	printf("| recording | positions | frames with a proven CFA | rsp proven | time per position |\n|---|---|---|---|---|\n");
	for (; i < argc; i++)
		err |= cover(argv[i], n, last);
	return err;
}
