/* The bundle manifest (manifest.json): struct hist_bundle to JSON and back.
 *
 * Writing is strict: 64-bit addresses, sizes of memory ranges and register
 * values are hex strings ("0x401000"), because JSON numbers lose precision
 * past 2^53; byte counts (trace_size, trace_lost, psb_period) are integers.
 * Reading is careful: the manifest may be damaged or hostile, so every
 * field is checked for type and range, and every file name must stay inside
 * the bundle.  Any 64-bit field may be given as a hex string or as a
 * non-negative integer.  Unknown keys are ignored.
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_internal.h"

static const char *const stop_kinds[] = {
	[HIST_STOP_NONE] = "none",
	[HIST_STOP_EXITED] = "exited",
	[HIST_STOP_SIGNALED] = "signaled",
	[HIST_STOP_FAULT] = "fault",
	[HIST_STOP_INTERRUPTED] = "interrupted",
	[HIST_STOP_EXEC] = "exec",
};
#define NSTOP_KINDS (sizeof(stop_kinds) / sizeof(stop_kinds[0]))

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

/* @v as a "0x..." string. */
static json_t *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

/* @s as a JSON string.  JSON carries only UTF-8, and file names and
 * arguments may hold any bytes: if @s is not UTF-8, its non-ASCII bytes
 * become '?' (lossy, but the recording is kept). */
static json_t *text(const char *s)
{
	json_t *v = json_string(s);
	char *copy;

	if (v || !s || !(copy = strdup(s)))
		return v;
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

/* Byte count @v as an integer, or as hex if JSON integers cannot hold it. */
static json_t *count(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : hex(v);
}

/* Sets @o[@key] to @v (taken over); nonzero if @v is NULL or on failure. */
static int put(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v);
}

/* Frees the half-built @o and returns NULL, for encoders that failed. */
static json_t *drop(json_t *o)
{
	json_decref(o);
	return NULL;
}

/* Name of the signal @sig for readers of the manifest ("SIGSEGV"). */
static json_t *signal_name(int sig)
{
	const char *abbrev = sigabbrev_np(sig);
	char buf[32];

	if (abbrev)
		snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	else
		snprintf(buf, sizeof(buf), "SIG%d", sig);
	return json_string(buf);
}

/* A stop as {kind, code, addr[, signal_name]}.  A kind outside the enum
 * (a caller's bug) is written as "none". */
static json_t *enc_stop(const struct hist_stop *s)
{
	unsigned kind = (unsigned)s->kind < NSTOP_KINDS ? s->kind : 0;
	bool sig = kind == HIST_STOP_SIGNALED || kind == HIST_STOP_FAULT;
	json_t *o = json_object();

	if (!o || put(o, "kind", json_string(stop_kinds[kind])) ||
	    put(o, "code", json_integer(s->code)) ||
	    put(o, "addr", hex(s->addr)) ||
	    (sig && put(o, "signal_name", signal_name(s->code))))
		return drop(o);
	return o;
}

/* Registers as {name: "0x..."}, or null if they are not known. */
static json_t *enc_regs(const struct hist_regs *regs)
{
	json_t *o;

	if (!regs->valid)
		return json_null();
	o = json_object();
	for (int i = 0; o && i < HIST_NREGS; i++)
		if (put(o, hist_reg_name(i), hex(regs->r[i])))
			return drop(o);
	return o;
}

/* A thread (struct hist_thread at @p). */
static json_t *enc_thread(const void *p)
{
	const struct hist_thread *t = p;
	json_t *o = json_object();

	if (!o || put(o, "tid", json_integer(t->tid)) ||
	    put(o, "trace", json_string(t->trace_file)) ||
	    put(o, "trace_size", count(t->trace_size)) ||
	    put(o, "trace_lost", count(t->trace_lost)) ||
	    put(o, "regs", enc_regs(&t->regs)) ||
	    (t->start_regs.valid &&
	     put(o, "start_regs", enc_regs(&t->start_regs))) ||
	    (t->have_end_ip && put(o, "end_ip", hex(t->end_ip))) ||
	    put(o, "stop", enc_stop(&t->stop)))
		return drop(o);
	return o;
}

/* A module (struct hist_module at @p); "file" only if packed. */
static json_t *enc_module(const void *p)
{
	const struct hist_module *m = p;
	json_t *o = json_object();

	if (!o || put(o, "path", text(m->path)) ||
	    (m->file && put(o, "file", json_string(m->file))) ||
	    put(o, "build_id",
		m->build_id ? text(m->build_id) : json_null()) ||
	    put(o, "start", hex(m->start)) || put(o, "size", hex(m->size)) ||
	    put(o, "offset", hex(m->offset)))
		return drop(o);
	return o;
}

/* A code or snapshot blob (struct hist_blob at @p). */
static json_t *enc_blob(const void *p)
{
	const struct hist_blob *x = p;
	json_t *o = json_object();

	if (!o || put(o, "name", text(x->name ? x->name : "")) ||
	    put(o, "start", hex(x->start)) || put(o, "size", hex(x->size)) ||
	    put(o, "file", json_string(x->file)))
		return drop(o);
	return o;
}

/* An array of the @n elements of @arr (each @elem bytes), each encoded by
 * @fn. */
static json_t *enc_array(const void *arr, size_t n, size_t elem,
			 json_t *(*fn)(const void *))
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, fn((const char *)arr + i * elem)))
			return drop(a);
	return a;
}

/* A NULL-terminated list of strings (NULL = empty) as an array. */
static json_t *enc_strv(char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; a && v && v[i]; i++)
		if (json_array_append_new(a, text(v[i])))
			return drop(a);
	return a;
}

/* The CPU of the recording. */
static json_t *enc_cpu(const struct hist_cpu *c)
{
	json_t *o = json_object();

	if (!o || put(o, "vendor", json_stringn(c->vendor,
			strnlen(c->vendor, sizeof(c->vendor)))) ||
	    put(o, "family", json_integer(c->family)) ||
	    put(o, "model", json_integer(c->model)) ||
	    put(o, "stepping", json_integer(c->stepping)))
		return drop(o);
	return o;
}

/* One IP filter range. */
static json_t *enc_filter(const void *p)
{
	const uint64_t *f = p;	/* {start, size} */
	json_t *o = json_object();

	if (!o || put(o, "start", hex(f[0])) || put(o, "size", hex(f[1])))
		return drop(o);
	return o;
}

/* How the trace was produced. */
static json_t *enc_pt(const struct hist_ptconf *pt)
{
	size_t n = pt->nfilters < 4 ? pt->nfilters : 4;
	json_t *o = json_object();

	if (!o || put(o, "backend", json_stringn(pt->backend,
			strnlen(pt->backend, sizeof(pt->backend)))) ||
	    put(o, "psb_period", json_integer(pt->psb_period)) ||
	    put(o, "ret_compression", json_boolean(pt->ret_compression)) ||
	    put(o, "filters", enc_array(pt->filters, n,
					sizeof(pt->filters[0]), enc_filter)))
		return drop(o);
	return o;
}

/* The traced program: exe and argv. */
static json_t *enc_program(const struct hist_bundle *b)
{
	json_t *o = json_object();

	if (!o || put(o, "exe", b->exe ? text(b->exe) : json_null()) ||
	    put(o, "argv", enc_strv(b->argv)))
		return drop(o);
	return o;
}

json_t *bundle_manifest_encode(const struct hist_bundle *b)
{
	json_t *o = json_object();

	if (!o || put(o, "format", json_string(BUNDLE_FORMAT)) ||
	    put(o, "version", json_integer(HIST_BUNDLE_VERSION)) ||
	    put(o, "cpu", enc_cpu(&b->cpu)) || put(o, "pt", enc_pt(&b->pt)) ||
	    put(o, "program", enc_program(b)) ||
	    put(o, "stop", enc_stop(&b->stop)) ||
	    put(o, "threads", enc_array(b->threads, b->nthreads,
					sizeof(*b->threads), enc_thread)) ||
	    put(o, "modules", enc_array(b->modules, b->nmodules,
					sizeof(*b->modules), enc_module)) ||
	    put(o, "code", enc_array(b->code, b->ncode, sizeof(*b->code),
				     enc_blob)) ||
	    put(o, "snapshot", enc_array(b->snapshot, b->nsnapshot,
					 sizeof(*b->snapshot), enc_blob)) ||
	    put(o, "notes", enc_strv(b->notes)) ||
	    (b->before_exec_dir &&
	     put(o, "before_exec", json_string(b->before_exec_dir))))
		return drop(o);
	return o;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

/* Where the reader is in the manifest, for messages. */
struct mrd {
	const char *dir;	/* the bundle */
	char where[96];		/* "threads[2].regs", or "" at the top */
};

/* Refuses the bundle because field @key of the current object (or the
 * current object itself if @key is NULL) is not @expect. */
static int bad(const struct mrd *r, const char *key, const char *expect)
{
	const char *dot = r->where[0] && key ? "." : "";

	return ptrr_fail(PTRR_ERR_BUNDLE,
			 "bundle %s: manifest.json: %s%s%s is missing or not %s: the recording is damaged; re-record it",
			 r->dir, r->where, dot, key ? key : "", expect);
}

/* The reader for field @key of the current object (names are short; a
 * deep one is cut rather than overflowing). */
static struct mrd nested(const struct mrd *r, const char *key)
{
	struct mrd sub = { .dir = r->dir };

	snprintf(sub.where, sizeof(sub.where), "%.47s%s%.31s", r->where,
		 r->where[0] ? "." : "", key);
	return sub;
}

/* Records and returns an out-of-memory failure. */
static int nomem(void)
{
	return ptrr_fail(PTRR_ERR_NOMEM,
			 "out of memory while reading a bundle manifest");
}

/* Parses "0x" followed by 1 to 16 hex digits. */
static bool parse_hex(const char *s, uint64_t *out)
{
	size_t n;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	n = strlen(s + 2);
	if (n < 1 || n > 16 || strspn(s + 2, "0123456789abcdefABCDEF") != n)
		return false;
	*out = strtoull(s + 2, NULL, 16);
	return true;
}

/* Field @key as a 64-bit value (hex string or non-negative integer). */
static int get_u64(const struct mrd *r, json_t *o, const char *key,
		   uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (json_is_string(v) && parse_hex(json_string_value(v), out))
		return 0;
	return bad(r, key,
		   "a non-negative integer or a hex string like \"0x401000\"");
}

/* Field @key as a 64-bit value no larger than @max. */
static int get_u64_max(const struct mrd *r, json_t *o, const char *key,
		       uint64_t max, uint64_t *out)
{
	int err = get_u64(r, o, key, out);

	if (!err && *out > max)
		return bad(r, key, "a value in range");
	return err;
}

/* Field @key as an integer in [@lo, @hi]. */
static int get_int(const struct mrd *r, json_t *o, const char *key,
		   long long lo, long long hi, long long *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi)
		return bad(r, key, "an integer in range");
	*out = json_integer_value(v);
	return 0;
}

/* Field @key as a string (borrowed from @o), or NULL if @nullable and the
 * field is null or absent. */
static int get_str(const struct mrd *r, json_t *o, const char *key,
		   bool nullable, const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = json_string_value(v);
	if (*out || (nullable && (!v || json_is_null(v))))
		return 0;
	return bad(r, key, "a string");
}

/* Field @key as a malloc'd string (see get_str for @nullable). */
static int dup_str(const struct mrd *r, json_t *o, const char *key,
		   bool nullable, char **out)
{
	const char *s;
	int err = get_str(r, o, key, nullable, &s);

	if (err || !s)
		return err;
	*out = strdup(s);
	return *out ? 0 : nomem();
}

/* Field @key as a string of fewer than @size bytes, copied into @buf. */
static int get_fixed_str(const struct mrd *r, json_t *o, const char *key,
			 char *buf, size_t size)
{
	const char *s;
	int err = get_str(r, o, key, false, &s);

	if (err)
		return err;
	if (strlen(s) >= size)
		return bad(r, key, "a short enough string");
	strcpy(buf, s);
	return 0;
}

/* Field @key as an object. */
static int get_obj(const struct mrd *r, json_t *o, const char *key,
		   json_t **out)
{
	*out = json_object_get(o, key);
	return json_is_object(*out) ? 0 : bad(r, key, "an object");
}

/* True if relative path @p stays inside the bundle: not empty, not
 * absolute, no ".." component. */
static bool path_inside(const char *p)
{
	const char *c = p;

	if (!p[0] || p[0] == '/')
		return false;
	while (c) {
		if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2]))
			return false;
		c = strchr(c, '/');
		c = c ? c + 1 : NULL;
	}
	return true;
}

/* Field @key as a malloc'd file name inside the bundle (or NULL if
 * @nullable and absent).  A name that leads outside is refused. */
static int get_path(const struct mrd *r, json_t *o, const char *key,
		    bool nullable, char **out)
{
	int err = dup_str(r, o, key, nullable, out);

	if (err || !*out || path_inside(*out))
		return err;
	return ptrr_fail(PTRR_ERR_BUNDLE,
			 "bundle %s: manifest.json: %s.%s \"%s\" points outside the bundle: refusing to read it (a bundle names only files inside itself; re-record it)",
			 r->dir, r->where, key, *out);
}

/* Field @key, an array of strings, appended to list @v.  An absent field
 * is an empty list unless @required. */
static int get_strv(const struct mrd *r, json_t *o, const char *key,
		    bool required, char ***v)
{
	json_t *a = json_object_get(o, key);
	int err = 0;

	if (!a && !required)
		return 0;
	if (!json_is_array(a))
		return bad(r, key, "an array of strings");
	for (size_t i = 0; !err && i < json_array_size(a); i++) {
		const char *s = json_string_value(json_array_get(a, i));

		if (!s)
			return bad(r, key, "an array of strings");
		err = bundle_strv_append(v, strdup(s));
	}
	return err ? nomem() : 0;
}

/* Decodes one element of an array into the zeroed @elem. */
typedef int (*dec_fn)(const struct mrd *r, json_t *o, void *elem);

/* Field @key, an array of objects, into a new array of @elem-byte elements
 * each decoded by @fn.  @arr and @n are set before the elements are
 * decoded, so that a partial array can be freed.  An absent field is an
 * empty array unless @required. */
static int get_array(const struct mrd *r, json_t *o, const char *key,
		     bool required, size_t elem, dec_fn fn, void **arr,
		     size_t *n)
{
	json_t *a = json_object_get(o, key);
	char *p;

	if (!a && !required)
		return 0;
	if (!json_is_array(a))
		return bad(r, key, "an array");
	if (!json_array_size(a))
		return 0;
	p = calloc(json_array_size(a), elem);
	if (!p)
		return nomem();
	*arr = p;
	*n = json_array_size(a);
	for (size_t i = 0; i < *n; i++) {
		struct mrd er = { .dir = r->dir };
		json_t *e = json_array_get(a, i);
		int err;

		snprintf(er.where, sizeof(er.where), "%.47s%s%.20s[%zu]", r->where,
			 r->where[0] ? "." : "", key, i);
		if (!json_is_object(e))
			return bad(&er, NULL, "an object");
		if ((err = fn(&er, e, p + i * elem)))
			return err;
	}
	return 0;
}

/* The "cpu" object. */
static int dec_cpu(const struct mrd *top, json_t *root, struct hist_cpu *c)
{
	struct mrd r = nested(top, "cpu");
	long long family, model, stepping;
	json_t *o;
	int err;

	if ((err = get_obj(top, root, "cpu", &o)) ||
	    (err = get_fixed_str(&r, o, "vendor", c->vendor,
				 sizeof(c->vendor))) ||
	    (err = get_int(&r, o, "family", 0, UINT16_MAX, &family)) ||
	    (err = get_int(&r, o, "model", 0, UINT8_MAX, &model)) ||
	    (err = get_int(&r, o, "stepping", 0, UINT8_MAX, &stepping)))
		return err;
	c->family = family;
	c->model = model;
	c->stepping = stepping;
	return 0;
}

/* One IP filter range {start, size}. */
static int dec_filter(const struct mrd *r, json_t *o, void *elem)
{
	uint64_t *f = elem;	/* {start, size} */
	int err = get_u64(r, o, "start", &f[0]);

	return err ? err : get_u64(r, o, "size", &f[1]);
}

/* The "pt" object; at most 4 filters. */
static int dec_pt(const struct mrd *top, json_t *root, struct hist_ptconf *pt)
{
	struct mrd r = nested(top, "pt");
	void *filters = NULL;
	size_t n = 0;
	uint64_t psb;
	json_t *o;
	int err;

	if ((err = get_obj(top, root, "pt", &o)) ||
	    (err = get_fixed_str(&r, o, "backend", pt->backend,
				 sizeof(pt->backend))) ||
	    (err = get_u64_max(&r, o, "psb_period", UINT32_MAX, &psb)))
		return err;
	pt->psb_period = psb;
	if (!json_is_boolean(json_object_get(o, "ret_compression")))
		return bad(&r, "ret_compression", "true or false");
	pt->ret_compression = json_is_true(json_object_get(o, "ret_compression"));
	err = get_array(&r, o, "filters", false, sizeof(pt->filters[0]),
			dec_filter, &filters, &n);
	if (!err && n > 4)
		err = bad(&r, "filters", "an array of at most 4 ranges");
	if (!err && n)
		memcpy(pt->filters, filters, n * sizeof(pt->filters[0]));
	pt->nfilters = err ? 0 : n;
	free(filters);
	return err;
}

/* The "program" object. */
static int dec_program(const struct mrd *top, json_t *root,
		       struct hist_bundle *b)
{
	struct mrd r = nested(top, "program");
	json_t *o;
	int err;

	if ((err = get_obj(top, root, "program", &o)) ||
	    (err = dup_str(&r, o, "exe", true, &b->exe)))
		return err;
	return get_strv(&r, o, "argv", true, &b->argv);
}

/* The "stop" object of @parent. */
static int dec_stop(const struct mrd *top, json_t *parent,
		    struct hist_stop *s)
{
	struct mrd r = nested(top, "stop");
	const char *kind;
	long long code;
	json_t *o;
	int err;

	if ((err = get_obj(top, parent, "stop", &o)) ||
	    (err = get_str(&r, o, "kind", false, &kind)) ||
	    (err = get_int(&r, o, "code", INT_MIN, INT_MAX, &code)) ||
	    (err = get_u64(&r, o, "addr", &s->addr)))
		return err;
	s->code = code;
	for (size_t k = 0; k < NSTOP_KINDS; k++)
		if (!strcmp(kind, stop_kinds[k])) {
			s->kind = k;
			return 0;
		}
	return bad(&r, "kind",
		   "one of none, exited, signaled, fault, interrupted, exec");
}

/* Registers: null or absent if unknown, else every register by name. */
static int dec_regs(const struct mrd *top, json_t *parent, const char *key,
		    struct hist_regs *regs)
{
	struct mrd r = nested(top, key);
	json_t *o = json_object_get(parent, key);
	int err = 0;

	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return bad(top, key, "an object or null");
	for (int i = 0; !err && i < HIST_NREGS; i++)
		err = get_u64(&r, o, hist_reg_name(i), &regs->r[i]);
	regs->valid = !err;
	return err;
}

/* One thread; its trace file name must stay inside the bundle. */
static int dec_thread(const struct mrd *r, json_t *o, void *elem)
{
	struct hist_thread *t = elem;
	long long tid;
	uint64_t size;
	int err;

	if ((err = get_int(r, o, "tid", 0, INT_MAX, &tid)) ||
	    (err = get_path(r, o, "trace", false, &t->trace_file)) ||
	    (err = get_u64_max(r, o, "trace_size", SIZE_MAX, &size)) ||
	    (err = get_u64(r, o, "trace_lost", &t->trace_lost)) ||
	    (err = dec_regs(r, o, "regs", &t->regs)) ||
	    (err = dec_regs(r, o, "start_regs", &t->start_regs)) ||
	    (json_object_get(o, "end_ip") &&
	     (err = get_u64(r, o, "end_ip", &t->end_ip))))
		return err;
	t->have_end_ip = json_object_get(o, "end_ip") != NULL;
	t->tid = tid;
	t->trace_size = size;
	return dec_stop(r, o, &t->stop);
}

/* A build-id: a non-empty string of hex digits, kept in lower case. */
static int get_build_id(const struct mrd *r, json_t *o, char **out)
{
	int err = dup_str(r, o, "build_id", true, out);
	char *s = *out;

	if (err || !s)
		return err;
	if (!s[0] || strspn(s, "0123456789abcdefABCDEF") != strlen(s))
		return bad(r, "build_id", "a hex string or null");
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'F')
			*s += 'a' - 'A';
	return 0;
}

/* One module, usable until the loader finds otherwise. */
static int dec_module(const struct mrd *r, json_t *o, void *elem)
{
	struct hist_module *m = elem;
	int err;

	if ((err = dup_str(r, o, "path", false, &m->path)) ||
	    (err = get_path(r, o, "file", true, &m->file)) ||
	    (err = get_build_id(r, o, &m->build_id)) ||
	    (err = get_u64(r, o, "start", &m->start)) ||
	    (err = get_u64(r, o, "size", &m->size)))
		return err;
	m->usable = true;
	return get_u64(r, o, "offset", &m->offset);
}

/* One code or snapshot blob. */
static int dec_blob(const struct mrd *r, json_t *o, void *elem)
{
	struct hist_blob *x = elem;
	int err;

	if ((err = dup_str(r, o, "name", false, &x->name)) ||
	    (err = get_u64(r, o, "start", &x->start)) ||
	    (err = get_u64(r, o, "size", &x->size)))
		return err;
	return get_path(r, o, "file", false, &x->file);
}

int bundle_manifest_version(json_t *root, const char *dir, int *version)
{
	const char *format = json_string_value(json_object_get(root, "format"));
	json_t *v = json_object_get(root, "version");

	if (!format || strcmp(format, BUNDLE_FORMAT))
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "%s is not a ptrr recording (its manifest.json lacks \"format\": \"%s\"): give the NAME.ptrr directory that ptrr record wrote",
				 dir, BUNDLE_FORMAT);
	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "bundle %s: manifest.json has no valid \"version\": the recording is damaged; re-record it",
				 dir);
	if (json_integer_value(v) > HIST_BUNDLE_VERSION)
		return ptrr_fail(PTRR_ERR_VERSION,
				 "bundle %s was written by a newer ptrr (format version %lld; this ptrr reads up to %d): upgrade ptrr",
				 dir, (long long)json_integer_value(v),
				 HIST_BUNDLE_VERSION);
	*version = json_integer_value(v);
	return 0;
}

int bundle_manifest_decode(json_t *root, const char *dir,
			   struct hist_bundle *b)
{
	struct mrd r = { .dir = dir };
	void *threads = NULL, *modules = NULL, *code = NULL, *snap = NULL;
	int err;

	if ((err = dec_cpu(&r, root, &b->cpu)) ||
	    (err = dec_pt(&r, root, &b->pt)) ||
	    (err = dec_program(&r, root, b)) ||
	    (err = dec_stop(&r, root, &b->stop)))
		return err;
	err = get_array(&r, root, "threads", true, sizeof(*b->threads),
			dec_thread, &threads, &b->nthreads);
	b->threads = threads;
	if (!err)
		err = get_array(&r, root, "modules", true, sizeof(*b->modules),
				dec_module, &modules, &b->nmodules);
	b->modules = modules;
	if (!err)
		err = get_array(&r, root, "code", false, sizeof(*b->code),
				dec_blob, &code, &b->ncode);
	b->code = code;
	if (!err)
		err = get_array(&r, root, "snapshot", false,
				sizeof(*b->snapshot), dec_blob, &snap,
				&b->nsnapshot);
	b->snapshot = snap;
	if (!err)
		err = get_path(&r, root, "before_exec", true,
			       &b->before_exec_dir);
	return err ? err : get_strv(&r, root, "notes", false, &b->notes);
}
