/* Which files gdb may read through the server in a live session: those
 * the process has mapped executable, and their debug files (the rule:
 * module_files.c). */
#include <config.h>

#include "gdbremote/debug_files.h"
#include "gdbremote/live_target.h"
#include "capture/procmaps.h"
#include "history.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Opens regular file @path, a resolved path, for reading with no
 * symbolic link followed on the way (openat2's RESOLVE_NO_SYMLINKS;
 * before Linux 5.6 only the last component is checked).  The fd, or a
 * negative error. */
static int open_resolved(const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot open %s: %s", path,
				 strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ptrr_fail(PTRR_ERR_IO, "%s is not a regular file", path);
	}
	return fd;
}

/* Opens @name if it is a debug file of a file mapped executable in
 * @maps[0..n). */
static int open_debug_file(const struct cap_map *maps, size_t n,
			   const char *name)
{
	char **ids = calloc(n + 1, sizeof(*ids));
	int err = ids ? 0 : ptrr_fail(PTRR_ERR_NOMEM, "out of memory");

	for (size_t i = 0; !err && i < n; i++)
		if (maps[i].executable && cap_map_is_file(&maps[i]))
			ids[i] = hist_read_build_id(maps[i].path);
	if (!err)
		err = rsp_open_debug_file(name, ids, n);
	for (size_t i = 0; ids && i < n; i++)
		free(ids[i]);
	free(ids);
	return err;
}

/* Opens @name if, resolved, it is a file mapped executable in
 * @maps[0..n). */
static int open_mapped(const struct cap_map *maps, size_t n, const char *name)
{
	char *real = realpath(name, NULL);
	bool mapped = false;
	int err = 0;

	if (!real)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "%s", strerror(errno));
	for (size_t i = 0; i < n && !mapped; i++)
		mapped = maps[i].executable && cap_map_is_file(&maps[i]) &&
			 !strcmp(maps[i].path, real);
	if (!mapped)
		err = ptrr_fail(PTRR_ERR_NOTFOUND, "not the program or one of the libraries it has loaded");
	if (!err)
		err = open_resolved(real);
	free(real);
	return err;
}

int rsp_open_mapped_file(const struct cap_map *maps, size_t n,
			 const char *name)
{
	int fd = open_mapped(maps, n, name);

	return fd < 0 && rsp_debug_file_name(name) ?
	       open_debug_file(maps, n, name) : fd;
}

/* True if @name is one of the files of /proc/@pid, or of one of its
 * tasks (/proc/@pid/task/TID/, which only its own threads have), that
 * gdb reads once it knows the pid: the memory map (gcore, the vsyscall
 * page), the command line and the state (gcore). */
static bool is_proc_file(pid_t pid, const char *name)
{
	static const char *const files[] = {
		"maps", "smaps", "cmdline", "stat", "status",
		"coredump_filter",
	};
	char dir[32];
	int n = snprintf(dir, sizeof(dir), "/proc/%d/", (int) pid);

	if (strncmp(name, dir, (size_t) n))
		return false;
	name += n;
	if (!strncmp(name, "task/", 5) && name[5] >= '1' && name[5] <= '9') {
		name += 5 + strspn(name + 5, "0123456789");
		if (*name++ != '/')
			return false;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strcmp(name, files[i]))
			return true;
	return false;
}

int rsp_process_open_file(pid_t pid, const char *name)
{
	struct cap_map *maps = NULL;
	size_t n = 0;
	int fd;

	if (is_proc_file(pid, name)) {
		fd = open(name, O_RDONLY | O_CLOEXEC);
		return fd >= 0 ? fd : ptrr_fail(PTRR_ERR_IO, "cannot open %s: "
						"%s", name, strerror(errno));
	}
	fd = cap_maps_read(pid, &maps, &n);
	if (!fd)
		fd = rsp_open_mapped_file(maps, n, name);
	cap_maps_free(maps, n);
	return fd;
}
