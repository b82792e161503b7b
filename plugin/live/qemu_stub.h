/* plugin/live — a client of QEMU's gdb stub (qemu-x86_64 -g SOCKET),
 * for the live QEMU session (live_qemu.c): requests and their replies
 * over the remote protocol's framing (gdbremote/rsp_conn.h), which is
 * the same in both directions.  Errors are negative enum ptrr_error
 * values with a message. */
#ifndef PTRR_QEMU_STUB_H
#define PTRR_QEMU_STUB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gdbremote/rsp_conn.h"

/* Bytes of memory one m or M packet carries (QEMU's PacketSize is
 * 0x1000 characters, two a byte). */
#define QSTUB_MAX_MEM 0x700

struct qstub {
	struct rsp_conn conn;
	int fd;				/* the socket, or -1 */
	char reply[RSP_PACKET_MAX];	/* the last reply */
	size_t len;			/* its length (it may hold NULs) */
};

void qstub_init(struct qstub *s);

/* Connects to the stub listening on Unix socket @path and turns acks
 * off if it can. */
int qstub_connect(struct qstub *s, const char *path);
void qstub_close(struct qstub *s);

/* Sends one packet (printf-formatted). */
int qstub_send(struct qstub *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reads the next packet into s->reply (*@r). */
int qstub_read(struct qstub *s, const char **r);

/* Sends a request and reads its reply (*@r, "" for the empty one). */
int qstub_request(struct qstub *s, const char **r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Waits up to @ms milliseconds (-1: for ever) for a packet to read:
 * 1 if one is there, 0 if not, or an error. */
int qstub_wait(struct qstub *s, int ms);

/* Reads all of qXfer object @object (e.g. "auxv") into a malloc'd
 * *@doc, *@len bytes. */
int qstub_xfer(struct qstub *s, const char *object, char **doc, size_t *len);

/* The task id of thread id @p ("TID" or "pPID.TID", hex); *@end after
 * it (if not NULL). */
pid_t qstub_thread_id(const char *p, const char **end);

/* @n bytes at @data as hex digits into @out (2n + 1 bytes). */
void qstub_hex(const void *data, size_t n, char *out);

/* Hex digits @hex into at most @max bytes at @out; how many. */
size_t qstub_unhex(const char *hex, uint8_t *out, size_t max);

#endif
