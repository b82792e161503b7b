/* `ptrr record`: the bundle of a finished recording — header, every
 * thread and its trace, the memory image (modules, anonymous code), after
 * a crash a snapshot of the writable memory, and the recording of the
 * program before an execve, if any.  See record.h. */
#include <config.h>

#include "record.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/procmaps.h"

/* A total beyond which the crash snapshot stops adding regions. */
#define SNAPSHOT_MAX (256ull << 20)

/* The CPU, the PT configuration and the program of image @img. */
static int fill_header(struct hist_bundle *b, const struct recorder *r,
		       const struct rec_image *img)
{
	cap_emit_cpu(&b->cpu);
	strcpy(b->pt.backend, "soft");
	b->pt.psb_period = r->cfg.psb_period;
	b->pt.ret_compression = r->cfg.ret_compression;
	b->pt.nfilters = 0;
	for (uint32_t i = 0; i < r->cfg.nfilters; i++) {
		if (!r->cfg.filters[i].size)	/* its file never mapped */
			continue;
		b->pt.filters[b->pt.nfilters].start = r->cfg.filters[i].start;
		b->pt.filters[b->pt.nfilters++].size = r->cfg.filters[i].size;
	}
	if (r->perf)
		rec_perf_header(b, r);
	free(b->exe);
	b->exe = img->exe ? strdup(img->exe) : NULL;
	if (img->exe && !b->exe)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return hist_bundle_set_argv(b, img->argv);
}

/* How a thread ended, in the bundle's terms; a thread still there at
 * the end was interrupted with the recording, if the user did that. */
static struct hist_stop stop_of(const struct cap_end *end, bool interrupted)
{
	struct hist_stop s = { HIST_STOP_NONE, end->code, end->addr };

	switch (end->kind) {
	case CAP_END_EXITED: s.kind = HIST_STOP_EXITED; break;
	case CAP_END_SIGNALED: s.kind = HIST_STOP_SIGNALED; break;
	case CAP_END_FAULT: s.kind = HIST_STOP_FAULT; break;
	case CAP_END_EXEC: s.kind = HIST_STOP_EXEC; break;
	default:
		s.kind = interrupted ? HIST_STOP_INTERRUPTED : HIST_STOP_NONE;
		s.code = 0;
		s.addr = 0;
		break;
	}
	return s;
}

/* Thread @rt of the image: its trace, registers and end. */
static int add_thread(struct hist_bundle *b, const struct rec_thread *rt,
		      bool interrupted)
{
	struct hist_thread *t = hist_bundle_add_thread(b, rt->tid);
	size_t size = cap_ring_size(&rt->ring);
	uint8_t *data = malloc(size ? size : 1);
	int err;

	_Static_assert(sizeof(rt->regs) == sizeof(t->regs.r),
		       "hist_regs follows user_regs_struct");
	if (!t || !data) {
		free(data);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	cap_ring_copy(&rt->ring, data);
	err = hist_thread_set_trace(t, data, size);
	free(data);
	t->trace_lost = cap_ring_lost(&rt->ring);
	t->regs.valid = true;
	memcpy(t->regs.r, &rt->regs, sizeof(t->regs.r));
	/* Only if the trace still starts where they were read. */
	t->start_regs.valid = rt->have_start_regs && !t->trace_lost;
	if (t->start_regs.valid)
		memcpy(t->start_regs.r, &rt->start_regs,
		       sizeof(t->start_regs.r));
	t->stop = stop_of(&rt->end, interrupted);
	return err;
}

/* Reads [start, start + size) of the program into a new buffer; NULL if
 * it cannot all be read. */
static uint8_t *read_region(const struct recorder *r, uint64_t start,
			    uint64_t size)
{
	uint8_t *data = size <= SIZE_MAX ? malloc(size) : NULL;
	uint64_t done = 0;
	ssize_t n = 1;

	while (data && done < size && n > 0) {
		n = cap_stepper_read(&r->st, start + done, data + done,
				     size - done);
		done += n > 0 ? (uint64_t) n : 0;
	}
	if (data && done < size) {
		free(data);
		data = NULL;
	}
	return data;
}

/* Adds mapping @m as a module (a file) or a code blob (anonymous
 * executable memory such as [vdso]). */
static int add_exec_mapping(struct hist_bundle *b, const struct recorder *r,
			    const struct cap_map *m)
{
	uint64_t size = m->end - m->start;
	uint8_t *data;
	int err;

	if (cap_map_is_file(m))
		return hist_bundle_add_module(b, m->path, m->start, size,
					      m->offset);
	/* [vsyscall] is execute-only and emulated by the kernel: a call
	 * into it faults into the kernel, so no user code runs there. */
	if (!strcmp(m->path, "[vsyscall]"))
		return 0;
	data = read_region(r, m->start, size);
	if (!data)
		return hist_bundle_add_note(b, "code at 0x%" PRIx64 " (%s) "
					    "could not be read", m->start,
					    m->path);
	err = hist_bundle_add_code(b, m->path, m->start, data, size);
	free(data);
	return err;
}

/* Adds writable mapping @m to the crash snapshot, within @budget bytes. */
static int add_snapshot_mapping(struct hist_bundle *b,
				const struct recorder *r,
				const struct cap_map *m, uint64_t *budget)
{
	uint64_t size = m->end - m->start;
	uint8_t *data;
	int err;

	if (size > *budget)
		return hist_bundle_add_note(b, "snapshot: %s at 0x%" PRIx64
					    " left out (over %llu MiB)",
					    m->path[0] ? m->path : "anonymous",
					    m->start, SNAPSHOT_MAX >> 20);
	data = read_region(r, m->start, size);
	if (!data)
		return 0;
	*budget -= size;
	err = hist_bundle_add_snapshot(b, m->path, m->start, data, size);
	free(data);
	return err;
}

/* The memory image from the maps of the process; after a fatal signal,
 * the snapshot of its writable memory too. */
int rec_add_memory(struct hist_bundle *b, const struct recorder *r,
		   bool crash)
{
	pid_t tid = cap_stepper_mem_tid(&r->st);
	uint64_t budget = SNAPSHOT_MAX;
	struct cap_map *maps;
	size_t n;
	int err;

	if (!tid)
		return hist_bundle_add_note(b, "the process was gone before "
					    "its memory map could be read");
	err = cap_maps_read(tid, &maps, &n);
	if (err)
		return err;
	for (size_t i = 0; !err && i < n; i++) {
		if (maps[i].executable)
			err = add_exec_mapping(b, r, &maps[i]);
		if (!err && crash && maps[i].readable && maps[i].writable)
			err = add_snapshot_mapping(b, r, &maps[i], &budget);
	}
	cap_maps_free(maps, n);
	return err;
}

/* Notes on how image @img was recorded, and what it does not contain. */
static int add_notes(struct hist_bundle *b, const struct recorder *r,
		     const struct rec_image *img)
{
	int err = r->perf ? rec_perf_notes(b, r, img) :
		  hist_bundle_add_note(b, "software PT backend (%s), every "
				       "thread traced", r->st.block_mode ?
				       "block stepping: ptrace, an int3 on "
				       "each block's branch" :
				       "ptrace single-step");

	if (!err && cap_stepper_block_disarmed(&r->st))
		err = hist_bundle_add_note(b, "block stepping turned off when "
					   "a CLONE_VM child began sharing the "
					   "memory: single-stepped from then "
					   "on");
	if (!err && r->st.attached)
		err = hist_bundle_add_note(b, "attached to running process "
					   "%d: its history starts there",
					   (int) r->st.pid);
	if (!err)
		err = rec_filters_note(b, r);
	for (char **n = img->notes; !err && n && *n; n++)
		err = hist_bundle_add_note(b, "%s", *n);
	for (size_t i = 0; !err && i < img->nthreads; i++)
		if (img->threads[i]->overflowed)
			err = hist_bundle_add_note(b, "thread %d: full mode "
						   "passed its %zu-byte cap: "
						   "%" PRIu64 " instructions "
						   "were lost (OVF)",
						   (int) img->threads[i]->tid,
						   r->opts->buffer_size,
						   img->threads[i]->dropped);
	return err;
}

/* How the process ended, as the stepper says (a fault with the faulting
 * thread's details). */
static struct hist_stop process_stop(const struct recorder *r,
				     bool interrupted)
{
	if (interrupted)
		return (struct hist_stop){ HIST_STOP_INTERRUPTED, 0, 0 };
	return stop_of(&r->st.end, false);
}

int rec_image_bundle(const struct recorder *r, const struct rec_image *img,
		     struct hist_bundle *mem, bool interrupted,
		     struct hist_bundle **out)
{
	struct hist_bundle *b = mem;
	int err = b ? 0 : hist_bundle_new(&b);

	*out = NULL;
	if (err)
		return err;
	err = fill_header(b, r, img);
	for (size_t i = 0; !err && i < img->nthreads; i++)
		err = add_thread(b, img->threads[i], interrupted);
	if (!err)
		err = add_notes(b, r, img);
	if (err) {
		hist_bundle_free(b);
		return err;
	}
	*out = b;
	return 0;
}

/* The memory image of the process for its bundle, into @out: read now,
 * or if the process is gone (SIGKILLed: a zombie's maps are empty) the
 * last one read while it lived (record_threads.c reads one when tracing
 * starts and after each mapping of code), so its trace still decodes. */
static int final_memory(struct recorder *r, struct hist_bundle **out)
{
	struct hist_bundle *mem;
	int err = hist_bundle_new(&mem);

	if (!err)
		err = rec_add_memory(mem, r, r->st.end.kind == CAP_END_FAULT);
	if (!err && !mem->nmodules && r->exec_mem &&
	    r->exec_mem->nmodules) {
		hist_bundle_free(mem);
		mem = r->exec_mem;
		r->exec_mem = NULL;
		err = hist_bundle_add_note(mem, "the process was gone at the "
					   "end: its memory map is the one "
					   "read when code was last mapped");
	}
	if (err) {
		hist_bundle_free(mem);
		return err;
	}
	*out = mem;
	return 0;
}

int rec_write_bundle(struct recorder *r, const char *out, bool interrupted)
{
	struct hist_bundle *mem, *b;
	int err = final_memory(r, &mem);

	if (err)
		return err;
	err = rec_image_bundle(r, &r->img, mem, interrupted, &b);
	if (err)
		return err;
	b->stop = process_stop(r, interrupted);
	b->before_exec = r->before;
	/* Without its index the recording still opens (decoding the trace
	 * again): a failure here must not lose it. */
	if ((err = hist_bundle_make_index(b)))
		fprintf(stderr, "warning: %s: the bundle is saved without its "
			"index (opening it decodes the trace again)\n",
			ptrr_errmsg(err));
	err = hist_bundle_save(b, out, r->opts->pack ? HIST_SAVE_PACK : 0);
	b->before_exec = NULL;
	hist_bundle_free(b);
	return err;
}
