/* `ptrr import --lldb=TRACE.json -o BUNDLE`: LLDB's Intel PT trace bundle
 * (the schema of `lldb -b -o "trace schema intel-pt"`, as `trace save`
 * or `ptrr export --lldb` write it) as a ptrr recording.
 *
 * One process with per-thread traces ("iptTrace") is what a ptrr bundle
 * can hold; per-CPU traces ("cpus") and kernel traces are refused with a
 * reason.  Each module is placed by its executable PT_LOAD segments,
 * computed from "loadAddress" and the file's program headers (as LLDB
 * does, lldb_trace.h); a module with a "file" is packed into the bundle,
 * so the recording does not depend on where the LLDB bundle is.  A module
 * whose "systemPath" is not a path ("[vdso]") becomes a copy of
 * anonymous code.  LLDB's bundle has no registers or stop reasons: the
 * threads' ends are unknown.
 *
 * The description is input to be checked, not trusted: every field is
 * checked for type and range, and a failure names the field.
 */
#include <config.h>

#include "commands.h"
#include "history.h"
#include "import_perf.h"
#include "import_raw.h"
#include "lldb_trace.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT_USAGE \
	"ptrr import (--lldb=TRACE.json | --perf=FILE [--pid=PID] |\n" \
	"             --raw=TRACE --image=FILE@ADDR[,OFFSET,SIZE]... [--cpu=F/M/S]) -o BUNDLE"

/* One import under way. */
struct importer {
	const char *json;	/* TRACE.json as the user named it */
	char *base;		/* its directory: relative paths start there */
	struct hist_bundle *b;
};

/* A field @where of the description that is not what it should be. */
static int bad_field(const struct importer *im, const char *where,
		     const char *expect)
{
	return ptrr_fail(PTRR_ERR_BUNDLE,
			 "%s: %s is missing or not %s (see lldb -b -o \"trace schema intel-pt\")",
			 im->json, where, expect);
}

/* ------------------------------------------------------------------ */
/* Fields                                                              */
/* ------------------------------------------------------------------ */

/* Integer field @key of @o in [@min, @max]. */
static int get_int(const struct importer *im, json_t *o, const char *key,
		   const char *where, long long min, long long max,
		   long long *out)
{
	json_t *v = json_object_get(o, key);
	char what[128];

	snprintf(what, sizeof(what), "%s.%s", where, key);
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return bad_field(im, what, "an integer in range");
	*out = json_integer_value(v);
	return 0;
}

/* String field @key of @o; NULL in @out if absent and @optional. */
static int get_str(const struct importer *im, json_t *o, const char *key,
		   const char *where, bool optional, const char **out)
{
	json_t *v = json_object_get(o, key);
	char what[128];

	*out = json_string_value(v);
	if (*out ? (*out)[0] : !v && optional)
		return 0;
	snprintf(what, sizeof(what), "%s.%s", where, key);
	return bad_field(im, what, "a non-empty string");
}

/* An address field: an integer, a decimal string or a hex string. */
static int get_addr(const struct importer *im, json_t *o, const char *key,
		    const char *where, uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);
	unsigned long long n;
	char what[128], *end;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = json_integer_value(v);
		return 0;
	}
	errno = 0;
	if (s && s[0] >= '0' && s[0] <= '9') {
		n = strtoull(s, &end, s[1] == 'x' || s[1] == 'X' ? 16 : 10);
		if (!errno && !*end) {
			*out = n;
			return 0;
		}
	}
	snprintf(what, sizeof(what), "%s.%s", where, key);
	return bad_field(im, what, "an address (integer, decimal or hex string)");
}

/* A path of the description as a malloc'd string: relative paths are
 * relative to the directory of TRACE.json. */
static char *resolve(const struct importer *im, const char *path)
{
	char *p;

	if (path[0] == '/')
		return strdup(path);
	return asprintf(&p, "%s/%s", im->base, path) < 0 ? NULL : p;
}

/* Reads all of file @path into a malloc'd buffer. */
static int read_file(const char *path, const char *what, uint8_t **data,
		     size_t *size)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = NULL, *p;
	int err = 0;

	while (f && !err) {
		if (!(p = realloc(buf, cap)))
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		else
			buf = p;
		if (!err && (n += fread(buf + n, 1, cap - n, f)) < cap)
			break;
		cap *= 2;
	}
	if (!f || (!err && ferror(f)))
		err = ptrr_fail(PTRR_ERR_IO, "cannot read %s %s: %s", what,
				path, strerror(errno));
	if (f)
		fclose(f);
	if (err)
		free(buf);
	*data = err ? NULL : buf;
	*size = err ? 0 : n;
	return err;
}

/* ------------------------------------------------------------------ */
/* The parts of the description                                        */
/* ------------------------------------------------------------------ */

/* "cpuInfo": LLDB's "unknown" vendor is ptrr's "". */
static int import_cpu(struct importer *im, json_t *root)
{
	json_t *o = json_object_get(root, "cpuInfo");
	struct hist_cpu *c = &im->b->cpu;
	long long family, model, stepping;
	const char *vendor;
	int err;

	if (!json_is_object(o))
		return bad_field(im, "cpuInfo", "an object");
	if ((err = get_str(im, o, "vendor", "cpuInfo", false, &vendor)) ||
	    (err = get_int(im, o, "family", "cpuInfo", 0, UINT16_MAX,
			   &family)) ||
	    (err = get_int(im, o, "model", "cpuInfo", 0, UINT8_MAX, &model)) ||
	    (err = get_int(im, o, "stepping", "cpuInfo", 0, UINT8_MAX,
			   &stepping)))
		return err;
	if (strcmp(vendor, "unknown"))
		snprintf(c->vendor, sizeof(c->vendor), "%s", vendor);
	c->family = family;
	c->model = model;
	c->stepping = stepping;
	return 0;
}

/* Thread @i of @threads, with its trace. */
static int import_thread(struct importer *im, json_t *threads, size_t i)
{
	json_t *o = json_array_get(threads, i);
	struct hist_thread *t;
	const char *trace;
	char where[64], *path;
	long long tid;
	uint8_t *data;
	size_t size;
	int err;

	snprintf(where, sizeof(where), "processes[0].threads[%zu]", i);
	if (!json_is_object(o))
		return bad_field(im, where, "an object");
	if ((err = get_int(im, o, "tid", where, 1, INT_MAX, &tid)))
		return err;
	if (!json_object_get(o, "iptTrace"))
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s: thread %lld has no \"iptTrace\": ptrr imports per-thread traces only, not per-CPU ones",
				 im->json, tid);
	if ((err = get_str(im, o, "iptTrace", where, false, &trace)))
		return err;
	if (!(path = resolve(im, trace)))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	err = read_file(path, "the trace file", &data, &size);
	free(path);
	if (err)
		return err;
	if (!(t = hist_bundle_add_thread(im->b, tid)) ||
	    hist_thread_set_trace(t, data, size) < 0)
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	free(data);
	return err;
}

/* A build-id from LLDB's "uuid" (hex, perhaps with dashes), lower-case
 * in a malloc'd string; NULL in @out if it is not hex. */
static int build_id(const char *uuid, char **out)
{
	char *s = malloc(strlen(uuid) + 1), *d = s;

	if (!s)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (const char *c = uuid; *c; c++) {
		if (*c == '-')
			continue;
		if (!strchr("0123456789abcdefABCDEF", *c)) {
			free(s);
			*out = NULL;
			return 0;
		}
		*d++ = *c >= 'A' && *c <= 'F' ? *c + 'a' - 'A' : *c;
	}
	*d = '\0';
	*out = s;
	return 0;
}

/* Adds the executable segments of a module file with segments @segs
 * loaded with bias @bias, as mappings of @path read from @file. */
static int add_mappings(struct importer *im, const char *path,
			const char *file, const char *uuid,
			const struct lldb_segment *segs, size_t nsegs,
			uint64_t bias)
{
	const uint64_t mask = ~(uint64_t)(LLDB_PAGE_SIZE - 1);
	struct hist_module *m;
	int err = 0;

	for (size_t i = 0; !err && i < nsegs; i++) {
		uint64_t start = bias + (segs[i].vaddr & mask);
		uint64_t end = bias + segs[i].vaddr + segs[i].memsz;

		if (!segs[i].exec)
			continue;
		end = (end + LLDB_PAGE_SIZE - 1) & mask;
		if ((err = hist_bundle_add_module(im->b, path, start,
						  end - start,
						  segs[i].offset & mask)))
			break;
		m = &im->b->modules[im->b->nmodules - 1];
		if ((file && !(m->file = strdup(file))) ||
		    (err = build_id(uuid ? uuid : "", &m->build_id)))
			err = err ? err : ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		else if (m->build_id && !m->build_id[0])
			m->build_id = (free(m->build_id), NULL);
	}
	return err;
}

/* A module that is not a file on the traced machine ("[vdso]"): its
 * image, from @file, as a copy of anonymous code. */
static int add_code(struct importer *im, const char *name, const char *file,
		    const struct lldb_segment *segs, uint64_t bias)
{
	uint64_t start = bias + (segs[0].vaddr & ~(uint64_t)(LLDB_PAGE_SIZE - 1))
		- (segs[0].offset & ~(uint64_t)(LLDB_PAGE_SIZE - 1));
	uint8_t *data;
	size_t size;
	int err = read_file(file, "module", &data, &size);

	if (!err)
		err = hist_bundle_add_code(im->b, name, start, data, size);
	free(data);
	return err;
}

/* Module @i of @modules. */
static int import_module(struct importer *im, json_t *modules, size_t i)
{
	json_t *o = json_array_get(modules, i);
	const char *system_path, *file, *uuid;
	char where[64], *path = NULL, *local = NULL;
	struct lldb_segment *segs = NULL;
	uint64_t load = 0;
	size_t nsegs;
	int err;

	snprintf(where, sizeof(where), "processes[0].modules[%zu]", i);
	if (!json_is_object(o))
		return bad_field(im, where, "an object");
	if ((err = get_str(im, o, "systemPath", where, false, &system_path)) ||
	    (err = get_str(im, o, "file", where, true, &file)) ||
	    (err = get_str(im, o, "uuid", where, true, &uuid)) ||
	    (err = get_addr(im, o, "loadAddress", where, &load)))
		return err;
	if (system_path[0] == '[')
		path = strdup(system_path);
	else
		path = resolve(im, system_path);
	local = file ? resolve(im, file) : NULL;
	if (!path || (file && !local))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err && lldb_elf_segments(local ? local : path, &segs, &nsegs))
		fprintf(stderr, "warning: %s: module %s skipped (decoding "
			"will have gaps where its code ran): %s\n", im->json,
			system_path, ptrr_errmsg(PTRR_ERR_IO));
	else if (!err && system_path[0] == '[')
		err = add_code(im, path, local ? local : path, segs,
			       load - segs[0].vaddr);
	else if (!err)
		err = add_mappings(im, path, local, uuid, segs, nsegs,
				   load - segs[0].vaddr);
	free(segs);
	free(local);
	free(path);
	return err;
}

/* The one process: its threads and modules. */
static int import_process(struct importer *im, json_t *root)
{
	json_t *procs = json_object_get(root, "processes"), *p, *threads,
	       *modules;
	int err = 0;

	if (json_object_get(root, "kernel"))
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s is a kernel trace: ptrr imports traces of user processes",
				 im->json);
	if (!json_is_array(procs) || json_array_size(procs) != 1)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s: \"processes\" must list exactly one process (it has %zu): a ptrr recording is one process",
				 im->json, json_array_size(procs));
	p = json_array_get(procs, 0);
	threads = json_object_get(p, "threads");
	modules = json_object_get(p, "modules");
	if (!json_is_object(p))
		return bad_field(im, "processes[0]", "an object");
	if (!json_is_array(threads) || !json_array_size(threads))
		return bad_field(im, "processes[0].threads",
				 "a non-empty array");
	if (!json_is_array(modules))
		return bad_field(im, "processes[0].modules", "an array");
	for (size_t i = 0; !err && i < json_array_size(threads); i++)
		err = import_thread(im, threads, i);
	for (size_t i = 0; !err && i < json_array_size(modules); i++)
		err = import_module(im, modules, i);
	return err;
}

/* Reads and checks TRACE.json into the importer's bundle. */
static int import_description(struct importer *im)
{
	json_error_t jerr;
	json_t *root = json_load_file(im->json, 0, &jerr);
	const char *type;
	int err;

	if (!root && jerr.line < 0)	/* jansson could not read the file */
		return ptrr_fail(PTRR_ERR_IO, "%s", jerr.text);
	if (!root)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "%s is not JSON: %s at line %d: give the trace.json of an LLDB Intel PT trace bundle",
				 im->json, jerr.text, jerr.line);
	type = json_string_value(json_object_get(root, "type"));
	if (!json_is_object(root) || !type || strcmp(type, "intel-pt"))
		err = ptrr_fail(PTRR_ERR_BUNDLE,
				"%s is not an LLDB Intel PT trace bundle (no \"type\": \"intel-pt\")",
				im->json);
	else if (!(err = import_cpu(im, root)))
		err = import_process(im, root);
	json_decref(root);
	return err;
}

/* The rest of the recording: unknown PT configuration, the program. */
static int import_rest(struct importer *im)
{
	struct hist_bundle *b = im->b;

	b->pt.ret_compression = true;
	if (b->nmodules && !(b->exe = strdup(b->modules[0].path)))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return hist_bundle_add_note(b, "imported from the LLDB trace bundle %s",
				    im->json);
}

/* Saves imported bundle @b as @out, with its history's index if it can
 * be built (a warning otherwise). */
int import_save(struct hist_bundle *b, const char *out)
{
	int err = hist_bundle_make_index(b, true);

	if (err)
		fprintf(stderr, "ptrr import: warning: %s: the bundle is saved "
			"without its index\n", ptrr_errmsg(err));
	return hist_bundle_save(b, out, 0);
}

/* Imports TRACE.json @json into the new bundle @out. */
static int import_lldb(const char *json, const char *out)
{
	struct importer im = { .json = json };
	char *slash;
	int err;

	if ((err = hist_bundle_check_target(out)))
		return err;
	if (!(im.base = strdup(json)) || hist_bundle_new(&im.b) < 0) {
		free(im.base);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	slash = strrchr(im.base, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(im.base, ".");
	if (!(err = import_description(&im)) && !(err = import_rest(&im))) {
		err = import_save(im.b, out);
	}
	hist_bundle_free(im.b);
	free(im.base);
	return err;
}

/* Reports usage error @what; returns exit status 1. */
static int import_usage(const char *what, const char *arg)
{
	fprintf(stderr, "ptrr import: %s%s\nusage: %s\n", what, arg,
		IMPORT_USAGE);
	return 1;
}

/* The options of `ptrr import`. */
struct import_args {
	const char *json, *perf, *raw, *out;
	int pid;
	struct import_raw_image images[64];
	size_t nimages;
	struct hist_cpu cpu;
	bool have_cpu;
};

/* Takes option @opt with argument @arg; returns 0 or exit status 1. */
static int import_option(struct import_args *a, int opt, const char *arg)
{
	char *end;

	switch (opt) {
	case 'l': a->json = arg; return 0;
	case 'f': a->perf = arg; return 0;
	case 'r': a->raw = arg; return 0;
	case 'o': a->out = arg; return 0;
	case 'p':
		a->pid = strtol(arg, &end, 10);
		return a->pid > 0 && !*end ? 0 :
		       import_usage("bad process id ", arg);
	case 'i':
		if (a->nimages == sizeof(a->images) / sizeof(a->images[0]))
			return import_usage("too many --image options", "");
		return import_raw_parse_image(arg, &a->images[a->nimages++]) ?
		       0 : import_usage("bad --image=FILE@ADDR[,OFFSET,SIZE] ", arg);
	case 'c':
		a->have_cpu = true;
		return import_raw_parse_cpu(arg, &a->cpu) ? 0 :
		       import_usage("bad --cpu=FAMILY/MODEL/STEPPING ", arg);
	default:
		return import_usage("invalid option ", arg);
	}
}

/* Checks that the options name one import; returns 0 or exit status 1. */
static int import_check(const struct import_args *a)
{
	int kinds = (a->json && a->json[0]) + (a->perf && a->perf[0]) +
		    (a->raw && a->raw[0]);

	if (!kinds)
		return import_usage("missing --lldb=TRACE.json, --perf=FILE or --raw=TRACE", "");
	if (kinds > 1)
		return import_usage("import one of --lldb, --perf and --raw at a time", "");
	if (a->raw && !a->nimages)
		return import_usage("--raw needs --image=FILE@ADDR for the code the trace ran", "");
	if (!a->raw && (a->nimages || a->have_cpu))
		return import_usage("--image and --cpu go with --raw", "");
	if (a->pid > 0 && !a->perf)
		return import_usage("--pid goes with --perf", "");
	if (!a->out || !a->out[0])
		return import_usage("missing -o BUNDLE", "");
	return 0;
}

int ptrr_cmd_import(int argc, char **argv)
{
	static const struct option options[] = {
		{ "lldb", required_argument, NULL, 'l' },
		{ "perf", required_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "raw", required_argument, NULL, 'r' },
		{ "image", required_argument, NULL, 'i' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct import_args a = { .pid = -1 };
	int opt, err;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
		if (opt == 'h') {
			printf("usage: %s\n", IMPORT_USAGE);
			return 0;
		}
		if ((err = import_option(&a, opt, opt == '?' ?
					 argv[optind - 1] : optarg)))
			return err;
	}
	if (optind < argc)
		return import_usage("unexpected argument ", argv[optind]);
	if ((err = import_check(&a)))
		return err;
	if (a.perf)
		err = import_perf(a.perf, a.pid, a.out);
	else if (a.raw)
		err = import_raw(a.raw, a.images, a.nimages,
				 a.have_cpu ? &a.cpu : NULL, a.out);
	else
		err = import_lldb(a.json, a.out);
	if (err < 0) {
		fprintf(stderr, "ptrr: %s\n", ptrr_errmsg(err));
		return 2;
	}
	printf("Wrote %s\n", a.out);
	return 0;
}
