/* `ptrr import --raw` (plugin/import_raw.c): a raw Intel PT stream and
 * code images as a recording. */
#ifndef PTRR_IMPORT_RAW_H
#define PTRR_IMPORT_RAW_H

#include "history.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --image=FILE@ADDR[,OFFSET,SIZE]: FILE is the first @path_len bytes
 * of @path; @size 0 means the rest of the file. */
struct import_raw_image {
	const char *path;
	size_t path_len;
	uint64_t addr, offset, size;
};

bool import_raw_parse_image(const char *arg, struct import_raw_image *img);
bool import_raw_parse_cpu(const char *arg, struct hist_cpu *cpu);

/* Imports raw trace file @trace decoded with @images (and CPU @cpu, or
 * NULL if unknown) into the new bundle @out. */
int import_raw(const char *trace, const struct import_raw_image *images,
	       size_t nimages, const struct hist_cpu *cpu, const char *out);

/* Saves imported bundle @b as @out, with its history's index if it can
 * be built (plugin/import_lldb.c, for every import). */
int import_save(struct hist_bundle *b, const char *out);

/* Reads the whole of file @path into @data (malloc'd), its length in
 * @size; a one-line error if it cannot. */
int import_read_whole(const char *path, uint8_t **data, size_t *size);

#endif
