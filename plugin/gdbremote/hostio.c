/* gdb's file transfer through `ptrr serve`: the Host I/O packets
 * (vFile:..., gdb's manual, "Host I/O Packets"), with which gdb reads the
 * program and its libraries from the server's side (its default sysroot
 * "target:") instead of its own filesystem.
 *
 * Read-only, and only the files the target's open_file() lets through
 * (the program and its libraries: module_files.c): a write or create
 * flag, vFile:pwrite, vFile:unlink and vFile:readlink are refused, and
 * so is any other file.  A refusal is the reply F-1,EACCES and one line
 * on the server's standard error saying why, but for gdb's probe and its
 * searches for separate debug files (debug_files.c), which are routine.  gdb's file descriptors are
 * slots of a small table, never the server's own descriptors.
 */
#include <config.h>

#include "gdbremote/debug_files.h"
#include "gdbremote/server.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files gdb may have open at once (it keeps one per object it reads). */
#define HOSTIO_FILES 64

/* gdb's open(2) flags that write or create (gdb's include/gdb/fileio.h:
 * O_WRONLY, O_RDWR, O_APPEND, O_CREAT, O_TRUNC, O_EXCL). */
#define FILEIO_WRITE_FLAGS 0xe0b

/* gdb's errno values (the same as Linux's for these). */
enum {
	FILEIO_EIO = 5,
	FILEIO_EBADF = 9,
	FILEIO_EACCES = 13,
	FILEIO_EINVAL = 22,
	FILEIO_EMFILE = 24,
};

/* The name gdb opens to learn whether the stub has vFile:open at all
 * (remote.c, remote_target::filesystem_is_local): not worth a line. */
static const char gdb_probe[] = "just probing";

struct rsp_hostio {
	int fd[HOSTIO_FILES];	/* by gdb's descriptor; -1 if free */
};

/* The table of @s, made at the first packet; NULL if out of memory. */
static struct rsp_hostio *files(struct rsp_server *s)
{
	if (!s->hostio && (s->hostio = malloc(sizeof(*s->hostio))))
		for (size_t i = 0; i < HOSTIO_FILES; i++)
			s->hostio->fd[i] = -1;
	return s->hostio;
}

void rsp_hostio_close(struct rsp_server *s)
{
	for (size_t i = 0; s->hostio && i < HOSTIO_FILES; i++)
		if (s->hostio->fd[i] >= 0)
			close(s->hostio->fd[i]);
	free(s->hostio);
	s->hostio = NULL;
}

/* The error reply F-1,@err. */
static void reply_error(struct rsp_server *s, int err)
{
	rsp_reply_printf(s, "F-1,%x", err);
}

/* Refuses a request with EACCES, saying why on the server's standard
 * error: "@what: @why". */
static void refuse(struct rsp_server *s, const char *what, const char *why)
{
	fprintf(stderr, "ptrr serve: refused %s: %s\n", what, why);
	reply_error(s, FILEIO_EACCES);
}

/* The value of hex digit @c, or -1. */
static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char) (c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Parses a non-negative hex number at *@p no larger than @max, followed
 * by @end, and advances *@p past @end; false otherwise. */
static bool parse_number(const char **p, uint64_t max, char end,
			 uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;
	int d;

	for (; (d = hex_digit(*q)) >= 0; q++) {
		if (v > (max - (unsigned) d) / 16)
			return false;
		v = v * 16 + (unsigned) d;
	}
	if (q == *p || *q != end)
		return false;
	*p = q + (end != '\0');
	*out = v;
	return true;
}

/* Decodes the hex file name at *@p, followed by @end, into @name (at
 * most PATH_MAX - 1 bytes, no NUL inside) and advances *@p past @end;
 * false if it is not one. */
static bool parse_name(const char **p, char end, char name[PATH_MAX])
{
	const char *q = *p;
	size_t n = 0;

	for (; *q && *q != end; q += 2) {
		int hi = hex_digit(q[0]), lo = hi < 0 ? -1 : hex_digit(q[1]);

		if (lo < 0 || (hi | lo) == 0 || n + 1 >= PATH_MAX)
			return false;
		name[n++] = (char) (hi << 4 | lo);
	}
	if (n == 0 || *q != end)
		return false;
	name[n] = '\0';
	*p = q + (end != '\0');
	return true;
}

/* Parses gdb's descriptor at *@p, followed by @end, into the slot of an
 * open file; replies with the error and returns false otherwise. */
static bool parse_fd(struct rsp_server *s, const char **p, char end,
		     size_t *slot)
{
	uint64_t fd;

	if (!parse_number(p, INT32_MAX, end, &fd)) {
		reply_error(s, FILEIO_EINVAL);
		return false;
	}
	if (fd >= HOSTIO_FILES || s->hostio->fd[fd] < 0) {
		reply_error(s, FILEIO_EBADF);
		return false;
	}
	*slot = (size_t) fd;
	return true;
}

/* vFile:open:NAME,FLAGS,MODE: read-only, the target's files only. */
static void handle_open(struct rsp_server *s, const char *p)
{
	char name[PATH_MAX], what[PATH_MAX + 32];
	uint64_t flags, mode;
	size_t slot = 0;
	int fd;

	if (!parse_name(&p, ',', name) ||
	    !parse_number(&p, INT32_MAX, ',', &flags) ||
	    !parse_number(&p, INT32_MAX, '\0', &mode)) {
		reply_error(s, FILEIO_EINVAL);
		return;
	}
	snprintf(what, sizeof(what), "vFile:open of %s", name);
	if (flags & FILEIO_WRITE_FLAGS) {
		refuse(s, what, "ptrr serve opens files for reading only");
		return;
	}
	while (slot < HOSTIO_FILES && s->hostio->fd[slot] >= 0)
		slot++;
	if (slot == HOSTIO_FILES) {
		reply_error(s, FILEIO_EMFILE);
		return;
	}
	fd = s->target->ops->open_file ?
	     s->target->ops->open_file(s->target, name) :
	     ptrr_fail(PTRR_ERR_UNSUPPORTED, "this target has no files");
	if (fd < 0 && (!strcmp(name, gdb_probe) || rsp_debug_file_name(name))) {
		reply_error(s, FILEIO_EACCES);
		return;
	}
	if (fd < 0) {
		refuse(s, what, ptrr_errmsg(fd));
		return;
	}
	s->hostio->fd[slot] = fd;
	rsp_reply_printf(s, "F%zx", slot);
}

/* vFile:close:FD. */
static void handle_close(struct rsp_server *s, const char *p)
{
	size_t slot;

	if (!parse_fd(s, &p, '\0', &slot))
		return;
	close(s->hostio->fd[slot]);
	s->hostio->fd[slot] = -1;
	rsp_reply_str(s, "F0");
}

/* How many of the @n bytes at @data fit in @room bytes of a packet once
 * escaped (rsp_conn_send() escapes $ # } * with a second byte). */
static size_t fitting(const uint8_t *data, size_t n, size_t room)
{
	size_t k = 0, used = 0;

	for (; k < n; k++) {
		bool escaped = data[k] == '$' || data[k] == '#' ||
			       data[k] == '}' || data[k] == '*';

		if (used + 1 + escaped > room)
			break;
		used += 1 + escaped;
	}
	return k;
}

/* vFile:pread:FD,COUNT,OFFSET: as many bytes as fit in a reply; "F0;"
 * at the end of the file. */
static void handle_pread(struct rsp_server *s, const char *p)
{
	static uint8_t buf[RSP_PACKET_MAX];
	const size_t room = RSP_PACKET_MAX - 32;
	uint64_t count, offset;
	size_t slot;
	ssize_t n;

	if (!parse_fd(s, &p, ',', &slot))
		return;
	if (!parse_number(&p, UINT64_MAX, ',', &count) ||
	    !parse_number(&p, INT64_MAX, '\0', &offset)) {
		reply_error(s, FILEIO_EINVAL);
		return;
	}
	n = pread(s->hostio->fd[slot], buf, count < room ? count : room,
		  (off_t) offset);
	if (n < 0) {
		reply_error(s, errno == EINVAL ? FILEIO_EINVAL : FILEIO_EIO);
		return;
	}
	n = (ssize_t) fitting(buf, (size_t) n, room);
	rsp_reply_printf(s, "F%zx;", (size_t) n);
	rsp_reply_bytes(s, buf, (size_t) n);
}

/* Appends @value to @out as a big-endian field of @size bytes. */
static uint8_t *put_be(uint8_t *out, uint64_t value, size_t size)
{
	for (size_t i = 0; i < size; i++)
		out[i] = (uint8_t) (value >> (8 * (size - 1 - i)));
	return out + size;
}

/* vFile:fstat:FD: gdb's struct fio_stat (include/gdb/fileio.h), fields
 * big-endian, 32-bit but for the size and the block counts. */
static void handle_fstat(struct rsp_server *s, const char *p)
{
	uint8_t fio[64], *q = fio;
	struct stat st;
	size_t slot;

	if (!parse_fd(s, &p, '\0', &slot))
		return;
	if (fstat(s->hostio->fd[slot], &st) < 0) {
		reply_error(s, FILEIO_EIO);
		return;
	}
	q = put_be(q, st.st_dev, 4);
	q = put_be(q, st.st_ino, 4);
	q = put_be(q, st.st_mode & (S_IFREG | S_IFDIR | 0777), 4);
	q = put_be(q, st.st_nlink, 4);
	q = put_be(q, st.st_uid, 4);
	q = put_be(q, st.st_gid, 4);
	q = put_be(q, st.st_rdev, 4);
	q = put_be(q, (uint64_t) st.st_size, 8);
	q = put_be(q, (uint64_t) st.st_blksize, 8);
	q = put_be(q, (uint64_t) st.st_blocks, 8);
	q = put_be(q, (uint64_t) st.st_atime, 4);
	q = put_be(q, (uint64_t) st.st_mtime, 4);
	q = put_be(q, (uint64_t) st.st_ctime, 4);
	rsp_reply_printf(s, "F%zx;", (size_t) (q - fio));
	rsp_reply_bytes(s, fio, (size_t) (q - fio));
}

/* vFile:setfs:PID: every file is looked up as the server sees it, which
 * is as the program sees it (ptrr runs it on this machine). */
static void handle_setfs(struct rsp_server *s, const char *p)
{
	uint64_t pid;

	if (!parse_number(&p, INT32_MAX, '\0', &pid))
		reply_error(s, FILEIO_EINVAL);
	else
		rsp_reply_str(s, "F0");
}

/* vFile:pwrite:FD,OFFSET,DATA: refused. */
static void refuse_write(struct rsp_server *s, const char *p)
{
	(void) p;
	refuse(s, "vFile:pwrite", "ptrr serve writes no file");
}

/* Refuses vFile:@op of the file named at @p (unlink, readlink). */
static void refuse_named(struct rsp_server *s, const char *op,
			 const char *p, const char *why)
{
	char name[PATH_MAX], what[PATH_MAX + 32];

	if (!parse_name(&p, '\0', name)) {
		reply_error(s, FILEIO_EINVAL);
		return;
	}
	snprintf(what, sizeof(what), "vFile:%s of %s", op, name);
	refuse(s, what, why);
}

/* vFile:unlink:NAME: refused. */
static void refuse_unlink(struct rsp_server *s, const char *p)
{
	refuse_named(s, "unlink", p, "ptrr serve deletes no file");
}

/* vFile:readlink:NAME: refused (gdb reads files, not where links lead). */
static void refuse_readlink(struct rsp_server *s, const char *p)
{
	refuse_named(s, "readlink", p,
		     "ptrr serve reads the program's files, not links");
}

void rsp_hostio_handle(struct rsp_server *s, const char *p)
{
	static const struct {
		const char *op;
		void (*handle)(struct rsp_server *s, const char *args);
	} ops[] = {
		{ "open", handle_open }, { "close", handle_close },
		{ "pread", handle_pread }, { "fstat", handle_fstat },
		{ "setfs", handle_setfs }, { "pwrite", refuse_write },
		{ "unlink", refuse_unlink }, { "readlink", refuse_readlink },
	};
	size_t n = strcspn(p, ":");

	if (!p[n])
		return;	/* no operation: the empty reply */
	if (!files(s)) {
		reply_error(s, FILEIO_EIO);
		return;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (strlen(ops[i].op) == n && !strncmp(p, ops[i].op, n)) {
			ops[i].handle(s, p + n + 1);
			return;
		}
	/* An operation gdb 13 does not send: the empty reply. */
}
