/* `ptrr export --lldb=DIR BUNDLE`: a ptrr recording as LLDB's Intel PT
 * trace bundle, so that LLDB's own decoder (`trace load DIR/trace.json`,
 * `thread trace dump instructions`) can read the same trace.
 *
 * DIR gets trace.json (the schema of `trace schema intel-pt`), one raw
 * trace file per thread (threads/TID.ipt, the recording's bytes as they
 * are) and the vDSO as a file (LLDB reads code only from files).  Modules
 * are not copied: they point at the files ptrr itself decodes with, the
 * bundle's packed copies if it has them (hist_module_open_path()), so DIR
 * is valid as long as the bundle stays where it is.  Nothing is written
 * outside DIR, and DIR must be new or empty; if the export fails, what
 * it wrote is removed again.
 */
#include <config.h>

#include "commands.h"
#include "export_perf.h"
#include "history.h"
#include "lldb_trace.h"
#include "timeline.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT_USAGE \
	"ptrr export [--lldb=DIR] [--perf=FILE] [--perfetto=FILE] [--svg=FILE] BUNDLE"

/* One export under way. */
struct exporter {
	const struct hist_bundle *b;
	const char *dir;	/* DIR as the user named it */
	bool created;		/* DIR did not exist before */
	json_t *modules;	/* the process's "modules" array */
};

/* ------------------------------------------------------------------ */
/* Files in DIR                                                        */
/* ------------------------------------------------------------------ */

/* Makes DIR ready: a new directory, or an existing empty one. */
static int prepare_dir(struct exporter *x)
{
	DIR *d = opendir(x->dir);
	struct dirent *e;
	bool empty = true;

	if (!d && errno == ENOENT) {
		if (mkdir(x->dir, 0777) < 0)
			return ptrr_fail(PTRR_ERR_IO,
					 "cannot create %s: %s", x->dir,
					 strerror(errno));
		x->created = true;
		return 0;
	}
	if (!d)
		return ptrr_fail(PTRR_ERR_IO, "cannot use %s: %s", x->dir,
				 strerror(errno));
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	if (!empty)
		return ptrr_fail(PTRR_ERR_USAGE,
				 "%s exists and is not empty: name a new or empty directory for the LLDB trace bundle",
				 x->dir);
	return 0;
}

/* Whether remove_entry() removes the top directory too. */
static bool remove_top;

/* nftw callback: removes one entry (the top one if remove_top). */
static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0 || remove_top)
		remove(path);
	return 0;
}

/* Undoes a failed export: DIR was new or empty, so all in it is ours;
 * a DIR that existed stays, empty. */
static void remove_output(const struct exporter *x)
{
	remove_top = x->created;
	nftw(x->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes @size bytes of @data to the new file DIR/@rel. */
static int write_file(const struct exporter *x, const char *rel,
		      const void *data, size_t size)
{
	char *path;
	int fd, err;

	if (asprintf(&path, "%s/%s", x->dir, rel) < 0)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	err = fd < 0 ? -errno : 0;
	for (size_t done = 0; !err && done < size;) {
		ssize_t n = write(fd, (const char *)data + done, size - done);

		if (n < 0 && errno != EINTR)
			err = -errno;
		done += n > 0 ? n : 0;
	}
	if (fd >= 0 && close(fd) < 0 && !err)
		err = -errno;
	if (err)
		err = ptrr_fail(PTRR_ERR_IO, "cannot write %s: %s", path,
				strerror(-err));
	free(path);
	return err;
}

/* ------------------------------------------------------------------ */
/* The description                                                     */
/* ------------------------------------------------------------------ */

/* @v as a "0x..." string, one of the forms the schema allows. */
static json_t *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

/* The "cpuInfo" object: LLDB knows the vendor GenuineIntel or
 * "unknown" (the software backend records the host's identity). */
static json_t *cpu_info(const struct hist_cpu *c)
{
	return json_pack("{s:s, s:i, s:i, s:i}", "vendor",
			 strcmp(c->vendor, "GenuineIntel") ? "unknown"
							    : "GenuineIntel",
			 "family", (int)c->family, "model", (int)c->model,
			 "stepping", (int)c->stepping);
}

/* Writes each thread's trace to threads/TID.ipt; the "threads" array in
 * @out. */
static int export_threads(struct exporter *x, json_t **out)
{
	json_t *threads = json_array();
	char *path = NULL, rel[64];
	int err = 0;

	if (!threads || asprintf(&path, "%s/threads", x->dir) < 0) {
		path = NULL;
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	} else if (mkdir(path, 0777) < 0) {
		err = ptrr_fail(PTRR_ERR_IO, "cannot create %s: %s", path,
				strerror(errno));
	}
	free(path);
	for (size_t i = 0; !err && i < x->b->nthreads; i++) {
		const struct hist_thread *t = &x->b->threads[i];

		snprintf(rel, sizeof(rel), "threads/%d.ipt", t->tid);
		if ((err = write_file(x, rel, t->trace, t->trace_size)))
			break;
		if (json_array_append_new(threads, json_pack("{s:i, s:s}",
				"tid", t->tid, "iptTrace", rel)))
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	if (err)
		json_decref(threads);
	*out = err ? NULL : threads;
	return err;
}

/* Appends module {systemPath, file, loadAddress, uuid} to the modules
 * array: the file at @open_path (NULL if it is @system_path itself) whose
 * file offset @offset is mapped at @start. */
static int add_module(struct exporter *x, const char *system_path,
		      const char *open_path, const char *file,
		      const char *uuid, uint64_t start, uint64_t offset)
{
	struct lldb_segment *segs;
	size_t nsegs;
	uint64_t bias;
	json_t *m;
	int err = lldb_elf_segments(open_path, &segs, &nsegs);

	if (!err)
		err = lldb_mapping_bias(segs, nsegs, start, offset, &bias);
	if (err) {
		free(segs);
		fprintf(stderr, "warning: module %s not exported (%s): LLDB "
			"will report errors where its code ran\n",
			system_path, ptrr_errmsg(err));
		return 0;
	}
	m = json_pack("{s:s, s:o}", "systemPath", system_path,
		      "loadAddress", hex(bias + segs[0].vaddr));
	free(segs);
	if (m && file && json_object_set_new(m, "file", json_string(file)))
		m = (json_decref(m), NULL);
	if (m && uuid && json_object_set_new(m, "uuid", json_string(uuid)))
		m = (json_decref(m), NULL);
	if (!m || json_array_append_new(x->modules, m))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return 0;
}

/* True if modules @x and @y are mappings of the same file. */
static bool same_file(const struct hist_module *x, const struct hist_module *y)
{
	if (x->file || y->file)
		return x->file && y->file && !strcmp(x->file, y->file);
	return !strcmp(x->path, y->path);
}

/* True if module @i's file is one of an earlier usable module's
 * (several mappings of one file are one module for LLDB). */
static bool seen_file(const struct hist_bundle *b, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (b->modules[j].usable &&
		    same_file(&b->modules[j], &b->modules[i]))
			return true;
	return false;
}

/* Adds the bundle's modules: one per file, at the mapping ptrr saw first. */
static int export_modules(struct exporter *x)
{
	const struct hist_bundle *b = x->b;
	char *open_path, *abs;
	int err = 0;

	for (size_t i = 0; !err && i < b->nmodules; i++) {
		const struct hist_module *m = &b->modules[i];

		if (!m->usable || seen_file(b, i))
			continue;
		if (!(open_path = hist_module_open_path(b, m)))
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		abs = m->file ? realpath(open_path, NULL) : NULL;
		err = add_module(x, m->path, open_path, abs, m->build_id,
				 m->start, m->offset);
		free(abs);
		free(open_path);
	}
	return err;
}

/* Adds the bundle's copies of anonymous code that LLDB can read: the
 * vDSO, an ELF image, written to DIR as a file.  Other anonymous code
 * (JIT) has no place in LLDB's bundle: a warning says so. */
static int export_code(struct exporter *x)
{
	const struct hist_bundle *b = x->b;
	char *path;
	int err = 0;

	for (size_t i = 0; !err && i < b->ncode; i++) {
		const struct hist_blob *c = &b->code[i];

		if (strcmp(c->name, "[vdso]") || c->size < 4 ||
		    memcmp(c->data, ELFMAG, SELFMAG)) {
			fprintf(stderr, "warning: code at 0x%" PRIx64 " (%s) "
				"not exported: LLDB's trace bundle holds only "
				"files\n", c->start, c->name[0] ? c->name :
				"anonymous");
			continue;
		}
		if ((err = write_file(x, "vdso.so", c->data, c->size)))
			break;
		if (asprintf(&path, "%s/vdso.so", x->dir) < 0)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		err = add_module(x, "[vdso]", path, "vdso.so", NULL, c->start,
				 0);
		free(path);
	}
	return err;
}

/* Writes the files the description names and returns it in @out. */
static int export_description(struct exporter *x, json_t **out)
{
	json_t *threads = NULL, *process = NULL;
	int err;

	*out = NULL;
	if ((err = export_threads(x, &threads)))
		return err;
	x->modules = json_array();
	process = json_pack("{s:i, s:s, s:o, s:O}", "pid",
			    x->b->threads[0].tid, "triple", LLDB_TRACE_TRIPLE,
			    "threads", threads, "modules", x->modules);
	if (!process)
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err && !(err = export_modules(x)) && !(err = export_code(x)) &&
	    !(*out = json_pack("{s:s, s:o, s:[O]}", "type", "intel-pt",
			       "cpuInfo", cpu_info(&x->b->cpu),
			       "processes", process)))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	json_decref(process);
	json_decref(x->modules);
	return err;
}

/* Exports loaded bundle @b to DIR @dir: the files, then trace.json. */
static int export_lldb(const struct hist_bundle *b, const char *dir)
{
	struct exporter x = { .b = b, .dir = dir };
	json_t *root = NULL;
	char *text = NULL;
	int err;

	if (b->nthreads == 0)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "the recording has no threads: nothing to export");
	if ((err = prepare_dir(&x)))
		return err;
	if (b->before_exec_dir)
		fprintf(stderr, "warning: the recording before the execve "
			"(%s) is not exported: export it on its own\n",
			b->before_exec_dir);
	if (!(err = export_description(&x, &root)) &&
	    !(text = json_dumps(root, JSON_INDENT(2))))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err)
		err = write_file(&x, LLDB_TRACE_JSON, text, strlen(text));
	free(text);
	json_decref(root);
	if (err)
		remove_output(&x);
	return err;
}

/* ------------------------------------------------------------------ */
/* The subcommand                                                      */
/* ------------------------------------------------------------------ */

/* Writes the timelines `--perfetto=@json --svg=@svg` ask for (either may
 * be NULL) of @bundle; returns 0 or exit status 2. */
static int export_timeline(const char *bundle, const char *json,
			   const char *svg)
{
	int err = tl_export(bundle, json, svg);

	if (err < 0) {
		fprintf(stderr, "ptrr: %s\n", ptrr_errmsg(err));
		return 2;
	}
	if (json)
		printf("Wrote %s: open it in https://ui.perfetto.dev or chrome://tracing\n",
		       json);
	if (svg)
		printf("Wrote %s: open it in a browser\n", svg);
	return 0;
}

/* Reports usage error @what; returns exit status 1. */
static int export_usage(const char *what, const char *arg)
{
	fprintf(stderr, "ptrr export: %s%s\nusage: %s\n", what, arg,
		EXPORT_USAGE);
	return 1;
}

/* Exports bundle @bundle to LLDB's trace bundle @dir and perf.data @perf
 * (either may be NULL); returns 0 or exit status 2. */
static int export_traces(const char *bundle, const char *dir,
			 const char *perf)
{
	struct hist_bundle *b;
	int err;

	if ((err = hist_bundle_load(bundle, &b)) < 0) {
		fprintf(stderr, "ptrr: %s\n", ptrr_errmsg(err));
		return 2;
	}
	for (char **w = b->warnings; w && *w; w++)
		fprintf(stderr, "warning: %s\n", *w);
	if (dir && !(err = export_lldb(b, dir)))
		printf("Wrote %s/%s: open it with lldb -o \"trace load %s/%s\"\n",
		       dir, LLDB_TRACE_JSON, dir, LLDB_TRACE_JSON);
	if (perf && !err && !(err = export_perf(b, perf)))
		printf("Wrote %s: read it with perf script -i %s --itrace=i1ie\n",
		       perf, perf);
	hist_bundle_free(b);
	if (err < 0) {
		fprintf(stderr, "ptrr: %s\n", ptrr_errmsg(err));
		return 2;
	}
	return 0;
}

int ptrr_cmd_export(int argc, char **argv)
{
	static const struct option options[] = {
		{ "lldb", required_argument, NULL, 'l' },
		{ "perf", required_argument, NULL, 'f' },
		{ "perfetto", required_argument, NULL, 'p' },
		{ "svg", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *perf = NULL, *json = NULL, *svg = NULL;
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'h') {
			printf("usage: %s\n", EXPORT_USAGE);
			return 0;
		}
		if (opt != 'l' && opt != 'f' && opt != 'p' && opt != 's')
			return export_usage("invalid option ", argv[optind - 1]);
		if (!optarg[0])
			return export_usage("empty ", argv[optind - 1]);
		*(opt == 'l' ? &dir : opt == 'f' ? &perf :
		  opt == 'p' ? &json : &svg) = optarg;
	}
	if (!dir && !perf && !json && !svg)
		return export_usage("missing --lldb=DIR, --perf=FILE, --perfetto=FILE or --svg=FILE", "");
	if (optind >= argc)
		return export_usage("missing BUNDLE", "");
	if (optind + 1 < argc)
		return export_usage("unexpected argument ", argv[optind + 1]);
	if ((json || svg) && export_timeline(argv[optind], json, svg))
		return 2;
	if (!dir && !perf)
		return 0;
	return export_traces(argv[optind], dir, perf);
}
