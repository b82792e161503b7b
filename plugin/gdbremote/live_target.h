/* plugin/gdbremote — the live target: a process started and controlled
 * through plugin/live, behind the server's target interface (target.h). */
#ifndef PTRR_RSP_LIVE_TARGET_H
#define PTRR_RSP_LIVE_TARGET_H

#include "gdbremote/target.h"
#include "live/live.h"

/* Launches argv[0] stopped at its first instruction (@opt as
 * live_launch()'s) as a target, which launches it again the same way
 * when gdb runs it again (its restart()).  A one-line error otherwise. */
int rsp_live_target_open(char *const argv[], const struct live_options *opt,
			 struct rsp_target **out);

/* Traces every thread of live target @t from now on, and each later run
 * from its first instruction (--record-from-start). */
int rsp_live_target_record_from_start(struct rsp_target *t);

/* Opens, for gdb's vFile:open, file @name if, resolved, it is a file
 * process @pid has mapped executable (the program, its loader and its
 * libraries); otherwise refuses (live_files.c).  An fd, or a negative
 * error saying why not. */
int rsp_process_open_file(pid_t pid, const char *name);

#endif
