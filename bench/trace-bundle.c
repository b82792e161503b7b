/* bench/trace-bundle — makes a ptrr bundle of a generated trace
 * (bench/gen-trace), so that the same bytes can be served to gdb by
 * `ptrr serve` and browsed with ptrr's own commands: the gdb benchmark
 * (bench/run-gdb.sh) compares gdb's `record pt` path with ptrr's on it.
 *
 * The bundle has one thread (task id 1) whose trace is the generated one,
 * the walked binary as the program and as a module at each executable
 * segment the walk used, no registers (the history then ends at the last
 * instruction the trace shows) and the stop "interrupted".
 *
 * usage: trace-bundle TRACE.info BUNDLE
 */
#include "trace-info.h"

#include "history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fills @b from the generated trace @bt whose bytes are @trace. */
static int fill_bundle(struct hist_bundle *b, const struct bench_trace *bt,
		       const uint8_t *trace, size_t size)
{
	struct hist_thread *t;
	int err;

	b->exe = strdup(bt->binary);
	b->argv = calloc(2, sizeof(*b->argv));
	if (!b->exe || !b->argv || !(b->argv[0] = strdup(bt->binary)))
		return PTRR_ERR_NOMEM;
	snprintf(b->pt.backend, sizeof(b->pt.backend), "soft");
	b->pt.psb_period = bt->psb_period;
	b->pt.ret_compression = true;
	b->stop.kind = HIST_STOP_INTERRUPTED;
	for (size_t i = 0; i < bt->nsect; i++) {
		err = hist_bundle_add_module(b, bt->binary, bt->sect[i].vaddr,
					     bt->sect[i].size,
					     bt->sect[i].offset);
		if (err)
			return err;
	}
	t = hist_bundle_add_thread(b, 1);
	if (!t)
		return PTRR_ERR_NOMEM;
	t->stop.kind = HIST_STOP_INTERRUPTED;
	return hist_thread_set_trace(t, trace, size);
}

int main(int argc, char **argv)
{
	struct bench_trace bt;
	struct hist_bundle *b;
	uint8_t *trace;
	size_t size;
	bool index = true;
	int err;

	if (argc == 4 && !strcmp(argv[1], "--no-index")) {
		index = false;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: trace-bundle [--no-index] TRACE.info "
			"BUNDLE\n");
		return 1;
	}
	if (bench_trace_read(argv[1], &bt) < 0)
		return 2;
	trace = bench_trace_map(&bt, &size);
	if (!trace)
		return 2;
	err = hist_bundle_new(&b);
	if (!err)
		err = fill_bundle(b, &bt, trace, size);
	if (!err && index)
		err = hist_bundle_make_index(b, true);
	if (!err)
		err = hist_bundle_save(b, argv[2], 0);
	if (err)
		bench_die("trace-bundle", ptrr_errmsg(err));
	hist_bundle_free(b);
	bench_trace_unmap(trace, size);
	return 0;
}
