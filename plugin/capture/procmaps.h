/* plugin/capture — a process's memory map, from /proc/PID/maps. */
#ifndef PTRR_CAP_PROCMAPS_H
#define PTRR_CAP_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cap_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* file offset */
	bool readable, writable, executable;
	char *path;		/* file path, "[vdso]", "[stack]", or "" */
};

/* Reads the mappings of process @pid into a malloc'd array. */
int cap_maps_read(pid_t pid, struct cap_map **maps, size_t *n);
void cap_maps_free(struct cap_map *maps, size_t n);

/* True if @m maps a file (its path is absolute). */
bool cap_map_is_file(const struct cap_map *m);

/* The lowest address at which file @path is mapped, or 0 if it is not:
 * the load base of an ELF object whose first segment is at offset 0. */
uint64_t cap_maps_base(const struct cap_map *maps, size_t n,
		       const char *path);

#endif
