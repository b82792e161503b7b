/* Unit tests of history/bundle.c: a recording on disk.
 *
 * Writes bundles into a scratch directory under $TMPDIR, reads them back,
 * damages them in the ways a crash, a full disk, a copy to another machine
 * or a hostile sender would, and checks what the loader makes of that.
 * Prints one line per check; exits 0 if all passed.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "history.h"

static int failures;

#define CHECK(expr) check(!!(expr), __FILE__, __LINE__, #expr)

/* Prints the outcome of one check. */
static void check(int ok, const char *file, int line, const char *expr)
{
	if (ok) {
		printf("ok   %s\n", expr);
		return;
	}
	printf("FAIL %s:%d: %s (last error: %s)\n", file, line, expr,
	       ptrr_errmsg(0));
	failures++;
}

static char scratch[4096];	/* this run's scratch directory */

/* A path under the scratch directory, in a rotating static buffer. */
static const char *path(const char *fmt, ...)
{
	static char bufs[8][4096];
	static int next;
	char *buf = bufs[next++ % 8];
	int n = snprintf(buf, 4096, "%s/", scratch);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, 4096 - n, fmt, ap);
	va_end(ap);
	return buf;
}

/* nftw() callback of remove_tree(). */
static int remove_entry(const char *p, const struct stat *st, int flag,
			struct FTW *ftw)
{
	return remove(p);
}

/* Removes @p and everything under it. */
static void remove_tree(const char *p)
{
	nftw(p, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* True if something (even a dangling link) is at @p. */
static bool exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

/* Copies file @from to @to, keeping it executable. */
static bool copy(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;
	bool ok = in && out;

	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	if (in)
		fclose(in);
	if (out && fclose(out))
		ok = false;
	return ok && chmod(to, 0755) == 0;
}

/* The test program that serves as a real ELF module. */
static const char *loops_path(void)
{
	static char p[4096];
	const char *top = getenv("top_builddir");

	snprintf(p, sizeof(p), "%s/tests/progs/loops", top ? top : ".");
	return p;
}

/* The build-id that `readelf -n` prints for @file, or "" if none. */
static void readelf_build_id(const char *file, char *out, size_t size)
{
	char cmd[4200], line[512];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", file);
	if (!(p = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, " Build ID: %255s", out) == 1 && size > 255)
			break;
	pclose(p);
}

static uint8_t pattern(size_t i, int seed)
{
	return (uint8_t)(i * 7 + seed);
}

/* A bundle with every field set: two threads, a module mapped twice
 * (the copy of loops at @module), code, snapshot, notes. */
static struct hist_bundle *full_bundle(const char *module)
{
	struct hist_bundle *b;
	struct hist_thread *t;
	uint8_t trace[1000], code[4096], snap[64];
	static char *argv[] = { "loops", "-n", "3", NULL };

	for (size_t i = 0; i < sizeof(trace); i++)
		trace[i] = pattern(i, 1);
	for (size_t i = 0; i < sizeof(code); i++)
		code[i] = pattern(i, 2);
	for (size_t i = 0; i < sizeof(snap); i++)
		snap[i] = pattern(i, 3);
	if (hist_bundle_new(&b))
		return NULL;
	strcpy(b->cpu.vendor, "GenuineIntel");
	b->cpu = (struct hist_cpu){ "GenuineIntel", 6, 142, 10 };
	strcpy(b->pt.backend, "soft");
	b->pt.psb_period = 4096;
	b->pt.ret_compression = true;
	b->pt.nfilters = 2;
	b->pt.filters[0].start = 0x401000;
	b->pt.filters[0].size = 0x2000;
	b->pt.filters[1].start = 0xffffffffffff0000ull;
	b->pt.filters[1].size = 0x10;
	b->exe = strdup(module);
	free(b->argv);
	b->argv = calloc(4, sizeof(char *));
	for (int i = 0; argv[i]; i++)
		b->argv[i] = strdup(argv[i]);
	b->stop = (struct hist_stop){ HIST_STOP_FAULT, SIGSEGV, 0xdead0 };

	t = hist_bundle_add_thread(b, 100);
	hist_thread_set_trace(t, trace, sizeof(trace));
	t->trace_lost = 12345;
	t->regs.valid = true;
	for (int i = 0; i < HIST_NREGS; i++)
		t->regs.r[i] = 0x1111111111111111ull * (uint64_t)(i % 15 + 1);
	t->regs.r[HIST_RIP] = 0xffffffffffffffffull;
	t->stop = (struct hist_stop){ HIST_STOP_FAULT, SIGSEGV, 0xdead0 };
	t = hist_bundle_add_thread(b, 101);
	hist_thread_set_trace(t, trace, 100);
	t->stop = (struct hist_stop){ HIST_STOP_EXITED, 3, 0 };

	hist_bundle_add_module(b, module, 0x400000, 0x1000, 0);
	hist_bundle_add_module(b, module, 0x401000, 0x1000, 0x1000);
	hist_bundle_add_code(b, "[vdso]", 0x7fff0000, code, sizeof(code));
	hist_bundle_add_snapshot(b, "[stack]", 0x7ffe0000, snap, sizeof(snap));
	hist_bundle_add_snapshot(b, "", 0x1000, snap, 0);
	hist_bundle_add_note(b, "fork: child %d not traced", 123);
	hist_bundle_add_note(b, "second note");
	return b;
}

/* The copy of loops this run uses as a module (so tests may delete it). */
static const char *module_copy(const char *name)
{
	const char *p = path("%s", name);

	CHECK(copy(loops_path(), p));
	return p;
}

/* True if @n bytes at @p are pattern(i, @seed). */
static bool same_bytes(const uint8_t *p, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pattern(i, seed))
			return false;
	return true;
}

/* Number of loader warnings of @b. */
static size_t nwarnings(const struct hist_bundle *b)
{
	size_t n = 0;

	while (b->warnings && b->warnings[n])
		n++;
	return n;
}

/* True if some warning of @b contains @text. */
static bool warned(const struct hist_bundle *b, const char *text)
{
	for (size_t i = 0; b->warnings && b->warnings[i]; i++)
		if (strstr(b->warnings[i], text))
			return true;
	return false;
}

/* Saves a full bundle (module: a fresh copy of loops) as @name. */
static void save_full(const char *name, unsigned flags)
{
	struct hist_bundle *b = full_bundle(module_copy("mod-loops"));

	CHECK(b && hist_bundle_save(b, path("%s", name), flags) == 0);
	hist_bundle_free(b);
}

/* Checks the first two threads of a loaded full_bundle() with @n
 * threads. */
static void check_threads_of(const struct hist_bundle *b, size_t n)
{
	const struct hist_thread *t = &b->threads[0], *u = &b->threads[1];

	CHECK(b->nthreads == n);
	if (b->nthreads != n || n < 2)
		return;
	CHECK(t->tid == 100 && t->trace_size == 1000);
	CHECK(same_bytes(t->trace, t->trace_size, 1));
	CHECK(!strcmp(t->trace_file, "threads/100.pt"));
	CHECK(t->trace_lost == 12345);
	CHECK(t->regs.valid);
	CHECK(t->regs.r[HIST_RIP] == 0xffffffffffffffffull);
	CHECK(t->regs.r[HIST_RAX] == 0x1111111111111111ull * (HIST_RAX % 15 + 1));
	CHECK(t->regs.r[HIST_GS] == 0x1111111111111111ull * (HIST_GS % 15 + 1));
	CHECK(t->stop.kind == HIST_STOP_FAULT && t->stop.code == SIGSEGV &&
	      t->stop.addr == 0xdead0);
	CHECK(u->tid == 101 && u->trace_size == 100 &&
	      same_bytes(u->trace, 100, 1));
	CHECK(!u->regs.valid);
	CHECK(u->stop.kind == HIST_STOP_EXITED && u->stop.code == 3);
}

/* Checks the threads of a loaded full_bundle(). */
static void check_threads(const struct hist_bundle *b)
{
	check_threads_of(b, 2);
}

/* Checks everything but the threads of a loaded full_bundle(). */
static void check_rest(const struct hist_bundle *b, const char *module)
{
	char id[256];

	readelf_build_id(module, id, sizeof(id));
	CHECK(b->version == HIST_BUNDLE_VERSION);
	CHECK(!strcmp(b->cpu.vendor, "GenuineIntel") && b->cpu.family == 6 &&
	      b->cpu.model == 142 && b->cpu.stepping == 10);
	CHECK(!strcmp(b->pt.backend, "soft") && b->pt.psb_period == 4096 &&
	      b->pt.ret_compression && b->pt.nfilters == 2);
	CHECK(b->pt.filters[1].start == 0xffffffffffff0000ull &&
	      b->pt.filters[1].size == 0x10);
	CHECK(!strcmp(b->exe, module));
	CHECK(b->argv[0] && !strcmp(b->argv[2], "3") && !b->argv[3]);
	CHECK(b->stop.kind == HIST_STOP_FAULT && b->stop.addr == 0xdead0);
	CHECK(b->nmodules == 2);
	CHECK(!strcmp(b->modules[1].path, module) &&
	      b->modules[1].start == 0x401000 &&
	      b->modules[1].size == 0x1000 && b->modules[1].offset == 0x1000);
	CHECK(b->modules[0].build_id && !strcmp(b->modules[0].build_id, id));
	CHECK(b->modules[0].usable && b->modules[1].usable);
	CHECK(b->ncode == 1 && !strcmp(b->code[0].name, "[vdso]") &&
	      b->code[0].start == 0x7fff0000 && b->code[0].size == 4096 &&
	      same_bytes(b->code[0].data, 4096, 2));
	CHECK(b->nsnapshot == 2 && !strcmp(b->snapshot[0].name, "[stack]") &&
	      same_bytes(b->snapshot[0].data, 64, 3));
	CHECK(b->nsnapshot == 2 && b->snapshot[1].size == 0);
	CHECK(b->notes[0] && !strcmp(b->notes[0], "fork: child 123 not traced"));
	CHECK(b->notes[1] && !b->notes[2]);
	CHECK(nwarnings(b) == 0);
}

/* Reads manifest.json of bundle @name as JSON. */
static json_t *manifest(const char *name)
{
	return json_load_file(path("%s/manifest.json", name), 0, NULL);
}

/* Every field written comes back; the manifest reads as documented. */
static void test_round_trip(void)
{
	struct hist_bundle *b = NULL;
	const char *module = path("mod-loops");
	json_t *m;

	save_full("rt.ptrr", 0);
	CHECK(hist_bundle_load(path("rt.ptrr"), &b) == 0);
	if (!b)
		return;
	check_threads(b);
	check_rest(b, module);
	CHECK(b->modules[0].file == NULL);
	CHECK(!strcmp(b->dir, path("rt.ptrr")));
	/* The traces are mapped, not read; one replaced is unmapped. */
	CHECK(b->threads[0].trace_mapped && b->threads[1].trace_mapped);
	CHECK(hist_thread_set_trace(&b->threads[1], b->threads[0].trace,
				    10) == 0);
	CHECK(!b->threads[1].trace_mapped &&
	      same_bytes(b->threads[1].trace, 10, 1));
	hist_bundle_free(b);
	m = manifest("rt.ptrr");
	CHECK(m && !strcmp(json_string_value(json_object_get(m, "format")),
			   "ptrr-bundle"));
	CHECK(!strcmp(json_string_value(json_object_get(json_object_get(m,
		"stop"), "signal_name")), "SIGSEGV"));
	CHECK(!strcmp(json_string_value(json_object_get(json_object_get(
		json_array_get(json_object_get(m, "threads"), 0), "regs"),
		"rip")), "0xffffffffffffffff"));
	json_decref(m);
}

/* Registers recorded on the way (threads/TID.regs): encoded with only
 * the registers that changed since the set before, decoded back whole;
 * a wrong magic, a truncated set, a first set that is not whole and
 * offsets out of order are refused. */
static void test_regsnaps(void)
{
	struct hist_regsnap v[3], *out = NULL;
	uint8_t *enc = NULL;
	size_t size = 0, n = 9;

	memset(v, 0, sizeof(v));
	for (int i = 0; i < 3; i++) {
		v[i].offset = 4096 * (uint64_t) (i / 2);
		v[i].k = 100 * (uint64_t) i + 1;
		for (int r = 0; r < HIST_NREGS; r++)
			v[i].r[r] = (uint64_t) r * 0x1111 + (r == HIST_RIP ?
							     (uint64_t) i : 0);
	}
	CHECK(hist_regsnaps_encode(v, 3, &enc, &size) == 0);
	/* The second and third differ from the one before in rip only. */
	CHECK(size == 8 + 3 * 20 + (HIST_NREGS + 2) * 8);
	CHECK(hist_regsnaps_decode(enc, size, &out, &n) == 0);
	CHECK(n == 3 && out && !memcmp(out, v, sizeof(v)));
	free(out);
	CHECK(hist_regsnaps_decode(enc, size - 3, &out, &n) ==
	      PTRR_ERR_BUNDLE && !out && !n);
	/* The second set's offset below the first's. */
	memcpy(enc + 8 + 20 + HIST_NREGS * 8, &(uint64_t){ 1 }, 8);
	memcpy(enc + 8, &(uint64_t){ 2 }, 8);
	CHECK(hist_regsnaps_decode(enc, size, &out, &n) == PTRR_ERR_BUNDLE);
	memcpy(enc + 8, &(uint64_t){ 0 }, 8);
	enc[8 + 16] = 0;	/* the first not whole */
	CHECK(hist_regsnaps_decode(enc, size, &out, &n) == PTRR_ERR_BUNDLE);
	enc[0] = 'X';
	CHECK(hist_regsnaps_decode(enc, size, &out, &n) == PTRR_ERR_BUNDLE);
	free(enc);
	ptrr_clear_error();
}

/* True if the scratch directory holds a leftover "*.tmp.*" or "*.old.*". */
static bool leftovers(void)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd),
		 "ls -a '%s' | grep -q -e '\\.tmp\\.' -e '\\.old\\.'", scratch);
	return system(cmd) == 0;
}

/* Saving over a bundle replaces it whole, leaving no temporary. */
static void test_overwrite(void)
{
	struct hist_bundle *b = NULL;
	uint8_t byte = 42;

	save_full("ow.ptrr", 0);
	CHECK(hist_bundle_new(&b) == 0);
	hist_thread_set_trace(hist_bundle_add_thread(b, 7), &byte, 1);
	CHECK(hist_bundle_save(b, path("ow.ptrr/"), 0) == 0);
	hist_bundle_free(b);
	CHECK(hist_bundle_load(path("ow.ptrr"), &b) == 0);
	CHECK(b && b->nthreads == 1 && b->threads[0].tid == 7 &&
	      b->threads[0].trace[0] == 42);
	CHECK(b && b->nmodules == 0 && b->ncode == 0);
	hist_bundle_free(b);
	CHECK(!exists(path("ow.ptrr/threads/100.pt")));
	CHECK(!leftovers());

	/* A directory that is not a bundle is never replaced. */
	CHECK(mkdir(path("precious"), 0777) == 0);
	CHECK(copy(loops_path(), path("precious/file")));
	CHECK(hist_bundle_new(&b) == 0);
	CHECK(hist_bundle_save(b, path("precious"), 0) == PTRR_ERR_USAGE);
	CHECK(exists(path("precious/file")));
	hist_bundle_free(b);
}

/* A write that fails half-way (here: a file size limit, as a full disk
 * would) leaves the old bundle and no temporary directory. */
static void test_save_failure(void)
{
	struct rlimit old, lim;
	struct hist_bundle *b = NULL;
	uint8_t big[10000] = { 0 };
	int err;

	save_full("fail.ptrr", 0);
	CHECK(hist_bundle_new(&b) == 0);
	hist_thread_set_trace(hist_bundle_add_thread(b, 9), big, sizeof(big));
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = (struct rlimit){ 4096, old.rlim_max };	/* soft: undoable */
	setrlimit(RLIMIT_FSIZE, &lim);
	err = hist_bundle_save(b, path("fail.ptrr"), 0);
	setrlimit(RLIMIT_FSIZE, &old);
	hist_bundle_free(b);
	CHECK(err == PTRR_ERR_IO);
	CHECK(strstr(ptrr_errmsg(err), "the previous recording is untouched"));
	printf("     (message: %s)\n", ptrr_errmsg(err));
	CHECK(!leftovers());
	CHECK(hist_bundle_load(path("fail.ptrr"), &b) == 0);
	CHECK(b && b->nthreads == 2 && b->threads[0].tid == 100);
	hist_bundle_free(b);
}

/* The recording before an execve is saved inside, as a bundle of its
 * own (chained: the one before it inside that), and the reader names it
 * without loading it. */
static void test_before_exec(void)
{
	const char *module = path("mod-loops");
	struct hist_bundle *b = full_bundle(module), *l = NULL, *in = NULL;

	CHECK(b != NULL);
	if (!b)
		return;
	b->before_exec = full_bundle(module);
	b->before_exec->stop = (struct hist_stop){ HIST_STOP_EXEC, 0, 0 };
	b->before_exec->before_exec = full_bundle(module);
	CHECK(hist_bundle_save(b, path("ex.ptrr"), 0) == 0);
	hist_bundle_free(b);
	CHECK(!leftovers());
	CHECK(hist_bundle_load(path("ex.ptrr"), &l) == 0);
	CHECK(l && l->before_exec_dir && !l->before_exec &&
	      !strcmp(l->before_exec_dir, HIST_BEFORE_EXEC_DIR));
	CHECK(hist_bundle_load(path("ex.ptrr/%s", HIST_BEFORE_EXEC_DIR),
			       &in) == 0);
	CHECK(in && in->stop.kind == HIST_STOP_EXEC);
	if (in)
		check_threads(in);
	CHECK(in && in->before_exec_dir);
	CHECK(exists(path("ex.ptrr/%s/%s/manifest.json", HIST_BEFORE_EXEC_DIR,
			  HIST_BEFORE_EXEC_DIR)));
	hist_bundle_free(l);
	hist_bundle_free(in);
	l = NULL;
	save_full("noex.ptrr", 0);
	CHECK(hist_bundle_load(path("noex.ptrr"), &l) == 0);
	CHECK(l && !l->before_exec_dir);
	hist_bundle_free(l);
}

/* What a writer killed while saving left (DIR.tmp.PID of a dead PID) is
 * no bundle, and the next save to DIR removes it. */
static void test_stale_tmp(void)
{
	struct hist_bundle *b = NULL, *l = NULL;
	pid_t dead = fork();

	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	save_full("st.ptrr", 0);
	CHECK(mkdir(path("st.ptrr.tmp.%d", (int)dead), 0777) == 0);
	CHECK(mkdir(path("st.ptrr.tmp.%d/threads", (int)dead), 0777) == 0);
	CHECK(hist_bundle_load(path("st.ptrr.tmp.%d", (int)dead), &l) ==
	      PTRR_ERR_BUNDLE);
	CHECK(mkdir(path("st.ptrr.tmp.1"), 0777) == 0);	/* alive: stays */
	b = full_bundle(path("mod-loops"));
	CHECK(b && hist_bundle_save(b, path("st.ptrr"), 0) == 0);
	hist_bundle_free(b);
	CHECK(!exists(path("st.ptrr.tmp.%d", (int)dead)));
	CHECK(exists(path("st.ptrr.tmp.1")));
	remove_tree(path("st.ptrr.tmp.1"));
}

/* A packed bundle opens when the module's original path is gone. */
static void test_pack(void)
{
	const char *module = module_copy("packsrc");
	struct hist_bundle *b = full_bundle(module), *l = NULL;
	char id[256];
	char *p;

	readelf_build_id(module, id, sizeof(id));
	CHECK(b && hist_bundle_save(b, path("pack.ptrr"), HIST_SAVE_PACK) == 0);
	CHECK(hist_bundle_save(b, path("nopack.ptrr"), 0) == 0);
	hist_bundle_free(b);
	CHECK(exists(path("pack.ptrr/modules/0-packsrc")));
	CHECK(!exists(path("pack.ptrr/modules/1-packsrc")));
	CHECK(unlink(module) == 0);

	CHECK(hist_bundle_load(path("pack.ptrr"), &l) == 0);
	CHECK(l && l->nmodules == 2 && l->modules[0].usable &&
	      l->modules[1].usable && nwarnings(l) == 0);
	CHECK(l && l->modules[1].file &&
	      !strcmp(l->modules[1].file, "modules/0-packsrc"));
	CHECK(l && l->modules[0].build_id &&
	      !strcmp(l->modules[0].build_id, id));
	p = l ? hist_module_open_path(l, &l->modules[0]) : NULL;
	CHECK(p && !strcmp(p, path("pack.ptrr/modules/0-packsrc")));
	free(p);
	hist_bundle_free(l);

	/* Saving a loaded packed bundle, even over itself and without
	 * --pack, keeps its modules packed: their original paths are gone. */
	CHECK(hist_bundle_load(path("pack.ptrr"), &l) == 0);
	CHECK(l && hist_bundle_save(l, path("pack.ptrr"), 0) == 0);
	hist_bundle_free(l);
	CHECK(hist_bundle_load(path("pack.ptrr"), &l) == 0);
	CHECK(l && l->modules[0].file && l->modules[0].usable &&
	      nwarnings(l) == 0);
	hist_bundle_free(l);

	/* Without --pack, the same recording misses its module. */
	CHECK(hist_bundle_load(path("nopack.ptrr"), &l) == 0);
	CHECK(l && !l->modules[0].usable && !l->modules[1].usable);
	CHECK(l && nwarnings(l) == 1 && warned(l, "--pack"));
	if (l && l->warnings[0])
		printf("     (warning: %s)\n", l->warnings[0]);
	hist_bundle_free(l);
}

/* Loads bundle @name after @edit changed its manifest; returns the error
 * (and frees the bundle). */
static int load_edited(const char *name, void (*edit)(json_t *m, void *arg),
		       void *arg)
{
	json_t *m = manifest(name);
	struct hist_bundle *b = NULL;
	int err;

	edit(m, arg);
	json_dump_file(m, path("%s/manifest.json", name), JSON_INDENT(2));
	json_decref(m);
	err = hist_bundle_load(path("%s", name), &b);
	printf("     (%s)\n", err ? ptrr_errmsg(err) : "loaded");
	hist_bundle_free(b);
	return err;
}

/* Manifest edit: "version" = *@arg. */
static void set_version(json_t *m, void *arg)
{
	json_object_set_new(m, "version", json_integer(*(int *)arg));
}

/* Manifest edit: "format" = @arg. */
static void set_format(json_t *m, void *arg)
{
	json_object_set_new(m, "format", json_string(arg));
}

/* Newer versions and foreign formats are refused. */
static void test_version_and_format(void)
{
	int v = 3;

	save_full("ver.ptrr", 0);
	CHECK(load_edited("ver.ptrr", set_version, &v) == PTRR_ERR_VERSION);
	CHECK(strstr(ptrr_errmsg(PTRR_ERR_VERSION), "format version 3") &&
	      strstr(ptrr_errmsg(PTRR_ERR_VERSION), "upgrade ptrr"));
	v = 0;
	CHECK(load_edited("ver.ptrr", set_version, &v) == PTRR_ERR_BUNDLE);
	v = 1;
	CHECK(load_edited("ver.ptrr", set_version, &v) == 0);
	CHECK(load_edited("ver.ptrr", set_format, "perf-data") ==
	      PTRR_ERR_BUNDLE);
}

/* Replaces the value at @m's slash-separated @where ("threads/0/tid")
 * by the JSON text @value (or removes the key if @value is NULL). */
static void set_at(json_t *m, const char *where, const char *value)
{
	char buf[256], *key, *save = NULL, *next;
	json_t *parent = m;

	snprintf(buf, sizeof(buf), "%s", where);
	key = strtok_r(buf, "/", &save);
	while ((next = strtok_r(NULL, "/", &save))) {
		parent = json_is_array(parent)
			? json_array_get(parent, atoi(key))
			: json_object_get(parent, key);
		key = next;
	}
	if (json_is_array(parent))
		json_array_set_new(parent, atoi(key),
				   json_loads(value, JSON_DECODE_ANY, NULL));
	else if (value)
		json_object_set_new(parent, key,
				    json_loads(value, JSON_DECODE_ANY, NULL));
	else
		json_object_del(parent, key);
}

struct edit {
	const char *where, *value;
};

/* Manifest edit: one struct edit. */
static void apply_edit(json_t *m, void *arg)
{
	const struct edit *e = arg;

	set_at(m, e->where, e->value);
}

/* Loads a fresh bundle after one edit of its manifest. */
static int load_with(const char *where, const char *value)
{
	struct edit e = { where, value };

	remove_tree(path("ed.ptrr"));
	save_full("ed.ptrr", 0);
	return load_edited("ed.ptrr", apply_edit, &e);
}

/* Fields of the wrong type, range or presence refuse the bundle. */
static void test_malformed(void)
{
	static const struct edit bad[] = {
		{ "threads", "\"x\"" }, { "threads", NULL },
		{ "threads/0", "[]" }, { "threads/0/tid", "\"abc\"" },
		{ "threads/0/tid", "-1" }, { "threads/0/trace", "7" },
		{ "threads/0/trace_size", "-5" },
		{ "threads/0/trace_size", "1.5" },
		{ "threads/0/regs", "[1]" }, { "threads/0/regs/rip", "12.5" },
		{ "threads/0/regs/rip", "\"0x1ffffffffffffffff\"" },
		{ "threads/0/regs/rip", "\"rip\"" }, { "threads/0/regs/rsp", NULL },
		{ "threads/0/stop/kind", "\"exploded\"" },
		{ "threads/0/stop/code", "99999999999" },
		{ "cpu", "null" }, { "cpu/family", "70000" },
		{ "cpu/vendor", "\"GenuineIntelGenuineIntel\"" },
		{ "pt/backend", "\"software\"" }, { "pt/ret_compression", "1" },
		{ "pt/filters", "[{},{},{},{},{}]" },
		{ "pt/psb_period", "\"0x100000000\"" },
		{ "program/argv", "[1,2]" }, { "program", "\"x\"" },
		{ "modules/0/path", "null" }, { "modules/0/build_id", "\"xyz\"" },
		{ "modules/0/start", "{}" }, { "code/0/file", "null" },
		{ "snapshot", "{}" }, { "notes", "[null]" }, { "stop", NULL },
		{ "before_exec", "7" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = load_with(bad[i].where, bad[i].value);

		printf("     %s = %s\n", bad[i].where,
		       bad[i].value ? bad[i].value : "(removed)");
		CHECK(err == PTRR_ERR_BUNDLE);
	}
	CHECK(load_with("threads/0/regs", "null") == 0);
	CHECK(load_with("snapshot", NULL) == 0);
	CHECK(load_with("modules/0/build_id", "null") == 0);
	CHECK(load_with("threads/0/trace_lost", "\"0xffffffffffffffff\"") == 0);
	CHECK(load_with("threads/0/stop/kind", "\"exec\"") == 0);
}

/* Rewrites bundle @name's manifest as @text. */
static void write_manifest(const char *name, const char *text, size_t len)
{
	FILE *f = fopen(path("%s/manifest.json", name), "wb");

	CHECK(f && fwrite(text, 1, len, f) == len);
	if (f)
		fclose(f);
}

/* A manifest that is not JSON, or missing, refuses the bundle. */
static void test_bad_json(void)
{
	struct hist_bundle *b = NULL;
	json_t *m;
	char *text;
	const char *huge = "{\"format\":\"ptrr-bundle\",\"version\":"
			   "123456789012345678901234567890}";

	save_full("json.ptrr", 0);
	m = manifest("json.ptrr");
	text = json_dumps(m, JSON_INDENT(2));
	json_decref(m);
	write_manifest("json.ptrr", text, strlen(text) / 2);
	CHECK(hist_bundle_load(path("json.ptrr"), &b) == PTRR_ERR_BUNDLE);
	printf("     (%s)\n", ptrr_errmsg(PTRR_ERR_BUNDLE));
	write_manifest("json.ptrr", "", 0);
	CHECK(hist_bundle_load(path("json.ptrr"), &b) == PTRR_ERR_BUNDLE);
	write_manifest("json.ptrr", "[1,2]", 5);
	CHECK(hist_bundle_load(path("json.ptrr"), &b) == PTRR_ERR_BUNDLE);
	write_manifest("json.ptrr", huge, strlen(huge));
	CHECK(hist_bundle_load(path("json.ptrr"), &b) == PTRR_ERR_BUNDLE);
	CHECK(unlink(path("json.ptrr/manifest.json")) == 0);
	CHECK(hist_bundle_load(path("json.ptrr"), &b) == PTRR_ERR_BUNDLE);
	CHECK(strstr(ptrr_errmsg(PTRR_ERR_BUNDLE), "not a ptrr recording"));
	CHECK(hist_bundle_load(path("no-such.ptrr"), &b) == PTRR_ERR_IO);
	CHECK(b == NULL);
	free(text);
}

/* Missing or short files drop their part with a warning; a bundle\n * with no usable thread is refused. */
static void test_damaged_files(void)
{
	struct hist_bundle *b = NULL;

	save_full("dmg.ptrr", 0);
	CHECK(unlink(path("dmg.ptrr/threads/100.pt")) == 0);
	CHECK(truncate(path("dmg.ptrr/code/0.bin"), 10) == 0);
	CHECK(unlink(path("dmg.ptrr/snapshot/0.bin")) == 0);
	CHECK(hist_bundle_load(path("dmg.ptrr"), &b) == 0);
	CHECK(b && b->nthreads == 1 && b->threads[0].tid == 101);
	CHECK(b && warned(b, "thread 100: threads/100.pt is missing"));
	CHECK(b && b->ncode == 0 &&
	      warned(b, "code/0.bin is 10 bytes long, not 4096"));
	CHECK(b && b->nsnapshot == 1 && b->snapshot[0].size == 0 &&
	      warned(b, "snapshot/0.bin is missing"));
	for (size_t i = 0; b && b->warnings[i]; i++)
		printf("     (warning: %s)\n", b->warnings[i]);
	hist_bundle_free(b);

	CHECK(truncate(path("dmg.ptrr/threads/101.pt"), 99) == 0);
	CHECK(hist_bundle_load(path("dmg.ptrr"), &b) == PTRR_ERR_BUNDLE);
	printf("     (%s)\n", ptrr_errmsg(PTRR_ERR_BUNDLE));
	CHECK(b == NULL);
}

/* A truncated trace drops its thread with a warning. */
static void test_truncated_trace(void)
{
	struct hist_bundle *b = NULL;

	save_full("trunc.ptrr", 0);
	CHECK(truncate(path("trunc.ptrr/threads/101.pt"), 50) == 0);
	CHECK(hist_bundle_load(path("trunc.ptrr"), &b) == 0);
	CHECK(b && b->nthreads == 1 && b->threads[0].tid == 100 &&
	      warned(b, "threads/101.pt is 50 bytes long, not 100"));
	hist_bundle_free(b);
}

/* Paths and links that lead out of the bundle refuse it. */
static void test_escapes(void)
{
	static const struct edit bad[] = {
		{ "threads/0/trace", "\"../x\"" },
		{ "threads/0/trace", "\"threads/../../x\"" },
		{ "threads/0/trace", "\"/etc/passwd\"" },
		{ "code/0/file", "\"..\"" },
		{ "modules/0/file", "\"../../../etc/passwd\"" },
		{ "before_exec", "\"../other.ptrr\"" },
		{ "before_exec", "\"/tmp\"" },
	};
	struct hist_bundle *b = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(load_with(bad[i].where, bad[i].value) == PTRR_ERR_BUNDLE);

	/* A symbolic link inside the bundle, to a file or a directory. */
	save_full("ln.ptrr", 0);
	CHECK(rename(path("ln.ptrr/threads/100.pt"), path("elsewhere.pt")) == 0);
	CHECK(symlink(path("elsewhere.pt"), path("ln.ptrr/threads/100.pt")) == 0);
	CHECK(hist_bundle_load(path("ln.ptrr"), &b) == PTRR_ERR_BUNDLE);
	printf("     (%s)\n", ptrr_errmsg(PTRR_ERR_BUNDLE));
	CHECK(rename(path("ln.ptrr/code"), path("elsewhere-code")) == 0);
	CHECK(symlink(path("elsewhere-code"), path("ln.ptrr/code")) == 0);
	CHECK(unlink(path("ln.ptrr/threads/100.pt")) == 0);
	CHECK(hist_bundle_load(path("ln.ptrr"), &b) == PTRR_ERR_BUNDLE);
	CHECK(mkfifo(path("ln.ptrr/threads/100.pt"), 0600) == 0);
	CHECK(hist_bundle_load(path("ln.ptrr"), &b) == PTRR_ERR_BUNDLE);
	CHECK(rename(path("ln.ptrr/manifest.json"), path("m.json")) == 0);
	CHECK(symlink(path("m.json"), path("ln.ptrr/manifest.json")) == 0);
	CHECK(hist_bundle_load(path("ln.ptrr"), &b) == PTRR_ERR_BUNDLE);
	CHECK(b == NULL);
}

/* Loads bundle @name, saved afresh, after setting @field to the JSON
 * string @prefix@rest, @prefix after the scratch directory if @absolute. */
static int load_named(const char *name, const char *field, bool absolute,
		      const char *prefix, const char *rest)
{
	char value[8400];
	struct edit e = { field, value };

	snprintf(value, sizeof(value), "\"%s%s%s%s\"", absolute ? scratch : "",
		 absolute ? "/" : "", prefix, rest);
	remove_tree(path("%s", name));
	save_full(name, HIST_SAVE_PACK);
	return load_edited(name, apply_edit, &e);
}

/* Each kind of file the manifest names (a thread's trace, copied code,
 * the crash snapshot, a packed module, the bundle before an execve)
 * named with `..`, absolutely, or through the bundle's own directories
 * back out, to a file outside that would pass every other check (the
 * same bytes; for the module, the same build): the bundle is refused.
 * Then each file, and each directory, replaced by a symbolic link to
 * such a copy outside: refused too.  Nothing outside is read. */
static void test_escapes_each_file(void)
{
	static const char *const fields[] = {
		"threads/0/trace", "threads/1/trace", "code/0/file",
		"snapshot/0/file", "modules/0/file", "modules/1/file",
	};
	static const struct {
		bool absolute;
		const char *prefix;
	} names[] = {
		{ false, "../out/" }, { true, "out/" },
		{ false, "threads/../../out/" },
		{ false, "modules/./../../out/" }, { false, "code/../../out/" },
	};
	static const char *const files[] = {
		"threads/100.pt", "threads/101.pt", "code/0.bin",
		"snapshot/0.bin", "modules/0-mod-loops", "modules/0-mod-loops",
	};
	static const char *const dirs[] = {
		"threads", "code", "snapshot", "modules",
	};
	struct hist_bundle *b = NULL;

	save_full("src.ptrr", HIST_SAVE_PACK);
	mkdir(path("out"), 0755);
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		const char *base = strrchr(files[f], '/') + 1;

		CHECK(copy(path("src.ptrr/%s", files[f]),
			   path("out/%s", base)));
		for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
			printf("     %s = %s%s%s\n", fields[f],
			       names[n].absolute ? "/.../" : "",
			       names[n].prefix, base);
			CHECK(load_named("esc.ptrr", fields[f],
					 names[n].absolute, names[n].prefix,
					 base) == PTRR_ERR_BUNDLE);
		}
	}
	CHECK(load_named("esc.ptrr", "before_exec", true, "", "src.ptrr") ==
	      PTRR_ERR_BUNDLE);
	CHECK(load_named("esc.ptrr", "before_exec", false, "threads/../../",
			 "src.ptrr") == PTRR_ERR_BUNDLE);

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		const char *base = strrchr(files[f], '/') + 1;

		remove_tree(path("sl.ptrr"));
		save_full("sl.ptrr", HIST_SAVE_PACK);
		CHECK(unlink(path("sl.ptrr/%s", files[f])) == 0);
		CHECK(symlink(path("out/%s", base),
			      path("sl.ptrr/%s", files[f])) == 0);
		printf("     %s -> outside\n", files[f]);
		CHECK(hist_bundle_load(path("sl.ptrr"), &b) ==
		      PTRR_ERR_BUNDLE);
		CHECK(b == NULL);
	}
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		remove_tree(path("sl.ptrr"));
		remove_tree(path("out-%s", dirs[d]));
		save_full("sl.ptrr", HIST_SAVE_PACK);
		CHECK(rename(path("sl.ptrr/%s", dirs[d]),
			     path("out-%s", dirs[d])) == 0);
		CHECK(symlink(path("out-%s", dirs[d]),
			      path("sl.ptrr/%s", dirs[d])) == 0);
		printf("     %s/ -> outside\n", dirs[d]);
		CHECK(hist_bundle_load(path("sl.ptrr"), &b) ==
		      PTRR_ERR_BUNDLE);
		CHECK(b == NULL);
	}
}

/* A task id the kernel gave again to a later thread of the recording
 * (pid_max wrapped while a program made threads at a high rate): both
 * threads are saved, each with its own trace file, and load back. */
static void test_reused_tid(void)
{
	struct hist_bundle *b = full_bundle(module_copy("tid-loops")), *l = NULL;
	uint8_t trace[30];
	struct hist_thread *t;

	for (size_t i = 0; i < sizeof(trace); i++)
		trace[i] = pattern(i, 5);
	t = b ? hist_bundle_add_thread(b, 100) : NULL;
	CHECK(t != NULL);
	if (!t) {
		hist_bundle_free(b);
		return;
	}
	hist_thread_set_trace(t, trace, sizeof(trace));
	t->stop = (struct hist_stop){ HIST_STOP_EXITED, 0, 0 };
	CHECK(hist_bundle_save(b, path("tid.ptrr"), 0) == 0);
	hist_bundle_free(b);
	CHECK(hist_bundle_load(path("tid.ptrr"), &l) == 0);
	CHECK(l && l->nthreads == 3 && nwarnings(l) == 0);
	if (l && l->nthreads == 3) {
		check_threads_of(l, 3);
		CHECK(l->threads[2].tid == 100 &&
		      l->threads[2].trace_size == sizeof(trace) &&
		      same_bytes(l->threads[2].trace, sizeof(trace), 5));
		CHECK(strcmp(l->threads[2].trace_file,
			     l->threads[0].trace_file) != 0);
	}
	hist_bundle_free(l);
}

/* Build-ids match readelf; a mismatch makes a module unusable. */
static void test_build_id(void)
{
	char id[256];
	char *got = hist_read_build_id(loops_path());
	struct hist_bundle *b = NULL;

	readelf_build_id(loops_path(), id, sizeof(id));
	CHECK(id[0] && got && !strcmp(got, id));
	printf("     (build-id %s)\n", got ? got : "none");
	free(got);
	CHECK(!hist_read_build_id(path("no-such-file")));
	CHECK(!hist_read_build_id(path("rt.ptrr/manifest.json")));
	CHECK(!hist_read_build_id("/dev/null"));

	CHECK(load_with("modules/0/build_id", "\"DEADBEEF\"") == 0);
	CHECK(hist_bundle_load(path("ed.ptrr"), &b) == 0);
	CHECK(b && !b->modules[0].usable && !b->modules[1].usable);
	CHECK(b && nwarnings(b) == 1 && warned(b, "build-id differs") &&
	      warned(b, "deadbeef vs"));
	hist_bundle_free(b);
}

/* Arguments and file names that are not UTF-8 do not stop a save. */
static void test_not_utf8(void)
{
	struct hist_bundle *b = NULL;

	CHECK(hist_bundle_new(&b) == 0);
	if (!b)
		return;
	free(b->argv);
	b->argv = calloc(2, sizeof(char *));
	b->argv[0] = strdup("caf\xe9");
	CHECK(hist_bundle_add_thread(b, 1) &&
	      hist_bundle_add_module(b, "/no/such/\xff.so", 0, 1, 0) == 0);
	CHECK(hist_bundle_save(b, path("utf8.ptrr"), 0) == 0);
	hist_bundle_free(b);
	CHECK(hist_bundle_load(path("utf8.ptrr"), &b) == 0);
	CHECK(b && !strcmp(b->argv[0], "caf?") &&
	      !strcmp(b->modules[0].path, "/no/such/?.so") &&
	      !b->modules[0].usable);
	hist_bundle_free(b);
}

/* The in-memory model: register names, empty bundle, helpers. */
static void test_model(void)
{
	struct hist_bundle *b = NULL;

	CHECK(!strcmp(hist_reg_name(HIST_RIP), "rip"));
	CHECK(!strcmp(hist_reg_name(HIST_ORIG_RAX), "orig_rax"));
	CHECK(!strcmp(hist_reg_name(HIST_GS), "gs"));
	CHECK(hist_reg_name(HIST_NREGS) == NULL);
	CHECK(hist_bundle_new(&b) == 0);
	CHECK(b && b->argv && !b->argv[0] && b->notes && !b->notes[0] &&
	      b->warnings && !b->warnings[0]);
	CHECK(hist_bundle_add_module(b, NULL, 0, 0, 0) == PTRR_ERR_USAGE);
	hist_bundle_free(b);
}

/* Runs every test in a fresh scratch directory. */
int main(void)
{
	const char *tmp = getenv("TMPDIR");

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(scratch, sizeof(scratch), "%s/ptrr-test-bundle.XXXXXX",
		 tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		perror(scratch);
		return 1;
	}
	test_model();
	test_round_trip();
	test_regsnaps();
	test_overwrite();
	test_save_failure();
	test_before_exec();
	test_stale_tmp();
	test_pack();
	test_version_and_format();
	test_malformed();
	test_bad_json();
	test_damaged_files();
	test_truncated_trace();
	test_escapes();
	test_escapes_each_file();
	test_reused_tid();
	test_build_id();
	test_not_utf8();
	remove_tree(scratch);
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
