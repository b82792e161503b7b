/* IP filters for the perf backend: --filter=START[/SIZE][@FILE] and the
 * kernel's address-filter string (kernel/events/core.c,
 * perf_event_parse_addr_filter: "filter START/SIZE@FILE", tokens split at
 * spaces and commas, numbers in C syntax).  See perf_pt.h. */
#include <config.h>

#include "capture/perf_pt.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses the number at @s up to @end (exclusive) into @v. */
static bool parse_number(const char *s, const char *end, uint64_t *v)
{
	char *stop;

	if (s == end || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoull(s, &stop, 0);
	return !errno && stop == end;
}

int cap_perf_parse_filter(const char *spec, struct cap_perf_filter *f)
{
	const char *at = strchr(spec, '@');
	const char *end = at ? at : spec + strlen(spec);
	const char *slash = memchr(spec, '/', (size_t) (end - spec));

	memset(f, 0, sizeof(*f));
	if (!parse_number(spec, slash ? slash : end, &f->start) ||
	    (slash && !parse_number(slash + 1, end, &f->size)))
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=%s: expected "
				 "START[/SIZE][@FILE] with numbers for START "
				 "and SIZE", spec);
	if (at && (!at[1] || strlen(at + 1) >= sizeof(f->file)))
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=%s: the file name "
				 "after @ is empty or too long", spec);
	if (at) {
		strcpy(f->file, at + 1);
		f->in_file = true;
	}
	return 0;
}

int cap_perf_filter_resolve(struct cap_perf_filter *f,
			    const struct cap_map *maps, size_t nmaps)
{
	for (size_t i = 0; !f->in_file && i < nmaps; i++) {
		const struct cap_map *m = &maps[i];

		if (f->start < m->start || f->start >= m->end ||
		    !cap_map_is_file(m))
			continue;
		if (strlen(m->path) >= sizeof(f->file))
			break;
		strcpy(f->file, m->path);
		f->start = f->start - m->start + m->offset;
		f->in_file = true;
	}
	if (!f->in_file)
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=0x%" PRIx64 ": no "
				 "file is mapped at that address in the "
				 "program; give START/SIZE@FILE", f->start);
	return 0;
}

/* Checks that the kernel can take @f as a "filter" range. */
static int check_filter(const struct cap_perf_filter *f)
{
	if (!f->in_file || !f->file[0])
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=0x%" PRIx64 ": no "
				 "file: the kernel filters user code by file "
				 "and offset (START/SIZE@FILE)", f->start);
	if (!f->size)
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=0x%" PRIx64 "@%s: "
				 "no SIZE: the kernel traces a filter range of "
				 "at least one byte (START/SIZE@FILE)",
				 f->start, f->file);
	if (strpbrk(f->file, " ,\t\n"))
		return ptrr_fail(PTRR_ERR_USAGE, "--filter=...@%s: the kernel "
				 "cannot take a file name with spaces or "
				 "commas; use a link to it", f->file);
	return 0;
}

int cap_perf_filter_string(const struct cap_perf_filter *f, size_t n,
			   char *buf, size_t size)
{
	size_t len = 0;
	int w, err;

	if (size)
		buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		err = check_filter(&f[i]);
		if (err)
			return err;
		w = snprintf(buf + len, size - len, "%sfilter 0x%" PRIx64
			     "/0x%" PRIx64 "@%s", i ? "," : "", f[i].start,
			     f[i].size, f[i].file);
		if (w < 0 || (size_t) w >= size - len)
			return ptrr_fail(PTRR_ERR_USAGE, "the IP filters are "
					 "too long for one filter string");
		len += (size_t) w;
	}
	return 0;
}
