/* A recording: a loaded bundle with its memory image, its symbols and a
 * history per thread, each indexed the first time it is asked for. */
#include "history_internal.h"

#include <stdlib.h>

struct hist_recording {
	struct hist_bundle *bundle;
	struct hist_image *image;
	struct hist_symtab *symtab;
	struct history **histories;	/* one per thread, NULL until built */
};

int hist_recording_open(const char *dir, struct hist_recording **out)
{
	struct hist_recording *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	err = hist_bundle_load(dir, &r->bundle);
	if (!err)
		err = hist_image_from_bundle(r->bundle, &r->image);
	if (!err)
		err = hist_symtab_from_bundle(r->bundle, &r->symtab);
	if (!err) {
		r->histories = calloc(r->bundle->nthreads + 1,
				      sizeof(*r->histories));
		if (!r->histories)
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	if (err) {
		hist_recording_close(r);
		return err;
	}
	*out = r;
	return 0;
}

void hist_recording_close(struct hist_recording *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->histories && i < r->bundle->nthreads; i++)
		hist_close(r->histories[i]);
	free(r->histories);
	hist_symtab_free(r->symtab);
	hist_image_free(r->image);
	hist_bundle_free(r->bundle);
	free(r);
}

const struct hist_bundle *hist_recording_bundle(
	const struct hist_recording *r)
{
	return r->bundle;
}

struct hist_image *hist_recording_image(struct hist_recording *r)
{
	return r->image;
}

struct hist_symtab *hist_recording_symtab(struct hist_recording *r)
{
	return r->symtab;
}

/* True if thread @t was still alive, so its final PC is where its
 * history ends (a crash, an interrupt or a live stop; not an exit). */
static bool thread_has_end_ip(const struct hist_thread *t)
{
	if (!t->regs.valid)
		return false;
	return t->stop.kind == HIST_STOP_FAULT ||
	       t->stop.kind == HIST_STOP_INTERRUPTED ||
	       t->stop.kind == HIST_STOP_NONE;
}

int hist_recording_history(struct hist_recording *r, size_t i,
			   struct history **out)
{
	const struct hist_thread *t;
	struct hist_config cfg = { 0 };
	int err;

	if (i >= r->bundle->nthreads)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %zu", i);
	if (!r->histories[i]) {
		t = &r->bundle->threads[i];
		cfg.cpu = r->bundle->cpu;
		cfg.trace = t->trace;
		cfg.size = t->trace_size;
		cfg.image = r->image;
		cfg.symtab = r->symtab;
		cfg.have_end_ip = thread_has_end_ip(t);
		cfg.end_ip = t->regs.r[HIST_RIP];
		err = hist_open(&cfg, &r->histories[i]);
		if (err)
			return err;
	}
	*out = r->histories[i];
	return 0;
}

int hist_recording_find_tid(const struct hist_recording *r, int tid,
			    size_t *i)
{
	for (size_t k = 0; k < r->bundle->nthreads; k++) {
		if (r->bundle->threads[k].tid == tid) {
			*i = k;
			return 0;
		}
	}
	return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %d in the recording",
			 tid);
}
