/* /proc/PID/maps; see procmaps.h. */
#include <config.h>

#include "capture/procmaps.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses one maps line into @m; false if it is malformed. */
static bool parse_line(const char *line, struct cap_map *m)
{
	char perms[5];
	int path_at = 0;
	size_t len;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64
		   " %*s %*s %n", &m->start, &m->end, perms, &m->offset,
		   &path_at) < 4 || !path_at)
		return false;
	m->readable = perms[0] == 'r';
	m->writable = perms[1] == 'w';
	m->executable = perms[2] == 'x';
	len = strcspn(line + path_at, "\n");
	m->path = strndup(line + path_at, len);
	return m->path != NULL;
}

/* Appends the mapping of @line to @maps, growing it. */
static int add_line(const char *line, struct cap_map **maps, size_t *n,
		    size_t *alloc)
{
	struct cap_map *grown;

	if (*n == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 32;
		grown = realloc(*maps, *alloc * sizeof(**maps));
		if (!grown)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory reading "
					 "a memory map");
		*maps = grown;
	}
	if (!parse_line(line, &(*maps)[*n]))
		return ptrr_fail(PTRR_ERR_IO, "malformed memory map line: %s",
				 line);
	(*n)++;
	return 0;
}

int cap_maps_read(pid_t pid, struct cap_map **maps, size_t *n)
{
	char path[64], *line = NULL;
	size_t linesz = 0, alloc = 0;
	FILE *f;
	int err = 0;

	*maps = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
	f = fopen(path, "r");
	if (!f)
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", path,
				 strerror(errno));
	while (!err && getline(&line, &linesz, f) > 0)
		err = add_line(line, maps, n, &alloc);
	free(line);
	fclose(f);
	if (err) {
		cap_maps_free(*maps, *n);
		*maps = NULL;
		*n = 0;
	}
	return err;
}

void cap_maps_free(struct cap_map *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

bool cap_map_is_file(const struct cap_map *m)
{
	return m->path[0] == '/';
}

uint64_t cap_maps_base(const struct cap_map *maps, size_t n,
		       const char *path)
{
	uint64_t base = 0;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(maps[i].path, path) &&
		    (!base || maps[i].start - maps[i].offset < base))
			base = maps[i].start - maps[i].offset;
	return base;
}
