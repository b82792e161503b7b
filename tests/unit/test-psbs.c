/* Histories numbered from the emitter's table of PSBs (history/index.c,
 * docs/history.md) on real recordings (tests/history-psbs.sh records
 * them with the software and QEMU backends): for each thread of each
 * bundle given, the history opened with the thread's table (threads/
 * TID.psbs) must use it, and must be the history opened without it,
 * which decodes every segment to number it — every segment (once
 * decoded: its summary, addresses and call depths), every entry and
 * every call segment (the segment's last address is not compared: the
 * index pass keeps the last block decoded before a segment's end was
 * cut, nothing reads it).  A table with one count wrong is found out by the
 * first decode of that segment, and the history extended after that is
 * numbered by decoding, as without a table.  The index saved without
 * decoding (not complete: the QEMU backend's) reads back as a history
 * numbered from the table that gives the same entries and call
 * segments, and a wrong table saved in it is found out as well, by an
 * error, never a wrong history.
 *
 * usage: test-psbs BUNDLE... */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "history_compare.h"
#include "history_internal.h"

/* Wrong tables checked (check_wrong_table()). */
static unsigned wrong_tables;

/* Thread @t's table with one count wrong: every PSB after its second
 * comes one instruction later (so its second segment has one entry
 * more than it decodes to), into a malloc'd copy. */
static struct hist_psb *wrong_table(const struct hist_thread *t)
{
	struct hist_psb *v = malloc(t->npsbs * sizeof(*v));

	if (!v)
		return NULL;
	memcpy(v, t->psbs, t->npsbs * sizeof(*v));
	for (size_t k = 2; k < t->npsbs; k++)
		v[k].insns++;
	return v;
}

/* Going to the end of the second segment of @h, numbered from a table
 * that counts it one entry more than it decodes to, is an error, and
 * the table is dropped. */
static void found_out(struct history *h)
{
	struct hist_cursor *c;

	CHECK(hist_cursor_new(h, &c) == 0);
	CHECK(hist_cursor_seek(c, hist_segment_at(h, 1)->first +
			       hist_segment_at(h, 1)->count - 1) != 0);
	ptrr_clear_error();
	CHECK(!hist_numbered_from_table(h));
	hist_cursor_free(c);
}

/* A wrong table is found out and dropped: the history is then the one
 * @want decodes.  Only for a trace of three segments or more, all
 * listed (the second one decoded first, and found one entry short). */
static void check_wrong_table(struct hist_config cfg,
			      const struct hist_thread *t,
			      struct history *want, const char *what)
{
	struct hist_psb *v = wrong_table(t);
	struct history *h;

	cfg.psbs = v;
	CHECK(v && hist_open(&cfg, &h) == 0);
	if (!v)
		return;
	CHECK(hist_numbered_from_table(h));
	CHECK_EQ_U64(hist_size(h), hist_size(want) + 1);
	found_out(h);
	CHECK(hist_extend(h, cfg.trace, cfg.size, cfg.have_end_ip,
			  cfg.end_ip) == 0);
	CHECK(!hist_numbered_from_table(h));
	check_segments(h, want, false, what);
	check_entries(h, want, what);
	check_calls(h, want, what);
	hist_close(h);
	free(v);
	wrong_tables++;
}

/* @h's index saved without decoding (hist_index_save() not complete),
 * read back into *@out. */
static int saved_lazily(struct history *h, const struct hist_config *cfg,
			struct history **out)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int err = hist_index_save(h, 11, SIZE_MAX, false, &data, &len);

	if (!err)
		err = hist_index_load(cfg, 11, data, len, false, out);
	if (err)
		free(data);
	return err;
}

/* The saved index of a history opened with the table, not complete, is
 * the history @want decodes; one of a wrong table is found out at the
 * first decode of the segment it miscounts. */
static void check_saved_lazily(struct hist_config cfg,
			       const struct hist_thread *t,
			       struct history *want, const char *what)
{
	struct hist_psb *v = wrong_table(t);
	struct history *h, *back;

	CHECK(hist_open(&cfg, &h) == 0);
	CHECK(saved_lazily(h, &cfg, &back) == 0);
	hist_close(h);
	if (hist_nsegments(want) > 1)
		CHECK(hist_numbered_from_table(back));
	check_entries(back, want, what);
	check_calls(back, want, what);
	CHECK(hist_learn_segments(back) == 0);
	check_segments(back, want, true, what);
	hist_close(back);
	if (!v || hist_nsegments(want) < 3 ||
	    t->npsbs != hist_nsegments(want)) {
		free(v);
		return;
	}
	cfg.psbs = v;
	CHECK(hist_open(&cfg, &h) == 0);
	CHECK(saved_lazily(h, &cfg, &back) == 0);
	hist_close(h);
	CHECK(hist_numbered_from_table(back));
	found_out(back);
	hist_close(back);
	free(v);
}

/* Checks thread @i of recording @rec. */
static void check_thread(struct hist_recording *rec, size_t i,
			 const char *what)
{
	const struct hist_thread *t = &hist_recording_bundle(rec)->threads[i];
	struct history *table, *decoded;
	struct hist_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.cpu = hist_recording_bundle(rec)->cpu;
	cfg.trace = t->trace;
	cfg.size = t->trace_size;
	cfg.image = hist_recording_image(rec);
	cfg.symtab = hist_recording_symtab(rec);
	cfg.have_end_ip = t->regs.valid &&	/* as hist_recording_history */
			  (t->stop.kind == HIST_STOP_FAULT ||
			   t->stop.kind == HIST_STOP_INTERRUPTED ||
			   t->stop.kind == HIST_STOP_NONE);
	cfg.end_ip = t->regs.r[HIST_RIP];
	CHECK(hist_open(&cfg, &decoded) == 0);
	cfg.psbs = t->psbs;
	cfg.npsbs = t->npsbs;
	CHECK(hist_open(&cfg, &table) == 0);
	if (!t->npsbs)
		fprintf(stderr, "%s: no table of PSBs\n", what);
	CHECK(t->npsbs);
	if (hist_nsegments(decoded) > 1)
		CHECK(hist_numbered_from_table(table));
	check_segments(table, decoded, false, what);
	check_entries(table, decoded, what);
	check_calls(table, decoded, what);
	/* Everything decoded now: what it filled in is the index's. */
	CHECK(hist_numbered_from_table(table) || hist_nsegments(decoded) < 2);
	CHECK(hist_learn_segments(table) == 0);
	check_segments(table, decoded, true, what);
	if (hist_nsegments(decoded) > 2 && t->npsbs == hist_nsegments(decoded))
		check_wrong_table(cfg, t, decoded, what);
	check_saved_lazily(cfg, t, decoded, what);
	printf("%s: %" PRIu64 " entries in %zu segments, %zu PSBs listed\n",
	       what, hist_size(decoded), hist_nsegments(decoded), t->npsbs);
	hist_close(table);
	hist_close(decoded);
}

int main(int argc, char **argv)
{
	check_bundles(argc, argv, check_thread);
	CHECK(wrong_tables > 0);
	printf("%s\n", test_failures ? "FAILED" : "all passed");
	return test_failures ? 1 : 0;
}
