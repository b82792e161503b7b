/* Bundles: a recording on disk, and its model in memory.
 *
 * A bundle is a directory NAME.ptrr holding manifest.json (bundle_json.c)
 * and the files it names: threads/TID.pt (raw PT of each thread),
 * code/N.bin (anonymous executable memory such as the vDSO),
 * snapshot/N.bin (an optional post-mortem memory snapshot) and, in packed
 * bundles, modules/N-NAME (copies of the mapped ELF files).
 *
 * The writer builds the whole bundle in a temporary sibling directory,
 * flushes it to disk and swaps it in with one rename, so a crash at any
 * moment leaves the old bundle or the new one.  The reader trusts nothing
 * in the directory: files are opened without following symbolic links and
 * must be plain files inside the bundle.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_internal.h"

/* The largest manifest the reader accepts. */
#define MANIFEST_MAX (64u << 20)

/* ------------------------------------------------------------------ */
/* The model                                                           */
/* ------------------------------------------------------------------ */

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
static size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* Frees list @v and its strings. */
static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int bundle_strv_append(char ***v, char *s)
{
	size_t n = strv_len(*v);
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
static int nomem(void)
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
		return nomem();
	b->version = HIST_BUNDLE_VERSION;
	b->argv = calloc(1, sizeof(char *));
	b->notes = calloc(1, sizeof(char *));
	b->warnings = calloc(1, sizeof(char *));
	if (!b->argv || !b->notes || !b->warnings) {
		hist_bundle_free(b);
		return nomem();
	}
	*out = b;
	return 0;
}

/* Frees what thread @t owns (not @t itself). */
static void free_thread(struct hist_thread *t)
{
	free(t->trace_file);
	free(t->trace);
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
		free_thread(&b->threads[i]);
	free(b->threads);
	for (size_t i = 0; i < b->nmodules; i++)
		free_module(&b->modules[i]);
	free(b->modules);
	free_blobs(b->code, b->ncode);
	free_blobs(b->snapshot, b->nsnapshot);
	free(b->dir);
	free(b->exe);
	strv_free(b->argv);
	strv_free(b->notes);
	strv_free(b->warnings);
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
struct hist_thread *hist_bundle_add_thread(struct hist_bundle *b, int tid)
{
	struct hist_thread *a = grow(b->threads, b->nthreads, sizeof(*a));

	if (!a) {
		nomem();
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
		*err = nomem();
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
	free(t->trace);
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
		return nomem();
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
		return err ? err : nomem();
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
		return nomem();
	return bundle_strv_append(v, s) ? nomem() : 0;
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
static int strv_printf(char ***v, const char *fmt, ...)
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
static bool same_file(const struct hist_module *x, const struct hist_module *y)
{
	if (x->file || y->file)
		return x->file && y->file && !strcmp(x->file, y->file);
	return !strcmp(x->path, y->path);
}

/* ------------------------------------------------------------------ */
/* Build-ids (libelf)                                                  */
/* ------------------------------------------------------------------ */

/* @n bytes at @p as a malloc'd lower-case hex string. */
static char *hex_string(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);

	for (size_t i = 0; s && i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	return s;
}

/* The GNU build-id among the notes in @d, or NULL. */
static char *note_build_id(Elf_Data *d)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
		const char *name = (const char *)d->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nh.n_descsz)
			return hex_string((uint8_t *)d->d_buf + desc_off,
					  nh.n_descsz);
		off = next;
	}
	return NULL;
}

/* The build-id from the PT_NOTE segments of @e (loaded files). */
static char *build_id_phdrs(Elf *e)
{
	size_t n;
	char *id = NULL;

	if (elf_getphdrnum(e, &n))
		return NULL;
	for (size_t i = 0; !id && i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		id = d ? note_build_id(d) : NULL;
	}
	return id;
}

/* The build-id from the SHT_NOTE sections of @e (files without program
 * headers, such as separate debug files). */
static char *build_id_shdrs(Elf *e)
{
	Elf_Scn *scn = NULL;
	char *id = NULL;

	while (!id && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		id = d ? note_build_id(d) : NULL;
	}
	return id;
}

/* The build-id of the ELF file open on @fd, or NULL. */
static char *build_id_fd(int fd)
{
	Elf *e;
	char *id = NULL;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		id = build_id_phdrs(e);
		if (!id)
			id = build_id_shdrs(e);
	}
	elf_end(e);
	return id;
}

/* Opens @path for reading if it is a regular file (never blocking on a
 * FIFO or touching a device).  Returns the fd or -errno. */
static int open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

char *hist_read_build_id(const char *path)
{
	int fd = open_regular(path);
	char *id;

	if (fd < 0)
		return NULL;
	id = build_id_fd(fd);
	close(fd);
	return id;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/* Opens entry @c of directory @cur for reading: a directory, or if @last
 * a regular file.  Returns the fd, -ELOOP for "..", a symbolic link or
 * any other kind of file, or another -errno. */
static int open_component(int cur, const char *c, bool last)
{
	struct stat st;
	int fd;

	if (!strcmp(c, ".."))
		return -ELOOP;
	if (fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (last ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode))
		return -ELOOP;
	fd = openat(cur, c, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Opens regular file @rel inside directory @dfd for reading, component
 * by component, so that no symbolic link is followed on the way (the
 * fstatat check sees a link; O_NOFOLLOW closes the race).  Returns the
 * fd or a -errno of open_component(). */
static int open_inside(int dfd, const char *rel)
{
	char *copy = strdup(rel), *save = NULL, *c, *next;
	int cur;

	if (!copy)
		return -ENOMEM;
	cur = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		cur = -errno;
	for (c = strtok_r(copy, "/", &save); cur >= 0 && c; c = next) {
		int fd;

		next = strtok_r(NULL, "/", &save);
		fd = open_component(cur, c, !next);
		close(cur);
		cur = fd;
	}
	free(copy);
	return cur;
}

/* Reads exactly @size bytes of the file open on @fd into *@data (NULL if
 * @size is 0).  -EMSGSIZE if the file has another size (its size then in
 * *@actual), -ENOMEM, or another -errno. */
static int read_exact(int fd, uint64_t size, uint8_t **data, uint64_t *actual)
{
	struct stat st;
	size_t got = 0;
	uint8_t *p;

	*data = NULL;
	if (fstat(fd, &st))
		return -errno;
	*actual = st.st_size;
	if ((uint64_t)st.st_size != size)
		return -EMSGSIZE;
	if (!size)
		return 0;
	if (size > SIZE_MAX || !(p = malloc(size)))
		return -ENOMEM;
	while (got < size) {
		ssize_t n = read(fd, p + got, size - got);
		int err = n < 0 ? -errno : -EMSGSIZE;

		if (n < 0 && err == -EINTR)
			continue;
		if (n <= 0) {
			free(p);
			*actual = got;
			return err;
		}
		got += n;
	}
	*data = p;
	return 0;
}

/* Writes @size bytes at @data to @fd.  0 or -errno. */
static int write_all(int fd, const void *data, size_t size)
{
	const char *p = data;

	while (size) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		size -= n;
	}
	return 0;
}

/* Closes @fd after flushing it to disk; keeps the first error of @err,
 * then of fsync and close. */
static int sync_close(int fd, int err)
{
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* Creates file @rel in directory @dfd holding @size bytes at @data, on
 * disk when this returns.  0 or -errno. */
static int write_file(int dfd, const char *rel, const void *data, size_t size)
{
	int fd = openat(dfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);

	if (fd < 0)
		return -errno;
	return sync_close(fd, write_all(fd, data, size));
}

/* Copies file @src to new file @rel in @dfd.  -errno on failure; a
 * failure to read @src (rather than to write) also sets *@src_failed. */
static int copy_file(int dfd, const char *rel, const char *src,
		     bool *src_failed)
{
	int in = open_regular(src), out, err = 0;
	char buf[65536];
	ssize_t n;

	*src_failed = in < 0;
	if (in < 0)
		return in;
	out = openat(dfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while (!err && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n > 0) {
			err = write_all(out, buf, n);
		} else if (errno != EINTR) {
			err = -errno;
			*src_failed = true;
		}
	}
	close(in);
	return sync_close(out, err);
}

/* nftw() callback of remove_tree(). */
static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* Removes @path and everything under it, following no symbolic link. */
static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Flushes directory @name inside @dfd (or @dfd itself if @name is ".")
 * to disk; a directory that does not exist is fine. */
static int sync_dir(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	return sync_close(fd, 0);
}

/* ------------------------------------------------------------------ */
/* Writing a bundle                                                    */
/* ------------------------------------------------------------------ */

/* One bundle being written. */
struct saver {
	const struct hist_bundle *b;
	unsigned flags;
	char *dir;		/* where it goes, without trailing slashes */
	char *tmp;		/* the sibling directory it is built in */
	int dfd;		/* open on tmp */
	bool replacing;		/* an old bundle is at dir */
	struct hist_bundle view;	/* *b with the names of its files, the
					 * build-ids and the writer's notes;
					 * it shares b's strings and data */
	char **extra;		/* the writer's own notes */
};

/* A failed write of @what in bundle @s, from -errno @err. */
static int io_fail(const struct saver *s, const char *what, int err)
{
	return ptrr_fail(PTRR_ERR_IO, "cannot write bundle %s: %s: %s (%s)",
			 s->dir, what, strerror(-err),
			 s->replacing ? "the previous recording is untouched"
				      : "nothing was written");
}

/* True if directory @dir is a bundle (it has a manifest) or is empty. */
static bool replaceable(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	struct stat st;
	bool empty = true;
	DIR *d;

	if (fd < 0)
		return false;
	if (!fstatat(fd, "manifest.json", &st, AT_SYMLINK_NOFOLLOW)) {
		close(fd);
		return true;
	}
	if (!(d = fdopendir(fd))) {
		close(fd);
		return false;
	}
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Refuses to replace anything at the target but a bundle or an empty
 * directory, so that a mistyped name never deletes the user's files. */
static int check_target(struct saver *s)
{
	struct stat st;

	if (lstat(s->dir, &st))
		return errno == ENOENT ? 0 : io_fail(s, s->dir, -errno);
	if (!replaceable(s->dir))
		return ptrr_fail(PTRR_ERR_USAGE,
				 "cannot write bundle %s: it exists and is not a ptrr recording: remove it or choose another name",
				 s->dir);
	s->replacing = true;
	return 0;
}

/* Creates the empty temporary directory DIR.tmp.PID (removing one that
 * a killed writer with the same pid left) and opens it. */
static int make_tmp(struct saver *s)
{
	if (asprintf(&s->tmp, "%s.tmp.%ld", s->dir, (long)getpid()) < 0) {
		s->tmp = NULL;
		return nomem();
	}
	remove_tree(s->tmp);
	if (mkdir(s->tmp, 0777))
		return io_fail(s, s->tmp, -errno);
	s->dfd = open(s->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return s->dfd < 0 ? io_fail(s, s->tmp, -errno) : 0;
}

/* Creates subdirectory @sub of the bundle being written. */
static int make_subdir(struct saver *s, const char *sub)
{
	if (mkdirat(s->dfd, sub, 0777) && errno != EEXIST)
		return io_fail(s, sub, -errno);
	return 0;
}

/* Writes file @rel of the bundle. */
static int write_part(struct saver *s, const char *rel, const void *data,
		      size_t size)
{
	int err = write_file(s->dfd, rel, data, size);

	return err ? io_fail(s, rel, err) : 0;
}

/* Names the threads' trace files threads/TID.pt in the view and writes
 * them.  Two threads with one tid are the caller's bug. */
static int write_threads(struct saver *s)
{
	const struct hist_bundle *b = s->b;
	struct hist_thread *a;
	int err;

	if (!b->nthreads)
		return 0;
	if (!(a = calloc(b->nthreads, sizeof(*a))))
		return nomem();
	s->view.threads = a;
	s->view.nthreads = b->nthreads;
	if ((err = make_subdir(s, "threads")))
		return err;
	for (size_t i = 0; i < b->nthreads; i++) {
		for (size_t j = 0; j < i; j++)
			if (b->threads[j].tid == b->threads[i].tid)
				return ptrr_fail(PTRR_ERR_USAGE,
						 "cannot write bundle %s: two threads have tid %d",
						 s->dir, b->threads[i].tid);
		a[i] = b->threads[i];
		a[i].trace_file = NULL;
		if (asprintf(&a[i].trace_file, "threads/%d.pt", a[i].tid) < 0) {
			a[i].trace_file = NULL;
			return nomem();
		}
		if ((err = write_part(s, a[i].trace_file, a[i].trace,
				      a[i].trace_size)))
			return err;
	}
	return 0;
}

/* Names the @n blobs @src as SUB/N.bin into a view array @out and writes
 * them. */
static int write_blobs(struct saver *s, const char *sub,
		       const struct hist_blob *src, size_t n,
		       struct hist_blob **out, size_t *nout)
{
	struct hist_blob *a;
	int err;

	if (!n)
		return 0;
	if (!(a = calloc(n, sizeof(*a))))
		return nomem();
	*out = a;
	*nout = n;
	if ((err = make_subdir(s, sub)))
		return err;
	for (size_t i = 0; i < n; i++) {
		a[i] = src[i];
		a[i].file = NULL;
		if (asprintf(&a[i].file, "%s/%zu.bin", sub, i) < 0) {
			a[i].file = NULL;
			return nomem();
		}
		if ((err = write_part(s, a[i].file, a[i].data, a[i].size)))
			return err;
	}
	return 0;
}

/* Copies the file of module @v (read from @src) to modules/N-NAME.  A
 * file that cannot be read stays referenced by path, with a note. */
static int copy_module(struct saver *s, struct hist_module *v,
		       const char *src, size_t n)
{
	const char *base = strrchr(v->path, '/');
	bool src_failed;
	char *rel;
	int err;

	base = base ? base + 1 : v->path;
	if (!base[0] || !strcmp(base, ".") || !strcmp(base, ".."))
		base = "module";
	if ((err = make_subdir(s, "modules")))
		return err;
	if (asprintf(&rel, "modules/%zu-%.200s", n, base) < 0)
		return nomem();
	err = copy_file(s->dfd, rel, src, &src_failed);
	if (!err) {
		v->file = rel;
		return 0;
	}
	if (src_failed) {
		unlinkat(s->dfd, rel, 0);
		err = strv_printf(&s->extra,
				  "pack: module %s could not be copied (%s: %s); the bundle refers to it by path",
				  v->path, src, strerror(-err));
	} else {
		err = io_fail(s, rel, err);
	}
	free(rel);
	return err;
}

/* Sets the view's module @i from @m: its build-id (read from the file if
 * the recorder did not set one) and, when packing or when @m was packed
 * already, its copy in the bundle.  Mappings of one file share a copy. */
static int save_module(struct saver *s, size_t i, size_t *ncopies)
{
	const struct hist_module *m = &s->b->modules[i];
	struct hist_module *v = &s->view.modules[i];
	bool pack = (s->flags & HIST_SAVE_PACK) || m->file;
	char *src;
	int err = 0;

	for (size_t j = 0; j < i; j++) {
		const struct hist_module *w = &s->view.modules[j];

		if (!same_file(m, &s->b->modules[j]))
			continue;
		if ((w->file && !(v->file = strdup(w->file))) ||
		    (!v->build_id && w->build_id &&
		     !(v->build_id = strdup(w->build_id))))
			return nomem();
		return 0;
	}
	if (!(src = hist_module_open_path(s->b, m)))
		return nomem();
	if (!v->build_id)
		v->build_id = hist_read_build_id(src);
	if (pack)
		err = copy_module(s, v, src, (*ncopies)++);
	free(src);
	return err;
}

/* Fills the view's modules: b's, with build-ids and packed copies. */
static int save_modules(struct saver *s)
{
	const struct hist_bundle *b = s->b;
	size_t ncopies = 0;
	int err = 0;

	if (!b->nmodules)
		return 0;
	if (!(s->view.modules = calloc(b->nmodules, sizeof(*b->modules))))
		return nomem();
	s->view.nmodules = b->nmodules;
	for (size_t i = 0; i < b->nmodules; i++) {
		s->view.modules[i] = b->modules[i];
		s->view.modules[i].file = NULL;
	}
	for (size_t i = 0; !err && i < b->nmodules; i++)
		err = save_module(s, i, &ncopies);
	return err;
}

/* The view's notes: b's, then the writer's own. */
static int join_notes(struct saver *s)
{
	size_t n = strv_len(s->b->notes), k = strv_len(s->extra);
	char **v = calloc(n + k + 1, sizeof(*v));

	if (!v)
		return nomem();
	for (size_t i = 0; i < n; i++)
		v[i] = s->b->notes[i];
	for (size_t i = 0; i < k; i++)
		v[n + i] = s->extra[i];
	s->view.notes = v;
	return 0;
}

/* Writes manifest.json from the view, readable (indented, one trailing
 * newline). */
static int write_manifest(struct saver *s)
{
	json_t *root = bundle_manifest_encode(&s->view);
	char *text = root ? json_dumps(root, JSON_INDENT(2) |
					     JSON_PRESERVE_ORDER) : NULL;
	size_t len = text ? strlen(text) : 0;
	char *full = text ? realloc(text, len + 2) : NULL;
	int err;

	json_decref(root);
	if (!full) {
		free(text);
		return nomem();
	}
	full[len] = '\n';
	err = write_part(s, "manifest.json", full, len + 1);
	free(full);
	return err;
}

/* Writes every part of the bundle into the temporary directory, the
 * manifest last, and flushes the directories to disk. */
static int write_parts(struct saver *s)
{
	static const char *const dirs[] = {
		"threads", "code", "snapshot", "modules", ".",
	};
	const struct hist_bundle *b = s->b;
	struct hist_bundle *v = &s->view;
	int err;

	*v = *b;
	v->threads = NULL, v->nthreads = 0;
	v->modules = NULL, v->nmodules = 0;
	v->code = NULL, v->ncode = 0;
	v->snapshot = NULL, v->nsnapshot = 0;
	v->notes = NULL;
	if ((err = write_threads(s)) ||
	    (err = write_blobs(s, "code", b->code, b->ncode, &v->code,
			       &v->ncode)) ||
	    (err = write_blobs(s, "snapshot", b->snapshot, b->nsnapshot,
			       &v->snapshot, &v->nsnapshot)) ||
	    (err = save_modules(s)) || (err = join_notes(s)) ||
	    (err = write_manifest(s)))
		return err;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if ((err = sync_dir(s->dfd, dirs[i])))
			return io_fail(s, dirs[i], err);
	return 0;
}

/* Puts the finished bundle in place.  An old bundle is swapped with it
 * atomically, and so ends up at s->tmp to be removed. */
static int swap_in(struct saver *s)
{
	char *aside;
	int err = 0;

	if (!s->replacing)
		return rename(s->tmp, s->dir) ? -errno : 0;
	if (!renameat2(AT_FDCWD, s->tmp, AT_FDCWD, s->dir, RENAME_EXCHANGE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* No exchange on this file system (NFS): move the old bundle aside,
	 * then the new one in; only between the two is neither at s->dir. */
	if (asprintf(&aside, "%s.old.%ld", s->dir, (long)getpid()) < 0)
		return -ENOMEM;
	remove_tree(aside);
	if (rename(s->dir, aside))
		err = -errno;
	else if (rename(s->tmp, s->dir)) {
		err = -errno;
		rename(aside, s->dir);
	}
	if (!err)
		remove_tree(aside);
	free(aside);
	return err;
}

/* Flushes the directory that holds @path to disk (best effort: the
 * rename is done whatever this says). */
static void sync_parent(const char *path)
{
	char *p = strdup(path), *slash = p ? strrchr(p, '/') : NULL;

	if (slash)
		slash[slash == p] = '\0';
	if (p)
		sync_dir(AT_FDCWD, slash ? p : ".");
	free(p);
}

/* Frees what the writer allocated; the view shares the rest with b. */
static void saver_free(struct saver *s)
{
	const struct hist_bundle *b = s->b;
	struct hist_bundle *v = &s->view;

	if (s->dfd >= 0)
		close(s->dfd);
	if (s->tmp)
		remove_tree(s->tmp);
	for (size_t i = 0; i < v->nthreads; i++)
		free(v->threads[i].trace_file);
	free(v->threads);
	for (size_t i = 0; i < v->ncode; i++)
		free(v->code[i].file);
	free(v->code);
	for (size_t i = 0; i < v->nsnapshot; i++)
		free(v->snapshot[i].file);
	free(v->snapshot);
	for (size_t i = 0; i < v->nmodules; i++) {
		free(v->modules[i].file);
		if (v->modules[i].build_id != b->modules[i].build_id)
			free(v->modules[i].build_id);
	}
	free(v->modules);
	free(v->notes);
	strv_free(s->extra);
	free(s->tmp);
	free(s->dir);
}

/* Checks the target, builds the bundle in DIR.tmp.PID and swaps it in;\n * on any failure the temporary directory is removed. */
int hist_bundle_save(const struct hist_bundle *b, const char *dir,
		     unsigned flags)
{
	struct saver s = { .b = b, .flags = flags, .dfd = -1 };
	size_t len = strlen(dir);
	int err;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!(s.dir = strndup(dir, len)))
		return nomem();
	err = check_target(&s);
	if (!err)
		err = make_tmp(&s);
	if (!err)
		err = write_parts(&s);
	if (!err && (err = swap_in(&s)))
		err = io_fail(&s, "rename", err);
	if (!err)
		sync_parent(s.dir);
	saver_free(&s);
	return err;
}

/* ------------------------------------------------------------------ */
/* Reading a bundle                                                    */
/* ------------------------------------------------------------------ */

/* Room for a line saying why a file of a bundle cannot be used. */
#define WHY_MAX (PATH_MAX + 128)

/* Refuses bundle @dir because its file @rel leads out of it. */
static int refuse_escape(const char *dir, const char *rel)
{
	return ptrr_fail(PTRR_ERR_BUNDLE,
			 "bundle %s: %s is a symbolic link or not a plain file: refusing to read it (a bundle holds only plain files inside itself; re-record it)",
			 dir, rel);
}

/* Reads file @rel of bundle @b (open on @dfd), which must hold @size
 * bytes, into *@data.  Returns 0; 1 if it is missing or damaged, with a
 * line saying so in @why; or a negative error that refuses the bundle. */
static int read_part(int dfd, const struct hist_bundle *b, const char *rel,
		     uint64_t size, uint8_t **data, char *why)
{
	uint64_t actual = 0;
	int fd = open_inside(dfd, rel), e;

	if (fd == -ELOOP)
		return refuse_escape(b->dir, rel);
	e = fd < 0 ? fd : read_exact(fd, size, data, &actual);
	if (fd >= 0)
		close(fd);
	if (e == -ENOMEM)
		return ptrr_fail(PTRR_ERR_NOMEM,
				 "out of memory reading %s/%s (%" PRIu64 " bytes)",
				 b->dir, rel, size);
	if (e == -ENOENT)
		snprintf(why, WHY_MAX, "%s is missing", rel);
	else if (e == -EMSGSIZE)
		snprintf(why, WHY_MAX, "%s is %" PRIu64 " bytes long, not %"
			 PRIu64 " as recorded", rel, actual, size);
	else if (e)
		snprintf(why, WHY_MAX, "%s cannot be read: %s", rel,
			 strerror(-e));
	return e ? 1 : 0;
}

/* Reads every thread's trace.  A thread whose trace is missing or
 * damaged is left out with a warning; if none is left, the bundle is
 * refused.  Kept threads move down, and a moved-from slot is zeroed, so
 * that the array can be freed whenever this stops. */
static int load_threads(int dfd, struct hist_bundle *b)
{
	char why[WHY_MAX];
	size_t kept = 0;

	for (size_t i = 0; i < b->nthreads; i++) {
		struct hist_thread t = b->threads[i];
		int r = read_part(dfd, b, t.trace_file, t.trace_size,
				  &t.trace, why);

		memset(&b->threads[i], 0, sizeof(t));
		if (!r) {
			b->threads[kept++] = t;
			continue;
		}
		if (r > 0)
			r = strv_printf(&b->warnings,
					"thread %d: %s; the thread is left out",
					t.tid, why);
		free_thread(&t);
		if (r)
			return r;
		if (!kept && i + 1 == b->nthreads)
			return ptrr_fail(PTRR_ERR_BUNDLE,
					 "bundle %s: no thread's trace is usable (%s): the recording is damaged; re-record it",
					 b->dir, why);
	}
	b->nthreads = kept;
	return 0;
}

/* Reads the data of the @n blobs @x (code or snapshot, said by @what).
 * One whose file is missing or damaged is left out with a warning that
 * ends with its @effect. */
static int load_blobs(int dfd, struct hist_bundle *b, struct hist_blob *x,
		      size_t *n, const char *what, const char *effect)
{
	char why[WHY_MAX];
	size_t kept = 0;

	for (size_t i = 0; i < *n; i++) {
		struct hist_blob y = x[i];
		int r = read_part(dfd, b, y.file, y.size, &y.data, why);

		memset(&x[i], 0, sizeof(y));
		if (!r) {
			x[kept++] = y;
			continue;
		}
		if (r > 0)
			r = strv_printf(&b->warnings,
					"%s %s at 0x%" PRIx64 ": %s; it is left out and %s",
					what, y.name[0] ? y.name : "region",
					y.start, why, effect);
		free(y.name);
		free(y.file);
		free(y.data);
		if (r)
			return r;
	}
	*n = kept;
	return 0;
}

/* Marks module @m unusable, with a warning saying @why. */
static int module_unusable(struct hist_bundle *b, struct hist_module *m,
			   const char *why)
{
	m->usable = false;
	return strv_printf(&b->warnings,
			   "module %s: %s; its code will show as gaps — %s",
			   m->path, why, m->file ? "the bundle is damaged; re-record it"
				: "re-record or use a bundle made with --pack");
}

/* Checks that the file of module @m (its packed copy in the bundle open
 * on @dfd, else its original path) can be read and, when the manifest and
 * the file both have a build-id, that they agree. */
static int check_module(int dfd, struct hist_bundle *b, struct hist_module *m)
{
	int fd = m->file ? open_inside(dfd, m->file) : open_regular(m->path);
	char why[WHY_MAX], *id;
	int err = 0;

	if (fd == -ELOOP && m->file)
		return refuse_escape(b->dir, m->file);
	if (fd < 0) {
		snprintf(why, sizeof(why), "%s%s: %s",
			 m->file ? "packed copy " : "", m->file ? m->file : m->path,
			 fd == -EINVAL ? "not a regular file" : strerror(-fd));
		return module_unusable(b, m, why);
	}
	id = build_id_fd(fd);
	close(fd);
	if (m->build_id && id && strcmp(m->build_id, id)) {
		snprintf(why, sizeof(why),
			 "build-id differs from the recording (%s vs %s)",
			 m->build_id, id);
		err = module_unusable(b, m, why);
	}
	free(id);
	return err;
}

/* Checks every module file once; other mappings of a file share the
 * verdict. */
static int check_modules(int dfd, struct hist_bundle *b)
{
	int err = 0;

	for (size_t i = 0; !err && i < b->nmodules; i++) {
		size_t j = 0;

		while (j < i && !same_file(&b->modules[i], &b->modules[j]))
			j++;
		if (j < i)
			b->modules[i].usable = b->modules[j].usable;
		else
			err = check_module(dfd, b, &b->modules[i]);
	}
	return err;
}

/* Parses manifest.json of bundle @dir (open on @dfd) into @root. */
static int read_manifest(int dfd, const char *dir, json_t **root)
{
	int fd = open_inside(dfd, "manifest.json"), e;
	uint64_t actual = 0;
	uint8_t *text = NULL;
	json_error_t je;
	struct stat st;

	if (fd == -ENOENT)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "%s is not a ptrr recording (it has no manifest.json): give the NAME.ptrr directory that ptrr record wrote",
				 dir);
	if (fd == -ELOOP)
		return refuse_escape(dir, "manifest.json");
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot read bundle %s: manifest.json: %s",
				 dir, strerror(-fd));
	e = fstat(fd, &st) ? -errno : st.st_size > MANIFEST_MAX ? -EFBIG
		: read_exact(fd, st.st_size, &text, &actual);
	close(fd);
	if (e)
		return ptrr_fail(e == -EFBIG ? PTRR_ERR_BUNDLE : PTRR_ERR_IO,
				 "cannot read bundle %s: manifest.json: %s",
				 dir, strerror(-e));
	*root = json_loadb(text ? (char *)text : "", st.st_size,
			   JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!*root)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "bundle %s: manifest.json is not valid JSON (line %d: %s): the recording is damaged; re-record it",
				 dir, je.line, je.text);
	return 0;
}

/* Decodes the manifest of bundle @dir (open on @dfd) into a new bundle,
 * then reads its files and checks its modules. */
static int load(int dfd, const char *dir, struct hist_bundle **out)
{
	json_t *root = NULL;
	struct hist_bundle *b;
	int version, err;

	if ((err = read_manifest(dfd, dir, &root)) ||
	    (err = bundle_manifest_version(root, dir, &version)) ||
	    (err = hist_bundle_new(out)))
		goto out;
	b = *out;
	b->version = version;
	if (!(b->dir = strdup(dir)))
		err = nomem();
	if (err || (err = bundle_manifest_decode(root, dir, b)) ||
	    (err = load_threads(dfd, b)) ||
	    (err = load_blobs(dfd, b, b->code, &b->ncode, "code",
			      "its instructions will show as gaps")) ||
	    (err = load_blobs(dfd, b, b->snapshot, &b->nsnapshot, "snapshot",
			      "that memory will read as unavailable")))
		goto out;
	err = check_modules(dfd, b);
out:
	json_decref(root);
	return err;
}

/* Opens @dir and loads it; on failure *@out is NULL. */
int hist_bundle_load(const char *dir, struct hist_bundle **out)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	*out = NULL;
	if (dfd < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot open bundle %s: %s: check the path",
				 dir, strerror(errno));
	err = load(dfd, dir, out);
	close(dfd);
	if (err) {
		hist_bundle_free(*out);
		*out = NULL;
	}
	return err;
}
