/* The code the QEMU plugin kept from anonymous memory, into a bundle's
 * code blobs (qemu_code.h). */
#include <config.h>

#include "qemu/qemu_code.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most bytes of one mapping's code kept (a JIT's code stays far
 * below; its mapping may be a large reservation). */
#define QCODE_SPAN_MAX (64ull << 20)

/* File @path from byte @from on in *@data (NULL, 0 if it does not
 * exist). */
static int read_from(const char *path, uint64_t from, uint8_t **data,
		     size_t *size)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, n;
	uint8_t *p;

	*data = NULL;
	*size = 0;
	if (!f)
		return errno == ENOENT ? 0 : ptrr_fail(PTRR_ERR_IO, "%s: %s",
							path, strerror(errno));
	if (fseeko(f, (off_t) from, SEEK_SET)) {
		fclose(f);
		return ptrr_fail(PTRR_ERR_IO, "%s: %s", path, strerror(errno));
	}
	do {
		if (*size == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			p = realloc(*data, cap);
			if (!p) {
				fclose(f);
				return ptrr_fail(PTRR_ERR_NOMEM,
						 "out of memory");
			}
			*data = p;
		}
		n = fread(*data + *size, 1, cap - *size, f);
		*size += n;
	} while (n);
	n = ferror(f);
	fclose(f);
	return n ? ptrr_fail(PTRR_ERR_IO, "%s: read error", path) : 0;
}

/* The record at *@off of @data (@size bytes) if it is whole and inside
 * @m; *@off moves past it either way (to @size at a torn end). */
static const struct qshm_code *next_record(const uint8_t *data, size_t size,
					   size_t *off,
					   const struct qshm_module *m,
					   bool *inside)
{
	const struct qshm_code *c;

	if (size - *off < sizeof(*c))
		return *off = size, NULL;
	c = (const struct qshm_code *) (data + *off);
	if (size - *off - sizeof(*c) < c->len)
		return *off = size, NULL;
	*off += (sizeof(*c) + c->len + 7) & ~(size_t) 7;
	*inside = c->addr >= m->start && c->len <= m->end - c->addr;
	return c;
}

int qcode_add(struct hist_bundle *b, const char *dir,
	      const struct qshm_module *m)
{
	char path[PATH_MAX + 16];
	uint8_t *data, *image = NULL, *have = NULL;
	const struct qshm_code *c;
	uint64_t lo = UINT64_MAX, hi = 0, i, j;
	size_t size, off;
	bool inside, rewritten = false;
	int err;

	snprintf(path, sizeof(path), "%s/code", dir);
	err = read_from(path, 0, &data, &size);
	for (off = 0; !err && (c = next_record(data, size, &off, m, &inside));)
		if (inside && c->len) {
			lo = c->addr < lo ? c->addr : lo;
			hi = c->addr + c->len > hi ? c->addr + c->len : hi;
		}
	if (!err && (lo >= hi || hi - lo > QCODE_SPAN_MAX)) {
		free(data);
		return hist_bundle_add_note(b, "code ran in anonymous memory "
					    "at 0x%" PRIx64 "-0x%" PRIx64 " "
					    "that the QEMU backend did not "
					    "keep: its history cannot be "
					    "decoded", m->start, m->end);
	}
	if (!err) {
		image = calloc(1, hi - lo);
		have = calloc(1, hi - lo);
		if (!image || !have)
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	for (off = 0; !err && (c = next_record(data, size, &off, m, &inside));)
		for (i = 0; inside && i < c->len; i++) {
			uint64_t k = c->addr - lo + i;

			rewritten |= have[k] && image[k] != c->bytes[i];
			image[k] = c->bytes[i];
			have[k] = 1;
		}
	for (i = 0; !err && i < hi - lo; i = j) {
		for (j = i; j < hi - lo && have[j] == have[i]; j++)
			;
		if (have[i])
			err = hist_bundle_add_code(b, "", lo + i, image + i,
						   j - i);
	}
	if (!err && rewritten)
		err = hist_bundle_add_note(b, "code in anonymous memory at "
					   "0x%" PRIx64 "-0x%" PRIx64 " was "
					   "rewritten while the program ran: "
					   "the history decodes all of it "
					   "with its last bytes", lo, hi);
	free(image);
	free(have);
	free(data);
	return err;
}

int qcode_each(const char *dir, uint64_t *off,
	       int (*fn)(void *arg, uint64_t addr, const uint8_t *bytes,
			 size_t len),
	       void *arg)
{
	char path[PATH_MAX + 16];
	const struct qshm_module all = { 0, UINT64_MAX, 0, "" };
	const struct qshm_code *c;
	uint8_t *data;
	size_t size, at = 0, next = 0;
	bool inside;
	int err;

	snprintf(path, sizeof(path), "%s/code", dir);
	err = read_from(path, *off, &data, &size);
	while (!err && (c = next_record(data, size, &next, &all, &inside))) {
		at = next;
		if (c->len)
			err = fn(arg, c->addr, c->bytes, c->len);
	}
	*off += at;
	free(data);
	return err;
}
