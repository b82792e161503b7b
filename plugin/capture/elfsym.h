/* plugin/capture — finding a symbol in a program's ELF file (for
 * `ptrr record --start=SYMBOL`), before any debugger-side symbol table
 * exists. */
#ifndef PTRR_CAP_ELFSYM_H
#define PTRR_CAP_ELFSYM_H

#include <stdbool.h>
#include <stdint.h>

struct cap_elf_sym {
	uint64_t value;		/* st_value: the link-time address */
	uint64_t size;		/* st_size: its bytes (0: unknown) */
	bool pie;		/* ET_DYN: add the load base at run time */
	bool in_file;		/* a PT_LOAD segment holds it ... */
	uint64_t offset;	/* ... at this file offset (perf's filters
				 * name ranges by file offset) */
};

/* Looks @name up in ELF file @path as gdb does (hist_elf_find_symbol:
 * .symtab, the separate debug file's, .dynsym); "main" of a program with
 * none of these is the argument its entry code passes to
 * __libc_start_main (size 0).  PTRR_ERR_NOTFOUND if it has no such
 * defined symbol. */
int cap_elf_find_symbol(const char *path, const char *name,
			struct cap_elf_sym *out);

#endif
