/* `ptrr serve`'s request dispatch over a replay (server.h). */
#include <config.h>

#include "gdbremote/server.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_abi.h"
#include "gdbremote/btrace.h"
#include "gdbremote/lldb_query.h"

/* ------------------------------------------------------------------ */
/* Replies                                                             */
/* ------------------------------------------------------------------ */

void rsp_reply_reset(struct rsp_server *s)
{
	s->reply_len = 0;
	s->reply_oom = false;
	if (s->reply)
		s->reply[0] = '\0';
}

void rsp_reply_bytes(struct rsp_server *s, const void *data, size_t len)
{
	if (s->reply_len + len + 1 > s->reply_cap) {
		size_t cap = (s->reply_len + len + 1) * 2;
		char *r = realloc(s->reply, cap);

		if (!r) {
			s->reply_oom = true;
			return;
		}
		s->reply = r;
		s->reply_cap = cap;
	}
	memcpy(s->reply + s->reply_len, data, len);
	s->reply_len += len;
	s->reply[s->reply_len] = '\0';
}

void rsp_reply_str(struct rsp_server *s, const char *str)
{
	rsp_reply_bytes(s, str, strlen(str));
}

void rsp_reply_printf(struct rsp_server *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		rsp_reply_bytes(s, buf, (size_t) n < sizeof(buf) ?
				(size_t) n : sizeof(buf) - 1);
}

void rsp_reply_hex(struct rsp_server *s, const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		char two[2] = { hex[p[i] >> 4], hex[p[i] & 0xf] };

		rsp_reply_bytes(s, two, 2);
	}
}

void rsp_reply_le(struct rsp_server *s, uint64_t value, size_t size)
{
	uint8_t bytes[8];

	for (size_t i = 0; i < size && i < 8; i++)
		bytes[i] = (uint8_t) (value >> (8 * i));
	rsp_reply_hex(s, bytes, size < 8 ? size : 8);
}

/* Parses hex number at *@p (advancing it); false if there is none. */
static bool parse_hex(const char **p, uint64_t *out)
{
	char *end;

	if (!((**p >= '0' && **p <= '9') || (**p >= 'a' && **p <= 'f') ||
	      (**p >= 'A' && **p <= 'F')))
		return false;
	*out = strtoull(*p, &end, 16);
	*p = end;
	return true;
}

/* Decodes @len hex digits at @hex into @out (@len / 2 bytes); false if
 * one is not a hex digit. */
static bool parse_hex_bytes(const char *hex, size_t len, uint8_t *out)
{
	for (size_t i = 0; i + 1 < len; i += 2) {
		unsigned v;

		if (!isxdigit((unsigned char) hex[i]) ||
		    !isxdigit((unsigned char) hex[i + 1]) ||
		    sscanf(hex + i, "%2x", &v) != 1)
			return false;
		out[i / 2] = (uint8_t) v;
	}
	return true;
}

void rsp_reply_xfer(struct rsp_server *s, const char *range,
		    const char *doc, size_t len)
{
	uint64_t off, want;

	if (!parse_hex(&range, &off) || *range++ != ',' ||
	    !parse_hex(&range, &want) || *range) {
		rsp_reply_str(s, "E01");
		return;
	}
	if (off >= len) {
		rsp_reply_str(s, "l");
		return;
	}
	if (want > RSP_PACKET_MAX - 16)
		want = RSP_PACKET_MAX - 16;
	rsp_reply_str(s, len - off > want ? "m" : "l");
	rsp_reply_bytes(s, doc + off, len - off > want ? want : len - off);
}

/* ------------------------------------------------------------------ */
/* Threads and stops                                                   */
/* ------------------------------------------------------------------ */

int rsp_process_id(struct rsp_server *s)
{
	return s->target->ops->tid(s->target, 0);
}

/* Thread id @p without its process part: with the multiprocess
 * extensions gdb writes pPID.TID, and pPID or p-1 for all of a process's
 * (or all processes') threads.  *@proc is the process it names (the
 * selected one without pPID or with p0), SIZE_MAX for every process
 * (p-1, or -1 without the extensions).  NULL for a process the server
 * does not have. */
static const char *thread_part(struct rsp_server *s, const char *p,
			       size_t *proc)
{
	const char *dot = strchr(p, '.'), *q = p + 1;
	uint64_t pid;

	*proc = strcmp(p, "-1") ? s->cur : SIZE_MAX;
	if (*p != 'p')
		return p;
	if (!strncmp(q, "-1", 2)) {
		q += 2;
		*proc = SIZE_MAX;
	} else if (!parse_hex(&q, &pid) || pid > INT_MAX ||
		   (pid && (*proc = rsp_proc_find(s, (int) pid)) == SIZE_MAX))
		return NULL;
	if (*q && *q != '.')
		return NULL;
	return dot ? dot + 1 : "-1";
}

/* gdb's id of thread @thr of process @proc: TID, or pPID.TID with the
 * multiprocess extensions. */
static void reply_thread_id_of(struct rsp_server *s, size_t proc, size_t thr)
{
	struct rsp_target *t = rsp_proc_target(s, proc);
	int tid = t->ops->tid(t, thr);

	if (s->multiprocess)
		rsp_reply_printf(s, "p%x.%x", rsp_proc_pid(s, proc), tid);
	else
		rsp_reply_printf(s, "%x", tid);
}

/* The same for thread @thr of the selected process. */
static void reply_thread_id(struct rsp_server *s, size_t thr)
{
	reply_thread_id_of(s, s->cur, thr);
}

/* The thread gdb means by thread id @p ("-1" all, "0" any, else hex;
 * pPID. before it, see thread_part()), and its process *@proc (SIZE_MAX:
 * p-1, every process); for all/any the selected process's @dflt, another
 * process's last selected thread.  False if there is no such thread. */
static bool parse_thread(struct rsp_server *s, const char *p, size_t dflt,
			 size_t *proc, size_t *thr)
{
	struct rsp_target *t;
	uint64_t tid;
	size_t i;

	if (!(p = thread_part(s, p, proc)))
		return false;
	i = *proc == SIZE_MAX ? s->cur : *proc;
	if (!strcmp(p, "-1") || !strcmp(p, "0")) {
		*thr = i == s->cur ? dflt : s->procs[i].g_thread;
		return true;
	}
	if (!parse_hex(&p, &tid) || *p || tid > INT32_MAX)
		return false;
	t = rsp_proc_target(s, i);
	return t->ops->find_tid(t, (int) tid, thr) == 0;
}

/* The thread a resumption moves: Hc's, or for "any thread" (or Hc's
 * thread in another process) the one gdb selected last (it resumes all
 * threads, stepping its current one). */
static size_t stepping_thread(struct rsp_server *s)
{
	return s->c_any || s->c_pid != rsp_process_id(s) ? s->g_thread :
	       s->c_thread;
}

/* gdb's number for host signal @sig (the remote protocol numbers
 * signals as gdb's include/gdb/signals.def does, which differs from
 * Linux's for SIGBUS, SIGUSR1, SIGCHLD ... and the real-time ones). */
static const unsigned char gdb_signals[] = {
	[SIGHUP] = 1, [SIGINT] = 2, [SIGQUIT] = 3, [SIGILL] = 4,
	[SIGTRAP] = 5, [SIGABRT] = 6, [SIGBUS] = 10, [SIGFPE] = 8,
	[SIGKILL] = 9, [SIGUSR1] = 30, [SIGSEGV] = 11, [SIGUSR2] = 31,
	[SIGPIPE] = 13, [SIGALRM] = 14, [SIGTERM] = 15, [SIGCHLD] = 20,
	[SIGCONT] = 19, [SIGSTOP] = 17, [SIGTSTP] = 18, [SIGTTIN] = 21,
	[SIGTTOU] = 22, [SIGURG] = 16, [SIGXCPU] = 24, [SIGXFSZ] = 25,
	[SIGVTALRM] = 26, [SIGPROF] = 27, [SIGWINCH] = 28, [SIGIO] = 23,
	[SIGPWR] = 32, [SIGSYS] = 12,
};

/* gdb's GDB_SIGNAL_REALTIME_32, _33 and _64, and GDB_SIGNAL_UNKNOWN. */
enum { GDB_RT32 = 77, GDB_RT33 = 45, GDB_RT64 = 78, GDB_UNKNOWN = 143 };

/* gdb's number for host signal @sig: a host signal gdb has no name for
 * (SIGSTKFLT) is gdb's unknown one, never the number it has on this host
 * (16, gdb's SIGURG: gdb's `signal SIGURG` then sent SIGSTKFLT, which
 * kills). */
int rsp_gdb_signal(int sig)
{
	if (sig > 0 && (size_t) sig < sizeof(gdb_signals) && gdb_signals[sig])
		return gdb_signals[sig];
	if (sig == 32)
		return GDB_RT32;
	if (sig > 32 && sig < 64)
		return GDB_RT33 + sig - 33;
	if (sig == 64)
		return GDB_RT64;
	return sig ? GDB_UNKNOWN : 0;
}

/* The host signal of gdb's signal number @gdb (0 for one this host has
 * not). */
int rsp_host_signal(int gdb)
{
	for (int sig = 1; sig <= 64; sig++)
		if (rsp_gdb_signal(sig) == gdb)
			return sig;
	return 0;
}

void rsp_reply_stop(struct rsp_server *s, const struct rsp_stop *st)
{
	static const char *const why[] = {
		[RSP_STOP_SWBREAK] = "swbreak:;",
		[RSP_STOP_HWBREAK] = "hwbreak:;",
		[RSP_STOP_WATCH] = "watch:",
		[RSP_STOP_RWATCH] = "rwatch:",
		[RSP_STOP_AWATCH] = "awatch:",
		[RSP_STOP_BEGIN] = "replaylog:begin;",
		[RSP_STOP_END] = "replaylog:end;",
	};
	bool watch = st->why == RSP_STOP_WATCH || st->why == RSP_STOP_RWATCH ||
		     st->why == RSP_STOP_AWATCH;

	if (st->why == RSP_STOP_EXITED || st->why == RSP_STOP_KILLED) {
		rsp_reply_printf(s, "%c%02x", st->why == RSP_STOP_EXITED ?
				 'W' : 'X', (st->why == RSP_STOP_EXITED ?
					     st->signal :
					     rsp_gdb_signal(st->signal)) & 0xff);
		if (s->multiprocess)
			rsp_reply_printf(s, ";process:%x", rsp_process_id(s));
		return;
	}
	rsp_reply_printf(s, "T%02x%s", rsp_gdb_signal(st->signal) & 0xff,
			 why[st->why] ? why[st->why] : "");
	if (watch)
		rsp_reply_printf(s, "%" PRIx64 ";", st->addr);
	rsp_reply_str(s, "thread:");
	reply_thread_id(s, st->thr);
	rsp_reply_str(s, ";");
	rsp_reply_stop_registers(s, st->thr);
}

static void send_output(struct rsp_server *s, const char *text,
			size_t len);

/* Moves thread @thr one instruction (@step) or to a breakpoint, in
 * direction @dir, delivering host signal @sig, the other threads running
 * while it steps if @others_run; and replies.  gdb then looks at the
 * thread that stopped. */
static void move(struct rsp_server *s, size_t thr, int dir, bool step,
		 int sig, bool others_run)
{
	struct rsp_stop st = { 0 };
	int err;

	s->target->signal = sig;
	s->target->others_run = others_run;
	err = s->target->ops->resume(s->target, thr, dir, step, &st);
	if (err < 0) {
		rsp_reply_printf(s, "E.%s", ptrr_errmsg(err));
		return;
	}
	s->g_thread = st.thr;
	if (st.note[0] && !s->non_stop) {
		send_output(s, st.note, strlen(st.note));
		rsp_reply_reset(s);
	}
	if (s->non_stop)
		rsp_ns_stopped(s, &st);
	else
		rsp_reply_stop(s, &st);
}

/* The host signal of the hex gdb signal number at @p ("" for none). */
static int parse_signal(const char *p)
{
	uint64_t n;

	return parse_hex(&p, &n) && n < 256 ? rsp_host_signal((int) n) : 0;
}

/* The stop reply of the selected thread. */
static void reply_thread_stop(struct rsp_server *s)
{
	struct rsp_stop st;

	s->target->ops->status(s->target, s->g_thread, &st);
	rsp_reply_stop(s, &st);
}

/* '?': why the selected thread is stopped (non-stop: every stopped
 * thread). */
static void handle_status(struct rsp_server *s)
{
	if (s->non_stop)
		rsp_ns_status(s);
	else
		reply_thread_stop(s);
}

bool rsp_parse_vcont_action(struct rsp_server *s, const char *p,
			    struct rsp_vcont_action *a)
{
	const char *end = p + strcspn(p, ";"), *colon = strchr(p, ':');
	char tid[32] = "-1";

	a->what = *p;
	if (!strchr("cCsSt", a->what) || !a->what)
		return false;
	a->sig = a->what == 'C' || a->what == 'S' ? parse_signal(p + 1) : 0;
	if (colon && colon < end) {
		size_t n = (size_t) (end - colon - 1);

		if (n >= sizeof(tid))
			return false;
		memcpy(tid, colon + 1, n);
		tid[n] = '\0';
	}
	a->all = thread_part(s, tid, &a->proc) &&
		 !strcmp(thread_part(s, tid, &a->proc), "-1");
	return parse_thread(s, tid, stepping_thread(s), &a->proc, &a->thr);
}

/* The process vCont action @a is for, in *@proc (SIZE_MAX until one is
 * named): the server runs one process at a time, as gdb has it with
 * schedule-multiple off (vCont;c:pPID.-1).  False after replying why
 * not. */
static bool vcont_process(struct rsp_server *s,
			  const struct rsp_vcont_action *a, size_t *proc)
{
	size_t i = a->proc;

	if (i == SIZE_MAX && rsp_proc_nalive(s) > 1) {
		rsp_reply_str(s, "E.ptrr resumes one process at a time: set "
			      "schedule-multiple off.");
		return false;
	}
	if (i == SIZE_MAX)
		i = s->cur;
	if (*proc != SIZE_MAX && *proc != i) {
		rsp_reply_str(s, "E.ptrr resumes one process at a time.");
		return false;
	}
	*proc = i;
	return true;
}

/* vCont;ACTION[:TID]...: a step (s/S) moves its thread, a continue its
 * thread or every thread; an action for every thread beside a step
 * (vCont;s:T;c, gdb's step without scheduler-locking) lets the other
 * threads run meanwhile.  Forward only, in one process. */
static void handle_vcont(struct rsp_server *s, const char *args)
{
	struct rsp_vcont_action a, first = { 0 };
	bool others_run = false, have = false;
	size_t proc = SIZE_MAX;

	if (!strcmp(args, "?")) {
		rsp_reply_str(s, "vCont;c;C;s;S;t");
		return;
	}
	if (s->non_stop) {
		rsp_ns_vcont(s, args);
		return;
	}
	for (; *args == ';'; args += 1 + strcspn(args + 1, ";")) {
		if (!rsp_parse_vcont_action(s, args + 1, &a) ||
		    a.what == 't') {
			rsp_reply_str(s, "E01");
			return;
		}
		if (!vcont_process(s, &a, &proc))
			return;
		if (!have) {
			first = a;
			have = true;
		} else if (a.all && (a.what == 'c' || a.what == 'C')) {
			others_run = true;
		}
	}
	if (!have || *args) {
		rsp_reply_str(s, "E01");
		return;
	}
	rsp_proc_select(s, proc);
	move(s, first.thr, 1, first.what == 's' || first.what == 'S',
	     first.sig, others_run);
}

/* qfThreadInfo: every thread of every process at once; none of a
 * process that has ended (gdb in extended mode would take them for a
 * new process). */
static void handle_thread_list(struct rsp_server *s)
{
	bool first = true;

	for (size_t p = 0; p < s->nprocs; p++) {
		struct rsp_target *t = rsp_proc_target(s, p);

		if (!rsp_proc_alive(s, p))
			continue;
		for (size_t i = 0; i < t->ops->nthreads(t); i++) {
			rsp_reply_str(s, first ? "m" : ",");
			reply_thread_id_of(s, p, i);
			first = false;
		}
	}
	if (first)
		rsp_reply_str(s, "l");
}

/* H{g,c}TID: Hg selects the thread's process too (registers, memory,
 * breakpoints are its); Hc's thread is for the next c, s, bs or bc. */
static void handle_set_thread(struct rsp_server *s, const char *p)
{
	size_t thr, proc;
	char which = *p++;

	if ((which != 'g' && which != 'c') ||
	    !parse_thread(s, p, which == 'g' ? s->g_thread :
			  stepping_thread(s), &proc, &thr)) {
		rsp_reply_str(s, "E01");
		return;
	}
	if (proc == SIZE_MAX)
		proc = s->cur;
	if (which == 'g') {
		rsp_proc_select(s, proc);
		s->g_thread = thr;
	} else {
		p = thread_part(s, p, &proc);
		s->c_thread = thr;
		s->c_pid = rsp_proc_pid(s, proc == SIZE_MAX ? s->cur : proc);
		s->c_any = !strcmp(p, "0") || !strcmp(p, "-1");
	}
	rsp_reply_str(s, "OK");
}

/* c, s, C, S, bs, bc: Hc's thread (see stepping_thread()) moves, in its
 * process (gdb's reverse-continue in inferior 1 says Hc pPID1.0). */
static void move_hc(struct rsp_server *s, int dir, bool step, int sig)
{
	size_t proc = rsp_proc_find(s, s->c_pid);

	if (proc != SIZE_MAX)
		rsp_proc_select(s, proc);
	move(s, stepping_thread(s), dir, step, sig, false);
}

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

/* mADDR,LENGTH. */
static void handle_read_memory(struct rsp_server *s, const char *p)
{
	uint64_t addr, len;
	uint8_t buf[RSP_PACKET_MAX / 2];
	size_t n;

	if (!parse_hex(&p, &addr) || *p++ != ',' || !parse_hex(&p, &len) ||
	    *p) {
		rsp_reply_str(s, "E01");
		return;
	}
	if (len > sizeof(buf) - 16)
		len = sizeof(buf) - 16;
	n = s->target->ops->read_memory(s->target, s->g_thread, addr, buf,
					len);
	if (n == 0 && len > 0) {
		rsp_reply_str(s, "E01");
		return;
	}
	rsp_reply_hex(s, buf, n);
}

/* M ADDR,LENGTH:HEX and X ADDR,LENGTH:BINARY (@pkt of @len bytes). */
static void handle_write_memory(struct rsp_server *s, const char *pkt,
				size_t len)
{
	const char *p = pkt + 1, *data;
	uint64_t addr, n;
	uint8_t buf[RSP_PACKET_MAX];
	size_t avail;
	int err;

	if (!parse_hex(&p, &addr) || *p++ != ',' || !parse_hex(&p, &n) ||
	    *p++ != ':') {
		rsp_reply_str(s, "E01");
		return;
	}
	data = p;
	avail = len - (size_t) (data - pkt);
	if (n > sizeof(buf) || avail != (pkt[0] == 'M' ? 2 * n : n) ||
	    (pkt[0] == 'M' && !parse_hex_bytes(data, avail, buf))) {
		rsp_reply_str(s, "E01");
		return;
	}
	if (pkt[0] == 'X')
		memcpy(buf, data, n);
	err = s->target->ops->write_memory(s->target, addr, buf, n);
	if (err < 0)
		rsp_reply_printf(s, "E.%s", ptrr_errmsg(err));
	else
		rsp_reply_str(s, "OK");
}

/* P REGNO=VALUE: one register of the selected thread (gdb's numbering,
 * the value in target byte order). */
static void handle_write_register(struct rsp_server *s, const char *p)
{
	uint64_t regno, value = 0;
	uint8_t bytes[8];
	size_t n = 0;
	int hist, err;

	if (!parse_hex(&p, &regno) || *p++ != '=' || regno > 1024 ||
	    ((hist = rsp_reg_hist((unsigned) regno)) < 0 &&
	     hist != RSP_REG_GOTO) ||
	    (n = strlen(p) / 2) > sizeof(bytes) || strlen(p) % 2 ||
	    !parse_hex_bytes(p, 2 * n, bytes)) {
		rsp_reply_str(s, "E01");
		return;
	}
	for (size_t i = 0; i < n; i++)
		value |= (uint64_t) bytes[i] << (8 * i);
	err = hist == RSP_REG_GOTO ? rsp_reg_goto(s, value) :
	      s->target->ops->write_reg(s->target, s->g_thread,
					(unsigned) hist, value);
	if (err < 0)
		rsp_reply_printf(s, "E.%s", ptrr_errmsg(err));
	else
		rsp_reply_str(s, "OK");
}

/* Z/z TYPE,ADDR,KIND: breakpoints and watchpoints, as the target can. */
static void handle_breakpoint(struct rsp_server *s, const char *p, bool set)
{
	uint64_t type, addr, kind;
	int err;

	if (!parse_hex(&p, &type) || *p++ != ',' || !parse_hex(&p, &addr) ||
	    *p++ != ',' || !parse_hex(&p, &kind) || type > RSP_WATCH_ACCESS ||
	    kind > 64) {
		rsp_reply_str(s, "E01");
		return;
	}
	err = s->target->ops->breakpoint(s->target, (enum rsp_break_type) type,
					 addr, (unsigned) kind, set);
	if (err == PTRR_ERR_UNSUPPORTED)
		return;	/* the empty reply: gdb tries another way */
	rsp_reply_str(s, err < 0 ? "E01" : "OK");
}

/* ------------------------------------------------------------------ */
/* Queries                                                             */
/* ------------------------------------------------------------------ */

static const char supported[] =
	"PacketSize=4000;QStartNoAckMode+;qXfer:features:read+;"
	"qXfer:auxv:read+;qXfer:exec-file:read+;qXfer:libraries-svr4:read+;"
	"ReverseStep+;ReverseContinue+;vContSupported+;swbreak+;hwbreak+;"
	"QPassSignals+;Qbtrace:pt+;Qbtrace:off+;Qbtrace-conf:pt:size+;"
	"qXfer:btrace:read+;qXfer:btrace-conf:read+;multiprocess+;"
	"QNonStop+";

/* gdb's record pt state of thread @thr, or NULL if it never had one. */
static struct rsp_btrace_thread *btrace_of(const struct rsp_server *s,
					   size_t thr)
{
	return thr < s->nbtrace ? &s->btrace[thr] : NULL;
}

/* True if gdb's record pt traces thread @thr. */
static bool btrace_is_on(const struct rsp_server *s, size_t thr)
{
	return btrace_of(s, thr) && s->btrace[thr].on;
}

/* gdb's record pt traces thread @thr from now on, its trace not read
 * yet; the states grow with a live target's threads.  False if out of
 * memory. */
static bool btrace_turn_on(struct rsp_server *s, size_t thr)
{
	if (thr >= s->nbtrace) {
		size_t n = thr + 16;
		struct rsp_btrace_thread *v = realloc(s->btrace,
						      n * sizeof(*v));

		if (!v)
			return false;
		memset(v + s->nbtrace, 0, (n - s->nbtrace) * sizeof(*v));
		s->btrace = v;
		s->nbtrace = n;
	}
	s->btrace[thr] = (struct rsp_btrace_thread) { .on = true };
	return true;
}

/* The trace of thread @thr gdb's record pt sees, as a btrace document
 * (malloc'd, its length in @len), or NULL after replying with why not:
 * what a trace buffer of the size gdb set holds (its last bytes, as
 * perf's ring buffer would have them for gdbserver).  A thread that has
 * not run since tracing began has an empty trace (gdb: "No trace."), as
 * has a read of "new" trace when there is none since the last read (gdb
 * keeps what it has). */
static char *btrace_document(struct rsp_server *s, size_t thr,
			     const char *annex, size_t *len)
{
	int how = rsp_btrace_parse_read(annex);
	struct rsp_btrace_thread *bt = btrace_of(s, thr);
	const struct hist_cpu *cpu;
	const uint8_t *trace;
	size_t size, from;
	char *xml;
	int err;

	if (!btrace_is_on(s, thr)) {
		rsp_reply_str(s, "E.Btrace not enabled.");
		return NULL;
	}
	if (how == RSP_BTRACE_DELTA || how < 0) {
		rsp_reply_str(s, how < 0 ? "E.Bad annex." :
			      "E.Intel PT has no delta trace.");
		return NULL;
	}
	err = s->target->ops->trace(s->target, thr, &cpu, &trace, &size);
	if (err < 0) {
		rsp_reply_printf(s, "E.%s", ptrr_errmsg(err));
		return NULL;
	}
	if (how == RSP_BTRACE_NEW && bt->read && bt->read_size == size) {
		size = 0;
	} else {
		bt->read = true;
		bt->read_size = size;
		from = rsp_btrace_window(trace, size, s->btrace_size);
		trace += from;
		size -= from;
	}
	xml = rsp_btrace_xml(cpu, trace, size, len);
	if (!xml)
		rsp_reply_str(s, "E.Out of memory.");
	return xml;
}

/* The target that answers qXfer:@object:read:@annex: the selected
 * process's, or for exec-file the process its annex names (hex). */
static struct rsp_target *xfer_target(struct rsp_server *s,
				      const char *object, const char *annex)
{
	uint64_t pid;
	size_t proc;

	if (strcmp(object, "exec-file") || !parse_hex(&annex, &pid) ||
	    *annex || pid > INT_MAX ||
	    (proc = rsp_proc_find(s, (int) pid)) == SIZE_MAX)
		return s->target;
	return rsp_proc_target(s, proc);
}

/* The document qXfer:@object:read:@annex reads for the selected thread
 * (malloc'd, its length in @len), or NULL after replying with why not
 * (the empty reply: an object the target does not have). */
static char *xfer_document(struct rsp_server *s, const char *object,
			   const char *annex, size_t *len)
{
	char *doc = NULL;
	int err;

	*len = 0;
	if (!strcmp(object, "btrace"))
		return btrace_document(s, s->g_thread, annex, len);
	if (!strcmp(object, "btrace-conf")) {
		doc = rsp_btrace_conf_xml(btrace_is_on(s, s->g_thread),
					  s->btrace_size);
		*len = doc ? strlen(doc) : 0;
		err = doc ? 0 : PTRR_ERR_NOMEM;
	} else {
		struct rsp_target *t = xfer_target(s, object, annex);

		err = t->ops->xfer(t, object, annex, &doc, len);
	}
	if (err < 0) {
		if (err != PTRR_ERR_UNSUPPORTED)
			rsp_reply_str(s, "E01");
		free(doc);
		return NULL;
	}
	return doc;
}

/* qXfer:OBJECT:read:ANNEX:RANGE.  gdb reads a document in pieces; as
 * gdbserver does, it is made when the piece at offset 0 is asked for
 * and kept for the pieces after it (a btrace document of a long trace
 * is megabytes of hex). */
static void handle_xfer(struct rsp_server *s, char *p)
{
	char *object = p, *annex, *range, key[160];
	const char *at;
	uint64_t off;
	size_t len;
	char *doc;

	if (!(annex = strstr(p, ":read:")) || !(range = strchr(annex + 6, ':')))
		return;
	*annex = '\0';
	annex += 6;
	*range++ = '\0';
	if (!strcmp(object, "features") && !strcmp(annex, "target.xml")) {
		rsp_reply_xfer(s, range, rsp_target_xml(),
			       strlen(rsp_target_xml()));
		return;
	}
	snprintf(key, sizeof(key), "%s:%s:%d:%zu", object, annex,
		 rsp_process_id(s), s->g_thread);
	at = range;
	if (parse_hex(&at, &off) && off > 0 && s->xfer_doc &&
	    !strcmp(key, s->xfer_key)) {
		rsp_reply_xfer(s, range, s->xfer_doc, s->xfer_len);
		return;
	}
	doc = xfer_document(s, object, annex, &len);
	if (!doc)
		return;
	free(s->xfer_doc);
	s->xfer_doc = doc;
	s->xfer_len = len;
	snprintf(s->xfer_key, sizeof(s->xfer_key), "%s", key);
	rsp_reply_xfer(s, range, doc, len);
}

/* Qbtrace:pt / Qbtrace:off / Qbtrace-conf:pt:size=N for the selected
 * thread (gdb's record pt). */
static void handle_btrace(struct rsp_server *s, const char *p)
{
	size_t thr = s->g_thread;
	int err;

	if (!strcmp(p, "Qbtrace:pt")) {
		if (s->target->ops->replaying(s->target, thr)) {
			rsp_reply_str(s, "E.ptrr is replaying this thread: "
				      "pt goto end first.");
			return;
		}
		if (s->target->ops->trace_start &&
		    (err = s->target->ops->trace_start(s->target)) < 0) {
			rsp_reply_printf(s, "E.%s", ptrr_errmsg(err));
			return;
		}
		if (!btrace_turn_on(s, thr)) {
			rsp_reply_str(s, "E.Out of memory.");
			return;
		}
	} else if (!strcmp(p, "Qbtrace:off")) {
		if (btrace_is_on(s, thr))
			s->btrace[thr].on = false;
	} else if (!strncmp(p, "Qbtrace-conf:pt:size=", 21)) {
		if (rsp_btrace_parse_size(p + 21, &s->btrace_size) < 0) {
			rsp_reply_str(s, "E01");
			return;
		}
	} else if (!strcmp(p, "Qbtrace:bts")) {
		rsp_reply_str(s, "E.Only Intel PT (record pt) is supported.");
		return;
	} else {
		rsp_reply_str(s, "");
		return;
	}
	rsp_reply_str(s, "OK");
}

/* Sends @len bytes of @text as O packets (hex), in pieces. */
static void send_output(struct rsp_server *s, const char *text, size_t len)
{
	const size_t piece = RSP_PACKET_MAX / 2 - 16;

	for (size_t off = 0; off < len; off += piece) {
		size_t n = len - off < piece ? len - off : piece;

		rsp_reply_reset(s);
		rsp_reply_str(s, "O");
		rsp_reply_hex(s, text + off, n);
		if (rsp_conn_send(&s->conn, s->reply, s->reply_len) < 0)
			break;
	}
}

/* qRcmd,HEX: a monitor command ("pt " optional) run by the target, or
 * gdbserver's "exit"; its output goes to gdb as O packets, then OK. */
static void handle_monitor(struct rsp_server *s, const char *hex)
{
	size_t n = strlen(hex) / 2, len = 0;
	char *cmd = calloc(1, n + 1), *text = NULL;
	FILE *out = NULL;
	int err;

	if (!cmd || strlen(hex) % 2 || !parse_hex_bytes(hex, 2 * n,
							(uint8_t *) cmd) ||
	    !(out = open_memstream(&text, &len))) {
		free(cmd);
		rsp_reply_str(s, "E01");
		return;
	}
	if (!strcmp(cmd, "exit")) {
		/* gdbserver's: the server ends after this reply, the
		 * program as --on-disconnect says. */
		s->done = true;
		err = 0;
	} else {
		err = s->target->ops->monitor(s->target, s->g_thread, out,
					      cmd + (strncmp(cmd, "pt ", 3) ?
						     0 : 3));
	}
	if (err < 0)
		fprintf(out, "ptrr: %s\n", ptrr_errmsg(err));
	fclose(out);
	send_output(s, text, len);
	rsp_reply_reset(s);
	rsp_reply_str(s, "OK");
	free(text);
	free(cmd);
}

/* QPassSignals:SIG[;SIG]...: the signals (gdb's numbers, hex) the
 * target passes on without stopping. */
static void handle_pass_signals(struct rsp_server *s, const char *p)
{
	int sigs[256];
	size_t n = 0;

	while (*p && n < 256) {
		int sig = parse_signal(p);

		if (sig)
			sigs[n++] = sig;
		p += strcspn(p, ";");
		p += *p == ';';
	}
	if (s->target->ops->pass_signals)
		s->target->ops->pass_signals(s->target, sigs, n);
	rsp_reply_str(s, "OK");
}

/* qAttached[:PID]: gdb kills a program the target started when it
 * quits, and detaches from one attached to, and from a recording. */
static void handle_attached(struct rsp_server *s, const char *p)
{
	size_t proc = s->cur, back = s->cur;
	uint64_t pid;

	if (*p == ':' && (p++, !parse_hex(&p, &pid) || pid > INT_MAX ||
			  (proc = rsp_proc_find(s, (int) pid)) == SIZE_MAX)) {
		rsp_reply_str(s, "E01");
		return;
	}
	rsp_proc_select(s, proc);
	rsp_reply_str(s, rsp_server_attached(s) ? "1" : "0");
	rsp_proc_select(s, back);
}

/* The q and Q packets. */
static void handle_query(struct rsp_server *s, char *p)
{
	if (!strncmp(p, "qSupported", 10)) {
		/* Both sides offer it: gdb then uses it. */
		s->multiprocess = strstr(p, "multiprocess+") != NULL;
		rsp_reply_str(s, supported);
	}
	else if (!strcmp(p, "QStartNoAckMode")) {
		rsp_reply_str(s, "OK");
		s->conn.no_ack = true;	/* after this reply: see run() */
	} else if (!strncmp(p, "qXfer:", 6))
		handle_xfer(s, p + 6);
	else if (!strcmp(p, "qfThreadInfo"))
		handle_thread_list(s);
	else if (!strcmp(p, "qsThreadInfo"))
		rsp_reply_str(s, "l");
	else if (!strcmp(p, "qC")) {
		rsp_reply_str(s, "QC");
		reply_thread_id(s, s->g_thread);
	}
	else if (!strncmp(p, "qAttached", 9))
		handle_attached(s, p + 9);
	else if (!strncmp(p, "qRcmd,", 6))
		handle_monitor(s, p + 6);
	else if (!strncmp(p, "qSymbol", 7))
		rsp_reply_str(s, "OK");
	else if (!strncmp(p, "QPassSignals:", 13))
		handle_pass_signals(s, p + 13);
	else if (!strncmp(p, "QProgramSignals:", 16))
		rsp_reply_str(s, "OK");
	else if (!strncmp(p, "Qbtrace", 7))
		handle_btrace(s, p);
	else if (!strncmp(p, "QNonStop:", 9))
		rsp_ns_set(s, p + 9);
	else if (!rsp_lldb_query(s, p))
		rsp_reply_str(s, "");
}

/* ------------------------------------------------------------------ */
/* The program's life: kill, detach, run again                         */
/* ------------------------------------------------------------------ */

/* gdb's view of the process starts afresh, at the start and after a
 * restart: on the thread the target shows first, none traced by gdb's
 * record pt, no document kept from before. */
static void fresh_process(struct rsp_server *s)
{
	struct rsp_stop st;

	free(s->btrace);
	s->btrace = NULL;
	s->nbtrace = 0;
	free(s->xfer_doc);
	s->xfer_doc = NULL;
	s->xfer_len = 0;
	s->xfer_key[0] = '\0';
	/* gdb starts with the thread that stopped the program. */
	s->target->ops->status(s->target, SIZE_MAX, &st);
	s->g_thread = s->c_thread = st.thr;
	s->c_pid = rsp_process_id(s);
	s->c_any = false;
	s->no_process = false;
	s->interrupt_pending = false;
	rsp_ns_reset(s);
}

/* Between runs (extended mode, after a kill or a detach), a request
 * about the process gets an error, as from gdbserver.  True if @pkt was
 * one of them (and is answered). */
static bool reply_no_process(struct rsp_server *s, const char *pkt)
{
	static const char *const about[] = {
		"vCont;", "vKill", "qC", "qXfer:auxv:", "qXfer:exec-file:",
		"qXfer:libraries", "qXfer:btrace", "Qbtrace", "qProcessInfo",
	};
	bool refused = pkt[0] && strchr("gpPGmMXHTZzcsCSbD", pkt[0]);

	for (size_t i = 0; i < sizeof(about) / sizeof(about[0]); i++)
		refused = refused || !strncmp(pkt, about[i], strlen(about[i]));
	if (refused)
		rsp_reply_str(s, "E01");
	return refused;
}

/* k, vKill and D (@detach): the selected process is killed or let go
 * (a recording has none: the session ends).  One of several is gone
 * from the server then; the last, in extended mode, leaves the server
 * waiting without a process for vRun or R, as gdbserver --multi does;
 * otherwise the server leaves. */
static int end_process(struct rsp_server *s, bool detach)
{
	int err = 0;

	if (s->target->ops->release)
		err = s->target->ops->release(s->target, detach);
	rsp_ns_reset(s);
	if (s->nprocs > 1)
		rsp_proc_drop(s);
	else if (s->extended)
		s->no_process = true;
	else
		s->done = true;
	return err;
}

/* k: every process killed. */
static void kill_all(struct rsp_server *s)
{
	while (s->nprocs > 1) {
		rsp_proc_select(s, s->nprocs - 1);
		end_process(s, false);
	}
	if (!s->no_process)
		end_process(s, false);
}

/* vKill[;PID] and D[;PID] (@p after the letters; PID hex): the process
 * PID, or the selected one (PID is gdb's fake one without the
 * multiprocess extensions, as gdbserver takes it), killed or detached;
 * OK once done. */
static void handle_end(struct rsp_server *s, const char *p, bool detach)
{
	size_t proc = s->cur;
	uint64_t pid;
	int err;

	if (*p == ';' && s->multiprocess &&
	    (p++, !parse_hex(&p, &pid) || *p || pid > INT_MAX ||
			  (proc = rsp_proc_find(s, (int) pid)) == SIZE_MAX)) {
		rsp_reply_str(s, "E01");
		return;
	}
	rsp_proc_select(s, proc);
	err = end_process(s, detach);
	if (err < 0)
		rsp_reply_printf(s, "E.%s", ptrr_errmsg(err));
	else
		rsp_reply_str(s, "OK");
}

/* Before vRun or vAttach: with gdb's multiprocess extensions, a server
 * that can (--multi) keeps the process there and starts another beside
 * it, as gdbserver --multi does: selects a process that has ended, or
 * adds one.  0, or a negative error. */
static int process_slot(struct rsp_server *s)
{
	if (!s->multiprocess || !s->new_target || !rsp_proc_alive(s, s->cur))
		return 0;
	for (size_t i = 0; i < s->nprocs; i++)
		if (!rsp_proc_alive(s, i)) {
			rsp_proc_select(s, i);
			return 0;
		}
	if (s->non_stop)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "ptrr's non-stop mode "
				 "debugs one process at a time: kill this "
				 "one first");
	return rsp_proc_add(s);
}

/* After the target started a process (restart(), attach(): @err),
 * replies with its stop; R (@silent) has no reply.  A failure leaves no
 * process, and goes to the standard error too: gdb shows only that
 * running or attaching failed. */
static void new_process(struct rsp_server *s, int err, bool silent)
{
	if (!err)
		fresh_process(s);
	s->silent = silent;
	if (err < 0) {
		if (s->nprocs > 1)
			rsp_proc_drop(s);
		else
			s->no_process = true;
		rsp_reply_printf(s, "E.%s", ptrr_errmsg(err));
		fprintf(stderr, "ptrr serve: %s\n", ptrr_errmsg(err));
		return;
	}
	/* In non-stop mode too the reply is the stop, not a
	 * notification: gdb sends no vStopped for it (queued, it kept
	 * the thread from the next vCont). */
	reply_thread_stop(s);
}

/* Starts the program again with @argv (the target's restart()). */
static void start_again(struct rsp_server *s, char *const argv[], bool silent)
{
	int err = process_slot(s);

	new_process(s, err ? err : s->target->ops->restart(s->target, argv),
		    silent);
}

/* vAttach;PID (hex, after "vAttach" at @p): the running process PID
 * attached to, stopped where it is. */
static void handle_attach(struct rsp_server *s, const char *p)
{
	uint64_t pid;
	int err;

	if (!s->target->ops->attach) {
		rsp_reply_str(s, "E.A recording cannot attach to a process: "
			      "ptrr gdbserver --multi serves a live session.");
		return;
	}
	if (!s->extended) {
		rsp_reply_str(s, "E.vAttach needs extended mode (target "
			      "extended-remote).");
		return;
	}
	if (*p++ != ';' || !parse_hex(&p, &pid) || *p || !pid ||
	    pid > INT_MAX) {
		rsp_reply_str(s, "E01");
		return;
	}
	err = process_slot(s);
	new_process(s, err ? err : s->target->ops->attach(s->target, (int) pid),
		    false);
}

/* Decodes argument @hex of @len hex digits into a malloc'd string; NULL
 * if it is not hex or holds a NUL byte. */
static char *decode_arg(const char *hex, size_t len)
{
	char *arg = len % 2 ? NULL : calloc(1, len / 2 + 1);

	if (arg && (!parse_hex_bytes(hex, len, (uint8_t *) arg) ||
		    strlen(arg) != len / 2)) {
		free(arg);
		arg = NULL;
	}
	return arg;
}

/* For a vRun with no program (*@prog empty) while the selected process
 * is there: its program, as gdbserver runs the last program it started
 * (gdb's inferior 2 has no remote exec-file of its own). */
static void last_program(struct rsp_server *s, char **prog)
{
	char *doc = NULL;
	size_t len;

	if (!rsp_proc_alive(s, s->cur) ||
	    s->target->ops->xfer(s->target, "exec-file", "", &doc, &len) < 0)
		return;
	free(*prog);
	*prog = doc;
}

/* vRun;PROGRAM[;ARGUMENT]... (hex, after "vRun" at @p): the program
 * started again (an empty PROGRAM: the same one) with these arguments
 * (none: the same ones). */
static void handle_run(struct rsp_server *s, const char *p)
{
	size_t n = 0;
	char **argv;
	bool ok = *p == ';';

	if (!s->target->ops->restart) {
		rsp_reply_str(s, "E.A recording cannot run again: ptrr gdb -- "
			      "PROG debugs a program live.");
		return;
	}
	if (!s->extended) {
		rsp_reply_str(s, "E.vRun needs extended mode (target "
			      "extended-remote).");
		return;
	}
	for (const char *q = p; *q; q++)
		n += *q == ';';
	argv = calloc(n + 1, sizeof(*argv));
	for (size_t i = 0; argv && ok && i < n; i++) {
		size_t len = strcspn(++p, ";");

		ok = (argv[i] = decode_arg(p, len)) != NULL;
		p += len;
	}
	if (argv && ok && !argv[0][0])
		last_program(s, &argv[0]);
	if (argv && ok)
		start_again(s, argv, false);
	else
		rsp_reply_str(s, "E01");
	for (size_t i = 0; argv && i < n; i++)
		free(argv[i]);
	free(argv);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */
/* ------------------------------------------------------------------ */

void rsp_server_handle(struct rsp_server *s, char *pkt, size_t len)
{
	size_t thr, proc;

	rsp_reply_reset(s);
	s->silent = false;
	if (len == 0 || (s->no_process && reply_no_process(s, pkt)))
		return;
	switch (pkt[0]) {
	case '?': handle_status(s); break;
	case 'g': rsp_reply_registers(s, s->g_thread); break;
	case 'p': {
		const char *q = pkt + 1;
		uint64_t regno;

		if (parse_hex(&q, &regno) && !*q && regno < 1024)
			rsp_reply_register(s, s->g_thread, (unsigned) regno);
		else
			rsp_reply_str(s, "E01");
		break;
	}
	case 'P': handle_write_register(s, pkt + 1); break;
	case 'G':
		rsp_reply_str(s, "E.Write registers one by one (P).");
		break;
	case 'm': handle_read_memory(s, pkt + 1); break;
	case 'M': case 'X': handle_write_memory(s, pkt, len); break;
	case 'H': handle_set_thread(s, pkt + 1); break;
	case 'T':
		rsp_reply_str(s, parse_thread(s, pkt + 1, s->g_thread, &proc,
					      &thr) ? "OK" : "E01");
		break;
	case 'Z': handle_breakpoint(s, pkt + 1, true); break;
	case 'z': handle_breakpoint(s, pkt + 1, false); break;
	case 'c': case 's':
		move_hc(s, 1, pkt[0] == 's', 0);
		break;
	case 'C': case 'S':
		move_hc(s, 1, pkt[0] == 'S', parse_signal(pkt + 1));
		break;
	case 'b':
		if (!strcmp(pkt, "bs") || !strcmp(pkt, "bc"))
			move_hc(s, -1, pkt[1] == 's', 0);
		break;
	case 'v':
		if (!strncmp(pkt, "vCont", 5))
			handle_vcont(s, pkt + 5);
		else if (!strncmp(pkt, "vFile:", 6))
			rsp_hostio_handle(s, pkt + 6);
		else if (!strncmp(pkt, "vKill", 5))
			handle_end(s, pkt + 5, false);
		else if (!strncmp(pkt, "vRun", 4))
			handle_run(s, pkt + 4);
		else if (!strncmp(pkt, "vAttach", 7))
			handle_attach(s, pkt + 7);
		else if (!strcmp(pkt, "vStopped") && s->non_stop)
			rsp_ns_vstopped(s);
		else if (!strcmp(pkt, "vCtrlC") && s->non_stop)
			rsp_ns_ctrlc(s);
		break;
	case 'k':
		s->silent = true;
		kill_all(s);
		break;
	case 'D': handle_end(s, pkt + 1, true); break;
	case '!':
		if (s->target->ops->restart) {
			s->extended = true;
			rsp_reply_str(s, "OK");
		}
		break;
	case 'R':
		if (s->extended)
			start_again(s, NULL, true);
		break;
	case 'q': case 'Q': handle_query(s, pkt); break;
	default: break;	/* unknown: the empty reply */
	}
	if (s->reply_oom) {
		rsp_reply_reset(s);
		rsp_reply_str(s, "E01");
	}
}

/* For the target: gdb's interrupt, while it runs or sent between
 * requests, which gdb does when the user's Ctrl-C comes as it handles a
 * stop on its own (a library loaded): the next resume then stops at
 * once, as the SIGINT gdbserver sends the stopped process does.  gdb
 * gone (the connection closed) stops the run too: the session then ends
 * and the target's close() does what --on-disconnect says, rather than
 * the program running on unwatched. */
static bool interrupted(void *arg)
{
	struct rsp_server *s = arg;

	if (s->non_stop)	/* a request: served with the threads at rest */
		return rsp_conn_pending(&s->conn) || s->conn.closed;
	if (s->interrupt_pending) {
		s->interrupt_pending = false;
		return true;
	}
	return rsp_conn_interrupted(&s->conn) || s->conn.closed;
}

int rsp_server_init(struct rsp_server *s, struct rsp_target *target)
{
	memset(s, 0, sizeof(*s));
	s->procs = calloc(1, sizeof(*s->procs));
	if (!s->procs) {
		target->ops->close(target);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	s->nprocs = 1;
	s->target = target;
	target->interrupted = interrupted;
	target->interrupted_arg = s;
	s->btrace_size = 0x1000000;
	fresh_process(s);
	return 0;
}

void rsp_server_close(struct rsp_server *s)
{
	rsp_proc_close_all(s);
	rsp_conn_fini(&s->conn);
	rsp_hostio_close(s);
	rsp_ns_free(s);
	free(s->reply);
	free(s->xfer_doc);
	memset(s, 0, sizeof(*s));
}

bool rsp_server_attached(struct rsp_server *s)
{
	if (s->target->ops->attached)
		return s->target->ops->attached(s->target);
	return !s->target->ops->restart;
}

bool rsp_server_waits_again(struct rsp_server *s)
{
	struct rsp_stop st;

	if (s->done)
		return false;
	if (s->multi)
		return true;
	if (s->no_process)
		return false;
	s->target->ops->status(s->target, SIZE_MAX, &st);
	return st.why != RSP_STOP_EXITED && st.why != RSP_STOP_KILLED;
}

int rsp_server_run(struct rsp_server *s, int in, int out)
{
	static char pkt[RSP_PACKET_MAX + 1];
	size_t len;

	/* A new gdb (after one that disconnected) starts in acknowledged,
	 * non-extended mode and reads its documents afresh; the program,
	 * its threads and gdb's record pt are as the last one left them. */
	rsp_conn_fini(&s->conn);
	s->extended = false;
	s->multiprocess = false;
	s->interrupt_pending = false;
	rsp_ns_free(s);	/* the threads stay as they are: stopped */
	free(s->xfer_doc);
	s->xfer_doc = NULL;
	s->xfer_len = 0;
	s->xfer_key[0] = '\0';
	rsp_conn_init(&s->conn, in, out);
	while (!s->done) {
		enum rsp_read r;
		bool no_ack;

		if (rsp_ns_running(s) && !rsp_conn_pending(&s->conn)) {
			int err = rsp_ns_run(s);

			if (err < 0)
				return err;
			if (rsp_ns_notify(s) < 0)
				return ptrr_fail(PTRR_ERR_IO, "the connection "
						 "to the debugger failed");
			continue;
		}
		r = rsp_conn_read(&s->conn, pkt, sizeof(pkt), &len);
		no_ack = s->conn.no_ack;

		if (r == RSP_READ_EOF)
			return 0;
		if (r == RSP_READ_ERROR)
			return ptrr_fail(PTRR_ERR_IO, "the connection to the "
					 "debugger failed");
		if (r == RSP_READ_INTERRUPT) {
			/* Every request completes at once: for the next. */
			s->interrupt_pending = true;
			continue;
		}
		if (r == RSP_READ_BAD) {
			rsp_conn_send_str(&s->conn, "E01");
			continue;
		}
		rsp_server_handle(s, pkt, len);
		/* QStartNoAckMode's own reply is still acknowledged. */
		s->conn.no_ack = no_ack;
		if (s->conn.closed)
			return 0;	/* gdb went away while the target ran */
		if (!s->silent &&
		    rsp_conn_send(&s->conn, s->reply ? s->reply : "",
				  s->reply_len) < 0)
			return ptrr_fail(PTRR_ERR_IO, "the connection to the "
					 "debugger failed");
		if (!strcmp(pkt, "QStartNoAckMode"))
			s->conn.no_ack = true;
		/* Then a stop not told yet (non-stop mode). */
		if (rsp_ns_notify(s) < 0)
			return ptrr_fail(PTRR_ERR_IO, "the connection to the "
					 "debugger failed");
	}
	return 0;
}
