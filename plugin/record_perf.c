/* `ptrr record --backend=perf`: the program runs at native speed
 * (cap_stepper_run_native) and every thread is traced by its own perf
 * intel_pt event (capture/perf_pt.h), as docs/perf-backend.md describes.
 *
 * Per thread: the event is opened and enabled when the thread is about
 * to execute its first instruction (CAP_EV_THREAD: launched, attached,
 * cloned, or at the --start address), read a last time and closed when
 * its trace ends (exit, death, execve, the end of the recording).  The
 * bytes land in the thread's ring (struct rec_thread), which the bundle
 * writes as threads/TID.pt like the software backend's.
 *
 * Snapshot mode: the AUX area keeps the last --buffer-size bytes by
 * itself; one read at the end copies them out.  Full mode: the area is
 * drained at every ptrace stop of its thread (a signal, a clone, a
 * fork); between stops the CPU stops writing when the area is full,
 * which the bundle shows as a gap and a note.  Draining from the wait
 * loop as the fds become readable would cut less; it needs the loop to
 * poll the events together with waitpid. */
#include <config.h>

#include "record.h"

#include "capture/pmu.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Full mode's AUX area: a quarter of the trace to keep (--buffer-size),
 * so that it is drained a few times before the cap, within 8 KiB (two
 * pages, the least full mode maps) and 4 MiB (perf's area for a
 * privileged user). */
#define FULL_AREA_MIN (8u << 10)
#define FULL_AREA_MAX (4u << 20)

struct rec_perf {
	struct cap_perf_options opts;
	struct hist_cpu cpu;
	uint32_t psb_bytes;	/* of the first event opened */
	bool filters_made;	/* opts.filters is set */
};

/* The AUX area for full mode keeping at most @cap bytes. */
static uint64_t full_area(uint64_t cap)
{
	uint64_t area = FULL_AREA_MIN;

	while (area < FULL_AREA_MAX && 8 * area <= cap)
		area *= 2;
	return area;
}

/* Usable where the intel_pt PMU is (in sysfs, or under
 * $PTRR_SYSFS_ROOT in tests), for recording only. */
static bool perf_usable(const struct rec_opts *o, bool live, char *text,
			size_t n)
{
	char dir[PATH_MAX];
	bool pmu = cap_pmu_probe(NULL, dir, sizeof(dir));

	(void) o;
	if (pmu && !live)
		snprintf(text, n, "perf intel_pt");
	else if (pmu)
		snprintf(text, n, "the perf backend does not trace live "
			 "sessions yet (ptrr record --backend=perf and ptrr "
			 "replay do)");
	else
		snprintf(text, n, "intel_pt PMU not found (%s): this CPU or "
			 "VM has no Intel PT", dir);
	return pmu && !live;
}

/* Sets up the perf backend for the recording: its options from the
 * command line, the CPU. */
static int perf_open(struct rec_opts *o, struct tsrc **out)
{
	char why[PATH_MAX + 96];
	struct recorder *r;
	struct rec_perf *p;
	int err = rec_src_new(o, &r);

	*out = r ? &r->base : NULL;
	if (err)
		return err;
	if (!perf_usable(o, false, why, sizeof(why)))
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "%s; use --backend=soft "
				 "or --backend=qemu", why);
	if (o->truth) {
		r->base.usage_error = true;
		return ptrr_fail(PTRR_ERR_USAGE, "--ground-truth needs the "
				 "software backend (the perf backend does not "
				 "see instructions); use --backend=soft");
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	cap_perf_options_default(&p->opts);
	p->opts.psb_period = o->psb_period;
	p->opts.ret_compression = !o->noretcomp;
	p->opts.tsc = o->tsc;
	if (o->full) {
		p->opts.mode = CAP_PERF_FULL;
		p->opts.aux_size = full_area(o->buffer_size);
		p->opts.full_cap = o->buffer_size;
	} else {
		p->opts.aux_size = o->buffer_size;
	}
	r->perf = p;
	return cap_cpu_identify(NULL, &p->cpu);
}

/* The filters of the recording, for every event: made when the first
 * thread's is opened (the program is loaded, its symbols known). */
static int perf_filters(struct recorder *r, pid_t tid)
{
	struct rec_perf *p = r->perf;

	if (p->filters_made || !r->opts->nfilters)
		return 0;
	p->filters_made = true;
	return rec_filters_perf(r, tid, p->opts.filters, &p->opts.nfilters);
}

int rec_perf_thread_start(struct recorder *r, struct rec_thread *rt)
{
	int err = perf_filters(r, rt->tid);

	if (!err)
		err = cap_ring_init(&rt->ring, 0);

	if (!err && !(rt->perf = calloc(1, sizeof(*rt->perf))))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (err)
		return err;
	rt->perf->fd = -1;
	err = cap_perf_open(rt->perf, rt->tid, &r->perf->opts, NULL);
	if (!err)
		err = cap_perf_enable(rt->perf);
	if (!err && !r->perf->psb_bytes)
		r->perf->psb_bytes = rt->perf->psb_bytes;
	return err ? err : rec_read_memory_map(r);
}

int rec_perf_thread_finish(struct recorder *r, struct rec_thread *rt)
{
	int err = 0;

	/* The run-time ranges of the filters, for the bundle's notes only:
	 * the kernel placed them itself; a process already gone cannot
	 * say where. */
	(void) rec_filters_update(r);
	if (rt->perf->fd >= 0)
		err = cap_perf_read(rt->perf, &rt->ring, false, NULL);
	cap_perf_close(rt->perf);
	return err;
}

int rec_perf_stop(struct recorder *r, struct rec_thread *rt)
{
	int err = 0;

	if (rt->perf->fd >= 0 && rt->perf->opts.mode == CAP_PERF_FULL)
		err = cap_perf_read(rt->perf, &rt->ring, true, NULL);
	if (!err)	/* the run-time ranges, for the bundle's notes */
		err = rec_filters_update(r);
	return err ? err : rec_read_memory_map(r);
}

void rec_perf_thread_free(struct rec_thread *rt)
{
	if (!rt->perf)
		return;
	cap_perf_close(rt->perf);
	free(rt->perf);
	rt->perf = NULL;
}

/* Runs the program at native speed, tracing each thread with its own
 * intel_pt event, until it ends. */
static int perf_run(struct tsrc *s)
{
	struct recorder *r = (struct recorder *) s;

	return cap_stepper_run_native(&r->st, rec_on_event, r);
}

static int perf_header(struct tsrc *s, struct hist_bundle *b)
{
	const struct recorder *r = (const struct recorder *) s;

	b->cpu = r->perf->cpu;
	b->pt.psb_period = r->perf->psb_bytes;
	b->pt.ret_compression = r->perf->opts.ret_compression;
	return rec_header(b, r);
}

/* What thread @rt's event lost: a wrapped snapshot, truncations, bytes
 * past the full-mode cap. */
static int thread_notes(struct hist_bundle *b, const struct rec_thread *rt)
{
	const struct cap_perf *p = rt->perf;
	int err = 0;

	if (p->wrapped)
		err = hist_bundle_add_note(b, "thread %d: the AUX area "
					   "wrapped: only the last %zu bytes "
					   "of its trace are kept",
					   (int) rt->tid, p->area_len);
	if (!err && p->truncations)
		err = hist_bundle_add_note(b, "thread %d: the AUX area filled "
					   "up %" PRIu64 " times between two "
					   "reads: the trace is cut there "
					   "(gaps), first at byte %" PRIu64,
					   (int) rt->tid, p->truncations,
					   p->first_cut);
	if (!err && p->dropped)
		err = hist_bundle_add_note(b, "thread %d: %" PRIu64 " bytes of "
					   "trace dropped past the %" PRIu64
					   "-byte cap", (int) rt->tid,
					   p->dropped, p->opts.full_cap);
	return err;
}

/* The notes of a perf recording: the backend, what each thread's event
 * lost, an execve; then those of every image. */
static int perf_notes(struct tsrc *s, struct hist_bundle *b)
{
	const struct recorder *r = (const struct recorder *) s;
	const struct rec_image *img = &r->img;
	bool exec = false;
	int err = hist_bundle_add_note(b, "perf intel_pt backend, %s mode, "
				       "%" PRIu64 "-byte AUX area per thread; "
				       "the program ran at native speed",
				       r->perf->opts.mode == CAP_PERF_FULL ?
				       "full" : "snapshot",
				       r->perf->opts.aux_size);

	for (size_t i = 0; !err && i < img->nthreads; i++) {
		if (img->threads[i]->perf)
			err = thread_notes(b, img->threads[i]);
		exec |= img->threads[i]->end.kind == CAP_END_EXEC;
	}
	if (!err && exec)
		err = hist_bundle_add_note(b, "execve: seen only after it "
					   "happened; the memory map is the "
					   "one read at the last stop before "
					   "it (later mappings are missing)");
	return err ? err : rec_image_notes(b, r);
}

/* Prints what was recorded. */
static void perf_summary(struct tsrc *s, const char *out)
{
	const struct recorder *r = (const struct recorder *) s;
	uint64_t bytes = r->trace_bytes;
	struct timespec t1;
	double secs;

	for (size_t i = 0; i < r->img.nthreads; i++)
		bytes += cap_ring_total(&r->img.threads[i]->ring);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double) (t1.tv_sec - r->t0.tv_sec) +
	       (double) (t1.tv_nsec - r->t0.tv_nsec) / 1e9;
	fprintf(stderr, "ptrr record: perf intel_pt, %s mode: %" PRIu64
		" thread%s, %" PRIu64 " bytes of trace in %.2f s at native "
		"speed: %s\n", r->perf->opts.mode == CAP_PERF_FULL ? "full" :
		"snapshot", r->st.threads_seen,
		r->st.threads_seen == 1 ? "" : "s", bytes, secs, out);
}

const struct tsrc_ops tsrc_perf = {
	.name = "perf",
	.lazy_index = true,
	.usable = perf_usable,
	.open = perf_open,
	.start = rec_src_start,
	.program = rec_src_program,
	.run = perf_run,
	.interrupt = rec_src_interrupt,
	.finish = rec_src_finish,
	.nthreads = rec_src_nthreads,
	.thread = rec_src_thread,
	.header = perf_header,
	.memory = rec_src_memory,
	.notes = perf_notes,
	.stop = rec_src_stop,
	.before_exec = rec_src_before_exec,
	.summary = perf_summary,
	.close = rec_src_close,
};
