/* Build-ids: the GNU build-id note of an ELF file, read with libelf from
 * its program headers or, failing those, its section headers.  The writer
 * stores it for each module; the reader checks module files against it.
 */
#include "config.h"

#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle_internal.h"

/* @n bytes at @p as a malloc'd lower-case hex string. */
static char *hex_string(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);

	for (size_t i = 0; s && i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	return s;
}

/* The GNU build-id among the notes in @d, or NULL. */
static char *note_build_id(Elf_Data *d)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
		const char *name = (const char *)d->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nh.n_descsz)
			return hex_string((uint8_t *)d->d_buf + desc_off,
					  nh.n_descsz);
		off = next;
	}
	return NULL;
}

/* The build-id from the PT_NOTE segments of @e (loaded files). */
static char *build_id_phdrs(Elf *e)
{
	size_t n;
	char *id = NULL;

	if (elf_getphdrnum(e, &n))
		return NULL;
	for (size_t i = 0; !id && i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		id = d ? note_build_id(d) : NULL;
	}
	return id;
}

/* The build-id from the SHT_NOTE sections of @e (files without program
 * headers, such as separate debug files). */
static char *build_id_shdrs(Elf *e)
{
	Elf_Scn *scn = NULL;
	char *id = NULL;

	while (!id && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		id = d ? note_build_id(d) : NULL;
	}
	return id;
}

/* The build-id of the ELF file open on @fd, or NULL. */
char *hist_read_build_id_fd(int fd)
{
	Elf *e;
	char *id = NULL;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		id = build_id_phdrs(e);
		if (!id)
			id = build_id_shdrs(e);
	}
	elf_end(e);
	return id;
}

char *hist_read_build_id(const char *path)
{
	int fd = bundle_open_regular(path);
	char *id;

	if (fd < 0)
		return NULL;
	id = hist_read_build_id_fd(fd);
	close(fd);
	return id;
}
