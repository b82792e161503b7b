/* bench/bench-history — times ptrr's indexed instruction history against
 * libipt's block decoder, side by side, on one trace and one image:
 *
 *   (a) libipt block decoder, default configuration (the reference);
 *   (b) the same with end_on_call and end_on_jump (what ptrr's index asks);
 *   (c) ptrr's index build: hist_open(), its throughput, its memory per
 *       instruction (hist_index_bytes) and its ratio to (a);
 *   (d) random access: hist_cursor_seek to random entry numbers;
 *   (e) sequential iteration: hist_cursor_next over the first entries;
 *
 * plus the trace size and the peak RSS, as a Markdown table on stdout.
 *
 * usage: bench-history [--repeat N] [--seeks N] [--iterate N] [--seed S]
 *                      TRACE.info
 */
#include "trace-info.h"

#include "history.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct options {
	const char *info;
	unsigned repeat;	/* runs of (a), (b), (c); the best counts */
	size_t seeks;		/* (d) */
	uint64_t iterate;	/* (e) */
	uint64_t seed;
};

/* The trace and image every measurement uses. */
struct bench {
	struct bench_trace bt;
	uint8_t *trace;
	size_t size;
	struct pt_image_section_cache *iscache;
	struct pt_image *image;
};

/* One libipt block-decoder run. */
struct raw_result {
	uint64_t insns, blocks, errors;
	double secs;
};

/* ptrr's numbers; @error is set when the history could not be built. */
struct ptrr_result {
	char error[256];
	uint64_t entries, insns;
	size_t index_bytes, nsegs;
	double secs, cpu_secs;
	double seek_median, seek_p90, seek_max;	/* microseconds */
	uint64_t iterated;
	double iter_ns;
	uint64_t ip_sum;	/* of the entries read in (e), so that the
				 * reads cannot be optimized away */
};

/* User plus system CPU seconds of the whole process (all threads). */
static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		(double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Peak resident set size so far, in MiB. */
static double peak_rss_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double) ru.ru_maxrss / 1024.0;
}

/* The next number of a seeded xorshift64* sequence. */
static uint64_t rng_next(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

/* ------------------------------------------------------------------ */
/* (a), (b): libipt's block decoder                                   */
/* ------------------------------------------------------------------ */

/* Reads the events libipt has pending, as any user must. */
static int drain_events(struct pt_block_decoder *dec, int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;

		status = pt_blk_event(dec, &ev, sizeof(ev));
	}
	return status;
}

/* Decodes blocks from the current sync point until an error; counts them
 * into @r.  Returns the error (-pte_eos at the end). */
static int decode_blocks(struct pt_block_decoder *dec, int status,
			 struct raw_result *r)
{
	for (;;) {
		struct pt_block block;

		block.ninsn = 0;	/* an error may come before any block */
		status = drain_events(dec, status);
		if (status < 0)
			return status;
		status = pt_blk_next(dec, &block, sizeof(block));
		r->insns += block.ninsn;
		r->blocks++;
		if (status < 0)
			return status;
	}
}

/* One pass of the block decoder over the whole trace, resynchronizing
 * after errors like any tool would. */
static void raw_decode_once(struct bench *b, bool end_on_branches,
			    struct raw_result *r)
{
	struct pt_config config;
	struct pt_block_decoder *dec;
	double t0 = bench_now();

	memset(r, 0, sizeof(*r));
	bench_trace_pt_config(&b->bt, b->trace, b->size, &config);
	config.flags.variant.block.end_on_call = end_on_branches;
	config.flags.variant.block.end_on_jump = end_on_branches;
	dec = pt_blk_alloc_decoder(&config);
	if (!dec || pt_blk_set_image(dec, b->image) < 0)
		bench_die("bench-history", "cannot set up the block decoder");
	for (;;) {
		int status = pt_blk_sync_forward(dec);

		if (status < 0)
			break;
		status = decode_blocks(dec, status, r);
		if (status == -pte_eos)
			break;
		r->errors++;
	}
	pt_blk_free_decoder(dec);
	r->secs = bench_now() - t0;
}

/* The fastest of @repeat passes. */
static void raw_decode(struct bench *b, bool end_on_branches,
		       unsigned repeat, struct raw_result *best)
{
	for (unsigned i = 0; i < repeat; i++) {
		struct raw_result r;

		raw_decode_once(b, end_on_branches, &r);
		if (i == 0 || r.secs < best->secs)
			*best = r;
	}
}

/* ------------------------------------------------------------------ */
/* (c), (d), (e): ptrr's history                                      */
/* ------------------------------------------------------------------ */

/* ptrr's image of the trace's binary. */
static struct hist_image *ptrr_image(const struct bench *b,
				     struct ptrr_result *r)
{
	struct hist_image *img;
	int err = hist_image_new(&img);

	for (size_t i = 0; !err && i < b->bt.nsect; i++)
		err = hist_image_add_file(img, b->bt.binary,
					  b->bt.sect[i].offset,
					  b->bt.sect[i].size,
					  b->bt.sect[i].vaddr);
	if (err) {
		snprintf(r->error, sizeof(r->error), "hist_image: %s",
			 ptrr_errmsg(err));
		return NULL;
	}
	return img;
}

/* The history configuration for @b's trace. */
static void ptrr_config(const struct bench *b, struct hist_image *img,
			struct hist_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	if (b->bt.cpu.vendor == pcv_intel)
		snprintf(cfg->cpu.vendor, sizeof(cfg->cpu.vendor),
			 "GenuineIntel");
	cfg->cpu.family = b->bt.cpu.family;
	cfg->cpu.model = b->bt.cpu.model;
	cfg->cpu.stepping = b->bt.cpu.stepping;
	cfg->trace = b->trace;
	cfg->size = b->size;
	cfg->image = img;
}

/* Builds the history @repeat times, keeps the fastest, and records (c). */
static struct history *ptrr_open(const struct hist_config *cfg,
				 unsigned repeat, struct ptrr_result *r)
{
	struct history *best = NULL;

	for (unsigned i = 0; i < repeat; i++) {
		struct history *h;
		double t0 = bench_now(), c0 = cpu_now();
		int err = hist_open(cfg, &h);
		double secs = bench_now() - t0, cpu = cpu_now() - c0;

		if (err) {
			snprintf(r->error, sizeof(r->error), "hist_open: %s",
				 ptrr_errmsg(err));
			hist_close(best);
			return NULL;
		}
		if (best && secs >= r->secs) {
			hist_close(h);
			continue;
		}
		hist_close(best);
		best = h;
		r->secs = secs;
		r->cpu_secs = cpu;
	}
	r->entries = hist_size(best);
	r->insns = hist_insn_count(best);
	r->index_bytes = hist_index_bytes(best);
	r->nsegs = hist_nsegments(best);
	return best;
}

/* Orders doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* (d): @n seeks to seeded random entry numbers, timed one by one. */
static int ptrr_seek(struct history *h, size_t n, uint64_t seed,
		     struct ptrr_result *r)
{
	struct hist_cursor *c = NULL;
	double *us = calloc(n ? n : 1, sizeof(*us));
	uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
	int err = us ? hist_cursor_new(h, &c) : PTRR_ERR_NOMEM;

	for (size_t i = 0; !err && i < n; i++) {
		uint64_t number = 1 + rng_next(&state) % r->entries;
		double t0 = bench_now();

		err = hist_cursor_seek(c, number);
		if (!err && hist_cursor_entry(c)->number != number)
			err = PTRR_ERR_INTERNAL;
		us[i] = (bench_now() - t0) * 1e6;
	}
	if (!err && n) {
		qsort(us, n, sizeof(*us), cmp_double);
		r->seek_median = us[n / 2];
		r->seek_p90 = us[n * 9 / 10];
		r->seek_max = us[n - 1];
	}
	hist_cursor_free(c);
	free(us);
	return err;
}

/* (e): hist_cursor_next over the first @n entries, reading each. */
static int ptrr_iterate(struct history *h, uint64_t n, struct ptrr_result *r)
{
	struct hist_cursor *c = NULL;
	uint64_t done = 0;
	double t0;
	int err = hist_cursor_new(h, &c);

	if (!err)
		err = hist_cursor_seek(c, 1);
	t0 = bench_now();
	while (!err && done + 1 < n && hist_cursor_next(c) == 0) {
		r->ip_sum += hist_cursor_entry(c)->ip;
		done++;
	}
	r->iter_ns = done ? (bench_now() - t0) * 1e9 / (double) done : 0;
	r->iterated = done;
	hist_cursor_free(c);
	return err;
}

/* Runs (c), (d) and (e); on failure, @r->error says why. */
static void ptrr_measure(const struct bench *b, const struct options *o,
			 struct ptrr_result *r)
{
	struct hist_config cfg;
	struct hist_image *img = ptrr_image(b, r);
	struct history *h = NULL;
	int err = 0;

	if (img) {
		ptrr_config(b, img, &cfg);
		h = ptrr_open(&cfg, o->repeat, r);
	}
	if (h)
		err = ptrr_seek(h, o->seeks, o->seed, r);
	if (h && !err)
		err = ptrr_iterate(h, o->iterate, r);
	if (err)
		snprintf(r->error, sizeof(r->error), "cursor: %s",
			 ptrr_errmsg(err));
	hist_close(h);
	hist_image_free(img);
}

/* ------------------------------------------------------------------ */
/* Report                                                             */
/* ------------------------------------------------------------------ */

/* Millions of instructions per second. */
static double mips(uint64_t insns, double secs)
{
	return secs > 0 ? (double) insns / secs / 1e6 : 0;
}

/* "yes" or "**no**". */
static const char *met(bool ok)
{
	return ok ? "yes" : "**no**";
}

/* The rows every run has: the trace and the raw decoders. */
static void print_raw(const struct bench *b, const struct raw_result *a,
		      const struct raw_result *bb)
{
	printf("| Measurement | Result | Target | Met |\n");
	printf("|---|---|---|---|\n");
	printf("| trace | %.1f MiB, %" PRIu64 " instructions (%.3f bytes/insn)"
	       ", PSB every %" PRIu32 " bytes | | |\n",
	       (double) b->size / (1024.0 * 1024.0), b->bt.insns,
	       (double) b->size / (double) b->bt.insns, b->bt.psb_period);
	printf("| (a) libipt block decoder, default config | %.1f M insn/s "
	       "(%.2f s, %" PRIu64 " insns, %" PRIu64 " blocks, %" PRIu64
	       " errors) | reference | |\n", mips(a->insns, a->secs), a->secs,
	       a->insns, a->blocks, a->errors);
	printf("| (b) libipt block decoder, end_on_call + end_on_jump | %.1f M "
	       "insn/s (%.2f s, %" PRIu64 " blocks, %" PRIu64 " errors) | | "
	       "|\n", mips(bb->insns, bb->secs), bb->secs, bb->blocks,
	       bb->errors);
}

/* The rows of ptrr's measurements (TODO rows if they could not run). */
static void print_ptrr(const struct raw_result *a, const struct ptrr_result *r,
		       const struct options *o, long ncpu)
{
	double ratio = mips(r->insns, r->secs) / mips(a->insns, a->secs);
	double cpu_ratio = mips(r->insns, r->cpu_secs) / mips(a->insns,
							       a->secs);
	double per_insn = (double) r->index_bytes / (double) r->insns;

	if (r->error[0]) {
		printf("| (c)-(e) ptrr | TODO: %s | | |\n", r->error);
		return;
	}
	printf("| (c) ptrr index build (hist_open, %ld threads) | %.1f M insn/s"
	       " (%.2f s wall, %.2f s CPU); %.2fx (a) wall, %.2fx (a) per CPU"
	       " second | >= 0.8x (a) | %s |\n", ncpu,
	       mips(r->insns, r->secs), r->secs, r->cpu_secs, ratio,
	       cpu_ratio, met(ratio >= 0.8));
	printf("| (c) index memory (hist_index_bytes) | %.3f bytes/insn (%zu "
	       "bytes, %zu segments) | <= 1 byte/insn | %s |\n", per_insn,
	       r->index_bytes, r->nsegs, met(per_insn <= 1.0));
	printf("| (d) random hist_cursor_seek, %zu seeks | median %.0f us, "
	       "p90 %.0f us, max %.0f us | median <= 1 ms | %s |\n", o->seeks,
	       r->seek_median, r->seek_p90, r->seek_max,
	       met(r->seek_median <= 1000.0));
	printf("| (e) hist_cursor_next, first %" PRIu64 " entries | %.1f "
	       "ns/entry | | |\n", r->iterated + 1, r->iter_ns);
}

/* Rows that say whether every decoder saw the same instructions. */
static void print_counts(const struct bench *b, const struct raw_result *a,
			 const struct raw_result *bb,
			 const struct ptrr_result *r)
{
	bool same = a->insns == b->bt.insns && bb->insns == b->bt.insns &&
		(r->error[0] || r->insns == b->bt.insns);

	printf("| instructions decoded | generator %" PRIu64 ", (a) %" PRIu64
	       ", (b) %" PRIu64 ", ptrr %" PRIu64 " (%" PRIu64 " entries) | "
	       "all equal | %s |\n", b->bt.insns, a->insns, bb->insns,
	       r->insns, r->entries, met(same));
}

/* ------------------------------------------------------------------ */
/* Main                                                               */
/* ------------------------------------------------------------------ */

/* Fills @o from argv; exits on usage errors. */
static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "repeat", required_argument, NULL, 'r' },
		{ "seeks", required_argument, NULL, 'k' },
		{ "iterate", required_argument, NULL, 'i' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*o = (struct options) { .repeat = 3, .seeks = 1000,
		.iterate = 10000000, .seed = 1 };
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': o->repeat = (unsigned) strtoul(optarg, NULL, 0);
			break;
		case 'k': o->seeks = strtoull(optarg, NULL, 0); break;
		case 'i': o->iterate = strtoull(optarg, NULL, 0); break;
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (optind + 1 == argc && o->repeat > 0) {
		o->info = argv[optind];
		return;
	}
usage:
	fprintf(stderr, "usage: bench-history [--repeat N] [--seeks N] "
		"[--iterate N] [--seed S] TRACE.info\n");
	exit(1);
}

/* Loads the trace and the libipt image. */
static void bench_load(struct bench *b, const char *info)
{
	if (bench_trace_read(info, &b->bt) < 0)
		exit(2);
	b->trace = bench_trace_map(&b->bt, &b->size);
	b->iscache = pt_iscache_alloc("bench");
	if (!b->trace || !b->iscache)
		exit(2);
	b->image = bench_trace_pt_image(&b->bt, b->iscache);
	if (!b->image)
		exit(2);
}

int main(int argc, char **argv)
{
	struct options o;
	struct bench b;
	struct raw_result a, bb;
	struct ptrr_result r;
	double rss_raw;

	parse_options(argc, argv, &o);
	bench_load(&b, o.info);
	raw_decode(&b, false, o.repeat, &a);
	raw_decode(&b, true, o.repeat, &bb);
	rss_raw = peak_rss_mib();
	memset(&r, 0, sizeof(r));
	ptrr_measure(&b, &o, &r);
	print_raw(&b, &a, &bb);
	print_ptrr(&a, &r, &o, sysconf(_SC_NPROCESSORS_ONLN));
	print_counts(&b, &a, &bb, &r);
	printf("| peak RSS | %.0f MiB after (a)+(b), %.0f MiB at the end | | "
	       "|\n", rss_raw, peak_rss_mib());
	pt_image_free(b.image);
	pt_iscache_free(b.iscache);
	bench_trace_unmap(b.trace, b.size);
	return 0;
}
