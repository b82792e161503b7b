/* plugin/gdbremote — the packets LLDB sends beyond gdb's (lldb_query.c):
 * LLDB asks the stub what host and process it debugs before it will load
 * the program, and gdb never sends these. */
#ifndef PTRR_RSP_LLDB_QUERY_H
#define PTRR_RSP_LLDB_QUERY_H

#include <stdbool.h>

#include "gdbremote/server.h"

/* Answers LLDB's query @p (qHostInfo, qProcessInfo) into s->reply;
 * false, with nothing replied, if @p is not one of them. */
bool rsp_lldb_query(struct rsp_server *s, const char *p);

#endif
