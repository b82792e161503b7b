/* Bundles: a recording on disk, and its model in memory.
 *
 * A bundle is a directory NAME.ptrr holding manifest.json (bundle_json.c)
 * and the files it names: threads/TID.pt (raw PT of each thread),
 * code/N.bin (anonymous executable memory such as the vDSO),
 * snapshot/N.bin (an optional post-mortem memory snapshot), in packed
 * bundles modules/N-NAME (copies of the mapped ELF files) and, if the
 * program was execve'd from another, before-exec.ptrr/ (the recording of
 * that one, a bundle of its own).
 *
 * This file is the model: struct hist_bundle and what fills and frees it.
 * bundle_save.c writes a bundle and bundle_load.c reads one, both through
 * the file helpers of bundle_fs.c; buildid.c reads build-ids.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bundle_internal.h"

static const char *const reg_names[HIST_NREGS] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
	"rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
};

/* NULL for a value outside enum hist_reg. */
const char *hist_reg_name(enum hist_reg reg)
{
	return (unsigned)reg < HIST_NREGS ? reg_names[reg] : NULL;
}

/* Number of strings in NULL-terminated list @v (NULL is empty). */
size_t bundle_strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* Frees list @v and its strings. */
void bundle_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int bundle_strv_append(char ***v, char *s)
{
	size_t n = bundle_strv_len(*v);
	char **nv = s ? realloc(*v, (n + 2) * sizeof(*nv)) : NULL;

	if (!nv) {
		free(s);
		return PTRR_ERR_NOMEM;
	}
	nv[n] = s;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

/* Records and returns an out-of-memory failure. */
int bundle_nomem(void)
{
	return ptrr_fail(PTRR_ERR_NOMEM, "out of memory building a recording");
}

/* The bundle starts with empty (not NULL) argv, notes and warnings, and
 * is of the version this ptrr writes. */
int hist_bundle_new(struct hist_bundle **out)
{
	struct hist_bundle *b = calloc(1, sizeof(*b));

	*out = NULL;
	if (!b)
		return bundle_nomem();
	b->version = HIST_BUNDLE_VERSION;
	b->argv = calloc(1, sizeof(char *));
	b->notes = calloc(1, sizeof(char *));
	b->warnings = calloc(1, sizeof(char *));
	if (!b->argv || !b->notes || !b->warnings) {
		hist_bundle_free(b);
		return bundle_nomem();
	}
	*out = b;
	return 0;
}

/* Frees what thread @t owns (not @t itself). */
void hist_thread_drop_trace(struct hist_thread *t)
{
	if (t->trace_mapped && t->trace)
		munmap(t->trace, t->trace_size);
	else
		free(t->trace);
	t->trace = NULL;
	t->trace_mapped = false;
}

void bundle_free_thread(struct hist_thread *t)
{
	free(t->trace_file);
	hist_thread_drop_trace(t);
	free(t->index);
	free(t->psbs);
	free(t->snaps);
}

/* Frees what module @m owns (not @m itself). */
static void free_module(struct hist_module *m)
{
	free(m->path);
	free(m->file);
	free(m->build_id);
}

/* Frees blob array @x of @n elements and what they own. */
static void free_blobs(struct hist_blob *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(x[i].name);
		free(x[i].file);
		free(x[i].data);
	}
	free(x);
}

void hist_bundle_free(struct hist_bundle *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nthreads; i++)
		bundle_free_thread(&b->threads[i]);
	free(b->threads);
	for (size_t i = 0; i < b->nmodules; i++)
		free_module(&b->modules[i]);
	free(b->modules);
	free_blobs(b->code, b->ncode);
	free_blobs(b->snapshot, b->nsnapshot);
	free(b->dir);
	free(b->exe);
	bundle_strv_free(b->argv);
	bundle_strv_free(b->notes);
	bundle_strv_free(b->warnings);
	hist_bundle_free(b->before_exec);
	free(b->before_exec_dir);
	free(b);
}

/* Array @arr of @n elements of @elem bytes, grown by one zeroed element;
 * NULL if out of memory (@arr is then unchanged). */
static void *grow(void *arr, size_t n, size_t elem)
{
	char *p = realloc(arr, (n + 1) * elem);

	if (p)
		memset(p + n * elem, 0, elem);
	return p;
}

/* The new thread is valid until the next thread is added (the array may
 * move).  NULL if out of memory. */
int hist_bundle_set_argv(struct hist_bundle *b, char *const argv[])
{
	size_t n = 0;
	char **v;

	while (argv && argv[n])
		n++;
	v = calloc(n + 1, sizeof(*v));
	for (size_t i = 0; v && i < n; i++) {
		if (!(v[i] = strdup(argv[i]))) {
			bundle_strv_free(v);
			v = NULL;
		}
	}
	if (!v)
		return bundle_nomem();
	bundle_strv_free(b->argv);
	b->argv = v;
	return 0;
}

struct hist_thread *hist_bundle_add_thread(struct hist_bundle *b, int tid)
{
	struct hist_thread *a = grow(b->threads, b->nthreads, sizeof(*a));

	if (!a) {
		bundle_nomem();
		return NULL;
	}
	b->threads = a;
	a[b->nthreads].tid = tid;
	return &a[b->nthreads++];
}

/* A malloc'd copy of @size bytes at @data; NULL (and no error) if @size
 * is 0.  Sets *@err on failure. */
static void *copy_bytes(const void *data, uint64_t size, int *err)
{
	void *p;

	if (!size)
		return NULL;
	p = size <= SIZE_MAX ? malloc(size) : NULL;
	if (p)
		memcpy(p, data, size);
	else
		*err = bundle_nomem();
	return p;
}

/* Replaces the trace of @t by a copy of @size bytes at @trace. */
int hist_thread_set_trace(struct hist_thread *t, const uint8_t *trace,
			  size_t size)
{
	int err = 0;
	uint8_t *copy = copy_bytes(trace, size, &err);

	if (err)
		return err;
	hist_thread_drop_trace(t);
	t->trace = copy;
	t->trace_size = size;
	return 0;
}

/* The module starts usable, with no build-id (the writer reads it). */
int hist_bundle_add_module(struct hist_bundle *b, const char *path,
			   uint64_t start, uint64_t size, uint64_t offset)
{
	struct hist_module *a;
	char *p;

	if (!path)
		return ptrr_fail(PTRR_ERR_USAGE, "a module needs a path");
	p = strdup(path);
	a = p ? grow(b->modules, b->nmodules, sizeof(*a)) : NULL;
	if (!a) {
		free(p);
		return bundle_nomem();
	}
	b->modules = a;
	a[b->nmodules++] = (struct hist_module){
		.path = p, .start = start, .size = size, .offset = offset,
		.usable = true,
	};
	return 0;
}

/* Appends a copy of @size bytes at @data, mapped at @start, to blob array
 * @arr of @n elements.  A NULL @name is stored as "". */
static int add_blob(struct hist_blob **arr, size_t *n, const char *name,
		    uint64_t start, const uint8_t *data, uint64_t size)
{
	int err = 0;
	char *nm = strdup(name ? name : "");
	uint8_t *copy = nm ? copy_bytes(data, size, &err) : NULL;
	struct hist_blob *a = NULL;

	if (nm && !err)
		a = grow(*arr, *n, sizeof(*a));
	if (!a) {
		free(nm);
		free(copy);
		return err ? err : bundle_nomem();
	}
	*arr = a;
	a[(*n)++] = (struct hist_blob){
		.name = nm, .start = start, .size = size, .data = copy,
	};
	return 0;
}

/* Appends a copy of anonymous executable memory. */
int hist_bundle_add_code(struct hist_bundle *b, const char *name,
			 uint64_t start, const uint8_t *data, uint64_t size)
{
	return add_blob(&b->code, &b->ncode, name, start, data, size);
}

/* Appends a copy of a region of the memory snapshot. */
int hist_bundle_add_snapshot(struct hist_bundle *b, const char *name,
			     uint64_t start, const uint8_t *data,
			     uint64_t size)
{
	return add_blob(&b->snapshot, &b->nsnapshot, name, start, data, size);
}

/* Appends a printf-formatted line to list @v. */
static int strv_vappend(char ***v, const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		return bundle_nomem();
	return bundle_strv_append(v, s) ? bundle_nomem() : 0;
}

/* Appends a printf-formatted note. */
int hist_bundle_add_note(struct hist_bundle *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = strv_vappend(&b->notes, fmt, ap);
	va_end(ap);
	return err;
}

/* Appends a printf-formatted line to list @v (warnings, notes). */
__attribute__((format(printf, 2, 3)))
int bundle_strv_printf(char ***v, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = strv_vappend(v, fmt, ap);
	va_end(ap);
	return err;
}

char *hist_module_open_path(const struct hist_bundle *b,
			    const struct hist_module *m)
{
	char *p;

	if (!m->file)
		return strdup(m->path);
	if (!b->dir)
		return strdup(m->file);
	return asprintf(&p, "%s/%s", b->dir, m->file) < 0 ? NULL : p;
}

/* True if modules @x and @y are mappings of the same file. */
bool bundle_same_file(const struct hist_module *x, const struct hist_module *y)
{
	if (x->file || y->file)
		return x->file && y->file && !strcmp(x->file, y->file);
	return !strcmp(x->path, y->path);
}
