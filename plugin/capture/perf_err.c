/* Why the perf backend's system calls fail, in words a user can act on;
 * see perf_pt.h.
 *
 * The rules behind the messages (kernel/events/core.c):
 *  - perf_event_open on another thread needs perf_event_paranoid <= 2 or
 *    CAP_PERFMON; Debian-style kernels add level 3, "no unprivileged
 *    perf at all", which is the usual EACCES;
 *  - the AUX and data pages are locked memory: each user may lock
 *    perf_event_mlock_kb per online CPU, then RLIMIT_MEMLOCK more; past
 *    that, without CAP_IPC_LOCK, mmap fails with EPERM;
 *  - intel_pt is exclusive: a CPU-wide PT event (perf record -a -e
 *    intel_pt//) and per-thread ones (GDB's record pt, perf record -e
 *    intel_pt// -p) cannot coexist, the loser gets EBUSY.
 */
#include <config.h>

#include "capture/perf_pt.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define CAP_BIT_SYS_ADMIN 21
#define CAP_BIT_IPC_LOCK 14
#define CAP_BIT_PERFMON 38

/* The integer in file @path, or @dflt if it cannot be read. */
static long long read_number(const char *path, long long dflt)
{
	FILE *f = fopen(path, "r");
	long long v;

	if (!f)
		return dflt;
	if (fscanf(f, "%lld", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/* This process's effective capabilities (CapEff of /proc/self/status). */
static uint64_t effective_caps(void)
{
	char line[256];
	uint64_t caps = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7))
			caps = strtoull(line + 7, NULL, 16);
	if (f)
		fclose(f);
	return caps;
}

void cap_perf_env_read(struct cap_perf_env *env)
{
	uint64_t caps = effective_caps();
	struct rlimit rl;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(env, 0, sizeof(*env));
	env->paranoid = (int) read_number(
		"/proc/sys/kernel/perf_event_paranoid", INT_MIN);
	env->mlock_kb = (uint64_t) read_number(
		"/proc/sys/kernel/perf_event_mlock_kb", 516);
	env->perfmon = (caps >> CAP_BIT_PERFMON & 1) ||
		       (caps >> CAP_BIT_SYS_ADMIN & 1);
	env->ipc_lock = caps >> CAP_BIT_IPC_LOCK & 1;
	env->memlock = UINT64_MAX;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		env->memlock = rl.rlim_cur;
	env->ncpus = cpus > 0 ? (unsigned) cpus : 1;
}

/* Writes @bytes as "4 MiB", "516 KiB", "100 bytes" or "unlimited". */
static const char *size_str(uint64_t bytes, char *buf, size_t size)
{
	if (bytes == UINT64_MAX)
		snprintf(buf, size, "unlimited");
	else if (bytes >= (1ull << 20) && !(bytes & ((1ull << 20) - 1)))
		snprintf(buf, size, "%" PRIu64 " MiB", bytes >> 20);
	else if (bytes >= 1024 && !(bytes & 1023))
		snprintf(buf, size, "%" PRIu64 " KiB", bytes >> 10);
	else
		snprintf(buf, size, "%" PRIu64 " bytes", bytes);
	return buf;
}

/* EACCES/EPERM from perf_event_open. */
static int denied(int errnum, const struct cap_perf_env *env)
{
	if (env->paranoid > 2 && !env->perfmon)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "perf_event_open: %s: "
				 "kernel.perf_event_paranoid is %d and ptrr "
				 "lacks CAP_PERFMON; run `sysctl "
				 "kernel.perf_event_paranoid=2` or give ptrr "
				 "CAP_PERFMON", strerror(errnum),
				 env->paranoid);
	return ptrr_fail(PTRR_ERR_UNSUPPORTED, "perf_event_open: %s although "
			 "kernel.perf_event_paranoid is %d%s: a security "
			 "module, seccomp or a container forbids perf events "
			 "here; run ptrr where they are allowed, or use "
			 "--backend=soft", strerror(errnum), env->paranoid,
			 env->perfmon ? " and ptrr has CAP_PERFMON" : "");
}

int cap_perf_open_error(int errnum, const struct cap_perf_env *env,
			uint32_t type, uint64_t config)
{
	switch (errnum) {
	case EACCES:
	case EPERM:
		return denied(errnum, env);
	case EBUSY:
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "perf_event_open: "
				 "intel_pt is busy: another Intel PT user holds "
				 "the CPU (usually `perf record -e intel_pt//` "
				 "or GDB's `record pt`); stop it, or use "
				 "--backend=soft");
	case ENOENT:
	case ENODEV:
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "perf_event_open: the "
				 "kernel has no PMU of type %u (%s), though "
				 "sysfs names it intel_pt: Intel PT is not "
				 "usable here; use --backend=soft", type,
				 strerror(errnum));
	case EINVAL:
	case EOPNOTSUPP:
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "perf_event_open: the "
				 "kernel refused intel_pt config 0x%" PRIx64
				 " (%s): this CPU lacks one of its options "
				 "(see caps/ of the PMU); use --backend=soft",
				 config, strerror(errnum));
	case ESRCH:
		return ptrr_fail(PTRR_ERR_IO, "perf_event_open: the thread "
				 "to trace is gone");
	default:
		return ptrr_fail(PTRR_ERR_IO, "perf_event_open(intel_pt): %s",
				 strerror(errnum));
	}
}

int cap_perf_mmap_error(int errnum, const struct cap_perf_env *env,
			uint64_t aux_size)
{
	char aux[32], lim[32], per[32];

	size_str(aux_size, aux, sizeof(aux));
	if (errnum != EPERM && errnum != ENOMEM)
		return ptrr_fail(PTRR_ERR_IO, "cannot map the %s AUX area: "
				 "%s", aux, strerror(errnum));
	return ptrr_fail(PTRR_ERR_NOMEM, "cannot map the %s AUX area: %s: "
			 "locked memory is limited to "
			 "kernel.perf_event_mlock_kb (%s) per CPU x %u CPUs, "
			 "then RLIMIT_MEMLOCK (%s)%s; use a smaller "
			 "--buffer-size or raise `ulimit -l`", aux,
			 strerror(errnum),
			 size_str(env->mlock_kb << 10, per, sizeof(per)),
			 env->ncpus, size_str(env->memlock, lim, sizeof(lim)),
			 env->ipc_lock ? " (ptrr has CAP_IPC_LOCK: memory "
					 "itself ran out)" : "");
}

int cap_perf_filter_error(int errnum, const char *filter)
{
	switch (errnum) {
	case ENOENT:
		return ptrr_fail(PTRR_ERR_USAGE, "--filter: the kernel cannot "
				 "find the file of '%s': %s", filter,
				 strerror(errnum));
	case EOPNOTSUPP:
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "--filter: this CPU "
				 "cannot trace '%s' (too many ranges, or IP "
				 "filtering is not supported): %s", filter,
				 strerror(errnum));
	default:
		return ptrr_fail(PTRR_ERR_USAGE, "--filter: the kernel refused "
				 "'%s': %s", filter, strerror(errnum));
	}
}
