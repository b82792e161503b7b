/* The ptrace stepper as a trace source (source.h): "soft", the
 * software backend (plugin/capture: ptrace block- or single-stepping of
 * every thread, a PT packet emitter per thread).  The perf source
 * (record_perf.c) runs the same stepper natively and shares most of
 * this table's calls (record.h's rec_src_*); record_threads.c has the
 * traces of the threads and of each program image, record_bundle.c the
 * memory image, header and notes.
 */
#include <config.h>

#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/elfsym.h"
#include "capture/procmaps.h"

/* The recorder of source @s. */
static struct recorder *rec_of(struct tsrc *s)
{
	return (struct recorder *) s;
}

/* The address --start names: a number, or SYMBOL[+OFFSET] of the program
 * (plus the load base of a PIE, read from the maps of the stopped
 * process). */
static int resolve_start(struct recorder *r, uint64_t *addr)
{
	struct cap_elf_sym sym;
	struct cap_map *maps;
	uint64_t offset;
	char *end, *name;
	size_t n;
	int err;

	errno = 0;
	*addr = strtoull(r->opts->start, &end, 0);
	if (!errno && end != r->opts->start && !*end)
		return 0;
	if (!rec_split_symbol(r->opts->start, &name, &offset))
		return ptrr_fail(PTRR_ERR_USAGE, "--start=%s: expected SYMBOL, "
				 "SYMBOL+OFFSET or an address",
				 r->opts->start);
	err = cap_elf_find_symbol(r->img.exe, name, &sym);
	free(name);
	*addr = sym.value + offset;
	if (err || !sym.pie)
		return err;
	err = cap_maps_read(r->st.pid, &maps, &n);
	if (err)
		return err;
	*addr += cap_maps_base(maps, n, r->img.exe);
	cap_maps_free(maps, n);
	return 0;
}

int rec_src_start(struct tsrc *s, const char *bundle)
{
	struct recorder *r = rec_of(s);
	uint64_t addr;
	int err;

	(void) bundle;
	cap_emit_config_default(&r->cfg);
	if (r->opts->psb_period)
		r->cfg.psb_period = r->opts->psb_period;
	r->cfg.ret_compression = !r->opts->noretcomp;
	r->cfg.tsc = r->opts->tsc;
	if (r->opts->pid)
		err = cap_stepper_attach(&r->st, r->opts->pid);
	else
		err = cap_stepper_launch(&r->st, r->opts->argv, false);
	if (!err)
		err = rec_image_program(r, r->opts->pid ? NULL : r->opts->argv);
	if (!err)
		err = rec_filters_start(r);
	if (!err && r->opts->start) {
		err = resolve_start(r, &addr);
		if (!err)
			err = cap_stepper_run_to(&r->st, addr);
		if (!err)
			err = rec_filters_update(r);
	}
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	if (!err)	/* in case the process is gone at the end */
		err = rec_read_memory_map(r);
	return err;
}

const char *rec_src_program(struct tsrc *s)
{
	return rec_of(s)->img.exe;
}

void rec_src_interrupt(struct tsrc *s)
{
	cap_stepper_request_stop(&rec_of(s)->st);
}

int rec_src_finish(struct tsrc *s)
{
	return rec_finish_threads(rec_of(s));
}

size_t rec_src_nthreads(struct tsrc *s)
{
	return rec_of(s)->img.nthreads;
}

/* How a thread ended, in the bundle's terms (HIST_STOP_NONE: still
 * there at the end). */
static struct hist_stop stop_of(const struct cap_end *end)
{
	struct hist_stop s = { HIST_STOP_NONE, end->code, end->addr };

	switch (end->kind) {
	case CAP_END_EXITED: s.kind = HIST_STOP_EXITED; break;
	case CAP_END_SIGNALED: s.kind = HIST_STOP_SIGNALED; break;
	case CAP_END_FAULT: s.kind = HIST_STOP_FAULT; break;
	case CAP_END_EXEC: s.kind = HIST_STOP_EXEC; break;
	default: s.code = 0; s.addr = 0; break;
	}
	return s;
}

int rec_src_thread(struct tsrc *s, size_t i, struct tsrc_thread *out)
{
	struct recorder *r = rec_of(s);
	const struct rec_thread *rt = r->img.threads[i];
	size_t size = cap_ring_size(&rt->ring);
	uint8_t *data = realloc(r->scratch, size ? size : 1);

	_Static_assert(sizeof(rt->regs) == sizeof(out->regs.r),
		       "hist_regs follows user_regs_struct");
	if (!data)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	r->scratch = data;
	if (cap_psbs_window(rt->em.psbs.v, rt->em.psbs.cap, rt->em.psbs.n,
			    cap_ring_total(&rt->ring), size, &r->psb_scratch,
			    &out->npsbs))
		return -1;
	out->psbs = r->psb_scratch;
	if (rec_regs_window(rt, size, &r->snap_scratch, &out->nsnaps))
		return -1;
	out->snaps = r->snap_scratch;
	cap_ring_copy(&rt->ring, data);
	out->tid = rt->tid;
	out->trace = data;
	out->size = size;
	out->lost = cap_ring_lost(&rt->ring);
	out->regs.valid = true;
	memcpy(out->regs.r, &rt->regs, sizeof(out->regs.r));
	out->start_regs.valid = rt->have_start_regs;
	memcpy(out->start_regs.r, &rt->start_regs, sizeof(out->start_regs.r));
	out->stop = stop_of(&rt->end);
	return 0;
}

struct hist_stop rec_src_stop(struct tsrc *s)
{
	return stop_of(&rec_of(s)->st.end);
}

struct hist_bundle *rec_src_before_exec(struct tsrc *s)
{
	struct recorder *r = rec_of(s);
	struct hist_bundle *b = r->before;

	r->before = NULL;
	return b;
}

void rec_src_close(struct tsrc *s)
{
	struct recorder *r = rec_of(s);

	cap_affinity_restore(&r->affinity, &r->st);
	cap_stepper_finish(&r->st);
	cap_stepper_free(&r->st);
	rec_free_images(r);
	free(r->perf);
	free(r->scratch);
	free(r->psb_scratch);
	free(r->snap_scratch);
	free(r);
}

/* Bytes of trace written and overwritten, over every thread and image;
 * instructions past the full-mode cap in @dropped. */
void rec_trace_totals(const struct recorder *r, uint64_t *bytes,
		      uint64_t *lost, uint64_t *resyncs, uint64_t *dropped)
{
	*bytes = r->trace_bytes;
	*lost = r->trace_lost;
	*resyncs = r->resyncs;
	*dropped = r->dropped;
	for (size_t i = 0; i < r->img.nthreads; i++) {
		const struct rec_thread *rt = r->img.threads[i];

		*bytes += cap_ring_total(&rt->ring);
		*lost += cap_ring_lost(&rt->ring);
		*resyncs += rt->em.stats.resyncs;
		*dropped += rt->dropped;
	}
}

/* Any backend: usable for recording and for live sessions. */
static bool soft_usable(const struct rec_opts *o, bool live, char *text,
			size_t n)
{
	(void) o;
	(void) live;
	snprintf(text, n, "the software backend");
	return true;
}

int rec_src_new(struct rec_opts *o, struct recorder **out)
{
	struct recorder *r = calloc(1, sizeof(*r));

	*out = r;
	if (!r)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	r->opts = o;
	return 0;
}

static int soft_open(struct rec_opts *o, struct tsrc **out)
{
	struct recorder *r;
	int err = rec_src_new(o, &r);

	*out = r ? &r->base : NULL;
	return err;
}

/* Single-steps (or block-steps) every thread to the end. */
static int soft_run(struct tsrc *s)
{
	struct recorder *r = rec_of(s);
	int err;

	/* The ground truth single-steps: it must not depend on the block
	 * logic it checks. */
	r->st.block_mode = !r->opts->insn_step && !r->opts->truth;
	cap_affinity_pin(&r->affinity, &r->st);
	rec_progress_start(r);
	err = cap_stepper_run(&r->st, rec_on_event, r);
	rec_progress_end(r);
	return err;
}

static int soft_header(struct tsrc *s, struct hist_bundle *b)
{
	struct recorder *r = rec_of(s);

	cap_emit_cpu(&b->cpu);
	b->pt.psb_period = r->cfg.psb_period;
	b->pt.ret_compression = r->cfg.ret_compression;
	return rec_header(b, r);
}

static int soft_notes(struct tsrc *s, struct hist_bundle *b)
{
	struct recorder *r = rec_of(s);
	int err = hist_bundle_add_note(b, "software PT backend (%s), every "
				       "thread traced", r->st.block_mode ?
				       "block stepping: ptrace, an int3 on "
				       "each block's branch" :
				       "ptrace single-step");

	return err ? err : rec_image_notes(b, r);
}

/* Prints what was recorded, and how fast. */
static void soft_summary(struct tsrc *s, const char *out)
{
	const struct recorder *r = rec_of(s);
	uint64_t bytes, lost, resyncs, dropped;
	char lost_text[96], insn_rate[64], step_rate[64];
	struct timespec t1;
	double secs;

	rec_trace_totals(r, &bytes, &lost, &resyncs, &dropped);
	if (dropped)
		snprintf(lost_text, sizeof(lost_text), "truncated at the cap: "
			 "%" PRIu64 " instructions not traced", dropped);
	else
		snprintf(lost_text, sizeof(lost_text), "%" PRIu64
			 " overwritten", lost);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double) (t1.tv_sec - r->t0.tv_sec) +
	       (double) (t1.tv_nsec - r->t0.tv_nsec) / 1e9;
	/* The rates, where there is one to tell (none of single-steps when
	 * blocks ran natively throughout). */
	rec_rate_text(insn_rate, sizeof(insn_rate), r->st.insns, secs,
		      "instructions");
	rec_rate_text(step_rate, sizeof(step_rate), insn_rate[0] ?
		      r->st.steps : 0, secs, "steps");
	fprintf(stderr, "ptrr record: %" PRIu64 " instructions in %" PRIu64
		" thread%s, %" PRIu64 " bytes of trace (%s) in %.2f s%s%s%s%s%s"
		": %s\n", r->st.insns, r->st.threads_seen,
		r->st.threads_seen == 1 ? "" : "s", bytes, lost_text, secs,
		insn_rate[0] ? " (" : "", insn_rate,
		step_rate[0] ? ", " : "", step_rate, insn_rate[0] ? ")" : "",
		out);
	if (r->st.end.kind == CAP_END_SIGNALED)
		fprintf(stderr, "ptrr record: the program was killed by "
			"SIG%s; the recording keeps its history up to "
			"there\n", sigabbrev_np((int) r->st.end.code) ?
			sigabbrev_np((int) r->st.end.code) : "?");
	if (r->st.slips)
		fprintf(stderr, "ptrr record: note: %" PRIu64 " single-steps "
			"ran two instructions (a hypervisor reporting the step "
			"of an emulated instruction late); both were recorded\n",
			r->st.slips);
	if (resyncs)
		fprintf(stderr, "ptrr record: warning: %" PRIu64 " unexplained "
			"jumps were traced as asynchronous events\n", resyncs);
	if (r->st.attached)
		fprintf(stderr, "ptrr record: detached from process %d\n",
			(int) r->st.pid);
}

const struct tsrc_ops tsrc_soft = {
	.name = "soft",
	.usable = soft_usable,
	.open = soft_open,
	.start = rec_src_start,
	.program = rec_src_program,
	.run = soft_run,
	.interrupt = rec_src_interrupt,
	.finish = rec_src_finish,
	.nthreads = rec_src_nthreads,
	.thread = rec_src_thread,
	.header = soft_header,
	.memory = rec_src_memory,
	.notes = soft_notes,
	.stop = rec_src_stop,
	.before_exec = rec_src_before_exec,
	.summary = soft_summary,
	.close = rec_src_close,
	.live = &live_ptrace,
};
