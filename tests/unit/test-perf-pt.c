/* Unit tests of setting up the perf intel_pt backend
 * (plugin/capture/perf_pt.c, perf_filter.c, perf_err.c, pmu.c) against a
 * fake PMU in a sysfs tree and a fake kernel (fake_perf.c): the format
 * files and the config value composed from them, the CPU's identity, the
 * event's attributes and mappings, IP filters, and the message for each
 * way it can fail.  Reading the trace is tested in test-perf-aux.c.
 */
#include "capture/perf_pt.h"
#include "fake_perf.h"
#include "history.h"
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PT_TYPE FAKE_PT_TYPE

/* ------------------------------------------------------------------ */
/* Opening an event on the fake                                       */
/* ------------------------------------------------------------------ */

static char sysroot[64];	/* the fake sysfs root */
static struct fake_perf fake;
static struct cap_perf_ops fops;

/* Options for the fake tree: @mode, an AUX area of @aux bytes. */
static struct cap_perf_options options(enum cap_perf_mode mode, uint64_t aux)
{
	return fake_options(sysroot, mode, aux);
}

/* Writes file @rel of the fake PMU. */
static void pmu_file(const char *rel, const char *text)
{
	fake_pmu_file(sysroot, rel, text);
}

/* Removes file @rel of the fake PMU. */
static void pmu_remove(const char *rel)
{
	fake_pmu_remove(sysroot, rel);
}

/* ------------------------------------------------------------------ */
/* The PMU: sysfs, format files, the config value                     */
/* ------------------------------------------------------------------ */

/* Format strings: a word and bit ranges; anything else is refused. */
static void test_format_parsing(void)
{
	static const struct {
		const char *text;
		int word;
		uint64_t mask;
	} ok[] = {
		{ "config:0", 0, 0x1 },
		{ "config:13", 0, 0x2000 },
		{ "config:24-27", 0, 0xf000000 },
		{ "config1:0-3,8", 1, 0x10f },
		{ "config2:63", 2, 1ull << 63 },
		{ "config:0-63", 0, UINT64_MAX },
	};
	static const char *const bad[] = {
		"config3:1", "config:", "config:64", "config:5-2", "cfg:1",
		"config:1,", "config:1-", "12", "",
	};
	struct cap_pmu_format f;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(cap_pmu_parse_format(ok[i].text, &f) == 0);
		CHECK_EQ_U64(f.word, ok[i].word);
		CHECK_EQ_U64(f.mask, ok[i].mask);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(cap_pmu_parse_format(bad[i], &f) ==
		      PTRR_ERR_UNSUPPORTED);
}

/* The type, terms set into their bits (spread over split ranges), caps
 * in hex, and the missing PMU. */
static void test_pmu(void)
{
	struct cap_pmu pmu;
	struct cap_pmu_config cfg = { { 0 } };
	char dir[PATH_MAX], want[PATH_MAX + 100];
	uint64_t v;

	CHECK(cap_pmu_open(&pmu, sysroot) == 0);
	CHECK_EQ_U64(pmu.type, PT_TYPE);
	CHECK(cap_pmu_set(&pmu, "psb_period", 3, &cfg) == 0);
	CHECK_EQ_U64(cfg.word[0], 3ull << 24);
	CHECK(cap_pmu_set(&pmu, "psb_period", 16, &cfg) == PTRR_ERR_USAGE);
	CHECK(cap_pmu_set(&pmu, "no_such", 1, &cfg) == PTRR_ERR_NOTFOUND);
	pmu_file("format/split", "config1:0-1,4-5\n");
	CHECK(cap_pmu_set(&pmu, "split", 0xb, &cfg) == 0);
	CHECK_EQ_U64(cfg.word[1], 0x23);
	pmu_remove("format/split");
	CHECK(cap_pmu_cap(&pmu, "psb_periods", &v) == 0);
	CHECK_EQ_U64(v, 0x3f);
	CHECK(cap_pmu_cap(&pmu, "no_such", &v) == PTRR_ERR_NOTFOUND);

	/* The environment variable is the root when none is given. */
	setenv(CAP_PMU_SYSFS_ENV, sysroot, 1);
	CHECK(cap_pmu_probe(NULL, dir, sizeof(dir)));
	unsetenv(CAP_PMU_SYSFS_ENV);
	CHECK(!cap_pmu_probe("/nonexistent", dir, sizeof(dir)));
	CHECK(cap_pmu_open(&pmu, "/nonexistent") == PTRR_ERR_UNSUPPORTED);
	snprintf(want, sizeof(want), "intel_pt PMU not found (/nonexistent"
		 "%s): this CPU or VM has no Intel PT", CAP_PMU_SUBDIR);
	CHECK(!strcmp(ptrr_errmsg(PTRR_ERR_UNSUPPORTED), want));
}

/* The config value ptrr asks for: pt, branch, psb_period=1 (4 KiB) or
 * the period asked for, noretcomp and tsc on request; the PSB period falls back
 * to what the caps allow. */
static void test_config(void)
{
	struct cap_perf_options o = options(CAP_PERF_SNAPSHOT, 8192);
	struct cap_pmu pmu;
	struct cap_pmu_config cfg;
	uint32_t psb;

	CHECK(cap_pmu_open(&pmu, sysroot) == 0);
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == 0);
	CHECK_EQ_U64(cfg.word[0], 0x1002001);	/* pt | branch | psb 1 */
	CHECK_EQ_U64(cfg.word[1] | cfg.word[2], 0);
	CHECK_EQ_U64(psb, 4096);
	o.ret_compression = false;
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == 0);
	CHECK_EQ_U64(cfg.word[0], 0x1002801);	/* ... | noretcomp */
	o.tsc = true;				/* --tsc: config:10 */
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == 0);
	CHECK_EQ_U64(cfg.word[0], 0x1002c01);
	o.tsc = false;

	pmu_file("caps/psb_periods", "3c\n");	/* 0 and 2..5: 0 */
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == 0);
	CHECK_EQ_U64(cfg.word[0], 0x2801);
	CHECK_EQ_U64(psb, 2048);
	pmu_file("caps/psb_cyc", "0\n");	/* fixed period */
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == 0);
	CHECK_EQ_U64(cfg.word[0], 0x2801);
	CHECK_EQ_U64(psb, 2048);
	pmu_file("caps/psb_cyc", "1\n");
	pmu_file("caps/psb_periods", "3f\n");

	o.psb_period = 16384;			/* --psb-period: N = 3 */
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == 0);
	CHECK_EQ_U64(cfg.word[0], 0x3002801);
	CHECK_EQ_U64(psb, 16384);
	o.psb_period = 64u << 20;		/* N = 15, the CPU has 0..5 */
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == 0);
	CHECK_EQ_U64(cfg.word[0], 0x5002801);
	CHECK_EQ_U64(psb, 65536);
	o.psb_period = 2048;			/* N = 0 */
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == 0);
	CHECK_EQ_U64(cfg.word[0], 0x2801);
	CHECK_EQ_U64(psb, 2048);
	o.psb_period = 0;

	pmu_remove("format/noretcomp");		/* cannot turn it off */
	CHECK(cap_perf_config(&pmu, &o, &cfg, &psb) == PTRR_ERR_NOTFOUND);
	pmu_file("format/noretcomp", "config:11\n");
}

/* The CPU's identity from a cpuinfo file. */
static void test_cpuinfo(void)
{
	char path[128];
	struct hist_cpu cpu;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpuinfo", sysroot);
	f = fopen(path, "w");
	fputs("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
	      "model\t\t: 140\nmodel name\t: 11th Gen Intel(R) Core(TM)\n"
	      "stepping\t: 1\n\nprocessor\t: 1\nvendor_id\t: Other\n", f);
	fclose(f);
	CHECK(cap_cpu_identify(path, &cpu) == 0);
	CHECK(!strcmp(cpu.vendor, "GenuineIntel"));
	CHECK_EQ_U64(cpu.family, 6);
	CHECK_EQ_U64(cpu.model, 140);
	CHECK_EQ_U64(cpu.stepping, 1);
	f = fopen(path, "w");
	fputs("processor\t: 0\nvendor_id\t: GenuineIntel\n", f);
	fclose(f);
	CHECK(cap_cpu_identify(path, &cpu) == PTRR_ERR_IO);
	CHECK(cap_cpu_identify(NULL, &cpu) == 0);	/* this machine's */
}

/* ------------------------------------------------------------------ */
/* Error messages                                                     */
/* ------------------------------------------------------------------ */

static const struct cap_perf_env locked_down = {
	.paranoid = 3, .perfmon = false, .ipc_lock = false,
	.memlock = 8u << 20, .mlock_kb = 516, .ncpus = 2,
};

/* Checks that the last failure's message is @want. */
static void check_msg(int err, const char *want)
{
	const char *got = ptrr_errmsg(err);

	if (strcmp(got, want)) {
		fprintf(stderr, "message:  %s\nexpected: %s\n", got, want);
		CHECK(!"the message is the expected one");
	}
}

/* Checks that the last failure's message contains @part. */
static void check_msg_has(int err, const char *part)
{
	const char *got = ptrr_errmsg(err);

	if (!strstr(got, part)) {
		fprintf(stderr, "message: %s\nlacks:   %s\n", got, part);
		CHECK(!"the message has the expected part");
	}
}

/* Each errno of perf_event_open and of the AUX mmap, explained. */
static void test_error_messages(void)
{
	struct cap_perf_env env = locked_down;
	int err;

	err = cap_perf_open_error(EACCES, &env, 8, 0x1002001);
	check_msg(err, "perf_event_open: Permission denied: "
		  "kernel.perf_event_paranoid is 3 and ptrr lacks CAP_PERFMON; "
		  "run `sysctl kernel.perf_event_paranoid=2` or give ptrr "
		  "CAP_PERFMON");
	err = cap_perf_open_error(EPERM, &env, 8, 0x1002001);
	check_msg_has(err, "kernel.perf_event_paranoid is 3 and ptrr lacks "
		      "CAP_PERFMON");
	env.paranoid = 2;
	err = cap_perf_open_error(EACCES, &env, 8, 0x1002001);
	check_msg(err, "perf_event_open: Permission denied although "
		  "kernel.perf_event_paranoid is 2: a security module, seccomp "
		  "or a container forbids perf events here; run ptrr where "
		  "they are allowed, or use --backend=soft");
	env.paranoid = 3;
	env.perfmon = true;
	err = cap_perf_open_error(EACCES, &env, 8, 0x1002001);
	check_msg_has(err, "is 3 and ptrr has CAP_PERFMON: a security");
	err = cap_perf_open_error(EBUSY, &env, 8, 0x1002001);
	check_msg(err, "perf_event_open: intel_pt is busy: another Intel PT "
		  "user holds the CPU (usually `perf record -e intel_pt//` or "
		  "GDB's `record pt`); stop it, or use --backend=soft");
	err = cap_perf_open_error(ENOENT, &env, 8, 0x1002001);
	check_msg_has(err, "no PMU of type 8");
	err = cap_perf_open_error(EINVAL, &env, 8, 0x1002001);
	check_msg_has(err, "refused intel_pt config 0x1002001 (Invalid "
		      "argument)");

	env = locked_down;
	err = cap_perf_mmap_error(EPERM, &env, 4u << 20);
	CHECK(err == PTRR_ERR_NOMEM);
	check_msg(err, "cannot map the 4 MiB AUX area: Operation not "
		  "permitted: locked memory is limited to "
		  "kernel.perf_event_mlock_kb (516 KiB) per CPU x 2 CPUs, then "
		  "RLIMIT_MEMLOCK (8 MiB); use a smaller --buffer-size or "
		  "raise `ulimit -l`");
	env.memlock = UINT64_MAX;
	err = cap_perf_mmap_error(ENOMEM, &env, 64u << 10);
	check_msg_has(err, "the 64 KiB AUX area: Cannot allocate memory");
	check_msg_has(err, "RLIMIT_MEMLOCK (unlimited)");
}

/* The same failures through cap_perf_open on the fake: the message, and
 * nothing left open or mapped. */
static void test_open_failures(void)
{
	struct cap_perf_options o = options(CAP_PERF_FULL, 8192);
	struct cap_perf p;
	int err;

	fake_perf_init(&fake, PT_TYPE);
	fake_perf_ops(&fake, &fops);
	fake.open_errno = EBUSY;
	err = cap_perf_open(&p, 4321, &o, &fops);
	check_msg_has(err, "intel_pt is busy");
	CHECK_EQ_U64(fake.opens, 1);

	fake_perf_init(&fake, PT_TYPE);
	fake.open_errno = EACCES;
	err = cap_perf_open(&p, 4321, &o, &fops);
	check_msg_has(err, "perf_event_open: Permission denied");
	check_msg_has(err, "kernel.perf_event_paranoid is");

	fake_perf_init(&fake, PT_TYPE + 1);	/* sysfs and kernel differ */
	err = cap_perf_open(&p, 4321, &o, &fops);
	check_msg_has(err, "no PMU of type 8");

	fake_perf_init(&fake, PT_TYPE);
	fake.aux_mmap_errno = EPERM;
	err = cap_perf_open(&p, 4321, &o, &fops);
	CHECK(err == PTRR_ERR_NOMEM);
	check_msg_has(err, "cannot map the 8 KiB AUX area: Operation not "
		      "permitted: locked memory is limited to "
		      "kernel.perf_event_mlock_kb (");
	check_msg_has(err, "use a smaller --buffer-size or raise `ulimit -l`");
	CHECK_EQ_U64(fake.closes, 1);
	CHECK_EQ_U64(fake.unmaps, 1);

	fake_perf_init(&fake, PT_TYPE);
	o.sysfs_root = "/nonexistent";
	err = cap_perf_open(&p, 4321, &o, &fops);
	CHECK(err == PTRR_ERR_UNSUPPORTED);
	check_msg_has(err, "this CPU or VM has no Intel PT");
	CHECK_EQ_U64(fake.opens, 0);
}

/* ------------------------------------------------------------------ */
/* IP filters                                                         */
/* ------------------------------------------------------------------ */

/* --filter=START[/SIZE][@FILE] and the kernel's filter string. */
static void test_filter_strings(void)
{
	static const char *const bad[] = {
		"", "xyz", "0x10/", "0x10/abc", "-5", "0x10@", "1/2/3", "0x10 ",
	};
	struct cap_perf_filter f[2];
	char buf[256];

	CHECK(cap_perf_parse_filter("0x1000/0x200@/bin/prog", &f[0]) == 0);
	CHECK_EQ_U64(f[0].start, 0x1000);
	CHECK_EQ_U64(f[0].size, 0x200);
	CHECK(f[0].in_file && !strcmp(f[0].file, "/bin/prog"));
	CHECK(cap_perf_filter_string(f, 1, buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, "filter 0x1000/0x200@/bin/prog"));
	CHECK(cap_perf_parse_filter("4096/16@lib.so", &f[1]) == 0);
	CHECK(cap_perf_filter_string(f, 2, buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, "filter 0x1000/0x200@/bin/prog,"
		      "filter 0x1000/0x10@lib.so"));
	CHECK(cap_perf_filter_string(f, 2, buf, 40) == PTRR_ERR_USAGE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(cap_perf_parse_filter(bad[i], &f[0]) == PTRR_ERR_USAGE);

	CHECK(cap_perf_parse_filter("0x1000@/bin/prog", &f[0]) == 0);
	CHECK(cap_perf_filter_string(f, 1, buf, sizeof(buf)) ==
	      PTRR_ERR_USAGE);
	check_msg_has(PTRR_ERR_USAGE, "no SIZE");
	CHECK(cap_perf_parse_filter("1/1@/a,b", &f[0]) == 0);
	CHECK(cap_perf_filter_string(f, 1, buf, sizeof(buf)) ==
	      PTRR_ERR_USAGE);
	CHECK(cap_perf_parse_filter("0x401234/0x10", &f[0]) == 0);
	CHECK(!f[0].in_file);
	CHECK(cap_perf_filter_string(f, 1, buf, sizeof(buf)) ==
	      PTRR_ERR_USAGE);
}

/* A run-time address becomes an offset in the file mapped there. */
static void test_filter_resolve(void)
{
	struct cap_map maps[] = {
		{ 0x400000, 0x401000, 0, true, false, false, "/bin/p" },
		{ 0x401000, 0x403000, 0x1000, true, false, true, "/bin/p" },
		{ 0x7ff000, 0x800000, 0, true, true, false, "[stack]" },
	};
	struct cap_perf_filter f;

	CHECK(cap_perf_parse_filter("0x401234/0x10", &f) == 0);
	CHECK(cap_perf_filter_resolve(&f, maps, 3) == 0);
	CHECK_EQ_U64(f.start, 0x1234);
	CHECK(f.in_file && !strcmp(f.file, "/bin/p"));
	CHECK(cap_perf_parse_filter("0x7ff010/0x10", &f) == 0);
	CHECK(cap_perf_filter_resolve(&f, maps, 3) == PTRR_ERR_USAGE);
	CHECK(cap_perf_parse_filter("0x10/0x10", &f) == 0);
	CHECK(cap_perf_filter_resolve(&f, maps, 3) == PTRR_ERR_USAGE);
}

/* The filters reach the kernel with PERF_EVENT_IOC_SET_FILTER; the CPU's
 * number of ranges and IP filtering support are checked first. */
static void test_filter_ioctl(void)
{
	struct cap_perf_options o = options(CAP_PERF_SNAPSHOT, 8192);
	struct cap_perf p;

	o.nfilters = 2;
	cap_perf_parse_filter("0x1000/0x200@/bin/prog", &o.filters[0]);
	cap_perf_parse_filter("0x0/0x10@/lib/x.so", &o.filters[1]);
	CHECK(fake_perf_start(&fake, &fops, &p, &o) == 0);
	CHECK(!strcmp(fake.filter, "filter 0x1000/0x200@/bin/prog,"
		      "filter 0x0/0x10@/lib/x.so"));
	CHECK(fake_perf_stop(&fake, &p));

	fake_perf_init(&fake, PT_TYPE);
	fake.filter_errno = ENOENT;
	CHECK(cap_perf_open(&p, 1, &o, &fops) == PTRR_ERR_USAGE);
	check_msg_has(PTRR_ERR_USAGE, "cannot find the file");
	o.nfilters = 3;
	o.filters[2] = o.filters[1];
	CHECK(cap_perf_open(&p, 1, &o, &fops) == PTRR_ERR_UNSUPPORTED);
	check_msg_has(PTRR_ERR_UNSUPPORTED, "3 ranges given, this CPU has 2");
	pmu_file("caps/ip_filtering", "0\n");
	o.nfilters = 1;
	CHECK(cap_perf_open(&p, 1, &o, &fops) == PTRR_ERR_UNSUPPORTED);
	check_msg_has(PTRR_ERR_UNSUPPORTED, "no Intel PT IP filtering");
	pmu_file("caps/ip_filtering", "1\n");
}

/* ------------------------------------------------------------------ */
/* The event and its mappings                                         */
/* ------------------------------------------------------------------ */

/* perf_event_open's arguments, and the two mappings in each mode. */
static void test_open_event(void)
{
	struct cap_perf_options o = options(CAP_PERF_SNAPSHOT, 5000);
	long page = sysconf(_SC_PAGESIZE);
	struct cap_perf p;

	CHECK(fake_perf_start(&fake, &fops, &p, &o) == 0);
	CHECK_EQ_U64(fake.attr.size, sizeof(struct perf_event_attr));
	CHECK_EQ_U64(fake.attr.type, PT_TYPE);
	CHECK_EQ_U64(fake.attr.config, 0x1002001);
	CHECK(fake.attr.exclude_kernel && fake.attr.exclude_hv);
	CHECK(fake.attr.disabled && !fake.attr.exclude_user);
	CHECK(!fake.attr.inherit && !fake.attr.enable_on_exec);
	CHECK_EQ_U64(fake.pid, 4321);
	CHECK_EQ_U64((uint64_t) (int64_t) fake.cpu, (uint64_t) -1);
	CHECK_EQ_U64((uint64_t) (int64_t) fake.group_fd, (uint64_t) -1);
	CHECK_EQ_U64(fake.flags, PERF_FLAG_FD_CLOEXEC);
	CHECK_EQ_U64(fake.base_prot, PROT_READ | PROT_WRITE);
	CHECK_EQ_U64(fake.aux_prot, PROT_READ);	/* overwrite mode */
	CHECK_EQ_U64(fake.aux_len, 2 * (uint64_t) page);	/* 5000 up */
	CHECK_EQ_U64(fake.attr.aux_watermark, 0);
	CHECK_EQ_U64(fake.enables, 1);
	CHECK_EQ_U64(p.psb_bytes, 4096);
	CHECK(fake_perf_stop(&fake, &p));

	o = options(CAP_PERF_FULL, 9 * (uint64_t) page);
	CHECK(fake_perf_start(&fake, &fops, &p, &o) == 0);
	CHECK_EQ_U64(fake.aux_prot, PROT_READ | PROT_WRITE);
	CHECK_EQ_U64(fake.aux_len, 16 * (uint64_t) page);
	CHECK_EQ_U64(fake.attr.aux_watermark, 4 * (uint64_t) page);
	CHECK_EQ_U64(fake.pc->aux_offset, fake.base_len);
	CHECK(fake_perf_stop(&fake, &p));
}

int main(void)
{
	fake_pmu_make(sysroot, sizeof(sysroot));
	RUN(test_format_parsing);
	RUN(test_pmu);
	RUN(test_config);
	RUN(test_cpuinfo);
	RUN(test_error_messages);
	RUN(test_open_failures);
	RUN(test_filter_strings);
	RUN(test_filter_resolve);
	RUN(test_filter_ioctl);
	RUN(test_open_event);
	fake_pmu_destroy(sysroot);
	return test_summary();
}
