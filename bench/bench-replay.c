/* bench/bench-replay — times the replay engine (replay/) on a generated
 * trace (bench/gen-trace), as gdb would use it after a stop:
 *
 *   (a) the first reverse step from the end, and from positions reached
 *       by a goto (a stop anywhere: the cursor's segment is decoded only
 *       up to the position), median and worst;
 *   (b) reverse-continue from the end to an address never executed (the
 *       whole history, every segment ruled out by its summary or
 *       searched), and to the first instruction's address;
 *   (c) the call stack: the first replay_frames (which computes the call
 *       segments of the whole history once), then at random positions.
 *
 * The history is built first (hist_open, with the binary's symbols, as a
 * recording has them); its time is printed for scale.  Output: a
 * Markdown table on stdout.
 *
 * usage: bench-replay [--positions N] [--seed S] TRACE.info
 */
#include "trace-info.h"

#include "history.h"
#include "replay.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 1024

struct options {
	const char *info;
	size_t positions;	/* random positions for (a) and (c) */
	uint64_t seed;
};

/* Times in seconds, sorted in place; the median and the worst. */
struct spread {
	double median, worst;
};

/* A xorshift step: the next pseudo-random number after *@s. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* The median and the worst of @n times @v (sorted in place). */
static struct spread spread_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return (struct spread) { v[n / 2], v[n - 1] };
}

/* This process's resident set size now and at its peak, in MB. */
static void memory_mb(double *rss, double *hwm)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb;

	*rss = *hwm = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			*rss = (double) kb / 1024;
		else if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			*hwm = (double) kb / 1024;
	}
	if (f)
		fclose(f);
}

/* Prints the memory in use after @what. */
static void print_memory(const char *what)
{
	double rss, hwm;

	memory_mb(&rss, &hwm);
	printf("| memory after %s: RSS, peak RSS | %.1f MB, %.1f MB |\n",
	       what, rss, hwm);
}

/* Dies with ptrr's message for @err if it is an error. */
static void check(int err, const char *what)
{
	if (err < 0)
		bench_die(what, ptrr_errmsg(err));
}

/* The image and the symbols of @bt's binary. */
static void load_binary(const struct bench_trace *bt,
			struct hist_image **img, struct hist_symtab **st)
{
	check(hist_image_new(img), "hist_image_new");
	check(hist_symtab_new(st), "hist_symtab_new");
	for (size_t i = 0; i < bt->nsect; i++) {
		const struct bench_section *s = &bt->sect[i];

		check(hist_image_add_file(*img, bt->binary, s->offset, s->size,
					  s->vaddr), "hist_image_add_file");
		check(hist_symtab_add_mapping(*st, bt->binary, s->vaddr,
					      s->size, s->offset),
		      "hist_symtab_add_mapping");
	}
}

/* Opens the history of @bt's trace @trace (@size bytes). */
static struct history *open_history(const struct bench_trace *bt,
				    const uint8_t *trace, size_t size,
				    struct hist_image *img,
				    struct hist_symtab *st)
{
	struct hist_config cfg = { .trace = trace, .size = size,
				   .image = img, .symtab = st };
	struct history *h;

	if (bt->cpu.vendor == pcv_intel)
		strcpy(cfg.cpu.vendor, "GenuineIntel");
	cfg.cpu.family = bt->cpu.family;
	cfg.cpu.model = bt->cpu.model;
	cfg.cpu.stepping = bt->cpu.stepping;
	check(hist_open(&cfg, &h), "hist_open");
	return h;
}

/* Seconds one backward step of thread 0 of @rp takes. */
static double time_step_back(struct replay *rp)
{
	struct replay_result res;
	double t0 = bench_now();

	check(replay_step(rp, 0, -1, &res), "replay_step");
	return bench_now() - t0;
}

/* (a): the first step back from the end, then from random positions
 * up to the last instruction, @last. */
static void bench_steps(struct replay *rp, const struct options *o,
			uint64_t last)
{
	double *v = calloc(o->positions, sizeof(*v));
	uint64_t seed = o->seed;
	struct spread s;
	double first;

	if (!v)
		bench_die("bench-replay", "out of memory");
	first = time_step_back(rp);
	for (size_t i = 0; i < o->positions; i++) {
		check(replay_goto(rp, 0, 2 + next_random(&seed) % (last - 1)),
		      "replay_goto");
		v[i] = time_step_back(rp);
	}
	s = spread_of(v, o->positions);
	printf("| (a) first reverse step from the end | %.3f ms |\n",
	       first * 1e3);
	printf("| (a) first reverse step after a goto (%zu random positions)"
	       " | median %.3f ms, worst %.3f ms |\n", o->positions,
	       s.median * 1e3, s.worst * 1e3);
	free(v);
}

/* One reverse-continue from the end to @bp; prints it as @what. */
static void bench_continue(struct replay *rp, uint64_t bp, const char *what)
{
	struct replay_result res;
	uint64_t from;
	double t0;

	check(replay_goto_end(rp, 0), "replay_goto_end");
	from = replay_position(rp, 0);
	t0 = bench_now();
	check(replay_continue(rp, 0, -1, &bp, 1, &res), "replay_continue");
	printf("| (b) reverse-continue from the end to %s: %s at %" PRIu64
	       ", %.1fM instructions back | %.3f ms |\n", what,
	       res.stop == REPLAY_STOP_BREAK ? "breakpoint" : "begin",
	       res.number, (double) (from - res.number) / 1e6,
	       (bench_now() - t0) * 1e3);
}

/* (c): the call stack, first at the end (computing the call segments),
 * then at random positions up to the last instruction, @last. */
static void bench_frames(struct replay *rp, struct history *h,
			 const struct options *o, uint64_t last)
{
	static struct replay_frame f[MAX_FRAMES];
	double *v = calloc(o->positions, sizeof(*v)), t0;
	uint64_t seed = o->seed + 1;
	size_t n, depth = 0;
	struct spread s;

	if (!v)
		bench_die("bench-replay", "out of memory");
	check(replay_goto_end(rp, 0), "replay_goto_end");
	t0 = bench_now();
	check(replay_frames(rp, 0, f, MAX_FRAMES, &n), "replay_frames");
	printf("| (c) first call stack (computes the call segments) | "
	       "%.3f s |\n", bench_now() - t0);
	check(hist_calls_count(h, &n), "hist_calls_count");
	printf("| (c) call segments: %zu, in | %.1f MB (%.1f bytes each) |\n",
	       n, (double) hist_calls_bytes(h) / (1 << 20),
	       (double) hist_calls_bytes(h) / (double) (n ? n : 1));
	print_memory("the first call stack");
	for (size_t i = 0; i < o->positions; i++) {
		check(replay_goto(rp, 0, 1 + next_random(&seed) % last),
		      "replay_goto");
		t0 = bench_now();
		check(replay_frames(rp, 0, f, MAX_FRAMES, &n),
		      "replay_frames");
		v[i] = bench_now() - t0;
		depth += n;
	}
	s = spread_of(v, o->positions);
	printf("| (c) call stack at %zu random positions (%.1f frames on "
	       "average) | median %.3f ms, worst %.3f ms |\n", o->positions,
	       (double) depth / (double) o->positions, s.median * 1e3,
	       s.worst * 1e3);
	free(v);
}

/* Parses the command line into @o. */
static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "positions", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct options) { .positions = 100, .seed = 1 };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'p')
			o->positions = strtoull(optarg, NULL, 0);
		else if (c == 's')
			o->seed = strtoull(optarg, NULL, 0) | 1;
		else
			goto usage;
	}
	if (optind + 1 != argc || !o->positions)
		goto usage;
	o->info = argv[optind];
	return;
usage:
	fprintf(stderr, "usage: bench-replay [--positions N] [--seed S] "
		"TRACE.info\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct options o;
	struct bench_trace bt;
	struct hist_image *img;
	struct hist_symtab *st;
	struct history *h;
	struct replay *rp;
	uint8_t *trace;
	size_t size;
	uint64_t last;
	double t0;
	int tid = 1;

	parse_options(argc, argv, &o);
	if (bench_trace_read(o.info, &bt) ||
	    !(trace = bench_trace_map(&bt, &size)))
		return 2;
	load_binary(&bt, &img, &st);
	t0 = bench_now();
	h = open_history(&bt, trace, size, img, st);
	printf("| measurement | result |\n|---|---|\n");
	printf("| history: %" PRIu64 " entries, built (hist_open) in | "
	       "%.2f s |\n", hist_size(h), bench_now() - t0);
	print_memory("hist_open");
	t0 = bench_now();
	check(replay_new_threads(1, &tid, &h, NULL, &rp), "replay_new");
	printf("| replay_new_threads | %.3f ms |\n", (bench_now() - t0) * 1e3);
	last = replay_position(rp, 0);
	bench_steps(rp, &o, last);
	check(replay_goto(rp, 0, 1), "replay_goto");
	bench_continue(rp, 0x10, "an address never executed");
	check(replay_goto(rp, 0, 1), "replay_goto");
	bench_continue(rp, replay_pc(rp, 0), "the first instruction's "
		       "address");
	print_memory("(a) and (b)");
	bench_frames(rp, h, &o, last);
	print_memory("the call stacks");
	replay_free(rp);
	hist_close(h);
	hist_symtab_free(st);
	hist_image_free(img);
	bench_trace_unmap(trace, size);
	return 0;
}
