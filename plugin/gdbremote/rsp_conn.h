/* plugin/gdbremote — the gdb remote serial protocol on a byte stream:
 * packet framing and nothing else (as rr's GdbServerConnection).
 *
 * A packet is `$DATA#CS` with CS the modulo-256 sum of DATA's bytes in two
 * hex digits; `}` escapes the next byte (XOR 0x20).  Until gdb asks for
 * QStartNoAckMode each packet is acknowledged with `+` (or `-`: send it
 * again).  A lone 0x03 between packets is gdb's interrupt (Ctrl-C).
 * Anything else between packets is noise and skipped.
 */
#ifndef PTRR_RSP_CONN_H
#define PTRR_RSP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest packet either side sends (advertised as PacketSize). */
#define RSP_PACKET_MAX 0x4000

struct rsp_conn {
	int in, out;			/* file descriptors */
	bool no_ack;			/* QStartNoAckMode is on */
	uint8_t buf[RSP_PACKET_MAX * 2];	/* bytes read, not yet used */
	size_t start, end;		/* unused bytes: buf[start, end) */
	char *last;			/* the last packet sent (for '-') */
	size_t last_len;
	bool closed;			/* rsp_conn_interrupted() found the
					 * stream closed: gdb went away while
					 * a target ran */
};

/* What rsp_conn_read() got. */
enum rsp_read {
	RSP_READ_PACKET,	/* a packet, its data in the caller's buffer */
	RSP_READ_INTERRUPT,	/* the 0x03 byte */
	RSP_READ_EOF,		/* the other side closed the stream */
	RSP_READ_ERROR,		/* a read failed */
	RSP_READ_BAD,		/* a malformed packet (bad checksum, too
				 * long): it was refused (`-` or, without
				 * acks, an error reply) */
};

void rsp_conn_init(struct rsp_conn *c, int in, int out);
void rsp_conn_fini(struct rsp_conn *c);

/* Reads the next packet into @data (unescaped, NUL-terminated, at most
 * @cap - 1 bytes; its length in @len) and acknowledges it. */
enum rsp_read rsp_conn_read(struct rsp_conn *c, char *data, size_t cap,
			    size_t *len);

/* Sends packet @data of @len bytes, escaping what needs it; in ack mode
 * waits for gdb's `+` (sending again on `-`).  Returns 0 or -1 if the
 * stream failed. */
int rsp_conn_send(struct rsp_conn *c, const char *data, size_t len);

/* True if the next byte gdb sent is its interrupt (0x03), which is then
 * consumed; does not wait.  For a target that runs (target.h).  Sets
 * c->closed (and is false) if the stream has ended. */
bool rsp_conn_interrupted(struct rsp_conn *c);

/* Sends notification @data (@len bytes: "Stop:T05..."), which gdb does
 * not acknowledge.  0, or -1 if the stream failed. */
int rsp_conn_notify(struct rsp_conn *c, const char *data, size_t len);

/* True if gdb has sent something not read yet (or closed the stream:
 * c->closed is then set); does not wait.  For non-stop mode, where gdb
 * sends requests while threads run. */
bool rsp_conn_pending(struct rsp_conn *c);

/* rsp_conn_send() of a NUL-terminated string. */
int rsp_conn_send_str(struct rsp_conn *c, const char *s);

#endif
