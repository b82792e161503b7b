/* LLDB's host and process queries (lldb_query.h), answered as lldb-server
 * answers them on x86-64 Linux (LLDB's docs/lldb-gdb-remote.txt):
 *
 *   qHostInfo     triple, pointer size, byte order; watchpoints report
 *                 after the access, as on x86
 *   qProcessInfo  the same, and the pid
 *   qShlibInfoAddr  the address of a word holding the address of the
 *                 dynamic linker's r_debug (reply_debug_pointer())
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
#include "gdbremote/target_replay.h"

#include <elf.h>
#include <inttypes.h>
#include <stddef.h>
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

/* Dynamic section entries read at most in search of DT_DEBUG. */
#define DYNAMIC_MAX 512

/* The value of auxiliary vector entry @type of the target, or 0. */
static uint64_t auxv_value(struct rsp_target *t, uint64_t type)
{
	char *doc = NULL;
	size_t len = 0;
	uint64_t v = 0, pair[2];

	if (t->ops->xfer(t, "auxv", "", &doc, &len) < 0)
		ptrr_clear_error();
	for (size_t off = 0; doc && off + sizeof(pair) <= len;
	     off += sizeof(pair)) {
		memcpy(pair, doc + off, sizeof(pair));
		if (pair[0] == type) {
			v = pair[1];
			break;
		}
	}
	free(doc);
	return v;
}

/* The address of the program's DT_DEBUG value, where the dynamic linker
 * puts the address of its r_debug, found as lldb-server finds it: the
 * program headers at AT_PHDR, PT_PHDR for the load bias, PT_DYNAMIC, then
 * the entries of the dynamic section, all in the target's memory.  0 if
 * that memory cannot be read (a recording keeps only the writable pages
 * of a crash) or the program has none (a static one). */
static uint64_t dt_debug_slot(struct rsp_server *s)
{
	struct rsp_target *t = s->target;
	uint64_t at = auxv_value(t, AT_PHDR), num = auxv_value(t, AT_PHNUM);
	uint64_t bias = 0, dyn = 0, dyn_size = 0;
	bool have_phdr = false;
	Elf64_Phdr ph;
	Elf64_Dyn d;

	for (uint64_t i = 0; at && i < num; i++) {
		if (t->ops->read_memory(t, s->g_thread, at + i * sizeof(ph),
					(uint8_t *) &ph, sizeof(ph)) !=
		    sizeof(ph))
			return 0;
		if (ph.p_type == PT_PHDR) {
			bias = at - ph.p_vaddr;
			have_phdr = true;
		} else if (ph.p_type == PT_DYNAMIC) {
			dyn = ph.p_vaddr;
			dyn_size = ph.p_memsz;
		}
	}
	if (!have_phdr || !dyn)
		return 0;
	for (uint64_t i = 0; i < DYNAMIC_MAX && (i + 1) * sizeof(d) <= dyn_size;
	     i++) {
		uint64_t entry = bias + dyn + i * sizeof(d);

		if (t->ops->read_memory(t, s->g_thread, entry, (uint8_t *) &d,
					sizeof(d)) != sizeof(d) ||
		    d.d_tag == DT_NULL)
			return 0;
		if (d.d_tag == DT_DEBUG)
			return entry + offsetof(Elf64_Dyn, d_un);
	}
	return 0;
}

/* qShlibInfoAddr.  LLDB's POSIX dynamic loader reads the address of the
 * dynamic linker's r_debug at the address this gives (DYLDRendezvous),
 * reads r_debug there, then takes the libraries from the svr4 list:
 * without it, LLDB takes the svr4 list's main-lm as that address, which
 * is a link_map, and loads no library.  In a process: the program's
 * DT_DEBUG value, as lldb-server answers.  A recording has no copy of
 * that page: the replay target's page at RSP_LOADER_ADDR stands for it
 * (target_replay.h).  The empty reply if neither can be read. */
static void reply_debug_pointer(struct rsp_server *s)
{
	uint64_t at = dt_debug_slot(s);
	uint8_t word[8];

	if (!at && s->target->ops->read_memory(s->target, s->g_thread,
					       RSP_LOADER_ADDR, word,
					       sizeof(word)) == sizeof(word))
		at = RSP_LOADER_ADDR;
	if (at)
		rsp_reply_printf(s, "%" PRIx64, at);
}

bool rsp_lldb_query(struct rsp_server *s, const char *p)
{
	if (!strcmp(p, "qHostInfo")) {
		reply_arch(s);
		rsp_reply_str(s, "watchpoint_exceptions_received:after;");
	} else if (!strcmp(p, "qProcessInfo")) {
		rsp_reply_printf(s, "pid:%x;", rsp_process_id(s));
		reply_arch(s);
	} else if (!strcmp(p, "qShlibInfoAddr")) {
		reply_debug_pointer(s);
	} else {
		return false;
	}
	return true;
}
