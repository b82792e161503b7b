/* The processes of `ptrr serve` (server.h): one, or under --multi with
 * gdb's multiprocess extensions several at once, as gdbserver --multi
 * debugs them (gdb's add-inferior, then run in each).  Each has its own
 * target (its own trace, history, breakpoints) and gdb's record pt
 * state; the selected one's live in the server's own fields, which
 * every request uses, so that one process at a time reads as before. */
#include <config.h>

#include "gdbremote/server.h"

#include <stdlib.h>
#include <string.h>

struct rsp_target *rsp_proc_target(struct rsp_server *s, size_t i)
{
	return i == s->cur ? s->target : s->procs[i].target;
}

int rsp_proc_pid(struct rsp_server *s, size_t i)
{
	struct rsp_target *t = rsp_proc_target(s, i);

	return t->ops->nthreads(t) ? t->ops->tid(t, 0) : 0;
}

bool rsp_proc_alive(struct rsp_server *s, size_t i)
{
	struct rsp_target *t = rsp_proc_target(s, i);
	struct rsp_stop st;

	if (i == s->cur && s->no_process)
		return false;
	t->ops->status(t, SIZE_MAX, &st);
	return st.why != RSP_STOP_EXITED && st.why != RSP_STOP_KILLED;
}

size_t rsp_proc_nalive(struct rsp_server *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nprocs; i++)
		n += rsp_proc_alive(s, i);
	return n;
}

size_t rsp_proc_find(struct rsp_server *s, int pid)
{
	for (size_t i = 0; pid > 0 && i < s->nprocs; i++)
		if (rsp_proc_pid(s, i) == pid)
			return i;
	return SIZE_MAX;
}

void rsp_proc_select(struct rsp_server *s, size_t i)
{
	struct rsp_process *p;

	if (i == s->cur || i >= s->nprocs)
		return;
	s->procs[s->cur] = (struct rsp_process) {
		.target = s->target, .btrace = s->btrace,
		.nbtrace = s->nbtrace, .g_thread = s->g_thread,
	};
	p = &s->procs[i];
	s->target = p->target;
	s->btrace = p->btrace;
	s->nbtrace = p->nbtrace;
	s->g_thread = p->g_thread;
	s->cur = i;
}

int rsp_proc_add(struct rsp_server *s)
{
	struct rsp_process *v;
	struct rsp_target *t;
	int err;

	if (!s->new_target)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "this server debugs "
				 "one process at a time");
	v = realloc(s->procs, (s->nprocs + 1) * sizeof(*v));
	if (!v)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	s->procs = v;
	err = s->new_target(s->new_target_arg, &t);
	if (err < 0)
		return err;
	t->interrupted = s->target->interrupted;
	t->interrupted_arg = s->target->interrupted_arg;
	s->procs[s->nprocs++] = (struct rsp_process) { .target = t };
	rsp_proc_select(s, s->nprocs - 1);
	return 0;
}

void rsp_proc_drop(struct rsp_server *s)
{
	size_t gone = s->cur;

	if (s->nprocs < 2)
		return;
	s->target->ops->close(s->target);
	free(s->btrace);
	memmove(&s->procs[gone], &s->procs[gone + 1],
		(s->nprocs - gone - 1) * sizeof(*s->procs));
	s->nprocs--;
	/* procs[0] was not the selected one: its entry is current. */
	s->target = s->procs[0].target;
	s->btrace = s->procs[0].btrace;
	s->nbtrace = s->procs[0].nbtrace;
	s->g_thread = s->procs[0].g_thread;
	s->cur = 0;
}

void rsp_proc_close_all(struct rsp_server *s)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		if (i == s->cur)
			continue;
		s->procs[i].target->ops->close(s->procs[i].target);
		free(s->procs[i].btrace);
	}
	if (s->target)
		s->target->ops->close(s->target);
	free(s->btrace);
	free(s->procs);
	s->procs = NULL;
	s->nprocs = 0;
	s->target = NULL;
	s->btrace = NULL;
}
