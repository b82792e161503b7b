/* Writing a bundle: hist_bundle_save(), and with HIST_SAVE_PACK (--pack)
 * copies of the module files.
 *
 * The writer builds the whole bundle in a temporary sibling directory,
 * flushes it to disk and swaps it in with one rename, so a crash at any
 * moment leaves the old bundle or the new one.  The manifest is written
 * last, so a temporary directory left by a writer killed before the swap
 * is never a bundle (after it, the old bundle is there, being removed);
 * the next save to the same name removes it.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_internal.h"
#include "history_internal.h"

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

/* What a user can do about a write that failed with -errno @err. */
static const char *io_advice(int err)
{
	switch (-err) {
	case ENOSPC:
	case EDQUOT:
		return ": free space there or choose another directory";
	case EFBIG:
		return ": raise the file size limit (ulimit -f) or choose "
		       "another directory";
	default:
		return "";
	}
}

/* A failed write of @what in bundle @s, from -errno @err. */
static int io_fail(const struct saver *s, const char *what, int err)
{
	return ptrr_fail(PTRR_ERR_IO, "cannot write bundle %s: %s: %s%s (%s)",
			 s->dir, what, strerror(-err), io_advice(err),
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

/* Checks that the directory that is to hold new bundle @dir is one
 * this process can create entries in. */
static int check_parent(const char *dir)
{
	char *copy = strdup(dir), *slash;
	int err = 0;

	if (!copy)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	slash = strrchr(copy, '/');
	if (slash)
		slash[slash == copy] = 0;
	if (access(slash ? copy : ".", W_OK | X_OK))
		err = ptrr_fail(PTRR_ERR_IO,
				"cannot write bundle %s: %s: %s: create that directory or choose another name",
				dir, slash ? copy : ".", strerror(errno));
	free(copy);
	return err;
}

int hist_bundle_check_target(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st))
		return errno == ENOENT ? check_parent(dir)
				       : ptrr_fail(PTRR_ERR_IO,
						   "cannot write bundle %s: %s",
						   dir, strerror(errno));
	if (!replaceable(dir))
		return ptrr_fail(PTRR_ERR_USAGE,
				 "cannot write bundle %s: it exists and is not a ptrr recording: remove it or choose another name",
				 dir);
	return 0;
}

/* Refuses to replace anything at the target but a bundle or an empty
 * directory, so that a mistyped name never deletes the user's files. */
static int check_target(struct saver *s)
{
	struct stat st;
	int err = hist_bundle_check_target(s->dir);

	s->replacing = !err && !lstat(s->dir, &st);
	return err;
}

/* True if @name is BASE@tag (".tmp." or ".old.") and a PID that no
 * longer runs: what a writer killed while saving to BASE left. */
static bool stale(const char *name, const char *base, const char *tag)
{
	size_t len = strlen(base), tag_len = strlen(tag);
	const char *digits = name + len + tag_len;
	long pid;

	if (strncmp(name, base, len) || strncmp(name + len, tag, tag_len) ||
	    !digits[0] || strspn(digits, "0123456789") != strlen(digits))
		return false;
	pid = strtol(digits, NULL, 10);
	return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) < 0 &&
	       errno == ESRCH;
}

/* Clears up after writers of s->dir killed while saving (a live
 * writer's directories stay): removes their temporary directories, and
 * puts back an old bundle that one killed between moving it aside and
 * moving the new one in (swap_in() without an exchange) left outside
 * s->dir, which is then replaced; if s->dir is a bundle, that old one
 * goes too. */
static void remove_stale_tmps(struct saver *s)
{
	const char *slash = strrchr(s->dir, '/');
	char *parent = slash ? strndup(s->dir, (size_t)(slash - s->dir) + 1)
			     : strdup("./");
	const char *base = slash ? slash + 1 : s->dir;
	struct dirent *e;
	DIR *d = parent ? opendir(parent) : NULL;

	while (d && (e = readdir(d))) {
		bool aside = stale(e->d_name, base, ".old.");
		char *path;

		if ((!aside && !stale(e->d_name, base, ".tmp.")) ||
		    asprintf(&path, "%s%s", parent, e->d_name) < 0)
			continue;
		if (aside && !rename(path, s->dir))
			s->replacing = true;
		else
			bundle_remove_tree(path);
		free(path);
	}
	if (d)
		closedir(d);
	free(parent);
}

/* Creates the empty temporary directory DIR.tmp.PID (removing one that
 * a killed writer with the same pid left) and opens it. */
static int make_tmp(struct saver *s)
{
	if (asprintf(&s->tmp, "%s.tmp.%ld", s->dir, (long)getpid()) < 0) {
		s->tmp = NULL;
		return bundle_nomem();
	}
	bundle_remove_tree(s->tmp);
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
	int err = bundle_write_file(s->dfd, rel, data, size);

	return err ? io_fail(s, rel, err) : 0;
}

/* Writes @size bytes at @data (nothing if 0) beside thread @t's trace,
 * as the file whose name ends in @ext: its saved index (".idx"), its
 * table of PSBs (".psbs"). */
static int write_sibling(struct saver *s, const struct hist_thread *t,
			 const char *ext, const void *data, size_t size)
{
	char *rel;
	int err;

	if (!size)
		return 0;
	if (!(rel = hist_trace_sibling(t->trace_file, ext)))
		return bundle_nomem();
	err = write_part(s, rel, data, size);
	free(rel);
	return err;
}

/* Writes thread @t's table of PSBs, with its key, beside its trace; not
 * one without a key (its saved index was not made), which a history
 * could not tell from a table of another trace. */
static int write_psbs(struct saver *s, const struct hist_thread *t)
{
	size_t n = t->npsbs * sizeof(*t->psbs);
	uint8_t *p;
	int err;

	if (!t->npsbs || !t->psbs_keyed)
		return 0;
	if (!(p = malloc(2 * sizeof(uint64_t) + n)))
		return bundle_nomem();
	memcpy(p, HIST_PSBS_MAGIC, sizeof(uint64_t));
	memcpy(p + sizeof(uint64_t), &t->psbs_key, sizeof(uint64_t));
	memcpy(p + 2 * sizeof(uint64_t), t->psbs, n);
	err = write_sibling(s, t, ".psbs", p, 2 * sizeof(uint64_t) + n);
	free(p);
	return err;
}

/* Writes the registers recorded on the way through thread @t's run, if
 * any, beside its trace (".regs"). */
static int write_regs(struct saver *s, const struct hist_thread *t)
{
	uint8_t *p;
	size_t n;
	int err;

	if (!t->nsnaps)
		return 0;
	if ((err = hist_regsnaps_encode(t->snaps, t->nsnaps, &p, &n)))
		return err;
	err = write_sibling(s, t, ".regs", p, n);
	free(p);
	return err;
}

/* Names the threads' trace files threads/TID.pt in the view and writes
 * them.  A task id the kernel gave again to a later thread of the
 * recording (pid_max wrapped around) names that thread's file
 * threads/TID-N.pt, N its position. */
static int write_threads(struct saver *s)
{
	const struct hist_bundle *b = s->b;
	struct hist_thread *a;
	int err;

	if (!b->nthreads)
		return 0;
	if (!(a = calloc(b->nthreads, sizeof(*a))))
		return bundle_nomem();
	s->view.threads = a;
	s->view.nthreads = b->nthreads;
	if ((err = make_subdir(s, "threads")))
		return err;
	for (size_t i = 0; i < b->nthreads; i++) {
		bool reused = false;
		int n;

		for (size_t j = 0; j < i; j++)
			reused |= b->threads[j].tid == b->threads[i].tid;
		a[i] = b->threads[i];
		a[i].trace_file = NULL;
		n = reused ? asprintf(&a[i].trace_file, "threads/%d-%zu.pt",
				      a[i].tid, i) :
			     asprintf(&a[i].trace_file, "threads/%d.pt",
				      a[i].tid);
		if (n < 0) {
			a[i].trace_file = NULL;
			return bundle_nomem();
		}
		if ((err = write_part(s, a[i].trace_file, a[i].trace,
				      a[i].trace_size)) ||
		    (err = write_sibling(s, &a[i], ".idx", a[i].index,
					 a[i].index_size)) ||
		    (err = write_psbs(s, &a[i])) ||
		    (err = write_regs(s, &a[i])))
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
		return bundle_nomem();
	*out = a;
	*nout = n;
	if ((err = make_subdir(s, sub)))
		return err;
	for (size_t i = 0; i < n; i++) {
		a[i] = src[i];
		a[i].file = NULL;
		if (asprintf(&a[i].file, "%s/%zu.bin", sub, i) < 0) {
			a[i].file = NULL;
			return bundle_nomem();
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
		return bundle_nomem();
	err = bundle_copy_file(s->dfd, rel, src, &src_failed);
	if (!err) {
		v->file = rel;
		return 0;
	}
	if (src_failed) {
		unlinkat(s->dfd, rel, 0);
		err = bundle_strv_printf(&s->extra,
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

		if (!bundle_same_file(m, &s->b->modules[j]))
			continue;
		if ((w->file && !(v->file = strdup(w->file))) ||
		    (!v->build_id && w->build_id &&
		     !(v->build_id = strdup(w->build_id))))
			return bundle_nomem();
		return 0;
	}
	if (!(src = hist_module_open_path(s->b, m)))
		return bundle_nomem();
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
		return bundle_nomem();
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
	size_t n = bundle_strv_len(s->b->notes), k = bundle_strv_len(s->extra);
	char **v = calloc(n + k + 1, sizeof(*v));

	if (!v)
		return bundle_nomem();
	for (size_t i = 0; i < n; i++)
		v[i] = s->b->notes[i];
	for (size_t i = 0; i < k; i++)
		v[n + i] = s->extra[i];
	s->view.notes = v;
	return 0;
}

/* Writes the recording of the program before an execve as a bundle of
 * its own inside this one (it is saved atomically in turn, so the
 * temporary directory holds it whole or not at all). */
static int write_before_exec(struct saver *s)
{
	char *path;
	int err;

	if (!s->b->before_exec)
		return 0;
	if (asprintf(&path, "%s/%s", s->tmp, HIST_BEFORE_EXEC_DIR) < 0)
		return bundle_nomem();
	err = hist_bundle_save(s->b->before_exec, path, s->flags);
	free(path);
	if (err)
		return err;
	s->view.before_exec = NULL;
	s->view.before_exec_dir = strdup(HIST_BEFORE_EXEC_DIR);
	return s->view.before_exec_dir ? 0 : bundle_nomem();
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
		return bundle_nomem();
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
	v->before_exec = NULL;
	v->before_exec_dir = NULL;
	if ((err = write_threads(s)) ||
	    (err = write_blobs(s, "code", b->code, b->ncode, &v->code,
			       &v->ncode)) ||
	    (err = write_blobs(s, "snapshot", b->snapshot, b->nsnapshot,
			       &v->snapshot, &v->nsnapshot)) ||
	    (err = save_modules(s)) || (err = join_notes(s)) ||
	    (err = write_before_exec(s)) || (err = write_manifest(s)))
		return err;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if ((err = bundle_sync_dir(s->dfd, dirs[i])))
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
	bundle_remove_tree(aside);
	if (rename(s->dir, aside))
		err = -errno;
	else if (rename(s->tmp, s->dir)) {
		err = -errno;
		rename(aside, s->dir);
	}
	if (!err)
		bundle_remove_tree(aside);
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
		bundle_sync_dir(AT_FDCWD, slash ? p : ".");
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
		bundle_remove_tree(s->tmp);
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
	free(v->before_exec_dir);
	bundle_strv_free(s->extra);
	free(s->tmp);
	free(s->dir);
}

/* Checks the target, clears up after killed writers, builds the bundle
 * in DIR.tmp.PID and swaps it in; on any failure the temporary
 * directory is removed. */
int hist_bundle_save(const struct hist_bundle *b, const char *dir,
		     unsigned flags)
{
	struct saver s = { .b = b, .flags = flags, .dfd = -1 };
	size_t len = strlen(dir);
	int err;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!(s.dir = strndup(dir, len)))
		return bundle_nomem();
	err = check_target(&s);
	if (!err) {
		remove_stale_tmps(&s);
		err = make_tmp(&s);
	}
	if (!err)
		err = write_parts(&s);
	if (!err && (err = swap_in(&s)))
		err = io_fail(&s, "rename", err);
	if (!err)
		sync_parent(s.dir);
	saver_free(&s);
	return err;
}

/* Writes thread @t's saved index into @dfd as a temporary file, whose
 * name it puts in *@tmp (allocated), removing one a killed writer left.
 * 0 or -errno. */
static int write_index_tmp(int dfd, const struct hist_thread *t, char **tmp)
{
	char *rel = hist_trace_sibling(t->trace_file, ".idx");
	int err;

	if (!rel || asprintf(tmp, "%s.new", rel) < 0) {
		*tmp = NULL;
		free(rel);
		return -ENOMEM;
	}
	free(rel);
	unlinkat(dfd, *tmp, 0);
	err = bundle_write_file(dfd, *tmp, t->index, t->index_size);
	if (err)
		unlinkat(dfd, *tmp, 0);
	return err;
}

/* Renames the temporary file @tmp ("threads/TID.idx.new") in @dfd over
 * the index it stands for.  0 or -errno. */
static int rename_index_tmp(int dfd, const char *tmp)
{
	char *rel = strndup(tmp, strlen(tmp) - strlen(".new"));
	int err;

	if (!rel)
		return -ENOMEM;
	err = renameat(dfd, tmp, dfd, rel) ? -errno : 0;
	free(rel);
	return err;
}

int hist_bundle_save_index(const struct hist_bundle *b)
{
	char **tmp = calloc(b->nthreads + 1, sizeof(*tmp));
	int dfd = open(b->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = dfd < 0 ? -errno : !tmp ? -ENOMEM : 0;
	const char *what = b->dir;

	for (size_t i = 0; !err && i < b->nthreads; i++)
		if (b->threads[i].index_size &&
		    (err = write_index_tmp(dfd, &b->threads[i], &tmp[i])))
			what = b->threads[i].trace_file;
	/* Every file written: they replace the old ones.  A failure here
	 * (the directory's, as the files are written) leaves the files
	 * not renamed yet as they were. */
	for (size_t i = 0; !err && i < b->nthreads; i++)
		if (tmp[i] && (err = rename_index_tmp(dfd, tmp[i])) == 0) {
			free(tmp[i]);
			tmp[i] = NULL;
		}
	if (!err)
		err = bundle_sync_dir(dfd, "threads");
	for (size_t i = 0; tmp && i < b->nthreads; i++) {
		if (tmp[i])
			unlinkat(dfd, tmp[i], 0);
		free(tmp[i]);
	}
	free(tmp);
	if (dfd >= 0)
		close(dfd);
	return err ? ptrr_fail(err == -ENOMEM ? PTRR_ERR_NOMEM : PTRR_ERR_IO,
			       "cannot write the index of %s: %s", what,
			       strerror(-err)) : 0;
}
