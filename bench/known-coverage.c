/* How much of the call stack replay/known.c proves: for bundles given on
 * the command line, at N positions spread evenly over each thread's
 * history, the frames replay_frames_known() gives and how many have a
 * proven CFA, and at how many positions rsp is proven.  The time per
 * position (a stack with its CFAs, cold caches) is printed too.  With
 * -l L, the positions are spread over the last L entries only (where a
 * user stepping back from a crash is).  PTRR_KC_VERBOSE=1 prints a line
 * per position (thread, position, frames, rsp proven, time) on stderr;
 * PTRR_KC_ONLY=N asks only at position N (of those -n and -l pick).
 * With -a ADDR[/SIZE], each position also reads the SIZE (default 8,
 * at most 64) bytes at ADDR twice
 * (replay_read_memory: the first read makes the value recovery's
 * state there, replay/forward.c's window included where the walk does
 * not give them); the times of both reads and how often the bytes were
 * known are printed after the table, and the peak resident memory.
 *
 *   bench/known-coverage [-n N] [-l L] [-a ADDR[/SIZE]] BUNDLE...
 *
 * Results: docs/performance.md, "What is known at past positions". */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* The reads at ADDR (-a): their count, the bytes known, the times. */
struct reads {
	uint64_t addr;
	size_t size;
	unsigned n, known;
	double first, first_max, second;
};

/* Reads the bytes at @r->addr twice at the position of @thr. */
static void read_twice(struct replay *rp, size_t thr, struct reads *r)
{
	uint8_t buf[64];
	double t0 = now(), t1;
	size_t got = replay_read_memory(rp, thr, r->addr, buf, r->size);

	t1 = now();
	replay_read_memory(rp, thr, r->addr, buf, r->size);
	r->second += now() - t1;
	r->first += t1 - t0;
	if (t1 - t0 > r->first_max)
		r->first_max = t1 - t0;
	r->known += got == r->size;
	r->n++;
}

/* One bundle: its totals as a table row. */
static int cover(const char *dir, unsigned n, uint64_t last,
		 struct reads *reads)
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
			if (reads->addr)
				read_twice(rp, thr, reads);
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
	struct reads reads = { 0 };
	struct rusage ru;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-n"))
			n = (unsigned) atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-l"))
			last = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "-a")) {
			char *end;

			reads.addr = strtoull(argv[i + 1], &end, 0);
			reads.size = *end == '/' ? strtoul(end + 1, NULL, 0) : 8;
			if (!reads.size || reads.size > 64)
				reads.size = 8;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "usage: known-coverage [-n N] [-l L] "
			"[-a ADDR[/SIZE]] BUNDLE...\n");
		return 1;
	}
	printf("| recording | positions | frames with a proven CFA | rsp proven | time per position |\n|---|---|---|---|---|\n");
	for (; i < argc; i++)
		err |= cover(argv[i], n, last, &reads);
	if (reads.n)
		printf("\nReads of %zu bytes at 0x%llx: known at %u of %u "
		       "positions; first read %.2f ms on average (at most "
		       "%.2f ms), second %.3f ms\n",
		       reads.size, (unsigned long long) reads.addr,
		       reads.known, reads.n,
		       1e3 * reads.first / reads.n, 1e3 * reads.first_max,
		       1e3 * reads.second / reads.n);
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("Peak resident memory: %ld kB\n", ru.ru_maxrss);
	return err;
}
