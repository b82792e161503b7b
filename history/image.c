/* The memory image: the code bytes the decoder needs, from module files
 * (through libipt's image section cache) and from copies of memory kept in
 * the bundle (served through libipt's read-memory callback). */
#include "history_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* libipt's read-memory callback: serves addresses no file section covers
 * from the image's copies, newest first. */
static int image_read_copy(uint8_t *buffer, size_t size,
			   const struct pt_asid *asid, uint64_t ip,
			   void *context)
{
	struct hist_image *img = context;

	(void) asid;
	for (size_t i = img->ncopies; i-- > 0;) {
		const struct hist_copy *c = &img->copies[i];
		uint64_t avail;

		if (ip < c->vaddr || ip - c->vaddr >= c->size)
			continue;
		avail = c->size - (ip - c->vaddr);
		if (size > avail)
			size = avail;
		memcpy(buffer, c->data + (ip - c->vaddr), size);
		return (int) size;
	}
	return -pte_nomap;
}

/* The cache slot of the instruction at @ip. */
static _Atomic uint64_t *len_slot(struct hist_image *img, uint64_t ip)
{
	return &img->lens[(ip ^ ip >> 15) % HIST_LEN_CACHE];
}

uint8_t hist_image_len_get(struct hist_image *img, uint64_t ip)
{
	uint64_t e;

	if (ip >> 60)
		return 0;
	e = atomic_load_explicit(len_slot(img, ip), memory_order_relaxed);
	return e >> 4 == ip ? (uint8_t) (e & 15) : 0;
}

void hist_image_len_put(struct hist_image *img, uint64_t ip, uint8_t len)
{
	if (ip >> 60 || !len || len > 15)
		return;
	if (!atomic_load_explicit(&img->lens_used, memory_order_relaxed))
		atomic_store_explicit(&img->lens_used, true,
				      memory_order_relaxed);
	atomic_store_explicit(len_slot(img, ip), ip << 4 | len,
			      memory_order_relaxed);
}

/* Forgets the remembered lengths: the image changed. */
static void lens_forget(struct hist_image *img)
{
	if (!atomic_exchange(&img->lens_used, false))
		return;
	for (size_t i = 0; i < HIST_LEN_CACHE; i++)
		atomic_store_explicit(&img->lens[i], 0, memory_order_relaxed);
}

int hist_image_new(struct hist_image **out)
{
	struct hist_image *img = calloc(1, sizeof(*img));

	if (!img)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	img->iscache = pt_iscache_alloc("ptrr");
	img->image = pt_image_alloc("ptrr");
	if (!img->iscache || !img->image) {
		hist_image_free(img);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	pt_image_set_callback(img->image, image_read_copy, img);
	*out = img;
	return 0;
}

void hist_image_free(struct hist_image *img)
{
	if (!img)
		return;
	pt_image_free(img->image);
	pt_iscache_free(img->iscache);
	for (size_t i = 0; i < img->ncopies; i++)
		free(img->copies[i].data);
	for (size_t i = 0; i < img->nfiles; i++)
		munmap(img->files[i].map, img->files[i].map_len);
	free(img->copies);
	free(img->files);
	free(img);
}

/* Maps @size bytes of @path at @offset read-only into @f, for reads that
 * need no lock (libipt keeps its own mapping for decoding). */
static int map_section(const char *path, uint64_t offset, uint64_t size,
		       struct hist_file_section *f)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t skew = offset % (uint64_t) page;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *map;

	if (fd < 0)
		return ptrr_fail(PTRR_ERR_IO, "cannot open %s: %s", path,
				 strerror(errno));
	if (fstat(fd, &st) < 0 || (uint64_t) st.st_size <= offset) {
		close(fd);
		return ptrr_fail(PTRR_ERR_IO, "%s is shorter than offset "
				 "0x%llx", path, (unsigned long long) offset);
	}
	if (size > (uint64_t) st.st_size - offset)
		size = (uint64_t) st.st_size - offset;
	map = mmap(NULL, size + skew, PROT_READ, MAP_PRIVATE, fd,
		   (off_t) (offset - skew));
	close(fd);
	if (map == MAP_FAILED)
		return ptrr_fail(PTRR_ERR_IO, "cannot map %s: %s", path,
				 strerror(errno));
	f->map = map;
	f->map_len = size + skew;
	f->bytes = (const uint8_t *) map + skew;
	f->size = size;
	return 0;
}

/* True if [vaddr, vaddr+size) overlaps a section @img already has. */
static bool overlaps_any(const struct hist_image *img, uint64_t vaddr,
			 uint64_t size)
{
	for (size_t i = 0; i < img->nfiles; i++) {
		const struct hist_file_section *f = &img->files[i];

		if (vaddr < f->vaddr + f->size && f->vaddr < vaddr + size)
			return true;
	}
	return false;
}

/* Adds @size bytes of @path at @offset as a section at @vaddr: for
 * decoding too (through libipt's section cache) if @code, else only for
 * hist_image_read(). */
static int add_section(struct hist_image *img, const char *path,
		       uint64_t offset, uint64_t size, uint64_t vaddr,
		       bool code)
{
	struct hist_file_section *files, f = { .vaddr = vaddr, .isid = -1 };
	bool overlap;
	int err;

	err = map_section(path, offset, size, &f);
	if (err)
		return err;
	if (code) {
		f.isid = pt_iscache_add_file(img->iscache, path, offset,
					     f.size, vaddr);
		err = f.isid < 0 ? f.isid :
		      pt_image_add_cached(img->image, img->iscache, f.isid,
					  NULL);
	}
	overlap = overlaps_any(img, vaddr, f.size);
	files = err < 0 ? NULL :
		realloc(img->files, (img->nfiles + 1) * sizeof(*files));
	if (!files) {
		munmap(f.map, f.map_len);
		if (err >= 0)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		return ptrr_fail(PTRR_ERR_IO, "cannot map %s at 0x%llx: %s",
				 path, (unsigned long long) vaddr,
				 pt_errstr(pt_errcode(err)));
	}
	img->overlaps |= overlap;
	img->files = files;
	files[img->nfiles++] = f;
	lens_forget(img);
	atomic_fetch_add(&img->changes, 1);
	return 0;
}

int hist_image_add_file(struct hist_image *img, const char *path,
			uint64_t offset, uint64_t size, uint64_t vaddr)
{
	return add_section(img, path, offset, size, vaddr, true);
}

/* The load bias of ELF file @e mapped at @start from file offset @offset
 * (a line of /proc/PID/maps): that of the PT_LOAD segment holding the
 * offset, whose pages share their offset within the page with their
 * addresses.  False if no segment holds it. */
static bool load_bias(Elf *e, size_t nph, uint64_t start, uint64_t offset,
		      uint64_t *bias)
{
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int) i, &ph) || ph.p_type != PT_LOAD ||
		    ph.p_align == 0)
			continue;
		if (offset < (ph.p_offset & ~(ph.p_align - 1)) ||
		    offset >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = start - offset - (ph.p_vaddr - ph.p_offset);
		return true;
	}
	return false;
}

int hist_image_add_rodata(struct hist_image *img, const char *path,
			  uint64_t start, uint64_t offset)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	size_t nph = 0;
	uint64_t bias;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getphdrnum(e, &nph) &&
	    load_bias(e, nph, start, offset, &bias)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			/* Neither writable (RELRO is written by the loader
			 * before it is made read-only) nor code (the
			 * module's own mapping, added as code). */
			if (!gelf_getphdr(e, (int) i, &ph) ||
			    ph.p_type != PT_LOAD || ph.p_filesz == 0 ||
			    (ph.p_flags & (PF_W | PF_X)) ||
			    overlaps_any(img, bias + ph.p_vaddr, ph.p_filesz))
				continue;
			if (add_section(img, path, ph.p_offset, ph.p_filesz,
					bias + ph.p_vaddr, false))
				ptrr_clear_error();
		}
	}
	elf_end(e);
	close(fd);
	return 0;
}

int hist_image_add_copy(struct hist_image *img, uint64_t vaddr,
			const uint8_t *data, uint64_t size)
{
	struct hist_copy *copies;
	uint8_t *bytes = malloc(size ? size : 1);

	copies = realloc(img->copies, (img->ncopies + 1) * sizeof(*copies));
	if (!bytes || !copies) {
		free(bytes);
		if (copies)
			img->copies = copies;
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	memcpy(bytes, data, size);
	img->copies = copies;
	copies[img->ncopies++] = (struct hist_copy) {
		.vaddr = vaddr, .size = size, .data = bytes,
	};
	lens_forget(img);
	atomic_fetch_add(&img->changes, 1);
	return 0;
}

/* Copies from file section @f at @vaddr (which it covers). */
static ssize_t read_section(const struct hist_file_section *f,
			    uint64_t vaddr, uint8_t *buf, size_t size)
{
	uint64_t avail = f->size - (vaddr - f->vaddr);

	if (size > avail)
		size = avail;
	memcpy(buf, f->bytes + (vaddr - f->vaddr), size);
	return (ssize_t) size;
}

/* The file section this thread last read from, per image. */
static _Thread_local struct {
	const struct hist_image *img;
	size_t index;
} last_hit;

/* Reads from the newest file section covering @vaddr; 0 if none does.
 * Without overlapping sections, the last section hit is tried first. */
static ssize_t image_read_file(struct hist_image *img, uint64_t vaddr,
			       uint8_t *buf, size_t size)
{
	if (last_hit.img == img && !img->overlaps &&
	    last_hit.index < img->nfiles) {
		const struct hist_file_section *f = &img->files[last_hit.index];

		if (vaddr >= f->vaddr && vaddr - f->vaddr < f->size)
			return read_section(f, vaddr, buf, size);
	}
	for (size_t i = img->nfiles; i-- > 0;) {
		const struct hist_file_section *f = &img->files[i];

		if (vaddr < f->vaddr || vaddr - f->vaddr >= f->size)
			continue;
		last_hit.img = img;
		last_hit.index = i;
		return read_section(f, vaddr, buf, size);
	}
	return 0;
}

ssize_t hist_image_read(struct hist_image *img, uint64_t vaddr,
			uint8_t *buf, size_t size)
{
	ssize_t n = image_read_file(img, vaddr, buf, size);
	int c;

	if (n > 0)
		return n;
	if (size > INT32_MAX)
		size = INT32_MAX;
	c = image_read_copy(buf, size, NULL, vaddr, img);
	return c < 0 ? 0 : c;
}

int hist_image_from_bundle(const struct hist_bundle *b,
			   struct hist_image **out)
{
	struct hist_image *img;
	int err = hist_image_new(&img);

	if (err)
		return err;
	for (size_t i = 0; i < b->nmodules; i++) {
		const struct hist_module *m = &b->modules[i];
		char *path;

		if (!m->usable)
			continue;
		path = hist_module_open_path(b, m);
		if (!path) {
			hist_image_free(img);
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		}
		/* A module that cannot be mapped leaves gaps where its
		 * code runs; the loader has already said why. */
		(void) hist_image_add_file(img, path, m->offset, m->size,
					   m->start);
		(void) hist_image_add_rodata(img, path, m->start, m->offset);
		free(path);
	}
	for (size_t i = 0; i < b->ncode; i++) {
		err = hist_image_add_copy(img, b->code[i].start,
					  b->code[i].data, b->code[i].size);
		if (err) {
			hist_image_free(img);
			return err;
		}
	}
	ptrr_clear_error();
	*out = img;
	return 0;
}

struct pt_image *hist_image_pt_clone(struct hist_image *img)
{
	struct pt_image *copy = pt_image_alloc("ptrr-worker");

	if (!copy)
		return NULL;
	if (pt_image_copy(copy, img->image) < 0) {
		pt_image_free(copy);
		return NULL;
	}
	pt_image_set_callback(copy, image_read_copy, img);
	return copy;
}
