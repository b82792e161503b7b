/* A client of QEMU's gdb stub (qemu_stub.h). */
#include <config.h>

#include "live/qemu_stub.h"
#include "error.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void qstub_init(struct qstub *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

void qstub_close(struct qstub *s)
{
	if (s->fd >= 0) {
		rsp_conn_fini(&s->conn);
		close(s->fd);
	}
	s->fd = -1;
}

/* The error of a stream that ended or failed. */
static int lost(void)
{
	return ptrr_fail(PTRR_ERR_IO, "QEMU's gdb stub went away");
}

/* Sends @fmt's packet with its arguments @ap. */
static int vsend(struct qstub *s, const char *fmt, va_list ap)
{
	char pkt[RSP_PACKET_MAX];
	int n = vsnprintf(pkt, sizeof(pkt), fmt, ap);

	if (n < 0 || (size_t) n >= sizeof(pkt))
		return ptrr_fail(PTRR_ERR_INTERNAL, "a request to QEMU's gdb "
				 "stub is too long");
	return rsp_conn_send(&s->conn, pkt, (size_t) n) ? lost() : 0;
}

int qstub_send(struct qstub *s, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vsend(s, fmt, ap);
	va_end(ap);
	return err;
}

int qstub_read(struct qstub *s, const char **r)
{
	size_t len;

	for (;;) {
		enum rsp_read got = rsp_conn_read(&s->conn, s->reply,
						  sizeof(s->reply), &len);

		if (got == RSP_READ_PACKET)
			break;
		if (got == RSP_READ_EOF || got == RSP_READ_ERROR)
			return lost();
	}
	s->len = len;
	*r = s->reply;
	return 0;
}

int qstub_request(struct qstub *s, const char **r, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vsend(s, fmt, ap);
	va_end(ap);
	return err ? err : qstub_read(s, r);
}

int qstub_wait(struct qstub *s, int ms)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	int n;

	if (s->conn.start < s->conn.end)
		return 1;
	do
		n = poll(&pfd, 1, ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ptrr_fail(PTRR_ERR_IO, "poll: %s", strerror(errno));
	return n > 0;
}

int qstub_connect(struct qstub *s, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *r;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return ptrr_fail(PTRR_ERR_USAGE, "socket path too long: %s "
				 "(set TMPDIR to a shorter directory)", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return ptrr_fail(PTRR_ERR_IO, "cannot connect to QEMU's gdb "
				 "stub (%s): %s", path, strerror(e));
	}
	s->fd = fd;
	rsp_conn_init(&s->conn, fd, fd);
	if (qstub_request(s, &r, "QStartNoAckMode"))
		return -1;
	if (!strcmp(r, "OK"))
		s->conn.no_ack = true;
	return 0;
}

int qstub_xfer(struct qstub *s, const char *object, char **doc, size_t *len)
{
	size_t n = 0;
	char *buf = NULL;

	for (;;) {
		const char *r;
		size_t got;
		char *v;
		int err = qstub_request(s, &r, "qXfer:%s:read::%zx,%x", object,
					n, 0xf00);

		if (err || (r[0] != 'm' && r[0] != 'l')) {
			free(buf);
			return err ? err : ptrr_fail(PTRR_ERR_UNSUPPORTED,
						     "QEMU's gdb stub has no "
						     "%s", object);
		}
		/* The reply may hold NULs: its length is the packet's. */
		got = s->len - 1;
		v = realloc(buf, n + got + 1);
		if (!v) {
			free(buf);
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		}
		buf = v;
		memcpy(buf + n, r + 1, got);
		n += got;
		if (r[0] == 'l')
			break;
	}
	*doc = buf;
	*len = n;
	return 0;
}

pid_t qstub_thread_id(const char *p, const char **end)
{
	char *e;
	long tid;

	if (*p == 'p') {
		p = strchr(p, '.');
		p = p ? p + 1 : "";
	}
	tid = strtol(p, &e, 16);
	if (end)
		*end = e;
	return (pid_t) tid;
}

void qstub_hex(const void *data, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = data;

	for (size_t i = 0; i < n; i++) {
		*out++ = digits[p[i] >> 4];
		*out++ = digits[p[i] & 15];
	}
	*out = 0;
}

size_t qstub_unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (n < max && hex[0] && hex[1]) {
		unsigned v;

		if (sscanf(hex, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t) v;
		hex += 2;
	}
	return n;
}
