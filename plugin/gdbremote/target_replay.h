/* plugin/gdbremote — the replay target (target.h) over a bundle: its
 * state, shared by target_replay.c, libs.c and monitor.c.
 */
#ifndef PTRR_RSP_TARGET_REPLAY_H
#define PTRR_RSP_TARGET_REPLAY_H

#include "history.h"
#include "replay.h"
#include "gdbremote/target.h"

/* Breakpoint addresses gdb inserted (Z0/Z1), all kinds together. */
#define RSP_MAX_BREAKPOINTS 256
/* Watchpoints gdb inserted (Z2, Z4). */
#define RSP_MAX_WATCHPOINTS 64

struct replay_target {
	struct rsp_target base;
	const char *bundle;		/* the directory as the user named it */
	struct hist_recording *rec;
	const struct hist_bundle *b;
	struct replay *rp;
	uint64_t bps[RSP_MAX_BREAKPOINTS];
	size_t nbps;
	/* Watchpoints gdb inserted (Z2, Z4: writes are what a replay sees). */
	struct replay_watch watches[RSP_MAX_WATCHPOINTS];
	enum rsp_break_type watch_type[RSP_MAX_WATCHPOINTS];
	size_t nwatches;
	/* Why the last watchpoint stop is not a proven write (pt info). */
	char watch_why[160];
	bool watch_known;	/* the watched bytes, where the move began */
	/* The last stop, if a watchpoint's: the write watches gdb checked
	 * there (those containing the address reported) whose value it
	 * found unreadable; a move from there passes over the stops gdb
	 * would go on from (replay_watch.unreadable). */
	struct {
		size_t thr;
		uint64_t position;
		size_t n;
		struct replay_watch w[RSP_MAX_WATCHPOINTS];
	} unread;
	uint64_t watch_passed;	/* stops passed over so, in all (pt info) */
	bool outside;		/* rsp_replay_target_outside_writes() */
	bool owns_rec;			/* false over a live session's */
	replay_present_fn present;	/* memory now, over a live session's */
	void *present_arg;
	struct rsp_unwind_doc {		/* the last unwind range made */
		struct replay *rp;
		size_t thr;
		uint64_t position;	/* made there; forgotten when the
					 * history grows */
		uint8_t *doc;
		size_t len;
	} unwind;
};

/* A replay target over recording @rec, which the caller keeps and may
 * grow (a live session's, hist_recording_new()); @name stands for the
 * bundle directory in listings.  Every thread at its end. */
int rsp_replay_target_wrap(struct hist_recording *rec, const char *name,
			   struct rsp_target **out);

/* Memory as it is now, for a replay target over a live session's
 * recording: read by @fn(@arg, ...) (replay_set_present). */
void rsp_replay_target_set_present(struct rsp_target *t,
				   replay_present_fn fn, void *arg);

/* Tells replay target @t that its recording grew: histories extended
 * (threads at their end move to the new end, the others stay) or threads
 * added (then every thread must be at its end). */
int rsp_replay_target_grown(struct rsp_target *t);

/* Runs (@run) or stops the background pass over the call segments of
 * replay target @t's histories (replay_prepare): a live session runs it
 * while the program is stopped. */
void rsp_replay_target_prepare(struct rsp_target *t, bool run);

/* Tells replay target @t that the program was changed from outside at
 * some stop (replay_set_outside_writes), for this replay and the ones it
 * makes when threads are added. */
void rsp_replay_target_outside_writes(struct rsp_target *t);

/* Puts every thread of replay target @t at the end of its history. */
int rsp_replay_target_present(struct rsp_target *t);

/* ---- The program and its libraries (libs.c) ---- */

/* The auxiliary vector gdb needs to place a PIE program (AT_ENTRY,
 * AT_PHDR ...), computed from the program's file; malloc'd in @out. */
int rsp_auxv(const struct hist_bundle *b, uint8_t **out, size_t *len);

/* The libraries-svr4 document of the modules of @b: each shared object's
 * load bias, dynamic section and link_map, and the program's link_map
 * (main-lm), read from the dynamic linker's list in the memory of target
 * @t where it can be read there, numbered otherwise; malloc'd. */
char *rsp_libraries_svr4(const struct hist_bundle *b, struct rsp_target *t);

/* LLDB finds the libraries from the dynamic linker's r_debug, whose
 * address it reads at the address qShlibInfoAddr gives (lldb_query.c):
 * in a process the program's DT_DEBUG entry, in a page a recording does
 * not keep (RELRO, read-only when recorded).  So the replay target
 * serves a page of its own there, in the kernel half of the address
 * space as PTRR_UNWIND_ADDR: a pointer to an r_debug (<link.h>) made
 * from the recording (the program's link_map, ld.so's base, consistent,
 * and no r_brk: a recording has no loader events). */
#define RSP_LOADER_ADDR 0xffffff7e00000000ull
#define RSP_LOADER_SIZE 0x1000ull

/* Bytes [@off, @off + @len) of that page of replay target @r into @buf:
 * the number of bytes there. */
size_t rsp_loader_read(struct replay_target *r, uint64_t off, uint8_t *buf,
		       size_t len);

/* The program's file as gdb should read it (a packed copy if the bundle
 * has one); malloc'd. */
char *rsp_exec_file(const struct hist_bundle *b);

/* ---- The files gdb may read (module_files.c) ---- */

/* Opens, for gdb's vFile:open, the module of bundle @b that @name names
 * (its recorded path or the path the bundle reads it at, resolved or
 * not), checked as the loader checks it; otherwise refuses.  An fd, or a
 * negative error saying why not. */
int rsp_bundle_open_file(const struct hist_bundle *b, const char *name);

/* ---- Monitor commands (monitor.c) ---- */

/* The replay target's monitor commands (target.h's monitor()). */
int rsp_replay_monitor(struct rsp_target *t, size_t thr, FILE *out,
		       char *cmd);

/* ---- The unwind range (unwind_range.c) ---- */

/* Bytes [@off, @off + @len) of the unwind range (unwind_abi.h) of thread
 * @thr of replay target @r into @buf: the number of bytes there.  gdb
 * reads the range in pieces, several times per stop: it is made once per
 * position (kept in r->unwind). */
size_t rsp_unwind_read(struct replay_target *r, size_t thr, uint64_t off,
		       uint8_t *buf, size_t len);

/* Frees the unwind range kept in @r. */
void rsp_unwind_forget(struct replay_target *r);

#endif
