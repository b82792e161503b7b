/* plugin/gdbremote — `ptrr serve`: a gdb remote-protocol stub over a
 * recording (docs/server.md).
 *
 * The server answers gdb's requests from a replay (replay/replay.h) of a
 * bundle: the threads are the recording's, execution moves through the
 * history in both directions (bs/bc backward; s/c/vCont forward, which
 * ends at the end of history), registers are the recorded ones at the
 * end and only the PC elsewhere, memory is the bundle's snapshot and
 * code, and the call stack of the selected thread is readable at
 * PTRR_UNWIND_ADDR for ptrr's JIT-reader unwinder.  gdb's own `record
 * pt` is served the recorded trace (btrace.h).
 *
 * rsp_conn.c frames packets; server.c dispatches them; regs.c, libs.c
 * and monitor.c answer the register, program/library and monitor
 * requests.
 */
#ifndef PTRR_RSP_SERVER_H
#define PTRR_RSP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "replay.h"
#include "gdbremote/rsp_conn.h"

/* Breakpoint addresses gdb inserted (Z0/Z1), all kinds together. */
#define RSP_MAX_BREAKPOINTS 256

struct rsp_server {
	const char *bundle;		/* the directory as the user named it */
	struct hist_recording *rec;
	const struct hist_bundle *b;
	struct replay *rp;
	struct rsp_conn conn;
	size_t g_thread;		/* Hg: registers, memory, btrace */
	size_t c_thread;		/* Hc: stepping */
	bool c_any;			/* Hc0 / Hc-1: gdb steps the thread
					 * it selected with Hg */
	uint64_t bps[RSP_MAX_BREAKPOINTS];
	size_t nbps;
	bool *btrace_on;		/* per thread: gdb's record pt */
	uint64_t btrace_size;		/* Qbtrace-conf:pt:size */
	bool done;			/* k, D or vKill: leave */
	char *reply;			/* the reply being built */
	size_t reply_len, reply_cap;
	bool reply_oom;
};

/* Opens bundle @dir for serving; a one-line error otherwise. */
int rsp_server_open(struct rsp_server *s, const char *dir);
void rsp_server_close(struct rsp_server *s);

/* Serves gdb on file descriptors @in / @out until it detaches, kills or
 * closes the stream.  0, or a negative error if the stream failed. */
int rsp_server_run(struct rsp_server *s, int in, int out);

/* Handles one request @pkt (@len bytes, NUL-terminated) and leaves the
 * reply in s->reply (for tests: no stream needed). */
void rsp_server_handle(struct rsp_server *s, char *pkt, size_t len);

/* ---- Building replies (server.c) ---- */

void rsp_reply_reset(struct rsp_server *s);
void rsp_reply_bytes(struct rsp_server *s, const void *data, size_t len);
void rsp_reply_str(struct rsp_server *s, const char *str);
void rsp_reply_printf(struct rsp_server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* @len bytes of @data as hex digits. */
void rsp_reply_hex(struct rsp_server *s, const void *data, size_t len);
/* A little-endian @size-byte value as hex digits. */
void rsp_reply_le(struct rsp_server *s, uint64_t value, size_t size);

/* Replies to qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH with the part of
 * document @doc (@len bytes) asked for by @range ("OFFSET,LENGTH"). */
void rsp_reply_xfer(struct rsp_server *s, const char *range,
		    const char *doc, size_t len);

/* ---- Registers (regs.c) ---- */

/* The target description (malloc'd XML). */
const char *rsp_target_xml(void);

/* The g reply for thread @thr: known registers in hex, others "xx". */
void rsp_reply_registers(struct rsp_server *s, size_t thr);

/* The p reply for register @regno of thread @thr. */
void rsp_reply_register(struct rsp_server *s, size_t thr, unsigned regno);

/* The "NN:VALUE;" pairs of a stop reply (pc, sp, fp when known). */
void rsp_reply_stop_registers(struct rsp_server *s, size_t thr);

/* ---- The program and its libraries (libs.c) ---- */

/* The auxiliary vector gdb needs to place a PIE program (AT_ENTRY,
 * AT_PHDR ...), computed from the program's file; malloc'd in @out. */
int rsp_auxv(const struct hist_bundle *b, uint8_t **out, size_t *len);

/* The libraries-svr4 document: each shared object's load bias and
 * dynamic section; malloc'd. */
char *rsp_libraries_svr4(const struct hist_bundle *b);

/* The program's file as gdb should read it (a packed copy if the bundle
 * has one); malloc'd. */
char *rsp_exec_file(const struct hist_bundle *b);

/* ---- Monitor commands (monitor.c) ---- */

/* Runs `monitor CMD` and replies: its output as O packets, then OK, or
 * an error line. */
void rsp_monitor(struct rsp_server *s, const char *cmd);

#endif
