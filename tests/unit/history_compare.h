/* What the tests of histories built two ways on real recordings share
 * (test-extend: extended stop after stop or opened at once; test-psbs:
 * numbered from the table of PSBs or by decoding): reading every entry,
 * comparing entries and call segments, and running a check on every
 * thread of every bundle given. */
#ifndef PTRR_TEST_HISTORY_COMPARE_H
#define PTRR_TEST_HISTORY_COMPARE_H

#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "test.h"

/* True if entries @a and @b say the same. */
static bool same_entry(const struct hist_entry *a, const struct hist_entry *b)
{
	return a->number == b->number && a->ip == b->ip &&
	       a->kind == b->kind && a->iclass == b->iclass &&
	       a->size == b->size && a->flags == b->flags &&
	       a->gap_code == b->gap_code;
}

/* Every entry of @h, into a malloc'd array of hist_size() entries (those
 * after one that cannot be read are left zero). */
static struct hist_entry *all_entries(struct history *h)
{
	uint64_t n = hist_size(h);
	struct hist_entry *v = calloc(n ? n : 1, sizeof(*v));
	struct hist_cursor *c;

	if (!v || hist_cursor_new(h, &c))
		return v;
	for (uint64_t i = 1; i <= n; i++) {
		if (i == 1 ? hist_cursor_seek(c, 1) : hist_cursor_next(c))
			break;
		v[i - 1] = *hist_cursor_entry(c);
	}
	hist_cursor_free(c);
	return v;
}

/* Compares every entry of @got with @want's. */
static void check_entries(struct history *got, struct history *want,
			  const char *what)
{
	uint64_t n = hist_size(want);
	struct hist_entry *a = all_entries(got), *b = all_entries(want);
	uint64_t bad = 0;

	CHECK_EQ_U64(hist_size(got), n);
	CHECK_EQ_U64(hist_insn_count(got), hist_insn_count(want));
	for (uint64_t i = 0; a && b && i < n && i < hist_size(got); i++)
		if (!same_entry(&a[i], &b[i]) && !bad++)
			fprintf(stderr, "%s: entry %" PRIu64 " is 0x%" PRIx64
				", not 0x%" PRIx64 "\n", what, i + 1,
				a[i].ip, b[i].ip);
	CHECK_EQ_U64(bad, 0);
	free(a);
	free(b);
}

/* Compares the segments of @got with @want's: where they are and their
 * entries, and with @complete what decoding fills in. */
static void check_segments(struct history *got, struct history *want,
			   bool complete, const char *what)
{
	size_t n = hist_nsegments(want);
	int bad = 0;

	CHECK_EQ_U64(hist_nsegments(got), n);
	for (size_t i = 0; i < n && i < hist_nsegments(got) && !bad; i++) {
		const struct hist_segment *a = hist_segment_at(got, i);
		const struct hist_segment *b = hist_segment_at(want, i);

		bad = a->offset != b->offset || a->end_offset != b->end_offset ||
		      a->first != b->first || a->count != b->count ||
		      a->gaps != b->gaps;
		if (complete)
			bad |= a->depth_in != b->depth_in ||
			       a->depth_out != b->depth_out ||
			       a->start_ip != b->start_ip ||
			       memcmp(a->summary, b->summary,
				      sizeof(a->summary));
		if (bad)
			fprintf(stderr, "%s: segment %zu (trace offset 0x%"
				PRIx64 ") differs: first %" PRIu64 "/%" PRIu64
				", count %" PRIu64 "/%" PRIu64 ", depth %d..%d/"
				"%d..%d, ip 0x%" PRIx64 "..0x%" PRIx64 "/0x%"
				PRIx64 "..0x%" PRIx64 "\n", what, i, b->offset,
				a->first, b->first, a->count, b->count,
				a->depth_in, a->depth_out, b->depth_in,
				b->depth_out, a->start_ip, a->end_ip,
				b->start_ip, b->end_ip);
	}
	CHECK(!bad);
}

/* Compares the call segments of @got with those of @want. */
static void check_calls(struct history *got, struct history *want,
			const char *what)
{
	struct hist_call a, b;
	size_t n = 0, m = 0;
	bool bad;

	CHECK(hist_calls_count(want, &n) == 0 &&
	      hist_calls_count(got, &m) == 0);
	CHECK_EQ_U64(m, n);
	for (uint32_t id = 1; id <= n && id <= m; id++) {
		CHECK(hist_call_get(got, id, &a) == 0 &&
		      hist_call_get(want, id, &b) == 0);
		bad = a.first != b.first || a.last != b.last ||
		      a.func != b.func || a.level != b.level || a.up != b.up ||
		      a.inst != b.inst || a.next != b.next ||
		      a.flags != b.flags;
		if (bad) {
			fprintf(stderr, "%s: call segment %u differs\n", what,
				id);
			CHECK(0);
			break;
		}
	}
}

/* Runs @check on every thread of every bundle named in @argv[1..]; the
 * exit status. */
static int check_bundles(int argc, char **argv,
			 void (*check)(struct hist_recording *rec, size_t i,
				       const char *what))
{
	for (int a = 1; a < argc; a++) {
		struct hist_recording *rec;
		char what[512];
		int err = hist_recording_open(argv[a], &rec);

		if (err) {
			fprintf(stderr, "%s: %s\n", argv[a], ptrr_errmsg(err));
			CHECK(0);
			continue;
		}
		for (size_t i = 0; i < hist_recording_bundle(rec)->nthreads;
		     i++) {
			snprintf(what, sizeof(what), "%s thread %d", argv[a],
				 hist_recording_bundle(rec)->threads[i].tid);
			check(rec, i, what);
		}
		hist_recording_close(rec);
	}
	if (argc < 2)
		CHECK(!"no bundle given");
	return test_failures;
}

#endif
