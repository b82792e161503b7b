/* `ptrr export --perf=FILE BUNDLE`: a ptrr recording as a perf.data that
 * Linux perf reads (`perf script --itrace=i1ie`, `perf report`), so that
 * perf's own Intel PT decoder — written independently of libipt — can
 * decode the same trace.
 *
 * The file is what `perf record -e intel_pt//u --per-thread` writes, as
 * far as decoding needs it (plugin/perf_data.h): one intel_pt event
 * (attr.type PERF_EXPORT_PMU_TYPE, with the trace's configuration in
 * attr.config), PERF_RECORD_AUXTRACE_INFO, a COMM per thread, an MMAP
 * per module, one PERF_RECORD_AUXTRACE per thread with its bytes, an
 * EXIT per thread that ended, and the features BUILD_ID, ARCH, NRCPUS,
 * CPUID and PMU_MAPPINGS.  The records carry no time: perf decodes
 * each thread's trace on its own ("timeless").
 *
 * perf reads code only from files: modules point at the files ptrr
 * decodes with (the bundle's packed copies if it has them), and each
 * copy of anonymous code (the vDSO, JIT code) is written next to FILE as
 * FILE.vdso or FILE.code-ADDR.  Everything is written to temporary names
 * and renamed at the end; a failed export leaves nothing.
 */
#include <config.h>

#include "export_perf.h"
#include "history.h"
#include "perf_data.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The event's id, and the sample_type every record's trailer follows. */
#define EXPORT_ID 1
#define EXPORT_SAMPLE_TYPE \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* The sample_id trailer of EXPORT_SAMPLE_TYPE. */
struct sample_id {
	uint32_t pid, tid;
	uint32_t cpu, reserved;
	uint64_t id;
};

/* One file being written: FILE itself or a side file. */
struct out_file {
	char *path;		/* the name it gets */
	char *tmp;		/* the name it is written under */
};

/* One export under way. */
struct pexport {
	const struct hist_bundle *b;
	uint32_t pid;		/* the process: its first thread */
	FILE *f;		/* FILE's temporary */
	int err;		/* the first write error */
	uint8_t *rec;		/* the record being built */
	size_t rec_len, rec_cap;
	struct out_file *files;	/* [0] is FILE, then the side files */
	size_t nfiles;
	char **code_paths;	/* per code blob: its side file, or NULL */
};

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/* Creates a temporary sibling of @path, registered for rename or
 * removal; returns its fd. */
static int open_out(struct pexport *x, const char *path)
{
	struct out_file *a = realloc(x->files, (x->nfiles + 1) * sizeof(*a));
	struct out_file *o;
	int fd;

	if (!a)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	x->files = a;
	o = &a[x->nfiles];
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.tmp-XXXXXX", path) < 0) {
		free(o->path);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	fd = mkstemp(o->tmp);
	if (fd >= 0) {
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	if (fd < 0) {
		int e = errno;

		free(o->path);
		free(o->tmp);
		return ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s", path,
				 strerror(e));
	}
	x->nfiles++;
	return fd;
}

/* Renames every temporary to its name (@keep) or removes them all. */
static int close_outs(struct pexport *x, bool keep)
{
	int err = 0;

	for (size_t i = 0; i < x->nfiles; i++) {
		struct out_file *o = &x->files[i];

		if (keep && !err && rename(o->tmp, o->path) < 0)
			err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s",
					o->path, strerror(errno));
		if (!keep || err)
			unlink(o->tmp);
		free(o->tmp);
		free(o->path);
	}
	free(x->files);
	x->files = NULL;
	x->nfiles = 0;
	return err;
}

/* Writes @size bytes at @data to fd @fd (a side file), then closes it. */
static int write_side(int fd, const char *path, const void *data,
		      uint64_t size)
{
	int err = 0;

	for (uint64_t done = 0; !err && done < size;) {
		ssize_t n = write(fd, (const char *)data + done, size - done);

		if (n < 0 && errno != EINTR)
			err = errno;
		done += n > 0 ? (uint64_t)n : 0;
	}
	if (close(fd) < 0 && !err)
		err = errno;
	return err ? ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s", path,
			       strerror(err)) : 0;
}

/* Writes each copy of anonymous code as a file perf can map: FILE.vdso
 * for the vDSO, FILE.code-ADDR for the others. */
static int export_code_files(struct pexport *x, const char *file)
{
	const struct hist_bundle *b = x->b;
	int err = 0;

	x->code_paths = calloc(b->ncode + 1, sizeof(char *));
	if (!x->code_paths)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; !err && i < b->ncode; i++) {
		const struct hist_blob *c = &b->code[i];
		char *path, *abs;
		int fd;

		if ((!strcmp(c->name, "[vdso]") ?
		     asprintf(&path, "%s.vdso", file) :
		     asprintf(&path, "%s.code-%" PRIx64, file, c->start)) < 0)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		fd = open_out(x, path);
		if (fd < 0)
			err = fd;
		else
			err = write_side(fd, path, c->data, c->size);
		/* perf needs the absolute path; the file exists now. */
		abs = err ? NULL : realpath(x->files[x->nfiles - 1].tmp, NULL);
		if (abs) {
			char *slash = strrchr(abs, '/');
			const char *base = strrchr(path, '/');

			slash[1] = 0;
			if (asprintf(&x->code_paths[i], "%s%s", abs,
				     base ? base + 1 : path) < 0)
				x->code_paths[i] = NULL;
			free(abs);
		}
		if (!err && !x->code_paths[i])
			err = ptrr_fail(PTRR_ERR_IO, "cannot resolve %s: %s",
					path, strerror(errno));
		free(path);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/* Appends @size bytes at @data to the file; the first failure sticks. */
static void put(struct pexport *x, const void *data, size_t size)
{
	if (!x->err && size && fwrite(data, 1, size, x->f) != size)
		x->err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s",
				   x->files[0].path, strerror(errno));
}

/* Appends @n zero bytes to the file. */
static void put_zeros(struct pexport *x, size_t n)
{
	static const uint8_t zeros[64];

	while (n) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		put(x, zeros, k);
		n -= k;
	}
}

/* Appends @size bytes to the record being built. */
static void rec_add(struct pexport *x, const void *data, size_t size)
{
	if (x->err)
		return;
	if (x->rec_len + size > x->rec_cap) {
		size_t cap = (x->rec_len + size) * 2;
		uint8_t *p = realloc(x->rec, cap);

		if (!p) {
			x->err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
			return;
		}
		x->rec = p;
		x->rec_cap = cap;
	}
	memcpy(x->rec + x->rec_len, data, size);
	x->rec_len += size;
}

/* Starts a record of @type with header.misc @misc. */
static void rec_begin(struct pexport *x, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	x->rec_len = 0;
	rec_add(x, &h, sizeof(h));
}

/* Appends string @s, NUL-terminated and padded with NULs to @align. */
static void rec_add_str(struct pexport *x, const char *s, size_t align)
{
	static const char zeros[64];
	size_t n = strlen(s) + 1;

	rec_add(x, s, n - 1);
	n = (n + align - 1) / align * align - (n - 1);
	rec_add(x, zeros, n);
}

/* Ends the record: the sample_id trailer for thread @tid if @trailer,
 * the size in its header, and writes it. */
static void rec_end(struct pexport *x, bool trailer, uint32_t tid)
{
	struct sample_id id = {
		.pid = x->pid, .tid = tid, .id = EXPORT_ID,
	};
	struct perf_event_header *h;

	if (trailer)
		rec_add(x, &id, sizeof(id));
	if (x->err)
		return;
	h = (struct perf_event_header *)x->rec;
	if (x->rec_len > UINT16_MAX) {
		x->err = ptrr_fail(PTRR_ERR_USAGE, "a perf record of %zu bytes "
				   "is too long (a path of the recording?)",
				   x->rec_len);
		return;
	}
	h->size = x->rec_len;
	put(x, x->rec, x->rec_len);
}

/* ------------------------------------------------------------------ */
/* The trace configuration                                             */
/* ------------------------------------------------------------------ */

/* Which timing packets (PT_CONFIG_TSC, _MTC, _CYC) thread @t's trace
 * holds: the recording enabled them. */
static uint64_t timing_config(const struct hist_thread *t)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet p;
	uint64_t seen = 0;
	const uint64_t all = PT_CONFIG_TSC | PT_CONFIG_MTC | PT_CONFIG_CYC;

	if (!t->trace_size)
		return 0;
	pt_config_init(&cfg);
	cfg.begin = t->trace;
	cfg.end = t->trace + t->trace_size;
	if (!(d = pt_pkt_alloc_decoder(&cfg)))
		return 0;
	while (seen != all && pt_pkt_sync_forward(d) >= 0) {
		while (seen != all && pt_pkt_next(d, &p, sizeof(p)) >= 0) {
			if (p.type == ppt_tsc)
				seen |= PT_CONFIG_TSC;
			else if (p.type == ppt_mtc)
				seen |= PT_CONFIG_MTC;
			else if (p.type == ppt_cyc)
				seen |= PT_CONFIG_CYC;
		}
	}
	pt_pkt_free_decoder(d);
	return seen;
}

/* The intel_pt event's attr.config for bundle @b: pt, branch, the PSB
 * period, return compression, and the timing packets its traces hold. */
static uint64_t trace_config(const struct hist_bundle *b)
{
	uint64_t config = PT_CONFIG_PT | PT_CONFIG_BRANCH;
	unsigned n = 0;

	for (size_t i = 0; i < b->nthreads; i++)
		config |= timing_config(&b->threads[i]);
	if (!b->pt.ret_compression)
		config |= PT_CONFIG_NORETCOMP;
	/* psb_period N means 2^(N+11) bytes. */
	while (n < 15 && (2048u << n) < b->pt.psb_period)
		n++;
	return config | (uint64_t)n << PT_CONFIG_PSB_PERIOD_SHIFT;
}

/* The event's attributes, as perf record sets them for intel_pt//u. */
static void make_attr(const struct hist_bundle *b, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_EXPORT_PMU_TYPE;
	a->size = sizeof(*a);
	a->config = trace_config(b);
	a->sample_period = 1;
	a->sample_type = EXPORT_SAMPLE_TYPE;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->mmap = 1;
	a->comm = 1;
	a->task = 1;
	a->sample_id_all = 1;
}

/* PERF_RECORD_AUXTRACE_INFO: Intel PT, per-thread, full trace, with the
 * config bits perf's decoder looks up in the event's config. */
static void put_auxtrace_info(struct pexport *x)
{
	struct perf_data_auxtrace_info info = {
		.header.type = PERF_REC_AUXTRACE_INFO,
		.header.size = sizeof(info) + PT_INFO_MAX * sizeof(uint64_t),
		.type = PERF_AUXTRACE_INTEL_PT,
	};
	uint64_t priv[PT_INFO_MAX] = {
		[PT_INFO_PMU_TYPE] = PERF_EXPORT_PMU_TYPE,
		[PT_INFO_TSC_BIT] = PT_CONFIG_TSC,
		[PT_INFO_NORETCOMP_BIT] = PT_CONFIG_NORETCOMP,
		[PT_INFO_MTC_BIT] = PT_CONFIG_MTC,
		[PT_INFO_MTC_FREQ_BITS] = PT_CONFIG_MTC_PERIOD,
		[PT_INFO_CYC_BIT] = PT_CONFIG_CYC,
	};

	put(x, &info, sizeof(info));
	put(x, priv, sizeof(priv));
}

/* ------------------------------------------------------------------ */
/* The data section                                                    */
/* ------------------------------------------------------------------ */

/* The program's name as the kernel keeps it (15 bytes at most). */
static void comm_of(const struct hist_bundle *b, char comm[16])
{
	const char *exe = b->exe ? b->exe : "";
	const char *slash = strrchr(exe, '/');

	snprintf(comm, 16, "%s", slash ? slash + 1 : exe);
}

/* A COMM record per thread: perf learns the threads and their process. */
static void put_comms(struct pexport *x)
{
	char comm[16];

	comm_of(x->b, comm);
	for (size_t i = 0; i < x->b->nthreads; i++) {
		uint32_t ids[2] = { x->pid, x->b->threads[i].tid };

		rec_begin(x, PERF_RECORD_COMM,
			  i == 0 ? PERF_RECORD_MISC_COMM_EXEC : 0);
		rec_add(x, ids, sizeof(ids));
		rec_add_str(x, comm, 8);
		rec_end(x, true, ids[1]);
	}
}

/* A PERF_RECORD_MMAP of @size bytes of file @path at offset @offset,
 * mapped at @start. */
static void put_mmap(struct pexport *x, const char *path, uint64_t start,
		     uint64_t size, uint64_t offset)
{
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
	} m = { x->pid, x->pid, start, size, offset };

	rec_begin(x, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	rec_add(x, &m, sizeof(m));
	rec_add_str(x, path, 8);
	rec_end(x, true, x->pid);
}

/* The path perf opens for module @m: absolute, the packed copy if the
 * bundle has one.  NULL if out of memory. */
static char *module_file(const struct hist_bundle *b,
			 const struct hist_module *m)
{
	char *open_path = hist_module_open_path(b, m), *abs;

	if (!open_path || !m->file)
		return open_path;
	abs = realpath(open_path, NULL);
	if (abs) {
		free(open_path);
		return abs;
	}
	return open_path;
}

/* An MMAP per module and per copy of anonymous code. */
static void put_mmaps(struct pexport *x)
{
	const struct hist_bundle *b = x->b;

	for (size_t i = 0; !x->err && i < b->nmodules; i++) {
		const struct hist_module *m = &b->modules[i];
		char *path = module_file(b, m);

		if (!path) {
			x->err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
			break;
		}
		if (!m->usable)
			fprintf(stderr, "warning: module %s is not usable: perf "
				"will report errors where its code ran\n",
				m->path);
		put_mmap(x, path, m->start, m->size, m->offset);
		free(path);
	}
	for (size_t i = 0; !x->err && i < b->ncode; i++)
		put_mmap(x, x->code_paths[i], b->code[i].start,
			 b->code[i].size, 0);
}

/* One PERF_RECORD_AUXTRACE per thread: its trace, padded to 8 bytes
 * with PAD packets (zero bytes), read from mmap number @i. */
static void put_traces(struct pexport *x)
{
	for (size_t i = 0; i < x->b->nthreads; i++) {
		const struct hist_thread *t = &x->b->threads[i];
		struct perf_data_auxtrace a = {
			.header.type = PERF_REC_AUXTRACE,
			.header.size = sizeof(a),
			.size = (t->trace_size + 7) & ~(uint64_t)7,
			.idx = i, .tid = t->tid, .cpu = UINT32_MAX,
		};

		put(x, &a, sizeof(a));
		put(x, t->trace, t->trace_size);
		put_zeros(x, a.size - t->trace_size);
	}
}

/* An EXIT record per thread that ended. */
static void put_exits(struct pexport *x)
{
	for (size_t i = 0; i < x->b->nthreads; i++) {
		const struct hist_thread *t = &x->b->threads[i];
		struct {
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} e = { x->pid, x->pid, t->tid, x->pid, 0 };

		if (t->stop.kind == HIST_STOP_NONE ||
		    t->stop.kind == HIST_STOP_INTERRUPTED)
			continue;
		rec_begin(x, PERF_RECORD_EXIT, 0);
		rec_add(x, &e, sizeof(e));
		rec_end(x, true, t->tid);
	}
}

/* ------------------------------------------------------------------ */
/* Features                                                            */
/* ------------------------------------------------------------------ */

/* Appends a perf header string: its padded length, then the string. */
static void put_string(struct pexport *x, const char *s)
{
	uint32_t len = (strlen(s) + 1 + 63) / 64 * 64;

	put(x, &len, sizeof(len));
	put(x, s, strlen(s));
	put_zeros(x, len - strlen(s));
}

/* Decodes lower-case hex @hex into @id (at most 20 bytes); its length. */
static size_t parse_build_id(const char *hex, uint8_t id[20])
{
	size_t n = 0;

	while (n < 20 && hex[2 * n] && hex[2 * n + 1] &&
	       sscanf(hex + 2 * n, "%2hhx", &id[n]) == 1)
		n++;
	return n;
}

/* The build-id feature: one entry per module with a build-id. */
static void put_build_ids(struct pexport *x)
{
	const struct hist_bundle *b = x->b;

	for (size_t i = 0; !x->err && i < b->nmodules; i++) {
		const struct hist_module *m = &b->modules[i];
		struct perf_data_build_id e = {
			.header.type = PERF_REC_HEADER_BUILD_ID,
			.header.misc = PERF_RECORD_MISC_USER |
				       PERF_RECORD_MISC_BUILD_ID_SIZE,
			.pid = x->pid,
		};
		char *path;
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen |= b->modules[j].build_id && m->build_id &&
				!strcmp(b->modules[j].path, m->path);
		if (!m->build_id || seen)
			continue;
		if (!(path = module_file(b, m))) {
			x->err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
			break;
		}
		e.id_size = parse_build_id(m->build_id, e.id);
		x->rec_len = 0;
		rec_add(x, &e, sizeof(e));
		rec_add_str(x, path, 64);
		free(path);
		((struct perf_data_build_id *)x->rec)->header.size = x->rec_len;
		put(x, x->rec, x->rec_len);
	}
}

/* The CPUID feature, as perf on x86 writes it: "VENDOR,FAMILY,MODEL,
 * STEPPING". */
static void put_cpuid(struct pexport *x)
{
	const struct hist_cpu *c = &x->b->cpu;
	char s[64];

	snprintf(s, sizeof(s), "%s,%u,%u,%u",
		 c->vendor[0] ? c->vendor : "GenuineIntel", c->family,
		 c->model, c->stepping);
	put_string(x, s);
}

/* The event description feature: the one event, named as perf names
 * it, and its id. */
static void put_event_desc(struct pexport *x)
{
	struct perf_event_attr attr;
	uint32_t head[2] = { 1, sizeof(attr) }, nids = 1;
	uint64_t id = EXPORT_ID;

	make_attr(x->b, &attr);
	put(x, head, sizeof(head));
	put(x, &attr, sizeof(attr));
	put(x, &nids, sizeof(nids));
	put_string(x, "intel_pt//u");
	put(x, &id, sizeof(id));
}

/* Writes feature @feat's contents. */
static void put_feature(struct pexport *x, int feat)
{
	uint32_t u[2] = { 1, 1 };

	switch (feat) {
	case PERF_FEAT_BUILD_ID:
		put_build_ids(x);
		break;
	case PERF_FEAT_ARCH:
		put_string(x, "x86_64");
		break;
	case PERF_FEAT_NRCPUS:
		put(x, u, sizeof(u));
		break;
	case PERF_FEAT_CPUID:
		put_cpuid(x);
		break;
	case PERF_FEAT_EVENT_DESC:
		put_event_desc(x);
		break;
	case PERF_FEAT_PMU_MAPPINGS:
		u[1] = PERF_EXPORT_PMU_TYPE;
		put(x, u, sizeof(u));
		put_string(x, "intel_pt");
		break;
	}
}

/* Writes the feature table and the features after the data section
 * (which ends at the current position) and sets their bits in @h. */
static void put_features(struct pexport *x, struct perf_data_header *h)
{
	static const int feats[] = {
		PERF_FEAT_BUILD_ID, PERF_FEAT_ARCH, PERF_FEAT_NRCPUS,
		PERF_FEAT_CPUID, PERF_FEAT_EVENT_DESC, PERF_FEAT_PMU_MAPPINGS,
	};
	enum { N = sizeof(feats) / sizeof(feats[0]) };
	struct perf_data_section table[N];
	off_t at = ftello(x->f);

	put_zeros(x, sizeof(table));
	for (size_t i = 0; i < N; i++) {
		table[i].offset = ftello(x->f);
		put_feature(x, feats[i]);
		table[i].size = ftello(x->f) - table[i].offset;
		h->adds_features[feats[i] / 64] |= 1ull << (feats[i] % 64);
	}
	if (!x->err && fseeko(x->f, at, SEEK_SET) < 0)
		x->err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s",
				   x->files[0].path, strerror(errno));
	put(x, table, sizeof(table));
}

/* ------------------------------------------------------------------ */
/* The file                                                            */
/* ------------------------------------------------------------------ */

/* Writes the whole perf.data to x->f: header, attribute, its id, data,
 * features, then the header again with the sizes. */
static void put_file(struct pexport *x)
{
	struct perf_data_header h = {
		.magic = PERF_DATA_MAGIC, .size = sizeof(h),
		.attr_size = sizeof(struct perf_event_attr) +
			     sizeof(struct perf_data_section),
	};
	struct perf_event_attr attr;
	struct perf_data_section ids;
	uint64_t id = EXPORT_ID;

	make_attr(x->b, &attr);
	h.attrs = (struct perf_data_section){ sizeof(h), h.attr_size };
	ids = (struct perf_data_section){ sizeof(h) + h.attr_size, sizeof(id) };
	put(x, &h, sizeof(h));
	put(x, &attr, sizeof(attr));
	put(x, &ids, sizeof(ids));
	put(x, &id, sizeof(id));
	h.data.offset = ids.offset + ids.size;
	put_auxtrace_info(x);
	put_comms(x);
	put_mmaps(x);
	put_traces(x);
	put_exits(x);
	h.data.size = ftello(x->f) - h.data.offset;
	put_features(x, &h);
	if (!x->err && fseeko(x->f, 0, SEEK_SET) < 0)
		x->err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s",
				   x->files[0].path, strerror(errno));
	put(x, &h, sizeof(h));
	if (!x->err && (fflush(x->f) || fsync(fileno(x->f)) < 0))
		x->err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s",
				   x->files[0].path, strerror(errno));
}

int export_perf(const struct hist_bundle *b, const char *file)
{
	struct pexport x = { .b = b };
	int fd, err;

	if (b->nthreads == 0)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "the recording has no threads: nothing to export");
	if (b->before_exec_dir)
		fprintf(stderr, "warning: the recording before the execve "
			"(%s) is not exported: export it on its own\n",
			b->before_exec_dir);
	x.pid = b->threads[0].tid;
	fd = open_out(&x, file);
	if (fd >= 0 && !(x.f = fdopen(fd, "w"))) {
		close(fd);
		fd = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	err = fd < 0 ? fd : export_code_files(&x, file);
	if (!err) {
		put_file(&x);
		err = x.err;
	}
	if (x.f && fclose(x.f) && !err)
		err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s", file,
				strerror(errno));
	for (size_t i = 0; x.code_paths && i < b->ncode; i++)
		free(x.code_paths[i]);
	free(x.code_paths);
	free(x.rec);
	if (!err)
		return close_outs(&x, true);
	close_outs(&x, false);
	return err;
}
