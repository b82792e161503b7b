/* Whether gdb will know the functions of the program a session debugs:
 * a stripped program (no .symtab) without a separate debug file where
 * gdb looks for one leaves gdb with no function around its own code.
 *
 * gdb's reverse-finish out of a library into such code stops nowhere:
 * back on the call instruction, gdb finds itself "stepped into an
 * undebuggable function" (infrun.c: no function name, no line) and sets
 * a breakpoint at that code's return address to step out of it, which
 * going backwards is never reached: the replay runs to the start of the
 * history.  With `set step-mode on` gdb stops there instead; the
 * launcher sets it for such programs (docs/manual.md, "Replaying"). */
#include <config.h>

#include "launch.h"

#include "history.h"

#include <fcntl.h>
#include <gelf.h>
#include <jansson.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* gdb's default debug-file-directory. */
#define DEBUG_DIR "/usr/lib/debug"

/* True if ELF file @path has a symbol table section; *@readable says
 * whether it could be read as ELF at all. */
static bool has_symtab(const char *path, bool *readable)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	bool found = false;

	*readable = false;
	if (fd < 0)
		return false;
	if (elf_version(EV_CURRENT) != EV_NONE &&
	    (e = elf_begin(fd, ELF_C_READ, NULL)) && elf_kind(e) == ELF_K_ELF) {
		*readable = true;
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			found = gelf_getshdr(scn, &sh) &&
				sh.sh_type == SHT_SYMTAB && sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/* True if the separate debug file gdb finds by build-id exists for
 * @path (DEBUG_DIR/.build-id/xx/rest.debug). */
static bool has_debug_file(const char *path)
{
	char *id = hist_read_build_id(path), file[512];
	bool found = false;

	if (id && strlen(id) > 2 &&
	    snprintf(file, sizeof(file), "%s/.build-id/%.2s/%s.debug",
		     DEBUG_DIR, id, id + 2) < (int) sizeof(file))
		found = access(file, R_OK) == 0;
	free(id);
	return found;
}

/* The program of a replay: the bundle's manifest's program.exe;
 * malloc'd, or NULL. */
static char *bundle_program(const char *dir)
{
	char path[4096], *exe = NULL;
	json_t *m;
	const char *s;

	if (snprintf(path, sizeof(path), "%s/manifest.json", dir) >=
	    (int) sizeof(path))
		return NULL;
	m = json_load_file(path, 0, NULL);
	s = json_string_value(json_object_get(json_object_get(m, "program"),
					      "exe"));
	if (s)
		exe = strdup(s);
	json_decref(m);
	return exe;
}

/* The program of a live session: the word after "--" in the server's
 * arguments, looked up in PATH as execvp() does if it has no slash;
 * malloc'd, or NULL. */
static char *live_program(const struct launch *l)
{
	const char *prog = NULL;
	char *dirs, *dir, *save = NULL, file[4096], *found = NULL;

	for (size_t i = 0; i + 1 < l->nserve && !prog; i++)
		if (!strcmp(l->serve[i], "--"))
			prog = l->serve[i + 1];
	if (!prog || strchr(prog, '/'))
		return prog ? strdup(prog) : NULL;
	dirs = strdup(getenv("PATH") ? getenv("PATH") : "");
	for (dir = dirs ? strtok_r(dirs, ":", &save) : NULL; dir && !found;
	     dir = strtok_r(NULL, ":", &save))
		if (snprintf(file, sizeof(file), "%s/%s", dir, prog) <
		    (int) sizeof(file) && access(file, X_OK) == 0)
			found = strdup(file);
	free(dirs);
	return found;
}

bool launch_program_stripped(const struct launch *l)
{
	char *prog = l->bundle ? bundle_program(l->bundle) : live_program(l);
	bool readable = false, symbols;

	symbols = prog && (has_symtab(prog, &readable) ||
			   has_debug_file(prog));
	free(prog);
	return readable && !symbols;
}
