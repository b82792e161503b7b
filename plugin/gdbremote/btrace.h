/* plugin/gdbremote — gdb's own `record pt` through ptrr: the documents
 * of its branch-trace packets.
 *
 * When the user types `record pt`, gdb enables branch tracing per thread
 * (Qbtrace-conf:pt:size=N, Hg, Qbtrace:pt), reads the configuration back
 * (qXfer:btrace-conf:read) and, at every stop, the trace
 * (qXfer:btrace:read:delta, then :new, then :all — Intel PT has no delta:
 * gdbserver refuses it, and so does ptrr).  gdb decodes the raw PT bytes
 * itself, with libipt and the memory it reads through `m` packets.  The
 * formats are gdb's features/btrace.dtd and btrace-conf.dtd, as gdbserver
 * writes them (gdbserver/linux-low.cc, linux_process_target::read_btrace).
 *
 * Whether tracing is enabled and which bytes are the trace is the
 * target's business; this file only writes the documents.
 */
#ifndef PTRR_RSP_BTRACE_H
#define PTRR_RSP_BTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"

/* How gdb asked for the trace (the annex of qXfer:btrace:read). */
enum rsp_btrace_read {
	RSP_BTRACE_ALL,		/* everything there is */
	RSP_BTRACE_NEW,		/* everything, if anything is new since
				 * the last read; else nothing */
	RSP_BTRACE_DELTA,	/* only what is new: refused for PT */
};

/* Parses annex @annex ("all", "new", "delta"); -1 if it is none. */
int rsp_btrace_parse_read(const char *annex);

/* The btrace-conf document: PT with buffer size @size if @enabled, else
 * no format (gdb then leaves the thread alone).  Malloc'd. */
char *rsp_btrace_conf_xml(int enabled, uint64_t size);

/* The btrace document of @size bytes of raw PT @trace recorded on @cpu
 * (its cpu element only for Intel CPUs, as gdbserver does: libipt applies
 * errata by it).  Malloc'd; its length in @len. */
char *rsp_btrace_xml(const struct hist_cpu *cpu, const uint8_t *trace,
		     size_t size, size_t *len);

/* The Qbtrace-conf:pt:size=VALUE argument @arg ("0x4000") into @size,
 * rounded up as perf sizes its trace buffer, to a power of two of 4kB
 * pages (gdb shows the size in effect: 1 is 4kB), and at most
 * RSP_BTRACE_SIZE_MAX; -1 if malformed or zero. */
int rsp_btrace_parse_size(const char *arg, uint64_t *size);

/* The largest buffer: gdb keeps the size in an unsigned int (its
 * "unlimited", 0xffffffff, would round up to 4GB and read back as 0). */
#define RSP_BTRACE_SIZE_MAX (UINT64_C(1) << 31)

/* Where the part of trace @trace (@size bytes) that a trace buffer of
 * @buffer bytes holds begins: the last @buffer bytes, from the first PSB
 * in them, where a decoder can start (perf's AUX area is a ring buffer of
 * that size, which gdbserver hands gdb whole).  0 if the whole trace
 * fits, @size if the last @buffer bytes have no PSB. */
size_t rsp_btrace_window(const uint8_t *trace, size_t size,
			 uint64_t buffer);

#endif
