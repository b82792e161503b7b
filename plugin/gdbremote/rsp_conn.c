/* The gdb remote serial protocol's framing (rsp_conn.h). */
#include <config.h>

#include "gdbremote/rsp_conn.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rsp_conn_init(struct rsp_conn *c, int in, int out)
{
	memset(c, 0, sizeof(*c));
	c->in = in;
	c->out = out;
}

void rsp_conn_fini(struct rsp_conn *c)
{
	free(c->last);
	c->last = NULL;
}

/* Reads more bytes into the buffer; 1 if some came, 0 at end of stream,
 * -1 on error. */
static int fill(struct rsp_conn *c)
{
	ssize_t n;

	if (c->start > 0) {
		memmove(c->buf, c->buf + c->start, c->end - c->start);
		c->end -= c->start;
		c->start = 0;
	}
	if (c->end == sizeof(c->buf))
		return -1;	/* cannot happen: packets are bounded */
	do
		n = read(c->in, c->buf + c->end, sizeof(c->buf) - c->end);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	c->end += (size_t) n;
	return 1;
}

/* The next byte of the stream in *@b; see fill() for the result. */
static int next_byte(struct rsp_conn *c, uint8_t *b)
{
	int r;

	while (c->start == c->end)
		if ((r = fill(c)) <= 0)
			return r;
	*b = c->buf[c->start++];
	return 1;
}

static int hex_value(uint8_t ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Writes all of @data; 0 or -1. */
static int write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t) n;
	}
	return 0;
}

/* Reads the body of a packet after its '$' into @data; 1 if complete
 * and its checksum right, 0 if malformed (the rest consumed), or the
 * negative/zero result of next_byte() as -1 / -2 (end of stream). */
static int read_body(struct rsp_conn *c, char *data, size_t cap, size_t *len)
{
	uint8_t b, sum = 0, cs[2];
	bool escape = false, overflow = false;
	size_t n = 0;
	int r;

	for (;;) {
		if ((r = next_byte(c, &b)) <= 0)
			return r < 0 ? -1 : -2;
		if (b == '#' && !escape)
			break;
		sum += b;
		if (b == '}' && !escape) {
			escape = true;
			continue;
		}
		if (escape)
			b ^= 0x20;
		escape = false;
		if (n + 1 >= cap)
			overflow = true;
		else
			data[n++] = (char) b;
	}
	for (int i = 0; i < 2; i++)
		if ((r = next_byte(c, &cs[i])) <= 0)
			return r < 0 ? -1 : -2;
	data[n] = '\0';
	*len = n;
	if (overflow || hex_value(cs[0]) < 0 || hex_value(cs[1]) < 0)
		return 0;
	return (uint8_t) (hex_value(cs[0]) << 4 | hex_value(cs[1])) == sum;
}

enum rsp_read rsp_conn_read(struct rsp_conn *c, char *data, size_t cap,
			    size_t *len)
{
	uint8_t b;
	int r;

	for (;;) {
		if ((r = next_byte(c, &b)) <= 0)
			return r < 0 ? RSP_READ_ERROR : RSP_READ_EOF;
		if (b == 0x03)
			return RSP_READ_INTERRUPT;
		if (b == '-' && c->last)
			write_all(c->out, c->last, c->last_len);
		if (b != '$')
			continue;
		r = read_body(c, data, cap, len);
		if (r == -1)
			return RSP_READ_ERROR;
		if (r == -2)
			return RSP_READ_EOF;
		if (!c->no_ack && write_all(c->out, r ? "+" : "-", 1) < 0)
			return RSP_READ_ERROR;
		if (r)
			return RSP_READ_PACKET;
		if (c->no_ack)
			return RSP_READ_BAD;
	}
}

/* Waits for gdb's acknowledgement of the last packet, sending it again
 * on '-'.  0 or -1. */
static int await_ack(struct rsp_conn *c)
{
	uint8_t b;

	for (;;) {
		if (next_byte(c, &b) <= 0)
			return -1;
		if (b == '+')
			return 0;
		if (b == '-' && write_all(c->out, c->last, c->last_len) < 0)
			return -1;
		if (b == '$' || b == 0x03) {
			/* gdb went on without acknowledging: keep it. */
			c->start--;
			return 0;
		}
	}
}

/* @len bytes of @data framed as a packet that starts with @lead ('$',
 * or '%' for a notification): malloc'd, its length in *@out_len. */
static char *frame(char lead, const char *data, size_t len, size_t *out_len)
{
	static const char hex[] = "0123456789abcdef";
	char *framed = malloc(2 * len + 4), *p = framed;
	uint8_t sum = 0;

	if (!framed)
		return NULL;
	*p++ = lead;
	for (size_t i = 0; i < len; i++) {
		uint8_t b = (uint8_t) data[i];

		if (b == '$' || b == '#' || b == '}' || b == '*') {
			*p++ = '}';
			sum += '}';
			b ^= 0x20;
		}
		*p++ = (char) b;
		sum += b;
	}
	*p++ = '#';
	*p++ = hex[sum >> 4];
	*p++ = hex[sum & 0xf];
	*out_len = (size_t) (p - framed);
	return framed;
}

int rsp_conn_send(struct rsp_conn *c, const char *data, size_t len)
{
	free(c->last);
	c->last = frame('$', data, len, &c->last_len);
	if (!c->last || write_all(c->out, c->last, c->last_len) < 0)
		return -1;
	return c->no_ack ? 0 : await_ack(c);
}

int rsp_conn_notify(struct rsp_conn *c, const char *data, size_t len)
{
	size_t n;
	char *framed = frame('%', data, len, &n);
	int err = framed ? write_all(c->out, framed, n) : -1;

	free(framed);
	return err < 0 ? -1 : 0;
}

bool rsp_conn_pending(struct rsp_conn *c)
{
	struct pollfd pfd = { .fd = c->in, .events = POLLIN };

	if (c->start < c->end)
		return true;
	if (poll(&pfd, 1, 0) != 1)
		return false;
	if (fill(c) <= 0)
		c->closed = true;
	return true;
}

int rsp_conn_send_str(struct rsp_conn *c, const char *s)
{
	return rsp_conn_send(c, s, strlen(s));
}

bool rsp_conn_interrupted(struct rsp_conn *c)
{
	struct pollfd pfd = { .fd = c->in, .events = POLLIN };

	if (c->start == c->end && poll(&pfd, 1, 0) == 1 && fill(c) <= 0) {
		c->closed = true;
		return false;
	}
	if (c->start == c->end || c->buf[c->start] != 0x03)
		return false;
	c->start++;
	return true;
}
