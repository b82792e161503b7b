/* plugin/gdbremote — the live target: a process started and controlled
 * through a trace source's live session (source.h), behind the server's
 * target interface (target.h). */
#ifndef PTRR_RSP_LIVE_TARGET_H
#define PTRR_RSP_LIVE_TARGET_H

#include "gdbremote/target.h"
#include "live/live.h"
#include "source.h"

/* Launches argv[0] stopped at its first instruction through the live
 * session of trace source @src (@opt as live_launch()'s) as a target,
 * which launches it again the same way when gdb runs it again (its
 * restart()).  @argv NULL: no process until gdb runs a program (vRun)
 * or attaches to one (the target's attach()), as gdbserver --multi.
 * A one-line error otherwise. */
int rsp_live_target_open(const struct tsrc_ops *src, char *const argv[],
			 const struct live_options *opt,
			 struct rsp_target **out);

/* Traces every thread of live target @t from now on, and each later run
 * from its first instruction (--record-from-start). */
int rsp_live_target_record_from_start(struct rsp_target *t);

/* What becomes of the process when the session ends with it still
 * there (gdb gone, or the server closing): --on-disconnect. */
enum rsp_on_disconnect {
	RSP_DISCONNECT_KILL,	/* killed: gdbserver's way with a program
				 * it started (the default) */
	RSP_DISCONNECT_DETACH,	/* let go to run on untraced */
	RSP_DISCONNECT_STOP,	/* let go stopped (state T), for a
				 * debugger to attach */
};

/* Sets what live target @t does with its process when it is closed. */
void rsp_live_target_on_disconnect(struct rsp_target *t,
				   enum rsp_on_disconnect how);

/* Opens, for gdb's vFile:open, file @name if, resolved, it is a file
 * process @pid has mapped executable (the program, its loader and its
 * libraries) or one of the files of /proc/@pid gdb's gcore reads;
 * otherwise refuses (live_files.c).  An fd, or a negative
 * error saying why not. */
int rsp_process_open_file(pid_t pid, const char *name);

/* The same for the mappings @maps[0..n) of a process whose /proc is not
 * its own (an emulator's), without /proc's files. */
struct cap_map;
int rsp_open_mapped_file(const struct cap_map *maps, size_t n,
			 const char *name);

#endif
