/* The ptrace sources' part of a bundle (source.h: tsrc_bundle() makes
 * it): the memory image (modules, anonymous code), after a crash a
 * snapshot of the writable memory, the header's filters and program,
 * and the notes every image has.  See record.h. */
#include <config.h>

#include "record.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/procmaps.h"

/* A total beyond which the crash snapshot stops adding regions. */
#define SNAPSHOT_MAX (256ull << 20)

int rec_header(struct hist_bundle *b, const struct recorder *r)
{
	const struct rec_image *img = &r->img;

	rec_filters_header(b, r->cfg.filters, r->cfg.nfilters);
	free(b->exe);
	b->exe = img->exe ? strdup(img->exe) : NULL;
	if (img->exe && !b->exe)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return hist_bundle_set_argv(b, img->argv);
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

int rec_image_notes(struct hist_bundle *b, const struct recorder *r)
{
	const struct rec_image *img = &r->img;
	int err = 0;

	if (cap_stepper_block_disarmed(&r->st))
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

/* The memory image of the process for its bundle, into @out: read now,
 * or if the process is gone (SIGKILLed: a zombie's maps are empty) the
 * last one read while it lived (record_threads.c reads one when tracing
 * starts and after each mapping of code), so its trace still decodes. */
int rec_src_memory(struct tsrc *s, struct hist_bundle **out)
{
	struct recorder *r = (struct recorder *) s;
	struct hist_bundle *mem;
	int err = hist_bundle_new(&mem);

	*out = NULL;
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
