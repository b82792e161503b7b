/* Files of a bundle.  The reader trusts nothing in the directory: a file
 * is opened component by component, never through "..", a symbolic link
 * or anything but a plain file, and is read whole at the size the manifest
 * records.  The writer creates every file anew and flushes files and
 * directories to disk, so that its one rename publishes a complete bundle.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_internal.h"

/* Opens @path for reading if it is a regular file (never blocking on a
 * FIFO or touching a device).  Returns the fd or -errno. */
int bundle_open_regular(const char *path)
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
int bundle_open_inside(int dfd, const char *rel)
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

/* Checks that the file open on @fd holds @size bytes (its size into
 * *@actual): 0, 1 if it is empty, -EMSGSIZE if it has another size, or
 * another -errno. */
static int exact_size(int fd, uint64_t size, uint64_t *actual)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	*actual = st.st_size;
	if ((uint64_t)st.st_size != size)
		return -EMSGSIZE;
	if (size > SIZE_MAX)
		return -ENOMEM;
	return !size;
}

/* Reads exactly @size bytes of the file open on @fd into *@data (NULL if
 * @size is 0).  -EMSGSIZE if the file has another size (its size then in
 * *@actual), -ENOMEM, or another -errno. */
int bundle_read_exact(int fd, uint64_t size, uint8_t **data, uint64_t *actual)
{
	size_t got = 0;
	int e = exact_size(fd, size, actual);
	uint8_t *p;

	*data = NULL;
	if (e)
		return e < 0 ? e : 0;
	if (!(p = malloc(size)))
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

/* Maps exactly @size bytes of the file open on @fd, read-only and
 * private, at *@data (NULL if @size is 0): as bundle_read_exact(), for
 * the traces, which are large and read in part (a bundle's files are
 * written under another name and renamed, never changed in place). */
int bundle_map_exact(int fd, uint64_t size, uint8_t **data, uint64_t *actual)
{
	int e = exact_size(fd, size, actual);
	void *p;

	*data = NULL;
	if (e)
		return e < 0 ? e : 0;
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
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
int bundle_write_file(int dfd, const char *rel, const void *data, size_t size)
{
	int fd = openat(dfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);

	if (fd < 0)
		return -errno;
	return sync_close(fd, write_all(fd, data, size));
}

/* Copies file @src to new file @rel in @dfd.  -errno on failure; a
 * failure to read @src (rather than to write) also sets *@src_failed. */
int bundle_copy_file(int dfd, const char *rel, const char *src,
		     bool *src_failed)
{
	int in = bundle_open_regular(src), out, err = 0;
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

/* nftw() callback of bundle_remove_tree(). */
static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* Removes @path and everything under it, following no symbolic link. */
void bundle_remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Flushes directory @name inside @dfd (or @dfd itself if @name is ".")
 * to disk; a directory that does not exist is fine. */
int bundle_sync_dir(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	return sync_close(fd, 0);
}
