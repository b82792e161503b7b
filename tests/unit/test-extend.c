/* hist_extend() on real recordings (tests/history-extend.sh records them):
 * for each thread of each bundle given, a history opened on a prefix of
 * its trace and extended, stop after stop, to the whole trace must be the
 * history opened on the whole trace at once — every entry and every
 * segment — while the entries it had before each extension keep their
 * numbers (all but the last segment's), and a cursor made before an
 * extension moves on through the new entries.  The stops are cuts at
 * packet boundaries found by libipt's packet decoder, as a live session
 * snapshots the trace at a stop.
 *
 * usage: test-extend BUNDLE... */
#include <config.h>

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "test.h"

#define NCUTS 12

/* Offsets of every packet boundary of @trace, into a malloc'd array. */
static uint64_t *packet_offsets(const uint8_t *trace, size_t size, size_t *n)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	uint64_t *v = malloc((size + 1) * sizeof(*v)), off;

	*n = 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *) trace;
	cfg.end = (uint8_t *) trace + size;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!v || !dec || pt_pkt_sync_forward(dec) < 0) {
		pt_pkt_free_decoder(dec);
		return v;
	}
	while (pt_pkt_get_offset(dec, &off) >= 0 &&
	       pt_pkt_next(dec, &pkt, sizeof(pkt)) >= 0)
		v[(*n)++] = off;
	pt_pkt_free_decoder(dec);
	return v;
}

/* True if entries @a and @b say the same. */
static bool same_entry(const struct hist_entry *a, const struct hist_entry *b)
{
	return a->number == b->number && a->ip == b->ip &&
	       a->kind == b->kind && a->iclass == b->iclass &&
	       a->size == b->size && a->flags == b->flags &&
	       a->gap_code == b->gap_code;
}

/* Every entry of @h, into a malloc'd array of hist_size() entries. */
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

/* Compares the segments of @got with those of @want. */
static void check_segments(struct history *got, struct history *want,
			   const char *what)
{
	size_t n = hist_nsegments(want);
	int bad = 0;

	CHECK_EQ_U64(hist_nsegments(got), n);
	for (size_t i = 0; i < n && i < hist_nsegments(got) && !bad; i++) {
		const struct hist_segment *a = hist_segment_at(got, i);
		const struct hist_segment *b = hist_segment_at(want, i);

		bad = a->offset != b->offset || a->end_offset != b->end_offset ||
		      a->first != b->first || a->count != b->count ||
		      a->depth_in != b->depth_in || a->gaps != b->gaps ||
		      a->depth_out != b->depth_out ||
		      memcmp(a->summary, b->summary, sizeof(a->summary));
		if (bad)
			fprintf(stderr, "%s: segment %zu differs\n", what, i);
	}
	CHECK(!bad);
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

/* Compares the call segments of @got, brought up to date after each
 * extension, with those of @want, computed in one pass. */
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

/* The entries of @h before its last segment: those hist_extend() keeps. */
static uint64_t settled(struct history *h)
{
	size_t n = hist_nsegments(h);

	return n ? hist_segment_at(h, n - 1)->first - 1 : 0;
}

/* Cursor @c, left at entry @number before an extension, steps (@dir)
 * onto the entry the extended history has next to it, @after. */
static void check_step(struct hist_cursor *c, uint64_t number, int dir,
		       const struct hist_entry *after, uint64_t size,
		       const char *what)
{
	uint64_t to = number + dir;

	if (to < 1 || to > size)
		return;
	CHECK((dir > 0 ? hist_cursor_next(c) : hist_cursor_prev(c)) == 0);
	if (!same_entry(hist_cursor_entry(c), &after[to - 1])) {
		fprintf(stderr, "%s: a cursor at %" PRIu64 " moved onto "
			"0x%" PRIx64 " (%s), not 0x%" PRIx64 "\n", what,
			number, hist_cursor_entry(c)->ip,
			hist_cursor_entry(c)->kind ? "gap" : "insn",
			after[to - 1].ip);
		CHECK(0);
	}
}

/* Extends @h cut after cut up to all of @full's trace, checking at each
 * step that settled entries stay and that cursors left in the history
 * (the last settled entry, the last two entries) move on through the
 * extended one.  The call segments are brought up to date at each step,
 * so that at the end they are the product of every extension. */
static void extend_in_steps(struct history *h, const struct hist_config *full,
			    const uint64_t *cuts, size_t ncuts,
			    struct history *want, const char *what)
{
	struct hist_cursor *c = NULL, *e1 = NULL, *e2 = NULL;

	CHECK(hist_cursor_new(h, &c) == 0 && hist_cursor_new(h, &e1) == 0 &&
	      hist_cursor_new(h, &e2) == 0);
	for (size_t k = 1; k <= ncuts && c && e1 && e2; k++) {
		bool last = k == ncuts;
		uint64_t keep = settled(h), n = keep, end = hist_size(h);
		struct hist_entry *before = all_entries(h), *after;

		size_t ncalls;

		CHECK(hist_calls_count(h, &ncalls) == 0);
		if (keep)
			CHECK(hist_cursor_seek(c, keep) == 0);
		if (end > 1)	/* both decoded, in their segment */
			CHECK(hist_cursor_seek(e1, end - 1) == 0 &&
			      hist_cursor_next(e1) == 0 &&
			      hist_cursor_seek(e2, end) == 0 &&
			      hist_cursor_prev(e2) == 0);
		CHECK(hist_extend(h, full->trace, last ? full->size : cuts[k],
				  last && full->have_end_ip, full->end_ip) == 0);
		after = all_entries(h);
		for (uint64_t i = 0; before && after && i < n; i++)
			if (!same_entry(&before[i], &after[i])) {
				fprintf(stderr, "%s: extension %zu changed "
					"entry %" PRIu64 "\n", what, k, i + 1);
				CHECK(0);
				break;
			}
		if (keep && after)
			check_step(c, keep, 1, after, hist_size(h), what);
		if (end > 1 && after) {
			check_step(e1, end, -1, after, hist_size(h), what);
			check_step(e2, end - 1, 1, after, hist_size(h), what);
		}
		free(before);
		free(after);
	}
	hist_cursor_free(c);
	hist_cursor_free(e1);
	hist_cursor_free(e2);
	check_entries(h, want, what);
	check_segments(h, want, what);
	check_calls(h, want, what);
}

/* Checks thread @i of recording @rec. */
static void check_thread(struct hist_recording *rec, size_t i,
			 const char *what)
{
	const struct hist_thread *t = &hist_recording_bundle(rec)->threads[i];
	struct history *want, *h;
	struct hist_config cfg;
	uint64_t *offs, cuts[NCUTS + 1];
	size_t n;

	CHECK(hist_recording_history(rec, i, &want) == 0);
	offs = packet_offsets(t->trace, t->trace_size, &n);
	if (!offs || n < NCUTS) {
		free(offs);
		return;		/* too short to cut */
	}
	for (size_t k = 0; k < NCUTS; k++)
		cuts[k] = offs[(k + 1) * (n - 1) / (NCUTS + 1)];
	memset(&cfg, 0, sizeof(cfg));
	cfg.cpu = hist_recording_bundle(rec)->cpu;
	cfg.trace = t->trace;
	cfg.size = cuts[0];
	cfg.image = hist_recording_image(rec);
	cfg.symtab = hist_recording_symtab(rec);
	CHECK(hist_open(&cfg, &h) == 0);
	cfg.size = t->trace_size;
	cfg.have_end_ip = t->regs.valid &&	/* as hist_recording_history */
			  (t->stop.kind == HIST_STOP_FAULT ||
			   t->stop.kind == HIST_STOP_INTERRUPTED ||
			   t->stop.kind == HIST_STOP_NONE);
	cfg.end_ip = t->regs.r[HIST_RIP];
	extend_in_steps(h, &cfg, cuts, NCUTS, want, what);
	hist_close(h);
	free(offs);
	printf("%s: %" PRIu64 " entries in %zu segments, %d cuts\n", what,
	       hist_size(want), hist_nsegments(want), NCUTS);
}

int main(int argc, char **argv)
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
			check_thread(rec, i, what);
		}
		hist_recording_close(rec);
	}
	if (argc < 2)
		CHECK(!"no bundle given");
	printf("%s\n", test_failures ? "FAILED" : "all passed");
	return test_failures ? 1 : 0;
}
