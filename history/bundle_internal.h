/* history/ private: what bundle.c (files on disk) and bundle_json.c (the
 * manifest) share.  Not part of the public API. */
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

/* Appends string @s, taken over (freed on failure; NULL counts as out of
 * memory), to the NULL-terminated list @v, which may be NULL. */
int bundle_strv_append(char ***v, char *s);

#endif
