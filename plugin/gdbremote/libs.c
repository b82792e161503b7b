/* The program and its shared libraries as gdb and LLDB ask for them:
 * the auxiliary vector (gdb places a PIE program by AT_ENTRY), the svr4
 * library list (each object's load bias, dynamic section and link_map),
 * the program's file (server.h), and for LLDB the dynamic linker's
 * r_debug of a recording (target_replay.h).
 *
 * A bundle keeps each executable mapping (start, size, file offset) of
 * each file; the ELF program headers of the file say which segment a
 * mapping is, hence the load bias: the mapping's start less the
 * segment's page-aligned address.  The link_map of each object is where
 * the dynamic linker keeps it: its list, read from the target's memory
 * from the r_debug that ld.so exports as _r_debug (a recording's memory
 * snapshot holds it, and the list, when the program crashed).
 */
#include <config.h>

#include "gdbremote/target_replay.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
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
	uint64_t r_debug;	/* run-time address of ld.so's _r_debug, or 0 */
	char interp[256];	/* PT_INTERP, or "" */
};

/* The value of dynamic symbol @name defined in ELF file @e, or 0. */
static uint64_t dynamic_symbol(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *s;

			if (!gelf_getsym(data, (int) i, &sym) ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(e, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name))
				return sym.st_value;
		}
	}
	return 0;
}

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
	l.r_debug = dynamic_symbol(e, "_r_debug");
	l.r_debug += l.r_debug ? l.bias : 0;
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

/* The program of @b in *@prog and its dynamic linker (PT_INTERP) in
 * *@interp (not ok if it has none). */
static void program_info(const struct hist_bundle *b, struct loaded *prog,
			 struct loaded *interp)
{
	*prog = module_info(b, b->exe, false);
	*interp = (struct loaded) { 0 };
	if (prog->ok && prog->interp[0])
		*interp = module_info(b, prog->interp, true);
}

/* Objects of the dynamic linker's list read at most: a loop in damaged
 * memory ends there. */
#define LINK_MAP_MAX 4096

/* The dynamic linker's list of loaded objects: for each, the address of
 * its link_map and its dynamic section (l_ld), which tells which module
 * it is. */
struct link_list {
	size_t n;
	struct link_entry {
		uint64_t lm;
		uint64_t l_ld;
	} *e;
};

/* True if all @len bytes at @addr of target @t's memory were read. */
static bool read_all(struct rsp_target *t, uint64_t addr, void *buf,
		     size_t len)
{
	return t->ops->read_memory(t, 0, addr, buf, len) == len;
}

/* Reads into @ll the list of r_debug at @r_debug in target @t's memory
 * (<link.h>: r_map, then each link_map's l_next), as far as it can be
 * read: nothing without a snapshot or before ld.so has run. */
static void link_list_read(struct rsp_target *t, uint64_t r_debug,
			   struct link_list *ll)
{
	struct r_debug rd;
	struct link_map lm;
	size_t cap = 0;

	*ll = (struct link_list) { 0 };
	if (!r_debug || !read_all(t, r_debug, &rd, sizeof(rd)))
		return;
	for (uint64_t at = (uintptr_t) rd.r_map; at && ll->n < LINK_MAP_MAX;
	     at = (uintptr_t) lm.l_next) {
		if (!read_all(t, at, &lm, sizeof(lm)))
			return;
		if (ll->n == cap) {
			struct link_entry *e;

			cap = cap ? 2 * cap : 16;
			e = realloc(ll->e, cap * sizeof(*e));
			if (!e)
				return;
			ll->e = e;
		}
		ll->e[ll->n].lm = at;
		ll->e[ll->n++].l_ld = (uintptr_t) lm.l_ld;
	}
}

/* The link_map in @ll of the object whose dynamic section is at @l_ld,
 * or @otherwise. */
static uint64_t link_list_find(const struct link_list *ll, uint64_t l_ld,
			       uint64_t otherwise)
{
	for (size_t i = 0; l_ld && i < ll->n; i++)
		if (ll->e[i].l_ld == l_ld)
			return ll->e[i].lm;
	return otherwise;
}

int rsp_auxv(const struct hist_bundle *b, uint8_t **out, size_t *len)
{
	struct loaded prog, interp;
	uint64_t v[14];
	size_t n = 0;

	program_info(b, &prog, &interp);
	if (!prog.ok)
		return ptrr_fail(PTRR_ERR_NOTFOUND, "the program %s is not "
				 "among the recording's modules", b->exe);
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

/* Numbers standing for link_maps the dynamic linker's list does not
 * show (gdb needs one for each object): the program's, then the
 * libraries' in order.  None is an address a program can map. */
#define LM_NUMBER_MAIN 0x10
#define LM_NUMBER(k) (0x20 + 0x10 * (k))

char *rsp_libraries_svr4(const struct hist_bundle *b, struct rsp_target *t)
{
	struct loaded prog, interp;
	struct link_list ll;
	char *doc = NULL, line[256];
	size_t len = 0, k = 0;

	program_info(b, &prog, &interp);
	link_list_read(t, interp.r_debug, &ll);
	snprintf(line, sizeof(line), "<library-list-svr4 version=\"1.0\" "
		 "main-lm=\"0x%" PRIx64 "\">",
		 link_list_find(&ll, prog.dynamic, LM_NUMBER_MAIN));
	if (!append(&doc, &len, line))
		goto fail;
	for (size_t i = 0; i < b->nmodules; i++) {
		const struct hist_module *m = &b->modules[i];
		struct loaded l;
		char *file;
		bool ok;

		if (!strcmp(m->path, b->exe) || m->path[0] != '/' ||
		    !first_of_file(b, i))
			continue;
		l = module_info(b, m->path, false);
		file = hist_module_open_path(b, m);
		if (!l.ok || !file) {
			free(file);
			continue;
		}
		snprintf(line, sizeof(line), "\" lm=\"0x%" PRIx64 "\" "
			 "lmid=\"0x0\" l_addr=\"0x%" PRIx64 "\" "
			 "l_ld=\"0x%" PRIx64 "\"/>",
			 link_list_find(&ll, l.dynamic, LM_NUMBER(k)), l.bias,
			 l.dynamic);
		k++;
		ok = append(&doc, &len, "<library name=\"") &&
		     append_escaped(&doc, &len, file) &&
		     append(&doc, &len, line);
		free(file);
		if (!ok)
			goto fail;
	}
	if (!append(&doc, &len, "</library-list-svr4>"))
		goto fail;
	free(ll.e);
	return doc;
fail:
	free(ll.e);
	free(doc);
	return NULL;
}

/* What a replay serves at RSP_LOADER_ADDR: a pointer to the r_debug
 * right after it. */
struct loader_page {
	uint64_t r_debug_at;
	struct r_debug rd;
};

size_t rsp_loader_read(struct replay_target *r, uint64_t off, uint8_t *buf,
		       size_t len)
{
	struct loaded prog, interp;
	struct link_list ll;
	struct loader_page page;
	size_t n;

	if (off >= RSP_LOADER_SIZE)
		return 0;
	memset(&page, 0, sizeof(page));
	page.r_debug_at = RSP_LOADER_ADDR + offsetof(struct loader_page, rd);
	page.rd.r_version = 1;
	page.rd.r_state = RT_CONSISTENT;
	program_info(r->b, &prog, &interp);
	link_list_read(&r->base, interp.r_debug, &ll);
	page.rd.r_map = (struct link_map *) (uintptr_t)
			link_list_find(&ll, prog.dynamic, 0);
	page.rd.r_ldbase = interp.ok ? interp.bias : 0;
	free(ll.e);
	n = RSP_LOADER_SIZE - off < len ? RSP_LOADER_SIZE - off : len;
	memset(buf, 0, n);
	if (off < sizeof(page))
		memcpy(buf, (uint8_t *) &page + off,
		       sizeof(page) - off < n ? sizeof(page) - off : n);
	return n;
}

char *rsp_exec_file(const struct hist_bundle *b)
{
	for (size_t i = 0; i < b->nmodules; i++)
		if (!strcmp(b->modules[i].path, b->exe) &&
		    b->modules[i].usable)
			return hist_module_open_path(b, &b->modules[i]);
	return strdup(b->exe);
}
