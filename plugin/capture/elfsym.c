/* Symbol lookup with libelf; see elfsym.h. */
#include <config.h>

#include "capture/elfsym.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

/* Searches symbol table section @scn for a defined @name. */
static bool find_in_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			    const char *name, struct cap_elf_sym *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Sym sym;

	for (size_t i = 0; data && i < count; i++) {
		const char *n;

		if (!gelf_getsym(data, (int) i, &sym) ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		n = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (n && !strcmp(n, name)) {
			out->value = sym.st_value;
			out->size = sym.st_size;
			return true;
		}
	}
	return false;
}

/* Searches every section of type @type (SHT_SYMTAB, SHT_DYNSYM). */
static bool find_in_tables(Elf *elf, Elf64_Word type, const char *name,
			   struct cap_elf_sym *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type &&
		    find_in_section(elf, scn, &sh, name, out))
			return true;
	return false;
}

/* The file offset of link-time address @out->value: the loadable segment
 * holding it maps it from p_offset + (value - p_vaddr). */
static void find_offset(Elf *elf, struct cap_elf_sym *out)
{
	size_t n;
	GElf_Phdr ph;

	out->in_file = false;
	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int) i, &ph) && ph.p_type == PT_LOAD &&
		    out->value - ph.p_vaddr < ph.p_filesz) {
			out->offset = ph.p_offset + out->value - ph.p_vaddr;
			out->in_file = true;
			return;
		}
}

int cap_elf_find_symbol(const char *path, const char *name,
			struct cap_elf_sym *out)
{
	GElf_Ehdr eh;
	Elf *elf;
	int fd, err = 0;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot open %s: %s", path,
				 strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh))
		err = ptrr_fail(PTRR_ERR_NOTFOUND, "%s is not an ELF file, "
				"so symbol '%s' cannot be found in it: give an "
				"address", path, name);
	else if (!find_in_tables(elf, SHT_SYMTAB, name, out) &&
		 !find_in_tables(elf, SHT_DYNSYM, name, out))
		err = ptrr_fail(PTRR_ERR_NOTFOUND, "no symbol '%s' in %s: "
				"check the name (nm %s) or give an address",
				name, path, path);
	else {
		out->pie = eh.e_type == ET_DYN;
		find_offset(elf, out);
	}
	elf_end(elf);
	close(fd);
	return err;
}
