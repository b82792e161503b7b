/* Reading a bundle: hist_bundle_load().
 *
 * The reader trusts nothing in the directory: the manifest is checked
 * field by field (bundle_json.c), and the files it names are opened
 * without following symbolic links and must be plain files inside the
 * bundle.  A part that cannot be used but is not vital (one thread's
 * trace, a code or snapshot blob, a module file) becomes a warning.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_internal.h"
#include "history_internal.h"

/* The largest manifest the reader accepts. */
#define MANIFEST_MAX (64u << 20)

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
 * bytes, into *@data: a mapping of it if @map, else a malloc'd copy.
 * Returns 0; 1 if it is missing or damaged, with a line saying so in
 * @why; or a negative error that refuses the bundle. */
static int read_part(int dfd, const struct hist_bundle *b, const char *rel,
		     uint64_t size, bool map, uint8_t **data, char *why)
{
	uint64_t actual = 0;
	int fd = bundle_open_inside(dfd, rel), e;

	if (fd == -ELOOP)
		return refuse_escape(b->dir, rel);
	e = fd < 0 ? fd : map ? bundle_map_exact(fd, size, data, &actual) :
		bundle_read_exact(fd, size, data, &actual);
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

/* Reads thread @t's table of PSBs, threads/TID.psbs, if its bundle has
 * one (opened on @dfd), with the key it was written for.  A table that
 * is missing, without its header, of a size that is not a whole number
 * of entries, or that cannot be read is not used: the history is then
 * numbered by decoding its trace, as for bundles written before tables
 * were (the table only spares that work). */
static void load_psbs(int dfd, struct hist_thread *t)
{
	const size_t head = 2 * sizeof(uint64_t);
	char *rel = hist_trace_sibling(t->trace_file, ".psbs");
	int fd = rel ? bundle_open_inside(dfd, rel) : -1;
	struct stat st;
	uint8_t *data = NULL;
	uint64_t actual;

	free(rel);
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && (size_t) st.st_size > head &&
	    !((st.st_size - head) % sizeof(struct hist_psb)) &&
	    !bundle_read_exact(fd, (uint64_t) st.st_size, &data, &actual) &&
	    !memcmp(data, HIST_PSBS_MAGIC, sizeof(uint64_t))) {
		memcpy(&t->psbs_key, data + sizeof(uint64_t),
		       sizeof(uint64_t));
		t->psbs_keyed = true;
		t->npsbs = ((size_t) st.st_size - head) /
			   sizeof(struct hist_psb);
		memmove(data, data + head, (size_t) st.st_size - head);
		t->psbs = (struct hist_psb *) data;
		data = NULL;
	}
	free(data);
	close(fd);
}

/* Reads the registers recorded on the way through thread @t's run,
 * threads/TID.regs, if its bundle has them (opened on @dfd).  A file
 * that cannot be read or is damaged is not used, with a warning: the
 * values they would prove stay unknown. */
static int load_regs(int dfd, struct hist_bundle *b, struct hist_thread *t)
{
	char *rel = hist_trace_sibling(t->trace_file, ".regs");
	int fd = rel ? bundle_open_inside(dfd, rel) : -1;
	struct stat st;
	uint8_t *data = NULL;
	uint64_t actual;
	int err = 0;

	if (fd >= 0 && (fstat(fd, &st) ||
			bundle_read_exact(fd, (uint64_t) st.st_size, &data,
					  &actual) ||
			hist_regsnaps_decode(data, (size_t) st.st_size,
					     &t->snaps, &t->nsnaps)))
		err = bundle_strv_printf(&b->warnings, "thread %d: %s cannot "
					 "be read; the registers recorded on "
					 "the way are not used", t->tid, rel);
	ptrr_clear_error();
	free(data);
	free(rel);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Maps every thread's trace (opening a long recording reads what it
 * needs of it).  A thread whose trace is missing or
 * damaged is left out with a warning; if none is left, the bundle is
 * refused.  Kept threads move down, and a moved-from slot is zeroed, so
 * that the array can be freed whenever this stops. */
static int load_threads(int dfd, struct hist_bundle *b)
{
	char why[WHY_MAX];
	size_t kept = 0;

	for (size_t i = 0; i < b->nthreads; i++) {
		struct hist_thread t = b->threads[i];
		int r = read_part(dfd, b, t.trace_file, t.trace_size, true,
				  &t.trace, why);

		t.trace_mapped = t.trace != NULL;
		if (!r)
			load_psbs(dfd, &t);
		if (!r && (r = load_regs(dfd, b, &t)) < 0)
			return r;

		memset(&b->threads[i], 0, sizeof(t));
		if (!r) {
			b->threads[kept++] = t;
			continue;
		}
		if (r > 0)
			r = bundle_strv_printf(&b->warnings,
					"thread %d: %s; the thread is left out",
					t.tid, why);
		bundle_free_thread(&t);
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
		int r = read_part(dfd, b, y.file, y.size, false, &y.data,
				  why);

		memset(&x[i], 0, sizeof(y));
		if (!r) {
			x[kept++] = y;
			continue;
		}
		if (r > 0)
			r = bundle_strv_printf(&b->warnings,
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
	return bundle_strv_printf(&b->warnings,
			   "module %s: %s; its code will show as gaps — %s",
			   m->path, why, m->file ? "the bundle is damaged; re-record it"
				: "re-record or use a bundle made with --pack");
}

/* Opens the file of module @m for reading: its packed copy inside the
 * bundle open on @dfd, else its original path.  When the manifest has a
 * build-id the file must have the same one (a file with none is another
 * build); without one, the original path must be the file's own, with
 * no symbolic link on the way, as /proc/PID/maps showed it.  Returns the
 * fd; -ELOOP if the packed copy leads out of the bundle; else -1 and a
 * line saying why in @why. */
static int open_module(int dfd, const struct hist_module *m, char *why)
{
	int fd = m->file ? bundle_open_inside(dfd, m->file)
			 : bundle_open_regular(m->path);
	char *id = NULL, *real = NULL;

	if (fd == -ELOOP && m->file)
		return -ELOOP;
	if (fd < 0) {
		snprintf(why, WHY_MAX, "%s%s: %s",
			 m->file ? "packed copy " : "", m->file ? m->file : m->path,
			 fd == -EINVAL ? "not a regular file" : strerror(-fd));
		return -1;
	}
	if (m->build_id && !(id = hist_read_build_id_fd(fd)))
		snprintf(why, WHY_MAX, "the file has no build-id, the recording's is %s",
			 m->build_id);
	else if (m->build_id && strcmp(m->build_id, id))
		snprintf(why, WHY_MAX,
			 "build-id differs from the recording (%s vs %s)",
			 m->build_id, id);
	else if (!m->build_id && !m->file &&
		 (!(real = realpath(m->path, NULL)) || strcmp(real, m->path)))
		snprintf(why, WHY_MAX, "the recording has no build-id to check it by, and the path leads through a symbolic link");
	else
		why[0] = '\0';
	free(id);
	free(real);
	if (why[0]) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Checks that the file of module @m can be read and is the recorded one
 * (open_module()); marks it unusable, with a warning, if not. */
static int check_module(int dfd, struct hist_bundle *b, struct hist_module *m)
{
	char why[WHY_MAX];
	int fd = open_module(dfd, m, why);

	if (fd == -ELOOP)
		return refuse_escape(b->dir, m->file);
	if (fd < 0)
		return module_unusable(b, m, why);
	close(fd);
	return 0;
}

int hist_module_open(const struct hist_bundle *b, const struct hist_module *m)
{
	const char *dir = b->dir ? b->dir : ".";
	char why[WHY_MAX];
	int dfd = -1, fd;

	if (m->file &&
	    (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot open bundle %s: %s: check the path",
				 dir, strerror(errno));
	fd = open_module(dfd, m, why);
	if (dfd >= 0)
		close(dfd);
	if (fd == -ELOOP)
		return refuse_escape(dir, m->file);
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "module %s: %s", m->path, why);
	return fd;
}

/* Checks every module file once; other mappings of a file share the
 * verdict. */
static int check_modules(int dfd, struct hist_bundle *b)
{
	int err = 0;

	for (size_t i = 0; !err && i < b->nmodules; i++) {
		size_t j = 0;

		while (j < i &&
		       !bundle_same_file(&b->modules[i], &b->modules[j]))
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
	int fd = bundle_open_inside(dfd, "manifest.json"), e;
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
		: bundle_read_exact(fd, st.st_size, &text, &actual);
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
		err = bundle_nomem();
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
