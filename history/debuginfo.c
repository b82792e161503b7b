/* Where symbols come from, as gdb finds them: an ELF file's own .symtab,
 * else the .symtab of its separate debug file, else its .dynsym.  libdwfl
 * does the search (dwfl_module_getsymtab); this file tells it where
 * separate debug files are and looks one symbol up in one file.
 *
 * A debug file is found, as gdb does with its debug-file-directory, by
 * the file's build-id (DIR/.build-id/xx/rest.debug) or by its
 * .gnu_debuglink name (next to the file, in its .debug/ directory, or
 * under DIR/ followed by the file's directory).  DIR is /usr/lib/debug,
 * or the colon-separated directories of $PTRR_DEBUG_FILE_DIRECTORY.
 */
#include "config.h"
#include "history.h"
#include "history_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *debuginfo_path;
static pthread_once_t path_once = PTHREAD_ONCE_INIT;

/* libdwfl's search path: the file's directory, its .debug/, then the
 * debug directories (libdwfl's own default is ":.debug:/usr/lib/debug"). */
static void path_init(void)
{
	const char *dirs = getenv("PTRR_DEBUG_FILE_DIRECTORY");

	if (!dirs || !*dirs)
		dirs = "/usr/lib/debug";
	if (asprintf(&debuginfo_path, ":.debug:%s", dirs) < 0)
		debuginfo_path = NULL;	/* libdwfl's default then */
}

const Dwfl_Callbacks *hist_dwfl_callbacks(void)
{
	static const Dwfl_Callbacks offline = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};

	pthread_once(&path_once, path_init);
	return &offline;
}

bool hist_dwfl_find_symbol(Dwfl_Module *mod, const char *name,
			   GElf_Sym *sym, uint64_t *addr)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Addr a;
		GElf_Word shndx;
		const char *s = dwfl_module_getsym_info(mod, i, sym, &a,
							&shndx, NULL, NULL);

		if (s && sym->st_shndx != SHN_UNDEF && !strcmp(s, name)) {
			*addr = a;
			return true;
		}
	}
	return false;
}

int hist_elf_find_symbol(const char *path, const char *name,
			 uint64_t *value, uint64_t *size)
{
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Sym sym;
	int err = 0;

	elf_version(EV_CURRENT);
	dwfl = dwfl_begin(hist_dwfl_callbacks());
	if (!dwfl)
		return ptrr_fail(PTRR_ERR_NOMEM, "libdwfl: %s",
				 dwfl_errmsg(-1));
	/* At load bias 0: the addresses are the file's link-time ones. */
	mod = dwfl_report_elf(dwfl, path, path, -1, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod)
		err = ptrr_fail(PTRR_ERR_NOTFOUND, "cannot read %s as an ELF "
				"file (%s), so symbol '%s' cannot be found in "
				"it: give an address", path, dwfl_errmsg(-1),
				name);
	else if (!hist_dwfl_find_symbol(mod, name, &sym, value))
		err = ptrr_fail(PTRR_ERR_NOTFOUND, "no symbol '%s' in %s or "
				"a separate debug file of it: check the name "
				"(nm %s) or give an address", name, path, path);
	else
		*size = sym.st_size;
	dwfl_end(dwfl);
	return err;
}
