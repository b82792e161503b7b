/* plugin/qemu — what ptrr's two users of QEMU share: `ptrr record
 * --backend=qemu` (plugin/record_qemu.c) and the live QEMU session
 * (plugin/live/live_qemu.c).  Both run qemu-x86_64 with ptrr's plugin
 * and read the rings it writes (qemu_shm.h). */
#ifndef PTRR_QEMU_HOST_H
#define PTRR_QEMU_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "qemu/qemu_shm.h"

/* Searches @name in PATH (unless it has a '/') into @out (@n bytes). */
bool qhost_find_in_path(const char *name, char *out, size_t n);

/* qemu-x86_64: $PTRR_QEMU, else from PATH. */
bool qhost_find_qemu(char *out, size_t n);

/* Checks that @path is an x86-64 ELF file QEMU's x86-64 user mode runs
 * (PTRR_ERR_USAGE naming the fix if not). */
int qhost_check_elf(const char *path);

/* Finds qemu-x86_64 (into @qemu), program @arg (searched in PATH; its
 * real path into @prog) and ptrr's plugin (malloc'd *@plugin), and
 * checks the program is one QEMU runs: PTRR_ERR_USAGE naming the fix
 * if not.  Both buffers are PATH_MAX bytes. */
int qhost_check(const char *arg, char *qemu, char *prog, char **plugin);

/* Forks and runs QEMU as @argv says (@argv[0] its path), with address
 * randomization off unless @aslr, and the guest's core file (QEMU
 * writes it on a fatal signal) allowed as far as the limit goes (@core)
 * or not at all; the child's id in *@pid.  @who prefixes the message
 * if the exec fails. */
int qhost_spawn(char *const argv[], bool aslr, bool core, const char *who,
		pid_t *pid);

/* The executable PT_LOAD segments of ELF file @path within file bytes
 * [@off, @off + @size), page-aligned and cut to that range, into
 * @v[][0..1] (from, to); how many (0 if the file cannot be read).  QEMU
 * maps a guest's ELF file in one host mapping, segments and all; the
 * history's symbols place a file by the segment its mapping's offset
 * falls in, so each piece of code is a module of its own. */
#define QHOST_MAX_CODE 4
size_t qhost_code_segments(const char *path, uint64_t off, uint64_t size,
			   uint64_t v[QHOST_MAX_CODE][2]);

/* Creates, in directory @parent, a new shared directory for the plugin
 * (its path into @dir, @n bytes) with the zeroed header mapped at *@hdr
 * and the file "exe" holding @prog, the program's real path.  On error
 * @dir may name what was made (remove it with qhost_remove_shared()). */
int qhost_make_shared(const char *parent, const char *prog, char *dir,
		      size_t n, struct qshm_header **hdr);

/* Removes shared directory @dir (if not "") with its rings, and unmaps
 * *@hdr (if not NULL). */
void qhost_remove_shared(char *dir, struct qshm_header **hdr);

/* Ends the trace of thread @t, the thread stopped at @rip (@have_rip;
 * else where is not known) — in @t's emitter, rebound to @ring (a ring
 * whose buffer this process has mapped: a private copy, or the shared
 * one), which the plugin is not writing now.  If @rip is in the block
 * the thread had begun (a fault in it) or can follow it, the trace
 * shows it reaching @rip; else it ends at the block's start, claiming
 * none of it.  A thread not in a block (in the kernel, or not started)
 * is disabled where it is (@live: shown back at @rip first, as a live
 * stop does for a thread in a system call, cap_emit_stop()).  Nothing
 * for a thread not traced now.  The emitter is left off, unbound. */
int qhost_end_trace(struct qshm_thread *t, struct cap_ring *ring,
		    bool have_rip, uint64_t rip, bool live);

#endif
