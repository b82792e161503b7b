/* The trace sources (source.h): choosing one, and what every source's
 * recording goes through — the run and the bundle.  Nothing here knows
 * which source it drives. */
#include <config.h>

#include "source.h"
#include "record.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct tsrc_ops *tsrc_sources[TSRC_NSOURCES] = {
	&tsrc_perf, &tsrc_qemu, &tsrc_soft,
};

const struct tsrc_ops *tsrc_named(const char *name)
{
	for (size_t i = 0; i < TSRC_NSOURCES; i++)
		if (!strcmp(tsrc_sources[i]->name, name))
			return tsrc_sources[i];
	return NULL;
}

int tsrc_open(const struct tsrc_ops *ops, struct rec_opts *o,
	      struct tsrc **out)
{
	int err;

	*out = NULL;
	err = ops->open(o, out);
	if (*out) {
		(*out)->ops = ops;
		(*out)->opts = o;
	}
	return err;
}

int tsrc_choose(const char *who, const char *name,
		const struct rec_opts *o, bool live,
		const struct tsrc_ops **out)
{
	char line[1024] = "", text[512];

	if (name && strcmp(name, "auto")) {
		/* Named: the source itself explains what it lacks when
		 * opened; a live session is refused here. */
		*out = tsrc_named(name);
		if (!*out || !live || (*out)->usable(o, live, text,
						     sizeof(text)))
			return 0;
		fprintf(stderr, "%s: %s; use --backend=soft\n", who, text);
		return 2;
	}
	for (size_t i = 0; i < TSRC_NSOURCES; i++) {
		size_t len = strlen(line);

		if (tsrc_sources[i]->usable(o, live, text, sizeof(text))) {
			*out = tsrc_sources[i];
			if (i)
				fprintf(stderr, "%s: %susing %s\n", who, line,
					text);
			return 0;
		}
		snprintf(line + len, sizeof(line) - len, "%s; ", text);
	}
	fprintf(stderr, "%s: %sno trace source can be used\n", who, line);
	return 2;
}

int tsrc_bundle(struct tsrc *s, struct hist_bundle *mem, bool interrupted,
		struct hist_bundle **out)
{
	struct hist_bundle *b = mem;
	int err = b ? 0 : hist_bundle_new(&b);
	size_t n = s->ops->nthreads(s);

	*out = NULL;
	if (err)
		return err;
	err = s->ops->header(s, b);
	snprintf(b->pt.backend, sizeof(b->pt.backend), "%s", s->ops->name);
	for (size_t i = 0; !err && i < n; i++) {
		struct tsrc_thread t;
		struct hist_thread *ht;

		memset(&t, 0, sizeof(t));
		err = s->ops->thread(s, i, &t);
		ht = err ? NULL : hist_bundle_add_thread(b, t.tid);
		if (!err && !ht)
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		if (err)
			break;
		err = hist_thread_set_trace(ht, t.trace, t.size);
		if (!err && t.npsbs) {
			ht->psbs = malloc(t.npsbs * sizeof(*ht->psbs));
			if (ht->psbs) {
				memcpy(ht->psbs, t.psbs,
				       t.npsbs * sizeof(*ht->psbs));
				ht->npsbs = t.npsbs;
			}
		}
		if (!err && t.nsnaps) {
			ht->snaps = malloc(t.nsnaps * sizeof(*ht->snaps));
			if (!ht->snaps)
				err = ptrr_fail(PTRR_ERR_NOMEM,
						"out of memory");
			else
				memcpy(ht->snaps, t.snaps,
				       t.nsnaps * sizeof(*ht->snaps));
			ht->nsnaps = ht->snaps ? t.nsnaps : 0;
		}
		ht->trace_lost = t.lost;
		ht->regs = t.regs;
		/* Only if the trace still starts where they were read. */
		ht->start_regs = t.start_regs;
		ht->start_regs.valid = t.start_regs.valid && !t.lost;
		ht->stop = t.stop;
		if (t.stop.kind == HIST_STOP_NONE && interrupted)
			ht->stop = (struct hist_stop){ HIST_STOP_INTERRUPTED,
						       0, 0 };
	}
	if (!err)
		err = s->ops->notes(s, b);
	if (err) {
		hist_bundle_free(b);
		return err;
	}
	*out = b;
	return 0;
}

/* True if the recording of @s saves the complete index (--index, else
 * the source's default for the mode: tsrc_ops.lazy_index). */
static bool index_complete(const struct tsrc *s)
{
	if (s->opts->index != REC_INDEX_SOURCE)
		return s->opts->index == REC_INDEX_FULL;
	return !s->ops->lazy_index || s->opts->full;
}

/* Writes the recording of @s to bundle directory @out, with its index;
 * @interrupted says the user stopped it. */
static int write_bundle(struct tsrc *s, const char *out, bool interrupted)
{
	struct hist_bundle *mem = NULL, *b;
	int err = s->ops->memory(s, &mem);

	if (!err)
		err = tsrc_bundle(s, mem, interrupted, &b);
	else
		hist_bundle_free(mem);
	if (err)
		return err;
	b->stop = interrupted ? (struct hist_stop){ HIST_STOP_INTERRUPTED,
						    0, 0 } : s->ops->stop(s);
	b->before_exec = s->ops->before_exec(s);
	/* Without its index the recording still opens (decoding the trace
	 * again): a failure here must not lose it. */
	if ((err = hist_bundle_make_index(b, index_complete(s))))
		fprintf(stderr, "warning: %s: the bundle is saved without its "
			"index (opening it decodes the trace again)\n",
			ptrr_errmsg(err));
	err = hist_bundle_save(b, out, s->opts->pack ? HIST_SAVE_PACK : 0);
	hist_bundle_free(b);
	return err;
}

/* The default bundle name: PROG's basename + ".ptrr", here. */
static char *default_out(const char *prog)
{
	char *copy = strdup(prog), *name = NULL;

	if (copy && asprintf(&name, "%s.ptrr", basename(copy)) < 0)
		name = NULL;
	free(copy);
	return name;
}

/* Sets *@out to the bundle's name, -o or by default PROG.ptrr here (for
 * --pid, once attached), and checks that it may be written there, so
 * that a recording is not made only to be refused. */
static int bundle_name(struct tsrc *s, char **out)
{
	const struct rec_opts *o = s->opts;

	*out = o->out ? strdup(o->out) :
	       default_out(o->pid ? s->ops->program(s) : o->argv[0]);
	if (!*out)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return hist_bundle_check_target(*out);
}

int tsrc_record(struct tsrc *s, volatile sig_atomic_t *interrupted)
{
	char *out = NULL;
	int err = 0;

	if (s->opts->out || !s->opts->pid)
		err = bundle_name(s, &out);
	if (!err)
		err = s->ops->start(s, out);
	if (!err && !out)
		err = bundle_name(s, &out);
	if (!err)
		err = s->ops->run(s);
	if (!err)
		err = s->ops->finish(s);
	if (!err)
		err = write_bundle(s, out, *interrupted);
	if (!err)
		s->ops->summary(s, out);
	free(out);
	return err;
}
