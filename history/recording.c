/* A recording: a loaded bundle with its memory image, its symbols and a
 * history per thread, each indexed the first time it is asked for. */
#include "history_internal.h"
#include "bundle_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct hist_recording {
	struct hist_bundle *bundle;
	struct hist_image *image;
	struct hist_symtab *symtab;
	struct history **histories;	/* one per thread, NULL until built */
	bool borrowed;			/* the threads' traces are not ours
					 * (hist_recording_new) */
	bool *held;			/* hist_recording_hold_walks(): */
	size_t nheld;			/* which of the first nheld */
	bool bundle_lent;		/* neither the bundle nor the traces
					 * are ours (hist_bundle_make_index) */
};

/* Makes recording @r's image, symbols and history slots from its bundle
 * unless @err already failed; closes it on failure, else sets *@out. */
static int finish_open(struct hist_recording *r, int err,
		       struct hist_recording **out)
{
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

int hist_recording_open(const char *dir, struct hist_recording **out)
{
	struct hist_recording *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	err = hist_bundle_load(dir, &r->bundle);
	return finish_open(r, err, out);
}

void hist_recording_close(struct hist_recording *r)
{
	if (!r)
		return;
	if (!r->bundle) {
		free(r);
		return;
	}
	hist_recording_hold_walks(r, false);
	for (size_t i = 0; r->histories && i < r->bundle->nthreads; i++)
		hist_close(r->histories[i]);
	free(r->histories);
	for (size_t i = 0; r->borrowed && i < r->bundle->nthreads; i++) {
		r->bundle->threads[i].trace = NULL;
		r->bundle->threads[i].psbs = NULL;
	}
	hist_symtab_free(r->symtab);
	hist_image_free(r->image);
	if (!r->bundle_lent)
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

int hist_recording_new(struct hist_bundle *b, struct hist_recording **out)
{
	struct hist_recording *r = calloc(1, sizeof(*r));

	if (!r) {
		hist_bundle_free(b);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	r->bundle = b;
	r->borrowed = true;
	return finish_open(r, 0, out);
}

struct hist_bundle *hist_recording_bundle_mut(struct hist_recording *r)
{
	return r->bundle;
}

/* Pauses the walks another thread may be making through the histories
 * of @r for their call segments (replay_new()'s), which read the image
 * and the symbols: around changes to them.  Returns which were paused,
 * for resume_walks(). */
static bool *pause_walks(struct hist_recording *r)
{
	bool *held = calloc(r->bundle->nthreads + 1, sizeof(*held));

	for (size_t i = 0; held && i < r->bundle->nthreads; i++)
		held[i] = r->histories[i] && hist_calls_hold(r->histories[i]);
	return held;
}

static void resume_walks(struct hist_recording *r, bool *held, size_t n)
{
	for (size_t i = 0; held && i < n; i++)
		if (held[i])
			hist_calls_release(r->histories[i]);
	free(held);
}

void hist_recording_hold_walks(struct hist_recording *r, bool hold)
{
	if (hold && !r->held) {
		r->held = pause_walks(r);
		r->nheld = r->bundle->nthreads;
	} else if (!hold && r->held) {
		resume_walks(r, r->held, r->nheld);
		r->held = NULL;
	}
}

int hist_recording_add_module(struct hist_recording *r, const char *path,
			      uint64_t start, uint64_t size, uint64_t offset)
{
	struct hist_bundle *b = r->bundle;
	bool *held;
	int err;

	for (size_t i = 0; i < b->nmodules; i++)
		if (b->modules[i].start == start &&
		    b->modules[i].size == size &&
		    b->modules[i].offset == offset &&
		    !strcmp(b->modules[i].path, path))
			return 0;
	err = hist_bundle_add_module(b, path, start, size, offset);
	if (err)
		return err;
	held = pause_walks(r);
	/* A file that cannot be read leaves gaps where its code runs, as
	 * a bundle's missing module does. */
	if (hist_image_add_file(r->image, path, offset, size, start))
		ptrr_clear_error();
	(void) hist_image_add_rodata(r->image, path, start, offset);
	if (hist_symtab_add_mapping(r->symtab, path, start, size, offset))
		ptrr_clear_error();
	resume_walks(r, held, r->bundle->nthreads);
	return 0;
}

/* True if @r's image has the @size bytes @data at @start already. */
static bool has_code(struct hist_recording *r, uint64_t start,
		     const uint8_t *data, uint64_t size)
{
	uint8_t buf[512];

	for (uint64_t at = 0; at < size; at += sizeof(buf)) {
		size_t n = size - at < sizeof(buf) ? size - at : sizeof(buf);

		if (hist_image_read(r->image, start + at, buf, n) !=
		    (ssize_t) n || memcmp(buf, data + at, n)) {
			ptrr_clear_error();
			return false;
		}
	}
	return true;
}

int hist_recording_add_code(struct hist_recording *r, const char *name,
			    uint64_t start, const uint8_t *data,
			    uint64_t size)
{
	bool *held;
	int err;

	if (has_code(r, start, data, size))
		return 0;
	err = hist_bundle_add_code(r->bundle, name, start, data, size);
	if (err)
		return err;
	held = pause_walks(r);
	err = hist_image_add_copy(r->image, start, data, size);
	resume_walks(r, held, r->bundle->nthreads);
	return err;
}

int hist_recording_add_thread(struct hist_recording *r, int tid, size_t *i)
{
	size_t n = r->bundle->nthreads;
	struct history **v = realloc(r->histories, (n + 2) * sizeof(*v));

	if (!v)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	r->histories = v;
	v[n] = v[n + 1] = NULL;
	if (!hist_bundle_add_thread(r->bundle, tid))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	*i = n;
	return 0;
}

/* True if thread @t's final PC is known, where its history ends: its
 * registers' if it was still alive (a crash, an interrupt or a live
 * stop; not an exit), else the one its trace gives (an import). */
static bool thread_has_end_ip(const struct hist_thread *t)
{
	if (!t->regs.valid)
		return t->have_end_ip;
	return t->stop.kind == HIST_STOP_FAULT ||
	       t->stop.kind == HIST_STOP_INTERRUPTED ||
	       t->stop.kind == HIST_STOP_NONE;
}

/* Thread @t's final PC, if thread_has_end_ip(). */
static uint64_t thread_end_ip(const struct hist_thread *t)
{
	return t->regs.valid ? t->regs.r[HIST_RIP] : t->end_ip;
}

struct hist_config hist_recording_config(struct hist_recording *r, size_t i)
{
	const struct hist_thread *t = &r->bundle->threads[i];

	return (struct hist_config) {
		.cpu = r->bundle->cpu, .trace = t->trace,
		.size = t->trace_size, .image = r->image,
		.symtab = r->symtab, .have_end_ip = thread_has_end_ip(t),
		.end_ip = thread_end_ip(t), .psbs = t->psbs,
		.npsbs = t->npsbs,
	};
}

/* A hash of what its history is computed from — the trace, where it
 * ends, the CPU, and the code it runs (modules by place and usability,
 * code copies by content).  The symbols are not in it: a saved index
 * keeps the call segments of the symbols read when it was saved. */
uint64_t hist_recording_index_key(struct hist_recording *r, size_t i)
{
	const struct hist_bundle *b = r->bundle;
	struct hist_config cfg = hist_recording_config(r, i);
	uint64_t k = hist_hash(0, cfg.trace, cfg.size), v[4];

	v[0] = cfg.size;
	v[1] = cfg.have_end_ip;
	v[2] = cfg.have_end_ip ? cfg.end_ip : 0;
	v[3] = b->cpu.family | (uint64_t) b->cpu.model << 16 |
	       (uint64_t) b->cpu.stepping << 24;
	k = hist_hash(k, v, sizeof(v));
	k = hist_hash(k, b->cpu.vendor, strnlen(b->cpu.vendor,
						sizeof(b->cpu.vendor)));
	for (size_t m = 0; m < b->nmodules; m++) {
		const struct hist_module *mod = &b->modules[m];
		uint64_t w[4] = { mod->start, mod->size, mod->offset,
				  mod->usable };

		k = hist_hash(k, w, sizeof(w));
		k = hist_hash(k, mod->path, strlen(mod->path) + 1);
	}
	for (size_t c = 0; c < b->ncode; c++) {
		uint64_t w[2] = { b->code[c].start, b->code[c].size };

		k = hist_hash(k, w, sizeof(w));
		k = hist_hash(k, b->code[c].data, b->code[c].size);
	}
	return k;
}

/* Thread @i's history read from the bundle's saved index, into *@out;
 * false (and no error) if there is none or it is not of this trace.
 * The file is mapped, not read: opening a long recording inflates and
 * checks only what it needs of it (index_file.c). */
static bool open_saved(struct hist_recording *r, size_t i,
		       struct history **out)
{
	const struct hist_thread *t = &r->bundle->threads[i];
	struct hist_config cfg = hist_recording_config(r, i);
	int dfd = -1, fd = -1;
	void *data = MAP_FAILED;
	struct stat st;
	size_t size = 0;
	char *rel;
	bool ok;

	if (!r->bundle->dir || !t->trace_file ||
	    !(rel = hist_trace_sibling(t->trace_file, ".idx")))
		return false;
	ok = (dfd = open(r->bundle->dir, O_RDONLY | O_DIRECTORY |
			 O_CLOEXEC)) >= 0 &&
	     (fd = bundle_open_inside(dfd, rel)) >= 0 &&
	     !fstat(fd, &st) && st.st_size > 0 &&
	     (uint64_t) st.st_size <= SIZE_MAX &&
	     (data = mmap(NULL, size = (size_t) st.st_size, PROT_READ,
			  MAP_PRIVATE, fd, 0)) != MAP_FAILED &&
	     !hist_index_load(&cfg, hist_recording_index_key(r, i), data,
			      size, true, out);
	if (!ok && data != MAP_FAILED)
		munmap(data, size);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(rel);
	ptrr_clear_error();
	return ok;
}

int hist_recording_history(struct hist_recording *r, size_t i,
			   struct history **out)
{
	struct hist_config cfg;
	int err;

	if (i >= r->bundle->nthreads)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %zu", i);
	if (!r->histories[i] && !open_saved(r, i, &r->histories[i])) {
		const struct hist_thread *t = &r->bundle->threads[i];

		cfg = hist_recording_config(r, i);
		/* A table read back is for the trace and code it was saved
		 * with only. */
		if (t->psbs_keyed &&
		    t->psbs_key != hist_recording_index_key(r, i))
			cfg.psbs = NULL;
		err = hist_open(&cfg, &r->histories[i]);
		if (err)
			return err;
	}
	*out = r->histories[i];
	return 0;
}

bool hist_recording_index_saved(const struct hist_recording *r, size_t i)
{
	return i < r->bundle->nthreads && r->histories[i] &&
	       r->histories[i]->from_index;
}

/* Saves the index of history @h, thread @i's, into its thread, in its
 * @complete form or not (hist_index_save()). */
static int save_index(struct hist_recording *r, size_t i, struct history *h,
		      bool complete)
{
	struct hist_thread *t = &r->bundle->threads[i];

	free(t->index);
	t->index = NULL;
	t->index_size = 0;
	t->psbs_key = hist_recording_index_key(r, i);
	t->psbs_keyed = true;
	return hist_index_save(h, hist_recording_index_key(r, i),
			       HIST_INDEX_MAX_RATIO * t->trace_size, complete,
			       &t->index, &t->index_size);
}

/* hist_recording_make_index(), in the @complete form or not. */
static int make_index(struct hist_recording *r, bool complete)
{
	struct hist_bundle *b = r->bundle;
	struct history *h;
	int err = 0;

	for (size_t i = 0; !err && i < b->nthreads; i++) {
		err = hist_recording_history(r, i, &h);
		if (!err)
			err = save_index(r, i, h, complete);
		if (err && r->histories[i] &&
		    r->histories[i]->from_table &&
		    atomic_load(&r->histories[i]->table_wrong)) {
			/* A segment decoded otherwise than the table of PSBs
			 * numbered it: indexed again by decoding. */
			struct hist_config cfg = hist_recording_config(r, i);

			ptrr_clear_error();
			hist_close(r->histories[i]);
			r->histories[i] = NULL;
			cfg.psbs = NULL;
			err = hist_open(&cfg, &r->histories[i]);
			if (!err)
				err = save_index(r, i, r->histories[i],
						 complete);
		}
	}
	if (err)
		hist_recording_drop_index(r);
	return err;
}

int hist_recording_make_index(struct hist_recording *r)
{
	return make_index(r, true);
}

void hist_recording_drop_index(struct hist_recording *r)
{
	for (size_t i = 0; i < r->bundle->nthreads; i++) {
		free(r->bundle->threads[i].index);
		r->bundle->threads[i].index = NULL;
		r->bundle->threads[i].index_size = 0;
	}
}

int hist_recording_save_index(struct hist_recording *r)
{
	const struct hist_bundle *b = r->bundle;
	int err;

	if (!b->dir)
		return ptrr_fail(PTRR_ERR_USAGE, "the recording has no bundle "
				 "directory to write its index into");
	if (b->warnings && b->warnings[0])
		return ptrr_fail(PTRR_ERR_BUNDLE, "bundle %s: %s: the bundle "
				 "is damaged, its index is left as it was; "
				 "re-record it", b->dir, b->warnings[0]);
	err = make_index(r, true);
	if (!err)
		err = hist_bundle_save_index(b);
	hist_recording_drop_index(r);
	return err;
}

int hist_bundle_make_index(struct hist_bundle *b, bool complete)
{
	struct hist_recording *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	r->bundle = b;
	r->bundle_lent = true;
	err = finish_open(r, 0, &r);
	if (err)
		return err;
	err = make_index(r, complete);
	hist_recording_close(r);
	return err;
}

int hist_recording_set_trace(struct hist_recording *r, size_t i,
			     const uint8_t *trace, size_t size,
			     const struct hist_psb *psbs, size_t npsbs,
			     const struct hist_regs *regs,
			     const struct hist_stop *stop)
{
	struct hist_thread *t;

	if (i >= r->bundle->nthreads)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "no thread %zu", i);
	t = &r->bundle->threads[i];
	t->trace = (uint8_t *) trace;
	t->trace_size = size;
	t->psbs = (struct hist_psb *) psbs;
	t->npsbs = npsbs;
	t->regs = *regs;
	t->stop = *stop;
	if (!r->histories[i])
		return 0;
	hist_set_psbs(r->histories[i], psbs, npsbs);
	return hist_extend(r->histories[i], trace, size, thread_has_end_ip(t),
			   thread_end_ip(t));
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
