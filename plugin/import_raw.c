/* `ptrr import --raw=TRACE --image=FILE@ADDR[,OFFSET,SIZE]...
 * [--cpu=F/M/S] -o BUNDLE`: any raw Intel PT stream and the code it ran,
 * as libipt's ptxed takes them, as a one-thread recording — for traces
 * from other tools (simple-pt, fuzzers such as kAFL, firmware tracers).
 *
 * Each --image maps SIZE bytes of FILE from file offset OFFSET (0, and
 * the rest of the file, by default) at address ADDR; files need not be
 * ELF.  --cpu names the CPU the trace was recorded on (libipt applies
 * its errata by it); without it the CPU is unknown.  The trace is one
 * thread's, numbered 1; there are no registers or memory, so the replay
 * starts at its end with the instruction pointer only.
 */
#include <config.h>

#include "import_raw.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Parses "FILE@ADDR[,OFFSET,SIZE]" into @img; false if malformed. */
bool import_raw_parse_image(const char *arg, struct import_raw_image *img)
{
	const char *at = strrchr(arg, '@');
	char *end;

	if (!at || at == arg)
		return false;
	img->path = arg;
	img->path_len = at - arg;
	img->offset = 0;
	img->size = 0;
	errno = 0;
	img->addr = strtoull(at + 1, &end, 0);
	if (end == at + 1 || errno)
		return false;
	if (!*end)
		return true;
	if (*end != ',')
		return false;
	img->offset = strtoull(end + 1, &end, 0);
	if (*end != ',' || errno)
		return false;
	img->size = strtoull(end + 1, &end, 0);
	return !*end && !errno && img->size;
}

/* Parses "FAMILY/MODEL/STEPPING" into @cpu; false if malformed. */
bool import_raw_parse_cpu(const char *arg, struct hist_cpu *cpu)
{
	unsigned f, m, s;
	char tail;

	if (sscanf(arg, "%u/%u/%u%c", &f, &m, &s, &tail) != 3 ||
	    f > 0xffff || m > 0xff || s > 0xf)
		return false;
	memset(cpu, 0, sizeof(*cpu));
	snprintf(cpu->vendor, sizeof(cpu->vendor), "GenuineIntel");
	cpu->family = f;
	cpu->model = m;
	cpu->stepping = s;
	return true;
}

/* Reads the whole of file @path into @data (malloc'd), its length in
 * @size. */
int import_read_whole(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	int err = 0;

	*data = NULL;
	if (!f || fstat(fileno(f), &st) < 0) {
		err = ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", path,
				strerror(errno));
	} else if (!(*data = malloc(st.st_size ? st.st_size : 1))) {
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	} else if (fread(*data, 1, st.st_size, f) != (size_t)st.st_size) {
		err = ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", path,
				strerror(ferror(f) ? errno : EIO));
	}
	*size = err ? 0 : st.st_size;
	if (f)
		fclose(f);
	return err;
}

/* Adds image @img as a module of @b, checked against its file. */
static int add_image(struct hist_bundle *b, const struct import_raw_image *img)
{
	char *path = strndup(img->path, img->path_len), *abs;
	struct stat st;
	uint64_t size = img->size;
	int err = 0;

	if (!path)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (stat(path, &st) < 0)
		err = ptrr_fail(PTRR_ERR_IO, "cannot read the image %s: %s",
				path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		err = ptrr_fail(PTRR_ERR_IO, "cannot read the image %s: not a regular file",
				path);
	else if (img->offset >= (uint64_t)st.st_size ||
		 (size && size > (uint64_t)st.st_size - img->offset))
		err = ptrr_fail(PTRR_ERR_USAGE,
				"the image %s is %lld bytes long: offset 0x%" PRIx64 " and size 0x%" PRIx64 " do not fit in it",
				path, (long long)st.st_size, img->offset, size);
	if (!err && !size)
		size = st.st_size - img->offset;
	abs = err ? NULL : realpath(path, NULL);
	if (!err && !abs)
		err = ptrr_fail(PTRR_ERR_IO, "cannot resolve %s: %s", path,
				strerror(errno));
	if (!err)
		err = hist_bundle_add_module(b, abs, img->addr, size,
					     img->offset);
	free(abs);
	free(path);
	return err;
}

/* True if @p[0, @n) holds a PSB. */
static bool has_psb(const uint8_t *p, size_t n)
{
	static const uint8_t psb[4] = { 0x02, 0x82, 0x02, 0x82 };

	for (size_t i = 0; i + 16 <= n; i++)
		if (!memcmp(p + i, psb, 4) && !memcmp(p + i + 4, psb, 4) &&
		    !memcmp(p + i + 8, psb, 4) && !memcmp(p + i + 12, psb, 4))
			return true;
	return false;
}

int import_raw(const char *trace, const struct import_raw_image *images,
	       size_t nimages, const struct hist_cpu *cpu, const char *out)
{
	struct hist_bundle *b = NULL;
	struct hist_thread *t;
	uint8_t *data = NULL;
	size_t size = 0;
	int err;

	if ((err = hist_bundle_check_target(out)) ||
	    (err = import_read_whole(trace, &data, &size)))
		return err;
	if (!has_psb(data, size)) {
		free(data);
		return ptrr_fail(PTRR_ERR_DECODE,
				 "%s holds no PSB packet: it is not a raw Intel PT trace (or the trace before its first sync point only)",
				 trace);
	}
	if ((err = hist_bundle_new(&b))) {
		free(data);
		return err;
	}
	if (cpu)
		b->cpu = *cpu;
	snprintf(b->pt.backend, sizeof(b->pt.backend), "raw");
	b->pt.ret_compression = true;
	for (size_t i = 0; !err && i < nimages; i++)
		err = add_image(b, &images[i]);
	if (!err && !(t = hist_bundle_add_thread(b, 1)))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err)
		err = hist_thread_set_trace(t, data, size);
	if (!err && (!(b->exe = strdup(b->modules[0].path)) ||
		     hist_bundle_add_note(b, "imported from the raw trace %s: "
					  "no registers or memory, so the "
					  "replay starts at the end of the "
					  "trace with the instruction pointer "
					  "only", trace)))
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err) {
		err = import_save(b, out);
	}
	free(data);
	hist_bundle_free(b);
	return err;
}
