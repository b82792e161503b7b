/* history/ private: what the bundle files share.  bundle.c holds the
 * model, bundle_json.c the manifest, bundle_fs.c the files inside a
 * bundle, bundle_save.c and bundle_load.c write and read a bundle, and
 * buildid.c reads build-ids.  Not part of the public API. */
#ifndef PTRR_BUNDLE_INTERNAL_H
#define PTRR_BUNDLE_INTERNAL_H

#include <jansson.h>

#include "history.h"

/* The value of "format" in every manifest. */
#define BUNDLE_FORMAT "ptrr-bundle"

/* The manifest of @b as JSON.  Every file name in it (trace_file, file) is
 * taken from @b as it is: the writer sets them first.  NULL if out of
 * memory. */
json_t *bundle_manifest_encode(const struct hist_bundle *b);

/* Checks that manifest @root of bundle @dir is a ptrr manifest of a
 * version this ptrr reads, and returns that version in @version. */
int bundle_manifest_version(json_t *root, const char *dir, int *version);

/* Fills @b, fresh from hist_bundle_new(), from manifest @root of bundle
 * @dir.  Every field is checked for type and range, and every file name for
 * staying inside the bundle; no file is read.  On failure @b holds what was
 * decoded so far and is still safe to free. */
int bundle_manifest_decode(json_t *root, const char *dir,
			   struct hist_bundle *b);

/* The model (bundle.c).  Each function is described where it is
 * defined. */
int bundle_nomem(void);
size_t bundle_strv_len(char *const *v);
void bundle_strv_free(char **v);
__attribute__((format(printf, 2, 3)))
int bundle_strv_printf(char ***v, const char *fmt, ...);
void bundle_free_thread(struct hist_thread *t);
bool bundle_same_file(const struct hist_module *x,
		      const struct hist_module *y);

/* Appends string @s, taken over (freed on failure; NULL counts as out of
 * memory), to the NULL-terminated list @v, which may be NULL. */
int bundle_strv_append(char ***v, char *s);

/* Frees or unmaps the trace of @t, which then has none. */
void hist_thread_drop_trace(struct hist_thread *t);

/* Files inside a bundle, and files the writer copies in (bundle_fs.c).
 * Those returning int return an fd or 0, else a -errno; none records an
 * error: the caller says what failed.  Each is described where it is
 * defined. */
int bundle_open_regular(const char *path);
int bundle_open_inside(int dfd, const char *rel);
int bundle_read_exact(int fd, uint64_t size, uint8_t **data,
		      uint64_t *actual);
int bundle_map_exact(int fd, uint64_t size, uint8_t **data,
		     uint64_t *actual);
int bundle_write_file(int dfd, const char *rel, const void *data,
		      size_t size);
int bundle_copy_file(int dfd, const char *rel, const char *src,
		     bool *src_failed);
void bundle_remove_tree(const char *path);
int bundle_sync_dir(int dfd, const char *name);

#endif
