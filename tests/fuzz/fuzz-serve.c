/* Harness: gdb's requests to `ptrr serve` in replay mode, on a real
 * recording ($PTRR_FUZZ_BUNDLE), a new server per input.
 *
 * The input's first byte picks how the rest reaches the server:
 *   0  bytes on the stream as gdb sends them (framing, acks, checksums,
 *      escapes, interrupts: rsp_server_run());
 *   1  packets, one a line, to the dispatcher (rsp_server_handle());
 *   2  packets, one a line, framed here with the right checksum and sent
 *      on the stream after QStartNoAckMode.
 * Monitor output, stop replies and the rest go to /dev/null.  The
 * replay target is made once (a new one per input would start and join
 * its thread that prepares call segments: a few ms on a loaded machine)
 * and put back after each input: threads at their end, no breakpoints.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "gdbremote/server.h"
#include "gdbremote/target_replay.h"

static int null_fd = -1;
static struct rsp_target *target;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (rsp_replay_target_wrap(fuzz_recording(), "fuzz.ptrr",
				   &target) < 0) {
		fprintf(stderr, "%s\n", ptrr_errmsg(PTRR_ERR_INTERNAL));
		exit(2);
	}
	null_fd = open("/dev/null", O_WRONLY);
	return 0;
}

/* Puts the replay target back as it was made. */
static void reset_target(void)
{
	struct replay_target *r = (struct replay_target *) target;

	rsp_replay_target_present(target);
	r->nbps = 0;
	rsp_unwind_forget(r);
}

/* Serves @size bytes of @data as gdb's side of the stream. */
static void serve_stream(struct rsp_server *s, const void *data, size_t size)
{
	int fd = memfd_create("fuzz-serve", 0);

	if (fd < 0 || write(fd, data, size) != (ssize_t) size ||
	    lseek(fd, 0, SEEK_SET)) {
		perror("memfd");
		abort();
	}
	rsp_server_run(s, fd, null_fd);
	close(fd);
}

/* Dispatches each line of @data as a packet. */
static void dispatch_lines(struct rsp_server *s, const char *data,
			   size_t size)
{
	static char pkt[RSP_PACKET_MAX + 1];

	rsp_conn_init(&s->conn, -1, null_fd);
	s->conn.no_ack = true;
	while (size) {
		const char *nl = memchr(data, '\n', size);
		size_t len = nl ? (size_t) (nl - data) : size;
		size_t n = len < RSP_PACKET_MAX ? len : RSP_PACKET_MAX;

		memcpy(pkt, data, n);
		pkt[n] = '\0';
		rsp_server_handle(s, pkt, n);
		s->done = false;
		len += nl != NULL;
		data += len;
		size -= len;
	}
	rsp_conn_fini(&s->conn);
}

/* Appends packet @p (@len bytes) to @out framed, escaped and summed. */
static size_t frame(char *out, const char *p, size_t len)
{
	uint8_t sum = 0;
	size_t n = 0;

	out[n++] = '$';
	for (size_t i = 0; i < len; i++) {
		char c = p[i];

		if (c == '$' || c == '#' || c == '}' || c == '*') {
			out[n++] = '}';
			sum += '}';
			c ^= 0x20;
		}
		out[n++] = c;
		sum += (uint8_t) c;
	}
	return n + (size_t) sprintf(out + n, "#%02x", sum);
}

/* Frames each line of @data as a packet and serves them as a stream. */
static void frame_lines(struct rsp_server *s, const char *data, size_t size)
{
	static const char no_ack[] = "QStartNoAckMode";
	char *buf = malloc(size * 2 + 64 + 4 * (size + 1));
	size_t n;

	if (!buf)
		abort();
	n = frame(buf, no_ack, sizeof(no_ack) - 1);
	buf[n++] = '+';
	while (size) {
		const char *nl = memchr(data, '\n', size);
		size_t len = nl ? (size_t) (nl - data) : size;

		n += frame(buf + n, data, len);
		len += nl != NULL;
		data += len;
		size -= len;
	}
	serve_stream(s, buf, n);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_server s;

	if (size < 1 || rsp_server_init(&s, target) < 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		serve_stream(&s, data + 1, size - 1);
		break;
	case 1:
		dispatch_lines(&s, (const char *) data + 1, size - 1);
		break;
	default:
		frame_lines(&s, (const char *) data + 1, size - 1);
	}
	s.target = NULL;	/* kept for the next input */
	rsp_server_close(&s);
	reset_target();
	return 0;
}
