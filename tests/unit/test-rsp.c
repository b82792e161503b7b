/* The remote protocol's framing (plugin/gdbremote/rsp_conn.c) on pipes:
 * checksums, escapes, acknowledgements and no-ack mode, packets split
 * across reads, noise between packets, the interrupt byte, bad
 * checksums, oversized and truncated packets, the end of the stream. */
#include <config.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdbremote/rsp_conn.h"
#include "test.h"

/* A connection reading what the test writes to @feed and writing its
 * replies to @out (non-blocking, read back with drain()). */
struct pipes {
	struct rsp_conn c;
	int feed;		/* the test writes gdb's side here */
	int replies;		/* and reads the stub's side here */
};

static void pipes_open(struct pipes *p)
{
	int in[2], out[2];

	if (pipe(in) < 0 || pipe(out) < 0)
		abort();
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	rsp_conn_init(&p->c, in[0], out[1]);
	p->feed = in[1];
	p->replies = out[0];
}

static void pipes_close(struct pipes *p)
{
	close(p->c.in);
	close(p->c.out);
	close(p->replies);
	if (p->feed >= 0)
		close(p->feed);
	rsp_conn_fini(&p->c);
}

static void feed(struct pipes *p, const char *s)
{
	if (write(p->feed, s, strlen(s)) != (ssize_t) strlen(s))
		abort();
}

/* Everything the stub wrote so far, NUL-terminated (static). */
static const char *drain(struct pipes *p)
{
	static char buf[4096];
	ssize_t n = read(p->replies, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_packet_and_ack(void)
{
	struct pipes p;
	char data[64];
	size_t len;

	pipes_open(&p);
	feed(&p, "+noise$qC#b4");
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) ==
	      RSP_READ_PACKET);
	CHECK(len == 2 && !strcmp(data, "qC"));
	CHECK(!strcmp(drain(&p), "+"));
	pipes_close(&p);
}

static void test_bad_checksum_and_eof(void)
{
	struct pipes p;
	char data[64];
	size_t len;

	pipes_open(&p);
	feed(&p, "$qC#00$?#3f");
	/* The bad one is refused with '-' and skipped; the next is read. */
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) ==
	      RSP_READ_PACKET);
	CHECK(!strcmp(data, "?"));
	CHECK(!strcmp(drain(&p), "-+"));
	feed(&p, "$trunc");
	close(p.feed);
	p.feed = -1;
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) == RSP_READ_EOF);
	pipes_close(&p);
}

static void test_no_ack_bad_and_interrupt(void)
{
	struct pipes p;
	char data[64];
	size_t len;

	pipes_open(&p);
	p.c.no_ack = true;
	feed(&p, "$qC#zz\x03$g#67");
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) == RSP_READ_BAD);
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) ==
	      RSP_READ_INTERRUPT);
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) ==
	      RSP_READ_PACKET);
	CHECK(!strcmp(data, "g"));
	CHECK(!strcmp(drain(&p), ""));	/* no acks in no-ack mode */
	pipes_close(&p);
}

static void test_escapes_both_ways(void)
{
	struct pipes p;
	char data[64];
	size_t len;
	const char *sent;

	pipes_open(&p);
	p.c.no_ack = true;
	/* "X}#$*" escaped: } is 0x7d, # 0x23, $ 0x24, * 0x2a. */
	CHECK(rsp_conn_send(&p.c, "X}#$*", 5) == 0);
	sent = drain(&p);
	CHECK(!strncmp(sent, "$X}]}\x03}\x04}\x0a#", 11));
	/* What it sent reads back as it was. */
	feed(&p, sent);
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) ==
	      RSP_READ_PACKET);
	CHECK(len == 5 && !memcmp(data, "X}#$*", 5));
	pipes_close(&p);
}

static void test_oversized(void)
{
	struct pipes p;
	char small[8], data[64];
	size_t len;

	pipes_open(&p);
	/* Longer than the caller's buffer: refused, not truncated. */
	feed(&p, "$qSupported#37$qC#b4");
	CHECK(rsp_conn_read(&p.c, small, sizeof(small), &len) ==
	      RSP_READ_PACKET);
	CHECK(!strcmp(small, "qC"));
	CHECK(!strcmp(drain(&p), "-+"));
	(void) data;
	pipes_close(&p);
}

static void test_split_reads(void)
{
	struct pipes p;
	char data[64];
	size_t len;
	int fds[2];

	pipes_open(&p);
	/* Written in pieces from a child while the reader waits. */
	if (pipe(fds) < 0)
		abort();
	if (fork() == 0) {
		const char *pieces[] = { "$m1", "0,4", "#", "2", "e" };

		for (size_t i = 0; i < 5; i++) {
			usleep(2000);
			if (write(p.feed, pieces[i], strlen(pieces[i])) < 0)
				_exit(1);
		}
		_exit(0);
	}
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) ==
	      RSP_READ_PACKET);
	CHECK(!strcmp(data, "m10,4"));
	close(fds[0]);
	close(fds[1]);
	pipes_close(&p);
}

static void test_send_waits_for_ack(void)
{
	struct pipes p;

	pipes_open(&p);
	/* gdb asks for the packet again ('-'), then takes it ('+'). */
	feed(&p, "-+");
	CHECK(rsp_conn_send_str(&p.c, "OK") == 0);
	CHECK(!strcmp(drain(&p), "$OK#9a$OK#9a"));
	pipes_close(&p);
}

int main(void)
{
	RUN(test_packet_and_ack);
	RUN(test_bad_checksum_and_eof);
	RUN(test_no_ack_bad_and_interrupt);
	RUN(test_escapes_both_ways);
	RUN(test_oversized);
	RUN(test_split_reads);
	RUN(test_send_waits_for_ack);
	return test_summary();
}
