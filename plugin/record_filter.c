/* `ptrr record --filter=START[/SIZE][@FILE]`: the IP ranges to trace,
 * as Intel PT's ADDRn_A/B ranges (SDM 36.2.4.3) and perf's "filter
 * START/SIZE@FILE".  See record.h.
 *
 * START is an address, a symbol, or SYMBOL+OFFSET; a symbol without
 * /SIZE means the whole symbol (its st_size, from OFFSET on).  Without
 * @FILE, symbols are the program's and a number is a run-time address;
 * with @FILE, symbols are FILE's and a number is an offset in FILE (as the
 * kernel takes it).  A range is placed at run time, with the load bias of
 * a position-independent file, as soon as its file is mapped: the
 * program at once, a shared library when the dynamic linker maps it
 * (looked for after every system call while a range waits).  Until then
 * the range is empty: nothing is traced for it. */
#include <config.h>

#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "capture/elfsym.h"
#include "capture/procmaps.h"

/* Parses all of @s as a number (C syntax); false if it is not one. */
static bool parse_number(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* Fills @f from @spec's START and SIZE (@start, @size: NULL if absent). */
static int parse_range(struct rec_filter *f, const char *start,
		       const char *size)
{
	char *name;
	int rc = 0;

	if (size && (!parse_number(size, &f->size) || !f->size))
		return rec_usage_error("--filter: SIZE is not a number above "
				       "0", f->spec);
	if (!*start)
		return rec_usage_error("--filter: no START (an address, "
				       "SYMBOL or SYMBOL+OFFSET)", f->spec);
	if (parse_number(start, &f->start))
		return size ? 0 : rec_usage_error("--filter: an address needs "
						  "a /SIZE", f->spec);
	if (!rec_split_symbol(start, &name, &f->start))
		return rec_usage_error("--filter: expected START as SYMBOL, "
				       "SYMBOL+OFFSET or an address", f->spec);
	if (strlen(name) >= sizeof(f->name))
		rc = rec_usage_error("--filter: the symbol name is too long",
				     f->spec);
	else
		strcpy(f->name, name);
	free(name);
	return rc;
}

int rec_filter_parse(struct rec_opts *o, const char *spec)
{
	struct rec_filter *f = &o->filters[o->nfilters];
	char *copy, *at, *slash;
	int rc;

	if (o->nfilters == CAP_EMIT_MAX_FILTERS)
		return rec_usage_error("--filter: at most 4 ranges (as Intel "
				       "PT's ADDRn registers)", spec);
	memset(f, 0, sizeof(*f));
	f->spec = spec;
	copy = strdup(spec);
	if (!copy)
		return rec_usage_error("out of memory", NULL);
	at = strchr(copy, '@');
	if (at)
		*at++ = 0;
	slash = strchr(copy, '/');
	if (slash)
		*slash++ = 0;
	rc = parse_range(f, copy, slash);
	if (!rc && at && !realpath(at, f->file))
		rc = rec_usage_error("--filter: cannot find the FILE after @",
				     spec);
	free(copy);
	if (!rc)
		o->nfilters++;
	return rc;
}

/* The file @f's START is in: @FILE, or the program. */
static const char *filter_file(const struct recorder *r,
			       const struct rec_filter *f)
{
	return f->file[0] ? f->file : r->img.exe;
}

/* A usage error about filter @f, from the message of @err. */
static int usage_fail(const struct rec_filter *f, int err)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", ptrr_errmsg(err));
	return ptrr_fail(PTRR_ERR_USAGE, "--filter=%s: %s", f->spec, why);
}

/* A usage error about filter @f of @r, from the message of @err. */
static int filter_fail(struct recorder *r, const struct rec_filter *f,
		       int err)
{
	r->base.usage_error = true;
	return usage_fail(f, err);
}

int rec_filter_symbol(struct rec_filter *f, const char *path)
{
	struct cap_elf_sym sym;
	int err = cap_elf_find_symbol(path, f->name, &sym);

	if (err)
		return usage_fail(f, err);
	if (!f->size && sym.size <= f->start)
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=%s: symbol '%s' has "
				 "%" PRIu64 " bytes in %s: give START/SIZE",
				 f->spec, f->name, sym.size, path);
	if (!f->size)
		f->size = sym.size - f->start;
	f->link_addr = sym.value + f->start;
	f->pie = sym.pie;
	f->has_offset = sym.in_file;
	f->file_offset = sym.offset + f->start;
	return 0;
}

/* rec_filter_symbol() for @r: a failure is the user's options'. */
static int find_symbol(struct recorder *r, struct rec_filter *f,
		       const char *path)
{
	int err = rec_filter_symbol(f, path);

	if (err)
		r->base.usage_error = true;
	return err;
}

/* The run-time address of @f's START in file @path, 0 while the file is
 * not mapped: a symbol plus the load bias, or a file offset in the
 * mapping that holds it. */
static uint64_t place(const struct rec_filter *f, const char *path,
		      const struct cap_map *maps, size_t n)
{
	uint64_t base;

	if (f->name[0]) {
		base = f->pie ? cap_maps_base(maps, n, path) : 0;
		return f->pie && !base ? 0 : base + f->link_addr;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(maps[i].path, path) &&
		    f->start - maps[i].offset < maps[i].end - maps[i].start)
			return maps[i].start + f->start - maps[i].offset;
	return 0;
}

/* Gives every emitter the ranges of r->cfg. */
static void share_ranges(struct recorder *r)
{
	for (size_t i = 0; i < r->img.nthreads; i++) {
		struct cap_emit *e = &r->img.threads[i]->em;

		memcpy(e->cfg.filters, r->cfg.filters, sizeof(e->cfg.filters));
		e->cfg.nfilters = r->cfg.nfilters;
	}
}

int rec_filters_update(struct recorder *r)
{
	struct rec_opts *o = r->opts;
	pid_t tid = cap_stepper_mem_tid(&r->st);
	struct cap_map *maps;
	size_t n;
	int err;

	if (!r->filters_pending || !tid)
		return 0;
	err = cap_maps_read(tid, &maps, &n);
	if (err)
		return err;
	for (uint32_t i = 0; i < o->nfilters; i++) {
		struct rec_filter *f = &o->filters[i];
		uint64_t addr;

		if (f->resolved)
			continue;
		addr = place(f, filter_file(r, f), maps, n);
		if (!addr)
			continue;
		r->cfg.filters[i] = (struct cap_filter){ addr, f->size };
		f->resolved = true;
		r->filters_pending--;
	}
	cap_maps_free(maps, n);
	share_ranges(r);
	return 0;
}

int rec_filters_start(struct recorder *r)
{
	struct rec_opts *o = r->opts;
	int err = 0;

	r->cfg.nfilters = o->nfilters;
	for (uint32_t i = 0; !err && i < o->nfilters; i++) {
		struct rec_filter *f = &o->filters[i];

		r->cfg.filters[i] = (struct cap_filter){ 0, 0 };
		if (f->name[0])
			err = find_symbol(r, f, filter_file(r, f));
		else if (f->file[0]) {
			f->has_offset = true;
			f->file_offset = f->start;
		}
		/* A symbol of PROG stays one of PROG's file after an
		 * execve of another program. */
		if (!err && f->name[0] && !f->file[0] &&
		    strlen(r->img.exe) < sizeof(f->file))
			strcpy(f->file, r->img.exe);
		if (!f->name[0] && !f->file[0]) {
			r->cfg.filters[i].start = f->start;
			r->cfg.filters[i].size = f->size;
			f->resolved = true;
		} else {
			r->filters_pending++;
		}
	}
	return err ? err : rec_filters_update(r);
}

/* Filter @f as a range of its file for the kernel, into @out. */
static int perf_filter(struct recorder *r, const struct rec_filter *f,
		       const struct cap_map *maps, size_t n,
		       struct cap_perf_filter *out)
{
	const char *file = filter_file(r, f);
	int err;

	memset(out, 0, sizeof(*out));
	out->start = f->has_offset ? f->file_offset : f->start;
	out->size = f->size;
	if (f->name[0] && !f->has_offset) {
		r->base.usage_error = true;
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=%s: '%s' is not in "
				 "a loadable segment of %s", f->spec, f->name,
				 file);
	}
	if (!f->has_offset) {	/* a run-time address */
		err = cap_perf_filter_resolve(out, maps, n);
		return err ? filter_fail(r, f, err) : 0;
	}
	if (strlen(file) >= sizeof(out->file)) {
		r->base.usage_error = true;
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=%s: the file name "
				 "is too long for the kernel", f->spec);
	}
	strcpy(out->file, file);
	out->in_file = true;
	return 0;
}

int rec_filters_perf(struct recorder *r, pid_t pid,
		     struct cap_perf_filter *out, size_t *n)
{
	const struct rec_opts *o = r->opts;
	struct cap_map *maps;
	size_t nmaps;
	int err = cap_maps_read(pid, &maps, &nmaps);

	for (uint32_t i = 0; !err && i < o->nfilters; i++)
		err = perf_filter(r, &o->filters[i], maps, nmaps, &out[i]);
	if (!err)
		*n = o->nfilters;
	if (maps)
		cap_maps_free(maps, nmaps);
	return err;
}

int rec_filters_exec(struct recorder *r)
{
	struct rec_opts *o = r->opts;

	for (uint32_t i = 0; i < o->nfilters; i++) {
		struct rec_filter *f = &o->filters[i];

		if (!f->file[0] || !f->resolved)
			continue;	/* an address, or still waiting */
		f->resolved = false;
		r->cfg.filters[i] = (struct cap_filter){ 0, 0 };
		r->filters_pending++;
	}
	return rec_filters_update(r);
}

void rec_filters_header(struct hist_bundle *b,
			const struct cap_filter *ranges, uint32_t n)
{
	b->pt.nfilters = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!ranges[i].size)	/* its file never mapped */
			continue;
		b->pt.filters[b->pt.nfilters].start = ranges[i].start;
		b->pt.filters[b->pt.nfilters++].size = ranges[i].size;
	}
}

int rec_filters_note_ranges(struct hist_bundle *b, const struct rec_opts *o,
			    const struct cap_filter *ranges, bool by_kernel)
{
	int err = 0;

	for (uint32_t i = 0; !err && i < o->nfilters; i++) {
		const struct rec_filter *f = &o->filters[i];
		const struct cap_filter *c = &ranges[i];

		if (c->size)
			err = hist_bundle_add_note(b, "IP filter --filter=%s: "
						   "0x%" PRIx64 "-0x%" PRIx64,
						   f->spec, c->start,
						   c->start + c->size);
		else if (by_kernel)
			err = hist_bundle_add_note(b, "IP filter --filter=%s: "
						   "placed by the kernel when "
						   "%s is mapped (not seen by "
						   "ptrr)", f->spec,
						   f->file[0] ? f->file :
								"the program");
		else
			err = hist_bundle_add_note(b, "IP filter --filter=%s: "
						   "%s was never mapped: "
						   "nothing traced there",
						   f->spec, f->file);
	}
	return err;
}

int rec_filters_note(struct hist_bundle *b, const struct recorder *r)
{
	return rec_filters_note_ranges(b, r->opts, r->cfg.filters,
				       r->perf != NULL);
}
