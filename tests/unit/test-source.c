/* test-source --backend=NAME -o BUNDLE [record options] -- PROG [ARGS]:
 * runs `ptrr record` (ptrr_cmd_record) with the trace source NAME
 * (source.h) replaced in the list of sources by a table that wraps it,
 * and checks that the bundle holds exactly what the source handed over
 * through the table: every thread's trace bytes, registers and end (of
 * every program image, the ones before an execve too), the memory
 * image, the end of the process, the source's name as the backend, one
 * summary.  A recording made any other way — `ptrr record` branching to
 * a backend's own writer, a source adding bytes behind the table —
 * fails here. */
#include <config.h>

#include "commands.h"
#include "record.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* One thread as the source handed it over. */
struct handed {
	int tid;
	uint8_t *trace;
	size_t size;
	uint64_t lost;
	struct hist_stop stop;
	bool regs_valid;
	uint64_t rip;
};

static const struct tsrc_ops *real;	/* the source under test */
static struct handed *threads;		/* handed over, in order */
static size_t nthreads;
static size_t modules;			/* in the memory handed over */
static struct hist_stop stop;		/* the process's, handed over */
static unsigned summaries;

static int wrap_thread(struct tsrc *s, size_t i, struct tsrc_thread *out)
{
	int err = real->thread(s, i, out);
	struct handed *h;

	if (err)
		return err;
	threads = realloc(threads, (nthreads + 1) * sizeof(*threads));
	if (!threads)
		abort();
	h = &threads[nthreads++];
	h->tid = out->tid;
	h->size = out->size;
	h->trace = malloc(out->size + 1);
	if (!h->trace)
		abort();
	memcpy(h->trace, out->trace, out->size);
	h->lost = out->lost;
	h->stop = out->stop;
	h->regs_valid = out->regs.valid;
	h->rip = out->regs.r[HIST_RIP];
	return 0;
}

static int wrap_memory(struct tsrc *s, struct hist_bundle **out)
{
	int err = real->memory(s, out);

	if (!err)
		modules = (*out)->nmodules;
	return err;
}

static struct hist_stop wrap_stop(struct tsrc *s)
{
	stop = real->stop(s);
	return stop;
}

static void wrap_summary(struct tsrc *s, const char *bundle)
{
	summaries++;
	real->summary(s, bundle);
}

/* Appends the threads of bundle @dir and of the images before it,
 * oldest first, to @v. */
static void load_chain(const char *dir, struct hist_thread **v, size_t *n,
		       struct hist_bundle **last)
{
	struct hist_bundle *b;
	char *inner;
	int err = hist_bundle_load(dir, &b);

	if (err) {
		fprintf(stderr, "%s: %s\n", dir, ptrr_errmsg(err));
		CHECK(!"the bundle loads");
		return;
	}
	if (b->before_exec_dir) {
		if (asprintf(&inner, "%s/%s", dir, b->before_exec_dir) < 0)
			abort();
		load_chain(inner, v, n, NULL);
		free(inner);
	}
	*v = realloc(*v, (*n + b->nthreads) * sizeof(**v));
	if (!*v)
		abort();
	for (size_t i = 0; i < b->nthreads; i++) {
		/* The copy's trace is its own; the rest is read before the
		 * bundle is freed. */
		struct hist_thread *t = &(*v)[(*n)++];

		*t = b->threads[i];
		t->trace = malloc(t->trace_size + 1);
		if (!t->trace)
			abort();
		memcpy(t->trace, b->threads[i].trace, t->trace_size);
	}
	if (last)
		*last = b;
	else
		hist_bundle_free(b);
}

static const char *bundle_dir;	/* -o BUNDLE */

/* The bundle saved against what was handed over. */
static void check_bundle(void)
{
	const char *dir = bundle_dir;
	struct hist_thread *saved = NULL;
	struct hist_bundle *b = NULL;
	size_t n = 0;

	load_chain(dir, &saved, &n, &b);
	if (!b)
		return;
	CHECK(!strcmp(b->pt.backend, real->name));
	CHECK_EQ_U64(summaries, 1);
	CHECK(nthreads > 0);
	CHECK_EQ_U64(n, nthreads);
	for (size_t i = 0; i < n && i < nthreads; i++) {
		const struct handed *h = &threads[i];

		CHECK_EQ_U64(saved[i].tid, h->tid);
		CHECK_EQ_U64(saved[i].trace_size, h->size);
		CHECK(h->size > 0);
		CHECK(saved[i].trace_size == h->size &&
		      !memcmp(saved[i].trace, h->trace, h->size));
		CHECK_EQ_U64(saved[i].trace_lost, h->lost);
		CHECK_EQ_U64(saved[i].stop.kind, h->stop.kind);
		CHECK_EQ_U64(saved[i].regs.valid, h->regs_valid);
		if (h->regs_valid)
			CHECK_EQ_U64(saved[i].regs.r[HIST_RIP], h->rip);
	}
	CHECK(modules > 0);
	CHECK_EQ_U64(b->nmodules, modules);
	CHECK_EQ_U64(b->stop.kind, stop.kind);
	CHECK_EQ_U64(b->stop.code, stop.code);
	CHECK_EQ_U64(b->stop.addr, stop.addr);
	printf("%s: %zu threads, %zu modules handed over and saved\n",
	       real->name, nthreads, modules);
	for (size_t i = 0; i < n; i++)
		free(saved[i].trace);
	free(saved);
	hist_bundle_free(b);
}

int main(int argc, char **argv)
{
	static struct tsrc_ops wrap;
	struct rec_opts o;
	size_t i;
	int status;

	if (rec_opts_parse(argc, argv, &o) || !o.backend || !o.out ||
	    !(real = tsrc_named(o.backend))) {
		fprintf(stderr, "usage: test-source --backend=NAME -o BUNDLE "
			"[record options] -- PROG [ARGS]\n");
		return 2;
	}
	wrap = *real;
	wrap.thread = wrap_thread;
	wrap.memory = wrap_memory;
	wrap.stop = wrap_stop;
	wrap.summary = wrap_summary;
	for (i = 0; tsrc_sources[i] != real; i++)
		;
	tsrc_sources[i] = &wrap;
	status = ptrr_cmd_record(argc, argv);
	CHECK_EQ_U64(status, 0);
	bundle_dir = o.out;
	if (!status)
		RUN(check_bundle);
	for (i = 0; i < nthreads; i++)
		free(threads[i].trace);
	free(threads);
	return test_summary();
}
