/* plugin/gdbremote — the live target: a process started and controlled
 * through plugin/live, behind the server's target interface (target.h). */
#ifndef PTRR_RSP_LIVE_TARGET_H
#define PTRR_RSP_LIVE_TARGET_H

#include "gdbremote/target.h"
#include "live/live.h"

/* Launches argv[0] stopped at its first instruction (@opt as
 * live_launch()'s) as a target.  A one-line error otherwise. */
int rsp_live_target_open(char *const argv[], const struct live_options *opt,
			 struct rsp_target **out);

/* Starts tracing every thread of live target @t now (`pt start`). */
int rsp_live_target_trace(struct rsp_target *t);

#endif
