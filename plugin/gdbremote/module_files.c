/* Which files gdb may read through the server (hostio.c): the program's
 * own executable and libraries, and nothing else on the host.
 *
 * A name matches a file if it is the same string or, both resolved
 * (realpath: symbolic links, "." and ".." followed), the same path; no
 * prefix or base name is enough.  What is opened then is never the name
 * gdb gave but the file the rule found:
 *
 *   recording  a module of the bundle, named by its recorded path or the
 *              path the bundle reads it at, and opened as the loader
 *              checks it (hist_module_open: the packed copy inside the
 *              bundle, else the original path holding the recorded
 *              build-id);
 *   live       a file the process has mapped executable now
 *              (/proc/PID/maps: the program, the dynamic loader, the
 *              libraries loaded so far), opened at its resolved path
 *              with no symbolic link followed on the way (live_files.c).
 *
 * and, for both, a separate debug file of one of those files that this
 * machine has (debug_files.c).
 *
 * This file has the recording's part.
 */
#include <config.h>

#include "gdbremote/debug_files.h"
#include "gdbremote/target_replay.h"

#include <stdlib.h>
#include <string.h>

/* True if gdb's @name names file @path: the same string, or the same
 * path once both are resolved (@real: @name resolved, NULL if it does not
 * resolve). */
static bool names(const char *name, const char *real, const char *path)
{
	char *resolved;
	bool same;

	if (!strcmp(name, path))
		return true;
	if (!real || !(resolved = realpath(path, NULL)))
		return false;
	same = !strcmp(real, resolved);
	free(resolved);
	return same;
}

/* Opens @name if it is a debug file of one of @b's modules. */
static int open_debug_file(const struct hist_bundle *b, const char *name)
{
	char **ids = calloc(b->nmodules + 1, sizeof(*ids));
	int fd;

	if (!ids)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < b->nmodules; i++)
		ids[i] = b->modules[i].build_id;
	fd = rsp_open_debug_file(name, ids, b->nmodules);
	free(ids);
	return fd;
}

int rsp_bundle_open_file(const struct hist_bundle *b, const char *name)
{
	const struct hist_module *found = NULL;
	char *real = realpath(name, NULL);
	int err = 0;

	for (size_t i = 0; i < b->nmodules && !found && !err; i++) {
		const struct hist_module *m = &b->modules[i];
		char *used = hist_module_open_path(b, m);

		if (!used)
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		else if (names(name, real, m->path) || names(name, real, used))
			found = m;
		free(used);
	}
	free(real);
	if (!err && !found && rsp_debug_file_name(name))
		return open_debug_file(b, name);
	if (!err && !found)
		err = ptrr_fail(PTRR_ERR_NOTFOUND, "not the program or one of its libraries in the recording");
	return err ? err : hist_module_open(b, found);
}
