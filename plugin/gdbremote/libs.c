/* The program and its shared libraries as gdb asks for them: the
 * auxiliary vector (gdb places a PIE program by AT_ENTRY), the svr4
 * library list (each object's load bias and dynamic section) and the
 * program's file (server.h).
 *
 * A bundle keeps each executable mapping (start, size, file offset) of
 * each file; the ELF program headers of the file say which segment a
 * mapping is, hence the load bias: the mapping's start less the
 * segment's page-aligned address.
 */
#include <config.h>

#include "gdbremote/target_replay.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_MASK (~(uint64_t) 0xfff)

/* What gdb needs of one loaded ELF object. */
struct loaded {
	bool ok;
	uint64_t bias;		/* load address - link-time address */
	uint64_t entry;		/* e_entry + bias */
	uint64_t phdr;		/* run-time address of the program headers */
	uint64_t phnum;
	uint64_t dynamic;	/* run-time address of .dynamic, or 0 */
	char interp[256];	/* PT_INTERP, or "" */
};

/* Reads the program headers of the file of module @m (at @path) and
 * places them by @m's mapping. */
static struct loaded load_info(const char *path, const struct hist_module *m)
{
	struct loaded l = { 0 };
	GElf_Ehdr eh;
	GElf_Phdr ph;
	uint64_t first_load = UINT64_MAX;
	bool placed = false;
	size_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;

	if (fd < 0)
		return l;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &n) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int) i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && first_load == UINT64_MAX)
			first_load = ph.p_vaddr - ph.p_offset;
		if (ph.p_type == PT_LOAD && !placed &&
		    (ph.p_offset & PAGE_MASK) == m->offset) {
			l.bias = m->start - (ph.p_vaddr & PAGE_MASK);
			placed = true;
		}
		if (ph.p_type == PT_PHDR)
			l.phdr = ph.p_vaddr;
		if (ph.p_type == PT_DYNAMIC)
			l.dynamic = ph.p_vaddr;
		if (ph.p_type == PT_INTERP && ph.p_filesz < sizeof(l.interp) &&
		    pread(fd, l.interp, ph.p_filesz, (off_t) ph.p_offset) < 0)
			l.interp[0] = '\0';
	}
	if (!placed)
		goto out;
	if (!l.phdr && first_load != UINT64_MAX)
		l.phdr = first_load + eh.e_phoff;
	l.phdr += l.bias;
	l.dynamic += l.dynamic ? l.bias : 0;
	l.entry = eh.e_entry + l.bias;
	l.phnum = n;
	l.ok = true;
out:
	if (e)
		elf_end(e);
	close(fd);
	return l;
}

/* The part of @path after its last '/'. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The object at path @path as loaded in @b: from its first mapping.
 * With @by_name, any path with the same file name will do (the program
 * names its interpreter /lib64/ld-linux-x86-64.so.2, the maps show the
 * file the link leads to). */
static struct loaded module_info(const struct hist_bundle *b,
				 const char *path, bool by_name)
{
	struct loaded l = { 0 };

	for (size_t i = 0; i < b->nmodules && !l.ok; i++) {
		const struct hist_module *m = &b->modules[i];
		char *file;

		if (!m->usable || (by_name ? strcmp(base_name(m->path),
						     base_name(path)) :
				   strcmp(m->path, path)))
			continue;
		file = hist_module_open_path(b, m);
		if (file)
			l = load_info(file, m);
		free(file);
	}
	return l;
}

/* True if module @i is the first mapping of its file in @b. */
static bool first_of_file(const struct hist_bundle *b, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(b->modules[k].path, b->modules[i].path))
			return false;
	return true;
}

int rsp_auxv(const struct hist_bundle *b, uint8_t **out, size_t *len)
{
	struct loaded prog = module_info(b, b->exe, false), interp = { 0 };
	uint64_t v[14];
	size_t n = 0;

	if (!prog.ok)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "the program %s is not "
				 "among the recording's modules", b->exe);
	if (prog.interp[0])
		interp = module_info(b, prog.interp, true);
#define AUX(type, val) do { v[n++] = (type); v[n++] = (val); } while (0)
	AUX(AT_PHDR, prog.phdr);
	AUX(AT_PHENT, sizeof(Elf64_Phdr));
	AUX(AT_PHNUM, prog.phnum);
	AUX(AT_PAGESZ, 4096);
	if (interp.ok)
		AUX(AT_BASE, interp.bias);
	AUX(AT_ENTRY, prog.entry);
	AUX(AT_NULL, 0);
#undef AUX
	*out = malloc(n * sizeof(uint64_t));
	if (!*out)
		return PTRR_ERR_NOMEM;
	memcpy(*out, v, n * sizeof(uint64_t));
	*len = n * sizeof(uint64_t);
	return 0;
}

/* Appends @s to the malloc'd string *@doc; false if out of memory. */
static bool append(char **doc, size_t *len, const char *s)
{
	size_t n = strlen(s);
	char *d = realloc(*doc, *len + n + 1);

	if (!d)
		return false;
	memcpy(d + *len, s, n + 1);
	*doc = d;
	*len += n;
	return true;
}

/* Appends @s to *@doc with XML's special characters escaped; false if
 * out of memory. */
static bool append_escaped(char **doc, size_t *len, const char *s)
{
	char one[2] = { 0, 0 };

	for (; *s; s++) {
		const char *piece = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" :
				    *s == '&' ? "&amp;" : *s == '"' ? "&quot;" :
				    *s == '\'' ? "&apos;" : NULL;

		one[0] = *s;
		if (!append(doc, len, piece ? piece : one))
			return false;
	}
	return true;
}

char *rsp_libraries_svr4(const struct hist_bundle *b)
{
	char *doc = NULL, line[256];
	size_t len = 0, lm = 0;

	if (!append(&doc, &len, "<library-list-svr4 version=\"1.0\" "
		    "main-lm=\"0x10\">"))
		return NULL;
	for (size_t i = 0; i < b->nmodules; i++) {
		const struct hist_module *m = &b->modules[i];
		struct loaded l;
		char *file;

		if (!strcmp(m->path, b->exe) || m->path[0] != '/' ||
		    !first_of_file(b, i))
			continue;
		l = module_info(b, m->path, false);
		file = hist_module_open_path(b, m);
		if (!l.ok || !file) {
			free(file);
			continue;
		}
		snprintf(line, sizeof(line), "\" lm=\"0x%zx\" lmid=\"0x0\" "
			 "l_addr=\"0x%" PRIx64 "\" l_ld=\"0x%" PRIx64 "\"/>",
			 0x20 + 0x10 * lm++, l.bias, l.dynamic);
		if (!append(&doc, &len, "<library name=\"") ||
		    !append_escaped(&doc, &len, file) ||
		    !append(&doc, &len, line)) {
			free(file);
			free(doc);
			return NULL;
		}
		free(file);
	}
	if (!append(&doc, &len, "</library-list-svr4>")) {
		free(doc);
		return NULL;
	}
	return doc;
}

char *rsp_exec_file(const struct hist_bundle *b)
{
	for (size_t i = 0; i < b->nmodules; i++)
		if (!strcmp(b->modules[i].path, b->exe) &&
		    b->modules[i].usable)
			return hist_module_open_path(b, &b->modules[i]);
	return strdup(b->exe);
}
