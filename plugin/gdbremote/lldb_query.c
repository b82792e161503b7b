/* LLDB's host and process queries (lldb_query.h), answered as lldb-server
 * answers them on x86-64 Linux (LLDB's docs/lldb-gdb-remote.txt):
 *
 *   qHostInfo     triple, pointer size, byte order; watchpoints report
 *                 after the access, as on x86
 *   qProcessInfo  the same, and the pid
 *
 * The triple makes LLDB treat the target as a Linux process (its POSIX
 * dynamic loader, the System V ABI's unwinding).  The pid is the task id
 * of thread 0, the thread that started the process.  LLDB looks the
 * program up by that pid on its own host (/proc/PID/exe): that finds it
 * in a live session; a recording's pid names no process here (or another
 * one), so LLDB has to be given the program of a replay (`lldb PROG`, as
 * ptrr replay --lldb does).
 */
#include <config.h>

#include "gdbremote/lldb_query.h"

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

bool rsp_lldb_query(struct rsp_server *s, const char *p)
{
	if (!strcmp(p, "qHostInfo")) {
		reply_arch(s);
		rsp_reply_str(s, "watchpoint_exceptions_received:after;");
	} else if (!strcmp(p, "qProcessInfo")) {
		rsp_reply_printf(s, "pid:%x;", process_id(s));
		reply_arch(s);
	} else {
		return false;
	}
	return true;
}
