/* Separate debug files through the server.  With its sysroot "target:"
 * (a gdb that did not come from `ptrr replay` or `ptrr gdb`, or a replay
 * whose files are not all the recorded ones), gdb looks for each
 * module's debug file on the server's side too: by build-id
 * (/usr/lib/debug/.build-id/xx/rest.debug) and by .gnu_debuglink name
 * (next to the module, in .debug/ there, under /usr/lib/debug).  The
 * server gives the ones this machine has that belong to the target's
 * modules: the file's own build-id must be a module's, so that whatever
 * the name leads to (a symbolic link included, as in Fedora's
 * .build-id/ trees), what gdb gets is that module's debug file and
 * nothing else of the host.  The others are refused without a line:
 * most modules have no debug file, and gdb asks for six names each. */
#include <config.h>

#include "gdbremote/debug_files.h"
#include "error.h"
#include "history.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char debug_suffix[] = ".debug";

bool rsp_debug_file_name(const char *name)
{
	size_t n = strlen(name), k = sizeof(debug_suffix) - 1;

	return n > k && !strcmp(name + n - k, debug_suffix);
}

/* True if absolute path @name has a "." or ".." component. */
static bool has_dot_component(const char *name)
{
	for (const char *p = name; (p = strchr(p, '/')); p++) {
		size_t len = strcspn(p + 1, "/");

		if ((len == 1 && p[1] == '.') ||
		    (len == 2 && p[1] == '.' && p[2] == '.'))
			return true;
	}
	return false;
}

/* True if the ELF file open on @fd has one of the @n build-ids @ids. */
static bool id_matches(int fd, char *const *ids, size_t n)
{
	char *id = hist_read_build_id_fd(fd);
	bool match = false;

	for (size_t i = 0; id && i < n && !match; i++)
		match = ids[i] && !strcmp(ids[i], id);
	free(id);
	return match;
}

int rsp_open_debug_file(const char *name, char *const *ids, size_t n)
{
	struct stat st;
	int fd;

	if (!rsp_debug_file_name(name) || name[0] != '/' ||
	    has_dot_component(name))
		return ptrr_fail(PTRR_ERR_NOTFOUND, "not the program or one of "
				 "its libraries, nor a debug file of one");
	fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "%s", strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !id_matches(fd, ids, n)) {
		close(fd);
		return ptrr_fail(PTRR_ERR_NOTFOUND, "not a debug file of the "
				 "program or of one of its libraries");
	}
	return fd;
}
