/* LLDB's host and process queries (lldb_query.h), answered as lldb-server
 * answers them on x86-64 Linux (LLDB's docs/lldb-gdb-remote.txt):
 *
 *   qHostInfo           triple, pointer size, byte order; watchpoints
 *                       report after the access, as on x86
 *   qProcessInfo        the same, and the pid
 *   qProcessInfoPID:PID the pid and the program's path (name:, hex):
 *                       LLDB's POSIX dynamic loader makes the program
 *                       its executable module from it
 *
 * The pid is the task id of thread 0, the thread that started the
 * process; the program's path is the target's exec-file document, which
 * gdb reads with qXfer:exec-file.
 */
#include <config.h>

#include "gdbremote/lldb_query.h"

#include <stdlib.h>
#include <string.h>

/* The triple of every target ptrr serves. */
static const char triple[] = "x86_64-pc-linux-gnu";

/* The fields qHostInfo and qProcessInfo share. */
static void reply_arch(struct rsp_server *s)
{
	rsp_reply_str(s, "triple:");
	rsp_reply_hex(s, triple, strlen(triple));
	rsp_reply_str(s, ";ostype:linux;vendor:pc;endian:little;ptrsize:8;");
}

/* The process id LLDB shows: thread 0's task id. */
static int process_id(struct rsp_server *s)
{
	return s->target->ops->tid(s->target, 0);
}

/* qProcessInfoPID:PID: the pid, the program's path and the triple; E01
 * for another pid. */
static void reply_process_info_pid(struct rsp_server *s, const char *p)
{
	char *path = NULL, *end;
	size_t len = 0;
	long pid = strtol(p, &end, 10);

	if (end == p || *end || pid != process_id(s)) {
		rsp_reply_str(s, "E01");
		return;
	}
	rsp_reply_printf(s, "pid:%d;", process_id(s));
	if (s->target->ops->xfer(s->target, "exec-file", "", &path,
				 &len) >= 0 && len > 0) {
		rsp_reply_str(s, "name:");
		rsp_reply_hex(s, path, len);
		rsp_reply_str(s, ";");
	}
	free(path);
	reply_arch(s);
}

bool rsp_lldb_query(struct rsp_server *s, const char *p)
{
	if (!strcmp(p, "qHostInfo")) {
		reply_arch(s);
		rsp_reply_str(s, "watchpoint_exceptions_received:after;");
	} else if (!strcmp(p, "qProcessInfo")) {
		rsp_reply_printf(s, "pid:%x;", process_id(s));
		reply_arch(s);
	} else if (!strncmp(p, "qProcessInfoPID:", 16)) {
		reply_process_info_pid(s, p + 16);
	} else {
		return false;
	}
	return true;
}
