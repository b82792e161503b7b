/* The remote protocol's framing (plugin/gdbremote/rsp_conn.c) on pipes:
 * checksums, escapes, acknowledgements and no-ack mode, packets split
 * across reads, noise between packets, the interrupt byte, bad
 * checksums, oversized and truncated packets, the end of the stream.
 *
 * With a crash bundle as argument (tests/gdb-rsp-dispatch.sh records
 * one), also the server's dispatch to the replay target: malformed
 * packets get error or empty replies, the unwind range and moves answer
 * as the recording says, gdb's file transfer (vFile) reads the program
 * and refuses the rest and malformed requests, and thousands of random
 * packets never crash it (run it under ASan too). */
#include <config.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdbremote/rsp_conn.h"
#include "gdbremote/server.h"
#include "gdbremote/target_replay.h"
#include "unwind_abi.h"
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

static void test_interrupted(void)
{
	struct pipes p;
	char data[64];
	size_t len;

	pipes_open(&p);
	/* Nothing sent: no interrupt, and no waiting for one. */
	CHECK(!rsp_conn_interrupted(&p.c));
	feed(&p, "\x03$g#67");
	CHECK(rsp_conn_interrupted(&p.c));
	/* A packet is not an interrupt, and stays to be read. */
	CHECK(!rsp_conn_interrupted(&p.c));
	CHECK(rsp_conn_read(&p.c, data, sizeof(data), &len) ==
	      RSP_READ_PACKET);
	CHECK(!strcmp(data, "g"));
	pipes_close(&p);
}

/* ---- Dispatch to the replay target of a bundle ---- */

static const char *bundle;

/* A server on the bundle whose O packets go to @out, without acks. */
static void server_open(struct rsp_server *s, int out)
{
	struct rsp_target *t;

	memset(s, 0, sizeof(*s));
	if (rsp_replay_target_open(bundle, &t) < 0 ||
	    rsp_server_init(s, t) < 0) {
		fprintf(stderr, "cannot serve %s\n", bundle);
		exit(2);
	}
	rsp_conn_init(&s->conn, -1, out);
	s->conn.no_ack = true;
}

/* The reply of @s to packet @pkt (static). */
static const char *ask(struct rsp_server *s, const char *pkt)
{
	static char copy[RSP_PACKET_MAX + 1];

	snprintf(copy, sizeof(copy), "%s", pkt);
	rsp_server_handle(s, copy, strlen(copy));
	return s->reply ? s->reply : "";
}

static void test_malformed(void)
{
	static const char *const errors[] = {
		"m", "mzz,4", "m0,zz", "m1,2,3", "m0,4", "p", "pzz", "p9999",
		"P", "Pzz=1", "P10=123", "P10=00112233445566778899", "M",
		"Mzz", "M0,2:00", "M0,1:zz", "X0,5:ab", "M0,ffffffffffff:",
		"H", "Hx0", "Hgzz", "Hg7fffffff", "Hc-2", "T", "Tzz",
		"T7fffffff", "Z", "Z0", "Z0,", "Z0,zz,1", "Z0,10", "Z9,10,1",
		"z0,10,ffff", "vCont;x", "vCont;s:zz", "vCont", "vCont;",
		"qXfer:features:read:target.xml:zz",
		"qXfer:features:read:target.xml:0", "qRcmd,zz", "qRcmd,6",
		"Qbtrace-conf:pt:size=zz", "Qbtrace-conf:pt:size=0",
	};
	static const char *const empty[] = {
		"", "!", "bx", "Z3,1000,4", "qFoo", "vMustReplyEmpty",
		"qXfer:features:read", "qXfer:nothing:read::0,10",
		"Qbtrace:nothing",
	};
	struct rsp_server s;

	server_open(&s, -1);
	for (size_t i = 0; i < sizeof(errors) / sizeof(*errors); i++) {
		const char *r = ask(&s, errors[i]);

		if (r[0] != 'E') {
			fprintf(stderr, "'%s': '%s', not an error\n",
				errors[i], r);
			CHECK(r[0] == 'E');
		}
	}
	for (size_t i = 0; i < sizeof(empty) / sizeof(*empty); i++)
		if (strcmp(ask(&s, empty[i]), "")) {
			fprintf(stderr, "'%s': '%s', not empty\n", empty[i],
				s.reply);
			CHECK(!"an empty reply");
		}
	/* Write and access watchpoints are kept (replay/watch.c). */
	CHECK(!strcmp(ask(&s, "Z2,1000,4"), "OK"));
	CHECK(!strcmp(ask(&s, "Z4,1000,4"), "OK"));
	CHECK(!strcmp(ask(&s, "z2,1000,4"), "OK"));
	CHECK(!strcmp(ask(&s, "z4,1000,4"), "OK"));
	CHECK(!s.done);
	rsp_server_close(&s);
}

/* The replay target refuses writes with a reason gdb shows. */
static void test_writes_refused(void)
{
	struct rsp_server s;

	server_open(&s, -1);
	CHECK(!strncmp(ask(&s, "P10=0000000000000000"), "E.registers "
		       "cannot be written", 28));
	CHECK(!strncmp(ask(&s, "M1000,2:0000"), "E.memory cannot be", 18));
	CHECK(!strncmp(ask(&s, "X1000,0:"), "E.memory cannot be", 18));
	CHECK(!strncmp(ask(&s, "G00"), "E.", 2));
	rsp_server_close(&s);
}

/* The unwind range: nothing at the crash (gdb unwinds with the
 * registers), frames one step back. */
static void test_unwind_range(void)
{
	struct rsp_server s;
	char pkt[64];
	const char *r;

	server_open(&s, -1);
	snprintf(pkt, sizeof(pkt), "m%llx,%zx", PTRR_UNWIND_ADDR,
		 sizeof(struct ptrr_unwind_header));
	/* "PTRRUNW1" little-endian, then tid, position, nframes = 0. */
	r = ask(&s, pkt);
	CHECK(strlen(r) == 2 * sizeof(struct ptrr_unwind_header));
	CHECK(!strncmp(r, "50545252554e5731", 16));
	CHECK(!strncmp(r + 48, "00000000", 8));
	CHECK(!strncmp(ask(&s, "bs"), "T05thread:", 10));
	r = ask(&s, pkt);
	CHECK(strncmp(r + 48, "00000000", 8) != 0);
	/* Past the end of the range nothing is readable. */
	snprintf(pkt, sizeof(pkt), "m%llx,4",
		 PTRR_UNWIND_ADDR + PTRR_UNWIND_SIZE);
	CHECK(!strcmp(ask(&s, pkt), "E01"));
	rsp_server_close(&s);
}

/* LLDB's way to the libraries: qShlibInfoAddr gives the replay's own
 * page (a recording keeps no copy of the program's DT_DEBUG), which
 * holds a pointer to the r_debug after it: consistent, its r_map the
 * svr4 list's main-lm, which is a link_map of the crash's snapshot. */
static void test_loader_page(void)
{
	struct rsp_server s;
	char pkt[64], want[64], main_lm[32];
	const char *r, *at;

	server_open(&s, -1);
	snprintf(want, sizeof(want), "%llx", RSP_LOADER_ADDR);
	CHECK(!strcmp(ask(&s, "qShlibInfoAddr"), want));
	r = ask(&s, "qXfer:libraries-svr4:read::0,fff");
	at = strstr(r, "main-lm=\"0x");
	CHECK(at && sscanf(at + 11, "%31[0-9a-f]", main_lm) == 1);
	CHECK(strlen(main_lm) > 4);	/* an address, not a number */
	/* A whole cache line of LLDB's, from the page's start. */
	snprintf(pkt, sizeof(pkt), "m%llx,200", RSP_LOADER_ADDR);
	r = ask(&s, pkt);
	CHECK(strlen(r) == 2 * 0x200);
	CHECK(!strncmp(r, "08000000", 8));	/* -> RSP_LOADER_ADDR + 8 */
	CHECK(!strncmp(r + 16, "01000000", 8));	/* r_version 1 */
	snprintf(want, sizeof(want), "%016llx",
		 (unsigned long long) strtoull(main_lm, NULL, 16));
	for (int i = 0; i < 8; i++)		/* r_map, little-endian */
		CHECK(!strncmp(r + 32 + 2 * i, want + 14 - 2 * i, 2));
	CHECK(!strncmp(r + 64, "00000000", 8));	/* r_state RT_CONSISTENT */
	snprintf(pkt, sizeof(pkt), "m%llx,4",
		 RSP_LOADER_ADDR + RSP_LOADER_SIZE);
	CHECK(!strcmp(ask(&s, pkt), "E01"));
	rsp_server_close(&s);
}

/* ptrr_goto (regnum 60, the description's last): unavailable when read;
 * a write moves the thread as pt goto does, N to instruction N, 0 to
 * the end; a goto past the history is an error gdb and LLDB show. */
static void test_goto_register(void)
{
	struct rsp_server s;

	server_open(&s, -1);
	CHECK(strstr(rsp_target_xml(), "<reg name=\"ptrr_goto\" bitsize="
		     "\"64\" type=\"uint64\" regnum=\"60\""));
	CHECK(!strcmp(ask(&s, "p3c"), "xxxxxxxxxxxxxxxx"));
	CHECK(!strcmp(ask(&s, "P3c=0100000000000000"), "OK"));
	CHECK(!strncmp(ask(&s, "bs"), "T05replaylog:begin;", 19));
	CHECK(!strcmp(ask(&s, "P3c=0000000000000000"), "OK"));
	CHECK(!strncmp(ask(&s, "s"), "T05replaylog:end;", 17));
	CHECK(!strncmp(ask(&s, "P3c=ffffffffffffff7f"), "E.", 2));
	rsp_server_close(&s);
}

/* Backward to the start, forward to the crash, and on past it. */
static void test_moves(void)
{
	struct rsp_server s;

	server_open(&s, -1);
	CHECK(!strncmp(ask(&s, "?"), "T0bthread:", 10));
	CHECK(!strncmp(ask(&s, "bc"), "T05replaylog:begin;", 19));
	CHECK(!strncmp(ask(&s, "bs"), "T05replaylog:begin;", 19));
	CHECK(!strncmp(ask(&s, "vCont;s"), "T05thread:", 10));
	CHECK(!strncmp(ask(&s, "vCont;c"), "T0bthread:", 10));
	CHECK(!strncmp(ask(&s, "c"), "T05replaylog:end;", 17));
	CHECK(!strncmp(ask(&s, "s"), "T05replaylog:end;", 17));
	rsp_server_close(&s);
}

/* The PC (rip, register 0x10) where thread 1 is: its little-endian hex. */
static char *pc_hex(struct rsp_server *s, char out[17])
{
	snprintf(out, 17, "%s", ask(s, "p10"));
	return out;
}

/* gdb's Ctrl-C (0x03) during a reverse-continue through the recording:
 * the continue stops at once, reported as SIGINT (T02), where it was; the
 * next one goes on to the breakpoint. */
static void test_continue_interrupted(void)
{
	static const char ctrl_c = 0x03;
	char bp[17], end[17], at[17], pkt[64];
	struct rsp_server s;
	uint64_t addr = 0;
	int fds[2];

	server_open(&s, -1);
	CHECK(!strncmp(ask(&s, "bs"), "T05", 3));
	CHECK(!strncmp(ask(&s, "bs"), "T05", 3));
	pc_hex(&s, bp);
	for (int i = 7; i >= 0; i--)
		addr = addr << 8 | strtoull((char[]){ bp[2 * i],
						      bp[2 * i + 1], 0 },
					    NULL, 16);
	CHECK(!strncmp(ask(&s, "c"), "T0bthread:", 10));
	pc_hex(&s, end);
	snprintf(pkt, sizeof(pkt), "Z0,%llx,1", (unsigned long long) addr);
	CHECK(!strcmp(ask(&s, pkt), "OK"));
	CHECK(pipe(fds) == 0 && write(fds[1], &ctrl_c, 1) == 1);
	s.conn.in = fds[0];
	CHECK(!strncmp(ask(&s, "bc"), "T02thread:", 10));
	CHECK(!strcmp(pc_hex(&s, at), end));
	CHECK(!strncmp(ask(&s, "bc"), "T05", 3) &&
	      strstr(s.reply, "swbreak:"));
	CHECK(!strcmp(pc_hex(&s, at), bp));
	s.conn.in = -1;
	close(fds[0]);
	close(fds[1]);
	rsp_server_close(&s);
}

/* A monitor command's output arrives as O packets before the OK. */
static void test_monitor(void)
{
	struct rsp_server s;
	int fds[2];
	char out[8192];
	ssize_t n;

	if (pipe(fds) < 0)
		abort();
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	server_open(&s, fds[1]);
	/* "pt goto begin" */
	CHECK(!strcmp(ask(&s, "qRcmd,707420676f746f20626567696e"), "OK"));
	n = read(fds[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	/* "$OAt instruction 1." in hex */
	CHECK(strstr(out, "$O417420696e737472756374696f6e20312e") != NULL);
	CHECK(!strncmp(ask(&s, "bs"), "T05replaylog:begin;", 19));
	close(fds[0]);
	close(fds[1]);
	rsp_server_close(&s);
}

/* "vFile:@op:HEX(@path)@tail" (static). */
static const char *vfile(const char *op, const char *path, const char *tail)
{
	static char pkt[2 * 4096 + 64];
	size_t n = (size_t) snprintf(pkt, sizeof(pkt), "vFile:%s:", op);

	for (; *path && n + 3 < sizeof(pkt); path++)
		n += (size_t) snprintf(pkt + n, 3, "%02x",
				       (unsigned char) *path);
	snprintf(pkt + n, sizeof(pkt) - n, "%s", tail);
	return pkt;
}

/* "vFile:open:HEX(@path),@flags,0" (static). */
static const char *vfile_open(const char *path, unsigned flags)
{
	char tail[32];

	snprintf(tail, sizeof(tail), ",%x,0", flags);
	return vfile("open", path, tail);
}

/* gdb's file transfer: the program opens, reads and closes; other files,
 * writes and malformed requests get F-1,ERRNO, never a crash. */
static void test_hostio(void)
{
	static const char *const einval[] = {
		"vFile:setfs:", "vFile:setfs:zz", "vFile:setfs:-1",
		"vFile:open:zz,0,0", "vFile:open:2f7,0,0", "vFile:open:,0,0",
		"vFile:open:2f", "vFile:open:2f,0", "vFile:open:2f,,0",
		"vFile:open:00,0,0", "vFile:open:2f,0,0,", "vFile:pread:",
		"vFile:pread:,10,0", "vFile:pread:0", "vFile:close:",
		"vFile:close:zz", "vFile:close:ffffffff", "vFile:fstat:",
		"vFile:fstat:-1", "vFile:unlink:zz", "vFile:readlink:",
	};
	static const char *const ebadf[] = {
		"vFile:pread:5,10,0", "vFile:close:3f", "vFile:fstat:40",
		"vFile:close:7fffffff",
	};
	char exe[4096], pkt[64];
	struct rsp_server s;
	const char *r;
	int slots = 0;

	server_open(&s, -1);
	CHECK(!strcmp(ask(&s, "vFile:setfs:0"), "F0"));
	r = ask(&s, "qXfer:exec-file:read::0,fff");
	snprintf(exe, sizeof(exe), "%s", r + 1);
	CHECK(r[0] == 'l' && exe[0] == '/');
	for (size_t i = 0; i < sizeof(einval) / sizeof(*einval); i++)
		if (strcmp(ask(&s, einval[i]), "F-1,16")) {
			fprintf(stderr, "'%s': '%s', not EINVAL\n", einval[i],
				s.reply);
			CHECK(!"EINVAL");
		}
	for (size_t i = 0; i < sizeof(ebadf) / sizeof(*ebadf); i++)
		if (strcmp(ask(&s, ebadf[i]), "F-1,9")) {
			fprintf(stderr, "'%s': '%s', not EBADF\n", ebadf[i],
				s.reply);
			CHECK(!"EBADF");
		}
	/* Refused: other files, any write. */
	CHECK(!strcmp(ask(&s, vfile_open("/etc/passwd", 0)), "F-1,d"));
	CHECK(!strcmp(ask(&s, vfile_open("/", 0)), "F-1,d"));
	CHECK(!strcmp(ask(&s, vfile_open(exe, 1)), "F-1,d"));
	CHECK(!strcmp(ask(&s, vfile_open(exe, 0x200)), "F-1,d"));
	CHECK(!strcmp(ask(&s, "vFile:pwrite:0,0,abc"), "F-1,d"));
	CHECK(!strcmp(ask(&s, vfile("unlink", exe, "")), "F-1,d"));
	CHECK(!strcmp(ask(&s, vfile("readlink", exe, "")), "F-1,d"));
	/* The program: opened, its size, its first bytes, a huge count
	 * cut to a packet, nothing past its end. */
	CHECK(!strcmp(ask(&s, vfile_open(exe, 0)), "F0"));
	CHECK(!strncmp(ask(&s, "vFile:fstat:0"), "F40;", 4) &&
	      s.reply_len == 4 + 64);
	CHECK(!strncmp(ask(&s, "vFile:pread:0,4,0"), "F4;\x7f" "ELF", 7) &&
	      s.reply_len == 7);
	r = ask(&s, "vFile:pread:0,ffffffffffffffff,0");
	CHECK(r[0] == 'F' && strtoul(r + 1, NULL, 16) > 0 &&
	      strtoul(r + 1, NULL, 16) <= RSP_PACKET_MAX);
	CHECK(!strcmp(ask(&s, "vFile:pread:0,1ffffffffffffffff,0"),
		      "F-1,16"));
	CHECK(!strcmp(ask(&s, "vFile:pread:0,10,-1"), "F-1,16"));
	CHECK(!strcmp(ask(&s, "vFile:pread:0,10,7fffffff"), "F0;"));
	CHECK(!strcmp(ask(&s, "vFile:close:0"), "F0"));
	CHECK(!strcmp(ask(&s, "vFile:pread:0,4,0"), "F-1,9"));
	CHECK(!strcmp(ask(&s, "vFile:close:0"), "F-1,9"));
	/* Operations gdb 13 does not send: the empty reply. */
	CHECK(!strcmp(ask(&s, "vFile:stat:2f"), ""));
	CHECK(!strcmp(ask(&s, "vFile:"), ""));
	/* As many open files as there are slots, then EMFILE. */
	while (!strncmp(ask(&s, vfile_open(exe, 0)), "F", 1) &&
	       s.reply[1] != '-' && slots < 1000)
		slots++;
	CHECK(slots == 64 && !strcmp(s.reply, "F-1,18"));
	snprintf(pkt, sizeof(pkt), "vFile:close:%x", slots - 1);
	CHECK(!strcmp(ask(&s, pkt), "F0"));
	rsp_server_close(&s);	/* and the files still open */
}

/* Random packets made of gdb's request letters and of the characters of
 * its arguments: every one gets a reply, none crashes the server. */
static void test_random_packets(void)
{
	static const char *const heads[] = {
		"m", "M", "X", "p", "P", "G", "g", "H", "Hg", "Hc", "T", "Z",
		"z", "Z0,", "Z1,", "vCont;", "vCont?", "bs", "bc", "s", "c",
		"?", "qXfer:features:read:target.xml:", "qXfer:auxv:read::",
		"qXfer:libraries-svr4:read::", "qXfer:exec-file:read::",
		"qXfer:btrace:read:all:", "qXfer:btrace-conf:read::",
		"Qbtrace:pt", "Qbtrace:off", "Qbtrace-conf:pt:size=", "qRcmd,",
		"qC", "qfThreadInfo", "qSupported:", "qAttached",
		"qShlibInfoAddr",
		"vFile:open:", "vFile:pread:", "vFile:close:", "vFile:fstat:",
		"vFile:setfs:", "vFile:pwrite:", "vFile:unlink:",
		"vFile:readlink:", "vFile:open:2f,", "vFile:pread:0,",
	};
	static const char alphabet[] = "0123456789abcdefxX,:;=-}$#.";
	struct rsp_server s;
	unsigned seed = 12345;
	char pkt[128];

	server_open(&s, open("/dev/null", O_WRONLY));
	for (int i = 0; i < 20000; i++) {
		size_t n = strlen(strcpy(pkt, heads[rand_r(&seed) %
				    (sizeof(heads) / sizeof(*heads))]));
		size_t extra = (size_t) rand_r(&seed) % 24;

		for (size_t k = 0; k < extra; k++)
			pkt[n++] = alphabet[rand_r(&seed) %
					    (sizeof(alphabet) - 1)];
		pkt[n] = '\0';
		rsp_server_handle(&s, pkt, n);
		s.done = false;
	}
	close(s.conn.out);
	CHECK(!strncmp(ask(&s, "qC"), "QC", 2));
	rsp_server_close(&s);
}

int main(int argc, char **argv)
{
	RUN(test_packet_and_ack);
	RUN(test_bad_checksum_and_eof);
	RUN(test_no_ack_bad_and_interrupt);
	RUN(test_escapes_both_ways);
	RUN(test_oversized);
	RUN(test_split_reads);
	RUN(test_send_waits_for_ack);
	RUN(test_interrupted);
	if (argc > 1) {
		bundle = argv[1];
		RUN(test_malformed);
		RUN(test_writes_refused);
		RUN(test_unwind_range);
		RUN(test_loader_page);
		RUN(test_goto_register);
		RUN(test_moves);
		RUN(test_continue_interrupted);
		RUN(test_monitor);
		RUN(test_hostio);
		RUN(test_random_packets);
	}
	return test_summary();
}
