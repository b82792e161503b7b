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

#include "history_compare.h"

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
	check_segments(h, want, true, what);
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
	check_bundles(argc, argv, check_thread);
	printf("%s\n", test_failures ? "FAILED" : "all passed");
	return test_failures ? 1 : 0;
}
