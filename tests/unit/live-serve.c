/* Serves a live session of PROG on stdin/stdout with the gdb server
 * (plugin/gdbremote) and its live target, for tests/live-gdb.sh until
 * `ptrr serve -- PROG` does: gdb connects with `target remote | live-serve
 * PROG`.  The program's own output must not go to stdout. */
#include <config.h>

#include "gdbremote/live_target.h"
#include "gdbremote/server.h"
#include "error.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	struct rsp_server s = { 0 };
	struct rsp_target *t = NULL;
	int err;

	if (argc < 2) {
		fprintf(stderr, "usage: live-serve PROG [ARGS]\n");
		return 2;
	}
	err = rsp_live_target_open(&tsrc_soft, argv + 1, NULL, &t);
	if (err >= 0)
		err = rsp_server_init(&s, t);
	if (err >= 0)
		err = rsp_server_run(&s, 0, 1);
	if (err < 0)
		fprintf(stderr, "live-serve: %s\n", ptrr_errmsg(err));
	rsp_server_close(&s);
	return err < 0 ? 2 : 0;
}
