/* plugin/lldb_trace.h — what `ptrr export --lldb` (export_lldb.c) and
 * `ptrr import --lldb` (import_lldb.c) share about LLDB's Intel PT trace
 * bundle (the schema `lldb -b -o "trace schema intel-pt"` prints; LLVM's
 * lldb/source/Plugins/Trace/intel-pt/TraceIntelPTBundleLoader.cpp loads
 * it).
 *
 * LLDB places a module by one address, "loadAddress": where the first
 * PT_LOAD segment of the ELF file is in memory (ObjectFileELF::
 * SetLoadAddress subtracts that segment's p_vaddr to get the slide).
 * ptrr keeps the executable mappings of /proc/PID/maps instead.  These
 * helpers convert one into the other with the file's program headers.
 */
#ifndef PTRR_LLDB_TRACE_H
#define PTRR_LLDB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The name of the bundle description inside an exported directory. */
#define LLDB_TRACE_JSON "trace.json"

/* The triple ptrr's recordings are for (x86-64 Linux user space). */
#define LLDB_TRACE_TRIPLE "x86_64-unknown-linux-gnu"

/* The mappings granularity the loader uses for PT_LOAD segments. */
#define LLDB_PAGE_SIZE 4096u

/* One PT_LOAD segment of an ELF file. */
struct lldb_segment {
	uint64_t vaddr;		/* p_vaddr */
	uint64_t memsz;		/* p_memsz */
	uint64_t offset;	/* p_offset */
	bool exec;		/* PF_X */
};

/* Reads the PT_LOAD segments of ELF file @path, in program-header order,
 * into a malloc'd array.  Fails with a one-line message naming @path if
 * it cannot be read or is not an ELF file with a loadable segment. */
int lldb_elf_segments(const char *path, struct lldb_segment **segs,
		      size_t *nsegs);

/* The load bias of a file whose segments are @segs when its file offset
 * @offset (page-aligned, as in /proc/PID/maps) is mapped at @start.
 * Fails if no segment holds that offset. */
int lldb_mapping_bias(const struct lldb_segment *segs, size_t nsegs,
		      uint64_t start, uint64_t offset, uint64_t *bias);

#endif
