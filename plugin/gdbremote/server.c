/* `ptrr serve`'s request dispatch over a replay (server.h). */
#include <config.h>

#include "gdbremote/server.h"

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_abi.h"
#include "gdbremote/btrace.h"

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

/* The thread gdb means by thread id @p ("-1" all, "0" any, else hex);
 * for all/any the current @dflt.  False if there is no such thread. */
static bool parse_thread(struct rsp_server *s, const char *p, size_t dflt,
			 size_t *thr)
{
	uint64_t tid;

	if (!strcmp(p, "-1") || !strcmp(p, "0")) {
		*thr = dflt;
		return true;
	}
	if (!parse_hex(&p, &tid) || *p || tid > INT32_MAX)
		return false;
	return replay_find_tid(s->rp, (int) tid, thr) == 0;
}

/* The thread a resumption moves: Hc's, or for "any thread" the one gdb
 * selected last (it resumes all threads, stepping its current one). */
static size_t stepping_thread(const struct rsp_server *s)
{
	return s->c_any ? s->g_thread : s->c_thread;
}

/* The signal a thread's recorded stop reports at the end of history. */
static int end_signal(const struct rsp_server *s, size_t thr)
{
	const struct hist_thread *t = &s->b->threads[thr];

	if (t->stop.kind == HIST_STOP_FAULT)
		return t->stop.code;
	return SIGTRAP;
}

/* A stop reply for thread @thr with signal @sig and the @why part
 * ("swbreak:;", "replaylog:begin;" or ""). */
static void reply_stop(struct rsp_server *s, size_t thr, int sig,
		       const char *why)
{
	rsp_reply_printf(s, "T%02x%sthread:%x;", sig & 0xff, why,
			 replay_tid(s->rp, thr));
	rsp_reply_stop_registers(s, thr);
}

/* The reply for a move of thread @thr that ended as @res says. */
static void reply_moved(struct rsp_server *s, size_t thr, int dir,
			const struct replay_result *res, bool arrived)
{
	s->g_thread = thr;
	switch (res->stop) {
	case REPLAY_STOP_BREAK:
		reply_stop(s, thr, SIGTRAP, "swbreak:;");
		break;
	case REPLAY_STOP_BEGIN:
		reply_stop(s, thr, SIGTRAP, "replaylog:begin;");
		break;
	case REPLAY_STOP_END:
		/* Arriving at a crash shows it as gdb shows a live one. */
		if (arrived && dir > 0 && end_signal(s, thr) != SIGTRAP)
			reply_stop(s, thr, end_signal(s, thr), "");
		else
			reply_stop(s, thr, SIGTRAP, "replaylog:end;");
		break;
	default:
		reply_stop(s, thr, SIGTRAP, "");
	}
}

/* Moves thread @thr one instruction (@step) or to a breakpoint, in
 * direction @dir, and replies. */
static void move(struct rsp_server *s, size_t thr, int dir, bool step)
{
	struct replay_result res;
	bool arrived = !replay_at_end(s->rp, thr);
	int err;

	if (replay_thread_empty(s->rp, thr)) {
		reply_stop(s, thr, SIGTRAP, dir < 0 ? "replaylog:begin;" :
			   "replaylog:end;");
		return;
	}
	err = step ? replay_step(s->rp, thr, dir, &res) :
		     replay_continue(s->rp, thr, dir, s->bps, s->nbps, &res);
	if (err < 0) {
		rsp_reply_str(s, "E01");
		return;
	}
	reply_moved(s, thr, dir, &res, arrived);
}

/* '?': where the selected thread is; at the end, its recorded stop. */
static void handle_status(struct rsp_server *s)
{
	size_t thr = s->g_thread;

	reply_stop(s, thr, replay_at_end(s->rp, thr) ? end_signal(s, thr) :
		   SIGTRAP, "");
}

/* vCont;ACTION[:TID]...: the first action that names a thread, or
 * applies to all, decides; c and s move forward. */
static void handle_vcont(struct rsp_server *s, const char *args)
{
	if (!strcmp(args, "?")) {
		rsp_reply_str(s, "vCont;c;C;s;S");
		return;
	}
	while (*args == ';') {
		char action = args[1];
		const char *colon = strchr(args + 1, ':');
		const char *next = strchr(args + 1, ';');
		size_t thr = stepping_thread(s);
		char tid[32] = "-1";

		if (colon && (!next || colon < next)) {
			size_t n = next ? (size_t) (next - colon - 1) :
				   strlen(colon + 1);

			if (n >= sizeof(tid))
				break;
			memcpy(tid, colon + 1, n);
			tid[n] = '\0';
		}
		if (!parse_thread(s, tid, stepping_thread(s), &thr))
			break;
		if (action == 's' || action == 'S') {
			move(s, thr, 1, true);
			return;
		}
		if (action == 'c' || action == 'C') {
			move(s, thr, 1, false);
			return;
		}
		if (!next)
			break;
		args = next;
	}
	rsp_reply_str(s, "E01");
}

/* qfThreadInfo: every thread at once. */
static void handle_thread_list(struct rsp_server *s)
{
	rsp_reply_str(s, "m");
	for (size_t i = 0; i < replay_nthreads(s->rp); i++)
		rsp_reply_printf(s, "%s%x", i ? "," : "", replay_tid(s->rp, i));
}

/* H{g,c}TID. */
static void handle_set_thread(struct rsp_server *s, const char *p)
{
	size_t thr;
	char which = *p++;

	if ((which != 'g' && which != 'c') ||
	    !parse_thread(s, p, which == 'g' ? s->g_thread : s->c_thread,
			  &thr)) {
		rsp_reply_str(s, "E01");
		return;
	}
	if (which == 'g') {
		s->g_thread = thr;
	} else {
		s->c_thread = thr;
		s->c_any = !strcmp(p, "0") || !strcmp(p, "-1");
	}
	rsp_reply_str(s, "OK");
}

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

/* Reads the call stack of the selected thread as the unwinder sees it
 * (unwind_abi.h): bytes [@off, @off + @len) of the range. */
static size_t read_unwind(struct rsp_server *s, uint64_t off, uint8_t *buf,
			  size_t len)
{
	struct ptrr_unwind_header h = {
		.magic = PTRR_UNWIND_MAGIC,
		.tid = (uint64_t) replay_tid(s->rp, s->g_thread),
		.position = replay_position(s->rp, s->g_thread),
		.frame_size = sizeof(struct ptrr_unwind_frame),
	};
	struct replay_frame frames[256];
	uint64_t vals[HIST_NREGS];
	bool known[HIST_NREGS];
	size_t n = 0, total;
	uint8_t *doc;

	/* With the registers known (the end of a crash, an interrupt), gdb
	 * unwinds by itself; without them (anywhere else, and at the end of
	 * a thread that exited) it needs the call history's frames. */
	replay_regs(s->rp, s->g_thread, vals, known);
	if (!(replay_at_end(s->rp, s->g_thread) && known[HIST_RSP]) &&
	    replay_frames(s->rp, s->g_thread, frames, 256, &n) < 0)
		n = 0;
	h.nframes = (uint32_t) n;
	total = sizeof(h) + n * sizeof(struct ptrr_unwind_frame);
	if (off >= total)
		return 0;
	doc = calloc(1, total);
	if (!doc)
		return 0;
	memcpy(doc, &h, sizeof(h));
	for (size_t i = 0; i < n; i++) {
		struct ptrr_unwind_frame f = {
			.pc = frames[i].pc, .func = frames[i].func,
			.level = frames[i].level,
			.instance = frames[i].instance,
		};

		memcpy(doc + sizeof(h) + i * sizeof(f), &f, sizeof(f));
	}
	if (len > total - off)
		len = total - off;
	memcpy(buf, doc + off, len);
	free(doc);
	return len;
}

/* Reads what the recording knows of [@addr, @addr + @len): the unwind
 * range, the memory snapshot, the code.  Returns the bytes read from
 * @addr on (0 if none). */
static size_t read_memory(struct rsp_server *s, uint64_t addr, uint8_t *buf,
			  size_t len)
{
	if (addr >= PTRR_UNWIND_ADDR &&
	    addr - PTRR_UNWIND_ADDR < PTRR_UNWIND_SIZE)
		return read_unwind(s, addr - PTRR_UNWIND_ADDR, buf, len);
	for (size_t i = 0; i < s->b->nsnapshot; i++) {
		const struct hist_blob *m = &s->b->snapshot[i];

		if (m->data && addr >= m->start && addr - m->start < m->size) {
			size_t n = m->size - (addr - m->start);

			n = n < len ? n : len;
			memcpy(buf, m->data + (addr - m->start), n);
			return n;
		}
	}
	ssize_t n = hist_image_read(hist_recording_image(s->rec), addr, buf,
				    len);
	return n > 0 ? (size_t) n : 0;
}

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
	n = read_memory(s, addr, buf, len);
	if (n == 0 && len > 0) {
		rsp_reply_str(s, "E01");
		return;
	}
	rsp_reply_hex(s, buf, n);
}

/* Z/z TYPE,ADDR,KIND: breakpoints of types 0 and 1 (software and
 * hardware execution breakpoints: one set of addresses in a replay). */
static void handle_breakpoint(struct rsp_server *s, const char *p, bool set)
{
	uint64_t type, addr;

	if (!parse_hex(&p, &type) || *p++ != ',' || !parse_hex(&p, &addr) ||
	    *p != ',') {
		rsp_reply_str(s, "E01");
		return;
	}
	if (type > 1)
		return;	/* watchpoints: not supported (empty reply) */
	for (size_t i = 0; i < s->nbps; i++) {
		if (s->bps[i] != addr)
			continue;
		if (!set)
			s->bps[i] = s->bps[--s->nbps];
		rsp_reply_str(s, "OK");
		return;
	}
	if (set && s->nbps == RSP_MAX_BREAKPOINTS) {
		rsp_reply_str(s, "E01");
		return;
	}
	if (set)
		s->bps[s->nbps++] = addr;
	rsp_reply_str(s, "OK");
}

/* ------------------------------------------------------------------ */
/* Queries                                                             */
/* ------------------------------------------------------------------ */

static const char supported[] =
	"PacketSize=4000;QStartNoAckMode+;qXfer:features:read+;"
	"qXfer:auxv:read+;qXfer:exec-file:read+;qXfer:libraries-svr4:read+;"
	"ReverseStep+;ReverseContinue+;vContSupported+;swbreak+;hwbreak+;"
	"QPassSignals+;Qbtrace:pt+;Qbtrace:off+;Qbtrace-conf:pt:size+;"
	"qXfer:btrace:read+;qXfer:btrace-conf:read+";

/* The trace of thread @thr gdb's record pt sees, as a btrace document. */
static void reply_btrace(struct rsp_server *s, size_t thr, const char *annex,
			 const char *range)
{
	const struct hist_thread *t = &s->b->threads[thr];
	int how = rsp_btrace_parse_read(annex);
	size_t len;
	char *xml;

	if (!s->btrace_on[thr]) {
		rsp_reply_str(s, "E.Btrace not enabled.");
		return;
	}
	if (how == RSP_BTRACE_DELTA || how < 0) {
		rsp_reply_str(s, how < 0 ? "E.Bad annex." :
			      "E.Intel PT has no delta trace.");
		return;
	}
	xml = rsp_btrace_xml(&s->b->cpu, t->trace, t->trace_size, &len);
	if (!xml) {
		rsp_reply_str(s, "E.Out of memory.");
		return;
	}
	rsp_reply_xfer(s, range, xml, len);
	free(xml);
}

/* qXfer:OBJECT:read:ANNEX:RANGE. */
static void handle_xfer(struct rsp_server *s, char *p)
{
	char *object = p, *annex, *range;
	char *doc = NULL;
	uint8_t *auxv = NULL;
	size_t len = 0;

	if (!(annex = strstr(p, ":read:")) || !(range = strchr(annex + 6, ':'))) {
		rsp_reply_str(s, "");
		return;
	}
	*annex = '\0';
	annex += 6;
	*range++ = '\0';
	if (!strcmp(object, "features") && !strcmp(annex, "target.xml")) {
		rsp_reply_xfer(s, range, rsp_target_xml(),
			       strlen(rsp_target_xml()));
		return;
	}
	if (!strcmp(object, "btrace")) {
		reply_btrace(s, s->g_thread, annex, range);
		return;
	}
	if (!strcmp(object, "btrace-conf"))
		doc = rsp_btrace_conf_xml(s->btrace_on[s->g_thread],
					  s->btrace_size);
	else if (!strcmp(object, "exec-file"))
		doc = rsp_exec_file(s->b);
	else if (!strcmp(object, "libraries-svr4"))
		doc = rsp_libraries_svr4(s->b);
	else if (!strcmp(object, "auxv") && rsp_auxv(s->b, &auxv, &len) == 0)
		doc = (char *) auxv;
	else if (strcmp(object, "auxv")) {
		rsp_reply_str(s, "");
		return;
	}
	if (!doc) {
		rsp_reply_str(s, "E01");
		return;
	}
	rsp_reply_xfer(s, range, doc, auxv ? len : strlen(doc));
	free(doc);
}

/* Qbtrace:pt / Qbtrace:off / Qbtrace-conf:pt:size=N for the selected
 * thread (gdb's record pt). */
static void handle_btrace(struct rsp_server *s, const char *p)
{
	size_t thr = s->g_thread;

	if (!strcmp(p, "Qbtrace:pt")) {
		if (!replay_at_end(s->rp, thr)) {
			rsp_reply_str(s, "E.ptrr is replaying this thread: "
				      "pt goto end first.");
			return;
		}
		s->btrace_on[thr] = true;
	} else if (!strcmp(p, "Qbtrace:off")) {
		s->btrace_on[thr] = false;
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

/* qRcmd,HEX: a monitor command. */
static void handle_monitor(struct rsp_server *s, const char *hex)
{
	size_t n = strlen(hex) / 2;
	char *cmd = malloc(n + 1);

	if (!cmd) {
		rsp_reply_str(s, "E01");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			free(cmd);
			rsp_reply_str(s, "E01");
			return;
		}
		cmd[i] = (char) v;
	}
	cmd[n] = '\0';
	rsp_monitor(s, cmd);
	free(cmd);
}

/* The q and Q packets. */
static void handle_query(struct rsp_server *s, char *p)
{
	if (!strncmp(p, "qSupported", 10))
		rsp_reply_str(s, supported);
	else if (!strcmp(p, "QStartNoAckMode")) {
		rsp_reply_str(s, "OK");
		s->conn.no_ack = true;	/* after this reply: see run() */
	} else if (!strncmp(p, "qXfer:", 6))
		handle_xfer(s, p + 6);
	else if (!strcmp(p, "qfThreadInfo"))
		handle_thread_list(s);
	else if (!strcmp(p, "qsThreadInfo"))
		rsp_reply_str(s, "l");
	else if (!strcmp(p, "qC"))
		rsp_reply_printf(s, "QC%x", replay_tid(s->rp, s->g_thread));
	else if (!strncmp(p, "qAttached", 9))
		rsp_reply_str(s, "1");
	else if (!strncmp(p, "qRcmd,", 6))
		handle_monitor(s, p + 6);
	else if (!strncmp(p, "qSymbol", 7))
		rsp_reply_str(s, "OK");
	else if (!strncmp(p, "QPassSignals:", 13) ||
		 !strncmp(p, "QProgramSignals:", 16))
		rsp_reply_str(s, "OK");
	else if (!strncmp(p, "Qbtrace", 7))
		handle_btrace(s, p);
	else
		rsp_reply_str(s, "");
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */
/* ------------------------------------------------------------------ */

void rsp_server_handle(struct rsp_server *s, char *pkt, size_t len)
{
	size_t thr;

	rsp_reply_reset(s);
	if (len == 0)
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
	case 'G': case 'P':
		rsp_reply_str(s, "E.Registers cannot be written in a "
			      "recording.");
		break;
	case 'm': handle_read_memory(s, pkt + 1); break;
	case 'M': case 'X':
		rsp_reply_str(s, "E.Memory cannot be written in a "
			      "recording.");
		break;
	case 'H': handle_set_thread(s, pkt + 1); break;
	case 'T':
		rsp_reply_str(s, parse_thread(s, pkt + 1, s->g_thread, &thr) ?
			      "OK" : "E01");
		break;
	case 'Z': handle_breakpoint(s, pkt + 1, true); break;
	case 'z': handle_breakpoint(s, pkt + 1, false); break;
	case 'c': case 'C': move(s, stepping_thread(s), 1, false); break;
	case 's': case 'S': move(s, stepping_thread(s), 1, true); break;
	case 'b':
		if (!strcmp(pkt, "bs") || !strcmp(pkt, "bc"))
			move(s, stepping_thread(s), -1, pkt[1] == 's');
		break;
	case 'v':
		if (!strncmp(pkt, "vCont", 5))
			handle_vcont(s, pkt + 5);
		else if (!strncmp(pkt, "vKill", 5)) {
			rsp_reply_str(s, "OK");
			s->done = true;
		}
		break;
	case 'k': s->done = true; break;
	case 'D': rsp_reply_str(s, "OK"); s->done = true; break;
	case 'q': case 'Q': handle_query(s, pkt); break;
	default: break;	/* unknown: the empty reply */
	}
	if (s->reply_oom) {
		rsp_reply_reset(s);
		rsp_reply_str(s, "E01");
	}
}

int rsp_server_open(struct rsp_server *s, const char *dir)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->bundle = dir;
	s->btrace_size = 0x1000000;
	err = hist_recording_open(dir, &s->rec);
	if (err < 0)
		return err;
	s->b = hist_recording_bundle(s->rec);
	if (s->b->nthreads == 0)
		return ptrr_fail(PTRR_ERR_BUNDLE, "bundle %s has no thread to "
				 "serve: record the program again", dir);
	err = replay_new(s->rec, &s->rp);
	if (err < 0)
		return err;
	s->btrace_on = calloc(replay_nthreads(s->rp), sizeof(bool));
	if (!s->btrace_on)
		return PTRR_ERR_NOMEM;
	/* gdb starts with the thread that stopped the program. */
	for (size_t i = 0; i < s->b->nthreads; i++)
		if (s->b->threads[i].stop.kind == HIST_STOP_FAULT) {
			s->g_thread = s->c_thread = i;
			break;
		}
	return 0;
}

void rsp_server_close(struct rsp_server *s)
{
	replay_free(s->rp);
	hist_recording_close(s->rec);
	rsp_conn_fini(&s->conn);
	free(s->btrace_on);
	free(s->reply);
	memset(s, 0, sizeof(*s));
}

int rsp_server_run(struct rsp_server *s, int in, int out)
{
	static char pkt[RSP_PACKET_MAX + 1];
	size_t len;

	rsp_conn_init(&s->conn, in, out);
	while (!s->done) {
		enum rsp_read r = rsp_conn_read(&s->conn, pkt, sizeof(pkt),
						&len);
		bool no_ack = s->conn.no_ack;

		if (r == RSP_READ_EOF)
			return 0;
		if (r == RSP_READ_ERROR)
			return ptrr_fail(PTRR_ERR_IO, "the connection to the "
					 "debugger failed");
		if (r == RSP_READ_INTERRUPT)
			continue;	/* every request completes at once */
		if (r == RSP_READ_BAD) {
			rsp_conn_send_str(&s->conn, "E01");
			continue;
		}
		rsp_server_handle(s, pkt, len);
		/* QStartNoAckMode's own reply is still acknowledged. */
		s->conn.no_ack = no_ack;
		if (s->done && pkt[0] == 'k')
			break;
		if (rsp_conn_send(&s->conn, s->reply ? s->reply : "",
				  s->reply_len) < 0)
			return ptrr_fail(PTRR_ERR_IO, "the connection to the "
					 "debugger failed");
		if (!strcmp(pkt, "QStartNoAckMode"))
			s->conn.no_ack = true;
	}
	return 0;
}
