/* ELF program headers for LLDB's module load addresses (lldb_trace.h). */
#include <config.h>

#include "lldb_trace.h"

#include "history.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appends the PT_LOAD segments of @e to @segs; returns their number or a
 * negative error. */
static int read_segments(Elf *e, struct lldb_segment *segs, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < max; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		segs[n].vaddr = ph.p_vaddr;
		segs[n].memsz = ph.p_memsz;
		segs[n].offset = ph.p_offset;
		segs[n].exec = ph.p_flags & PF_X;
		n++;
	}
	return n;
}

int lldb_elf_segments(const char *path, struct lldb_segment **segs,
		      size_t *nsegs)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t nph = 0;
	Elf *e = NULL;
	int n = -1;

	*segs = NULL;
	*nsegs = 0;
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot read module %s: %s",
				 path, strerror(errno));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getphdrnum(e, &nph) && nph &&
	    (*segs = calloc(nph, sizeof(**segs))))
		n = read_segments(e, *segs, nph);
	if (e)
		elf_end(e);
	close(fd);
	if (n > 0) {
		*nsegs = n;
		return 0;
	}
	free(*segs);
	*segs = NULL;
	if (nph && n < 0)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return ptrr_fail(PTRR_ERR_BUNDLE,
			 "module %s is not an ELF file with loadable segments",
			 path);
}

int lldb_mapping_bias(const struct lldb_segment *segs, size_t nsegs,
		      uint64_t start, uint64_t offset, uint64_t *bias)
{
	const uint64_t mask = ~(uint64_t)(LLDB_PAGE_SIZE - 1);

	/* Executable segments first: ptrr's modules are executable
	 * mappings, and their first page may hold the end of a read-only
	 * segment too.  A mapping may begin inside a segment (mprotect
	 * splits them). */
	for (int want_exec = 1; want_exec >= 0; want_exec--)
		for (size_t i = 0; i < nsegs; i++) {
			const struct lldb_segment *s = &segs[i];
			uint64_t first = s->offset & mask;

			if (s->exec != want_exec || offset < first ||
			    offset >= s->offset + s->memsz)
				continue;
			*bias = start - ((s->vaddr & mask) + (offset - first));
			return 0;
		}
	return ptrr_fail(PTRR_ERR_NOTFOUND,
			 "no loadable segment at file offset 0x%llx",
			 (unsigned long long)offset);
}
