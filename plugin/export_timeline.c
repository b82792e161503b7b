/* `ptrr export --perfetto=FILE` and `--svg=FILE`: the call history of
 * every thread of a bundle as a timeline (plugin/timeline.h), written
 * beside FILE and renamed over it once complete.
 */
#include <config.h>

#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The permissions a new file gets: 0666 less the umask. */
static mode_t file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

int tl_write_file(const char *path, int (*write)(FILE *out, void *ctx),
		  void *ctx)
{
	char *tmp;
	FILE *out = NULL;
	int fd, err;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, file_mode()) < 0 ||
	    !(out = fdopen(fd, "w"))) {
		err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s", path,
				strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return err;
	}
	err = write(out, ctx);
	if (fflush(out) != 0 || ferror(out))
		err = err ? err : ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s",
					    path, strerror(errno));
	if (fclose(out) != 0 && !err)
		err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s", path,
				strerror(errno));
	if (!err && rename(tmp, path) < 0)
		err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s", path,
				strerror(errno));
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

int tl_export(const char *bundle, const char *json, const char *svg)
{
	struct hist_recording *r;
	struct tl_timeline tl;
	int err = hist_recording_open(bundle, &r);

	if (err < 0)
		return err;
	for (char **w = hist_recording_bundle(r)->warnings; w && *w; w++)
		fprintf(stderr, "warning: %s\n", *w);
	err = tl_build(r, &tl);
	if (!err) {
		if (json)
			err = tl_write_perfetto(&tl, json);
		if (!err && svg)
			err = tl_write_svg(&tl, svg);
		tl_free(&tl);
	}
	hist_recording_close(r);
	return err;
}
