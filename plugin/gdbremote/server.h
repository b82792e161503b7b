/* plugin/gdbremote — `ptrr serve`: a gdb remote-protocol stub over a
 * recording (docs/server.md).
 *
 * The server answers gdb's requests from a target (target.h): now a
 * replay (replay/replay.h) of a bundle (target_replay.c).  The threads are the recording's, execution moves through the
 * history in both directions (bs/bc backward; s/c/vCont forward, which
 * ends at the end of history), registers are the recorded ones at the
 * end and only the PC elsewhere, memory is the bundle's snapshot and
 * code, and the call stack of the selected thread is readable at
 * PTRR_UNWIND_ADDR for ptrr's JIT-reader unwinder.  gdb's own `record
 * pt` is served the recorded trace (btrace.h).
 *
 * rsp_conn.c frames packets; server.c dispatches them, regs.c and
 * queries.c answer the register requests and queries, nonstop.c keeps
 * gdb's non-stop mode (threads that run and stop apart); the target does
 * the rest (target_replay.c, libs.c, monitor.c, unwind_range.c for the
 * replay target).
 */
#ifndef PTRR_RSP_SERVER_H
#define PTRR_RSP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbremote/rsp_conn.h"
#include "gdbremote/target.h"

/* gdb's record pt on one thread. */
struct rsp_btrace_thread {
	bool on;		/* Qbtrace:pt since the last Qbtrace:off */
	bool read;		/* gdb has read its trace since, */
	size_t read_size;	/* read_size bytes of it (a read of "new"
				 * trace is empty if there is no more) */
};

/* One process of a server's: a --multi server debugs several at once
 * when gdb has the multiprocess extensions (processes.c).  The selected
 * process's are the server's own fields (target, btrace, g_thread); its
 * entry here is stale until another is selected. */
struct rsp_process {
	struct rsp_target *target;
	struct rsp_btrace_thread *btrace;
	size_t nbtrace;
	size_t g_thread;
};

struct rsp_server {
	struct rsp_target *target;	/* what is debugged (target.h): the
					 * selected process's */
	struct rsp_process *procs;	/* every process (at least one), */
	size_t nprocs;			/* nprocs of them; */
	size_t cur;			/* procs[cur] is the selected one */
	/* Makes the target of one more process (vRun or vAttach while gdb
	 * debugs one); NULL: one process at a time (a recording). */
	int (*new_target)(void *arg, struct rsp_target **out);
	void *new_target_arg;
	struct rsp_conn conn;
	size_t g_thread;		/* Hg: registers, memory, btrace */
	size_t c_thread;		/* Hc: stepping, */
	int c_pid;			/* in process c_pid */
	bool c_any;			/* Hc0 / Hc-1: gdb steps the thread
					 * it selected with Hg */
	bool multiprocess;		/* gdb's multiprocess extensions:
					 * thread ids pPID.TID */
	struct rsp_btrace_thread *btrace; /* per thread, gdb's record pt: */
	size_t nbtrace;			/* nbtrace of them, grown as needed */
	uint64_t btrace_size;		/* Qbtrace-conf:pt:size, in effect:
					 * gdb's record pt sees that much of
					 * the end of a trace */
	char *xfer_doc;			/* the qXfer document being read, */
	size_t xfer_len;		/* kept from its offset 0 on */
	char xfer_key[160];		/* "OBJECT:ANNEX:THREAD" */
	bool done;			/* k, D, vKill or monitor exit:
					 * leave */
	bool extended;			/* `!`: k, D and vKill leave the
					 * server waiting for vRun or R */
	bool no_process;		/* killed or detached since (or a
					 * --multi server started without
					 * one: set by its maker) */
	bool multi;			/* --multi: waits for the next gdb
					 * whatever became of the program,
					 * until monitor exit */
	bool silent;			/* no reply to this request (k, R) */
	bool interrupt_pending;		/* gdb's interrupt came between
					 * requests: for the next resume */
	char *reply;			/* the reply being built */
	size_t reply_len, reply_cap;
	bool reply_oom;
	struct rsp_hostio *hostio;	/* gdb's open files (hostio.c) */
	bool non_stop;			/* QNonStop:1: gdb's non-stop mode */
	struct rsp_ns *ns;		/* its threads and stops (nonstop.c) */
};

/* A server for @target, which it owns from now on (and frees in
 * rsp_server_close()); a one-line error otherwise. */
int rsp_server_init(struct rsp_server *s, struct rsp_target *target);
void rsp_server_close(struct rsp_server *s);

/* Serves gdb on file descriptors @in / @out until it detaches, kills or
 * closes the stream (in extended mode, until it closes the stream).  0,
 * or a negative error if the stream failed. */
int rsp_server_run(struct rsp_server *s, int in, int out);

/* After rsp_server_run() returned because gdb went away: true if the
 * server is to wait for the next gdb, as gdbserver does (the program is
 * still there, and gdb did not kill it, detach or say monitor exit; with
 * --multi, until monitor exit). */
bool rsp_server_waits_again(struct rsp_server *s);

/* True if the process was attached to (gdb detaches from it when it
 * quits) rather than started (gdb kills it then): qAttached. */
bool rsp_server_attached(struct rsp_server *s);

/* Handles one request @pkt (@len bytes, NUL-terminated) and leaves the
 * reply in s->reply (for tests: no stream needed). */
void rsp_server_handle(struct rsp_server *s, char *pkt, size_t len);

/* The process id gdb and LLDB see: thread 0's task id. */
int rsp_process_id(struct rsp_server *s);

/* ---- Processes (processes.c) ---- */

/* The target of process @i. */
struct rsp_target *rsp_proc_target(struct rsp_server *s, size_t i);
/* The id of process @i (0 if it has none). */
int rsp_proc_pid(struct rsp_server *s, size_t i);
/* The process whose id is @pid, or SIZE_MAX. */
size_t rsp_proc_find(struct rsp_server *s, int pid);
/* True if process @i is there (started, not ended or exited). */
bool rsp_proc_alive(struct rsp_server *s, size_t i);
/* The number of processes there. */
size_t rsp_proc_nalive(struct rsp_server *s);
/* Makes process @i the selected one (the server's own fields). */
void rsp_proc_select(struct rsp_server *s, size_t i);
/* Adds a process with a new target (s->new_target) and selects it; 0,
 * or a negative error. */
int rsp_proc_add(struct rsp_server *s);
/* Removes the selected process (its target closed), one of several, and
 * selects the first. */
void rsp_proc_drop(struct rsp_server *s);
/* Closes every process's target. */
void rsp_proc_close_all(struct rsp_server *s);

/* One action of a vCont packet. */
struct rsp_vcont_action {
	char what;		/* c, C, s, S or t (stop: non-stop mode) */
	int sig;		/* host signal of C/S */
	bool all;		/* no thread (or -1): every other thread */
	size_t proc;		/* of process proc (SIZE_MAX: of every
				 * process) */
	size_t thr;
};

/* Parses the vCont action at @p (after its ';'); false if malformed or
 * for a thread that is gone. */
bool rsp_parse_vcont_action(struct rsp_server *s, const char *p,
			    struct rsp_vcont_action *a);

/* The stop reply for @st (T, W or X). */
void rsp_reply_stop(struct rsp_server *s, const struct rsp_stop *st);

/* ---- Non-stop mode (nonstop.c) ---- */

/* QNonStop:@arg ("1" on, "0" off), if the target can. */
void rsp_ns_set(struct rsp_server *s, const char *arg);
/* '?': the first of the stopped threads' stops (the rest by vStopped). */
void rsp_ns_status(struct rsp_server *s);
/* vStopped: gdb has the stop told last; the next one, or OK. */
void rsp_ns_vstopped(struct rsp_server *s);
/* vCont;ACTION[:TID]...: threads resumed or stopped (t); OK at once. */
void rsp_ns_vcont(struct rsp_server *s, const char *args);
/* vCtrlC: a running thread stops with SIGINT, as on gdb's Ctrl-C. */
void rsp_ns_ctrlc(struct rsp_server *s);
/* A thread moved by bs/bc stopped at @st: no reply (gdb expects none in
 * non-stop mode), the stop told as a notification. */
void rsp_ns_stopped(struct rsp_server *s, const struct rsp_stop *st);
/* True if a thread gdb resumed has not stopped yet. */
bool rsp_ns_running(struct rsp_server *s);
/* Runs the resumed threads until one stops or gdb sends something; 0, or
 * a negative error if the server cannot go on. */
int rsp_ns_run(struct rsp_server *s);
/* Sends the first stop gdb has not been told, unless one is on its way:
 * 0, or -1 if the stream failed. */
int rsp_ns_notify(struct rsp_server *s);
/* Every thread stopped and no stop to tell (a new process); off. */
void rsp_ns_reset(struct rsp_server *s);
void rsp_ns_free(struct rsp_server *s);

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

/* ---- Files (hostio.c) ---- */

/* Handles Host I/O packet vFile:@p (@p after "vFile:"): gdb reading the
 * program's files, read-only, as the target's open_file() allows. */
void rsp_hostio_handle(struct rsp_server *s, const char *p);

/* Closes the files gdb left open. */
void rsp_hostio_close(struct rsp_server *s);

/* ---- Registers (regs.c) ---- */

/* The target description (malloc'd XML). */
const char *rsp_target_xml(void);

/* The g reply for thread @thr: known registers in hex, others "xx". */
void rsp_reply_registers(struct rsp_server *s, size_t thr);

/* The p reply for register @regno of thread @thr. */
void rsp_reply_register(struct rsp_server *s, size_t thr, unsigned regno);

/* The HIST_* register of gdb's register @regno; -1 if none, or
 * RSP_REG_GOTO for ptrr_goto. */
int rsp_reg_hist(unsigned regno);

/* gdb's number for host signal @sig (the remote protocol's numbering,
 * gdb's include/gdb/signals.def), and the host signal of gdb's number
 * @gdb (0 for one this host has not). */
int rsp_gdb_signal(int sig);
int rsp_host_signal(int gdb);

/* ptrr_goto, a register of the description's org.ptrr.history feature,
 * always unavailable: writing N to it moves the selected thread to
 * instruction N of its history, 0 to its end, as `pt goto` does.  LLDB
 * has no command to forget the registers and frames it read, but drops
 * them after a register write: so LLDB's `pt goto` writes this. */
#define RSP_REG_GOTO (-2)

/* Writes ptrr_goto: moves the thread gdb selected to instruction @insn,
 * 0 to the end of its history. */
int rsp_reg_goto(struct rsp_server *s, uint64_t insn);

/* The "NN:VALUE;" pairs of a stop reply (pc, sp, fp when known). */
void rsp_reply_stop_registers(struct rsp_server *s, size_t thr);

#endif
