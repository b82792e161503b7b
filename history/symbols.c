/* Symbols and source lines of the recorded program, with elfutils libdwfl.
 *
 * Each mapped ELF file is reported to libdwfl once per load bias, the bias
 * worked out from the file's program headers.  Function lookups do not go
 * through libdwfl's symbol search: the first lookup in a module builds a
 * sorted table of its function symbols (plus "name@plt" entries made from
 * the PLT, as GDB shows them), with disjoint address ranges, and a small
 * direct-mapped cache sits in front of that.  Line lookups go to libdw.
 *
 * A symtab may be shared by threads: one mutex serialises all calls.
 */
#include "config.h"
#include "history.h"
#include "history_internal.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_MASK 0xfffull
#define CACHE_SLOTS 1024	/* a power of two */
#define NO_FUNC UINT32_MAX

/* One function of a module: [start, end) is where lookups find it. */
struct sym_func {
	uint64_t start;
	uint64_t end;		/* clipped at the next function's start */
	uint64_t size;		/* the symbol's own size */
	const char *name;
	uint8_t rank;		/* preference among aliases, higher wins */
};

struct sym_module {
	char *name;		/* path on the recording machine */
	uint32_t index;		/* position in hist_symtab.mods */
	uint64_t bias;
	Dwfl_Module *mod;
	bool loaded;		/* funcs built */
	struct sym_func *funcs;
	size_t nfuncs, cap;
	char **names;		/* names made here: "f@plt", "f" for "f@@V" */
	size_t nnames;
};

struct cache_slot {
	uint64_t ip;
	uint32_t mod;		/* index in hist_symtab.mods */
	uint32_t func;		/* index in its funcs, or NO_FUNC */
};

struct hist_symtab {
	Dwfl *dwfl;
	struct sym_module **mods;
	size_t nmods, cap;
	pthread_mutex_t lock;
	struct cache_slot cache[CACHE_SLOTS];
};

/* Forgets every cached lookup (after the set of modules changed). */
static void cache_clear(struct hist_symtab *st)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		st->cache[i].ip = UINT64_MAX;
}

int hist_symtab_new(struct hist_symtab **out)
{
	struct hist_symtab *st = calloc(1, sizeof(*st));

	if (!st)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	elf_version(EV_CURRENT);
	st->dwfl = dwfl_begin(hist_dwfl_callbacks());
	if (!st->dwfl) {
		free(st);
		return ptrr_fail(PTRR_ERR_INTERNAL, "libdwfl: %s",
				 dwfl_errmsg(-1));
	}
	pthread_mutex_init(&st->lock, NULL);
	cache_clear(st);
	*out = st;
	return 0;
}

/* Frees module @m's own memory (libdwfl frees its Dwfl_Module). */
static void module_free(struct sym_module *m)
{
	for (size_t i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	free(m->funcs);
	free(m->name);
	free(m);
}

void hist_symtab_free(struct hist_symtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nmods; i++)
		module_free(st->mods[i]);
	free(st->mods);
	dwfl_end(st->dwfl);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* ------------------------------------------------------------------ */
/* Reporting mappings                                                  */
/* ------------------------------------------------------------------ */

/* The load biases a mapping could imply: one per PT_LOAD whose file range
 * holds the mapping's offset (a page can be shared by two segments). */
struct bias_candidates {
	uint64_t bias[8];
	bool exec[8];		/* the segment is executable */
	size_t n;
};

/* Fills @bc for mapping file offset @offset of @elf at address @start:
 * for ET_EXEC the bias is 0, for ET_DYN it follows from the segment. */
static void find_biases(Elf *elf, uint64_t start, uint64_t offset,
			struct bias_candidates *bc)
{
	GElf_Ehdr eh;
	size_t n;

	bc->n = 0;
	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return;
	for (size_t i = 0; i < n && bc->n < 8; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD ||
		    offset < (ph.p_offset & ~PAGE_MASK) ||
		    offset >= ph.p_offset + ph.p_filesz)
			continue;
		bc->bias[bc->n] = eh.e_type == ET_EXEC ? 0 :
				  start - ph.p_vaddr - offset + ph.p_offset;
		bc->exec[bc->n++] = ph.p_flags & PF_X;
	}
}

/* Reads the candidate biases of mapping @path's offset @offset at
 * @start; none if @path is not a readable ELF file. */
static void mapping_biases(const char *path, uint64_t start, uint64_t offset,
			   struct bias_candidates *bc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);

	bc->n = 0;
	if (elf && elf_kind(elf) == ELF_K_ELF)
		find_biases(elf, start, offset, bc);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* True if file @name is already reported with one of @bc's biases. */
static bool already_reported(const struct hist_symtab *st, const char *name,
			     const struct bias_candidates *bc)
{
	for (size_t i = 0; i < st->nmods; i++)
		for (size_t j = 0; j < bc->n; j++)
			if (st->mods[i]->bias == bc->bias[j] &&
			    !strcmp(st->mods[i]->name, name))
				return true;
	return false;
}

/* Appends @m to @st's modules. */
static int push_module(struct hist_symtab *st, struct sym_module *m)
{
	if (st->nmods == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 8;
		struct sym_module **v = realloc(st->mods, cap * sizeof(*v));

		if (!v)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		st->mods = v;
		st->cap = cap;
	}
	m->index = (uint32_t) st->nmods;
	st->mods[st->nmods++] = m;
	return 0;
}

/* Reports file @path, named @name, to libdwfl at load bias @bias.  A file
 * libdwfl refuses (say, overlapping another module) is skipped. */
static int report_file(struct hist_symtab *st, const char *name,
		       const char *path, uint64_t bias)
{
	struct sym_module *m = calloc(1, sizeof(*m));
	void **userdata;
	int err;

	if (!m || !(m->name = strdup(name))) {
		free(m);
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	m->bias = bias;
	dwfl_report_begin_add(st->dwfl);
	m->mod = dwfl_report_elf(st->dwfl, name, path, -1, bias, true);
	dwfl_report_end(st->dwfl, NULL, NULL);
	if (!m->mod) {
		module_free(m);
		return 0;
	}
	err = push_module(st, m);
	if (err) {
		module_free(m);
		return err;
	}
	dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL,
			 NULL);
	*userdata = m;
	cache_clear(st);
	return 0;
}

/* hist_symtab_add_mapping() for a file read from @path but known by the
 * name @name (its path on the recording machine).  A mapping that agrees
 * with a module already reported adds nothing; a new one is reported if
 * it maps an executable segment (the only ones code lookups can hit). */
static int add_mapping_named(struct hist_symtab *st, const char *name,
			     const char *path, uint64_t start,
			     uint64_t offset)
{
	struct bias_candidates bc;
	int err = 0;

	mapping_biases(path, start, offset, &bc);
	pthread_mutex_lock(&st->lock);
	if (!already_reported(st, name, &bc)) {
		for (size_t i = 0; i < bc.n; i++) {
			if (bc.exec[i]) {
				err = report_file(st, name, path, bc.bias[i]);
				break;
			}
		}
	}
	pthread_mutex_unlock(&st->lock);
	return err;
}

int hist_symtab_add_mapping(struct hist_symtab *st, const char *path,
			    uint64_t start, uint64_t size, uint64_t offset)
{
	return add_mapping_named(st, path, path, start, offset);
}

int hist_symtab_from_bundle(const struct hist_bundle *b,
			    struct hist_symtab **out)
{
	struct hist_symtab *st;
	int err = hist_symtab_new(&st);

	for (size_t i = 0; !err && i < b->nmodules; i++) {
		const struct hist_module *m = &b->modules[i];
		char *path;

		if (!m->usable)
			continue;
		path = hist_module_open_path(b, m);
		if (!path)
			err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		else
			err = add_mapping_named(st, m->path, path, m->start,
						m->offset);
		free(path);
	}
	if (err) {
		hist_symtab_free(st);
		return err;
	}
	*out = st;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The function table of a module                                      */
/* ------------------------------------------------------------------ */

/* Appends a function to @m. */
static int push_func(struct sym_module *m, const struct sym_func *f)
{
	if (m->nfuncs == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		struct sym_func *v = realloc(m->funcs, cap * sizeof(*v));

		if (!v)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		m->funcs = v;
		m->cap = cap;
	}
	m->funcs[m->nfuncs++] = *f;
	return 0;
}

/* The header of the section of @m's main file holding address @addr,
 * into @sh, with its address in the process in @start.  Reads only the
 * section headers: dwfl_module_address_section would load (and
 * decompress) the module's DWARF, megabytes for libc. */
static bool section_at(struct sym_module *m, uint64_t addr, GElf_Shdr *sh,
		       uint64_t *start)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);

	for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
		if (!gelf_getshdr(scn, sh) || !(sh->sh_flags & SHF_ALLOC))
			continue;
		*start = sh->sh_addr + bias;
		if (addr >= *start && addr - *start < sh->sh_size)
			return true;
	}
	return false;
}

/* End of the section of @m's main file holding address @addr, or @addr
 * itself if none does. */
static uint64_t section_end(struct sym_module *m, uint64_t addr)
{
	GElf_Shdr sh;
	uint64_t start;

	return section_at(m, addr, &sh, &start) ? start + sh.sh_size : addr;
}

/* True if @addr lies in an executable section of @m's main file. */
static bool in_code(struct sym_module *m, uint64_t addr)
{
	GElf_Shdr sh;
	uint64_t start;

	return section_at(m, addr, &sh, &start) &&
	       (sh.sh_flags & SHF_EXECINSTR);
}

/* How much symbol @sym, called @name, is preferred among aliases at one
 * address: typed over untyped, then plain names over versioned ones
 * ("f@GLIBC_2.2.5") and glibc's internal "__GI_" aliases, then global
 * over weak over local. */
static uint8_t sym_rank(const GElf_Sym *sym, const char *name)
{
	uint8_t rank = GELF_ST_TYPE(sym->st_info) == STT_NOTYPE ? 0 : 8;

	if (!strchr(name, '@') && strncmp(name, "__GI_", 5))
		rank += 4;
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return rank + 3;
	case STB_WEAK: return rank + 2;
	default: return rank + 1;
	}
}

/* Keeps @name, made with malloc, until @m is freed; NULL on failure (and
 * @name is freed). */
static const char *own_name(struct sym_module *m, char *name)
{
	char **v = name ? realloc(m->names, (m->nnames + 1) * sizeof(*v)) :
		   NULL;

	if (!v) {
		free(name);
		return NULL;
	}
	m->names = v;
	v[m->nnames++] = name;
	return name;
}

/* @name without a default-version suffix, as GDB shows it
 * ("fopen@@GLIBC_2.2.5" is "fopen"); NULL if out of memory. */
static const char *plain_name(struct sym_module *m, const char *name)
{
	const char *at = strstr(name, "@@");

	return at ? own_name(m, strndup(name, (size_t) (at - name))) : name;
}

/* True if symbol @sym of @m at @addr (in section @shndx) names a
 * function: a defined function symbol, or an untyped one in code. */
static bool is_function(struct sym_module *m, const GElf_Sym *sym,
			GElf_Word shndx, uint64_t addr)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (shndx == SHN_UNDEF || shndx == (GElf_Word) -1)
		return false;
	return type == STT_FUNC || type == STT_GNU_IFUNC ||
	       (type == STT_NOTYPE && in_code(m, addr));
}

/* Adds the functions of @m's symbol tables: function symbols, and
 * untyped symbols in code, that are defined. */
static int load_symbols(struct sym_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(
			m->mod, i, &sym, &addr, &shndx, NULL, NULL);

		if (!name || !*name || !is_function(m, &sym, shndx, addr))
			continue;
		name = plain_name(m, name);
		if (!name || push_func(m, &(struct sym_func) {
				.start = addr, .size = sym.st_size,
				.name = name, .rank = sym_rank(&sym, name) }))
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	}
	return 0;
}

/* ---- PLT entries, named "sym@plt" as GDB does ---- */

/* A GOT slot and the symbol a PLT entry jumping through it calls. */
struct got_slot {
	uint64_t addr;		/* unbiased */
	const char *sym;
};

struct got_slots {
	struct got_slot *v;
	size_t n;
};

/* Adds the JUMP_SLOT and GLOB_DAT relocations of RELA section @scn. */
static int collect_relocs(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			  struct got_slots *gs)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *rel = elf_getdata(scn, NULL);
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	struct got_slot *v;

	if (!rel || !syms || !gelf_getshdr(symscn, &symsh) || !n)
		return 0;
	v = realloc(gs->v, (gs->n + n) * sizeof(*v));
	if (!v)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	gs->v = v;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		int type;

		if (!gelf_getrela(rel, (int) i, &r))
			break;
		type = (int) GELF_R_TYPE(r.r_info);
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !gelf_getsym(syms, (int) GELF_R_SYM(r.r_info), &sym))
			continue;
		v[gs->n].addr = r.r_offset;
		v[gs->n].sym = elf_strptr(elf, symsh.sh_link, sym.st_name);
		if (v[gs->n].sym && *v[gs->n].sym)
			gs->n++;
	}
	return 0;
}

/* The GOT slot that the PLT entry at @p (@len bytes, at unbiased address
 * @addr) jumps through: "[endbr64] [bnd] jmp *disp(%rip)".  0 if the
 * entry is not of that form (the lazy-binding header, IBT push stubs). */
static uint64_t plt_entry_slot(const uint8_t *p, size_t len, uint64_t addr)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = 0;
	int32_t disp;

	if (len >= 4 && !memcmp(p, endbr64, 4))
		i = 4;
	if (i < len && p[i] == 0xf2)
		i++;
	if (i + 6 > len || p[i] != 0xff || p[i + 1] != 0x25)
		return 0;
	memcpy(&disp, p + i + 2, 4);
	return addr + i + 6 + (uint64_t) (int64_t) disp;
}

/* Name of the symbol whose GOT slot is @slot, or NULL. */
static const char *slot_symbol(const struct got_slots *gs, uint64_t slot)
{
	for (size_t i = 0; i < gs->n; i++)
		if (gs->v[i].addr == slot)
			return gs->v[i].sym;
	return NULL;
}

/* Adds a function "@sym@plt" at [@start, @start + @size). */
static int push_plt_func(struct sym_module *m, const char *sym,
			 uint64_t start, uint64_t size)
{
	char *s;
	const char *name = asprintf(&s, "%s@plt", sym) < 0 ? NULL :
			   own_name(m, s);

	if (!name)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	return push_func(m, &(struct sym_func) {
		.start = start, .size = size, .name = name, .rank = 16 });
}

/* Adds the entries of PLT section @scn (.plt, .plt.sec or .plt.got). */
static int add_plt_section(struct sym_module *m, Elf_Scn *scn,
			   const GElf_Shdr *sh, uint64_t bias,
			   const struct got_slots *gs)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t ent = sh->sh_entsize >= 8 ? sh->sh_entsize : 16;
	int err = 0;

	for (size_t off = 0; !err && d && off + ent <= d->d_size; off += ent) {
		uint64_t slot = plt_entry_slot((const uint8_t *) d->d_buf + off,
					       ent, sh->sh_addr + off);
		const char *sym = slot ? slot_symbol(gs, slot) : NULL;

		if (sym)
			err = push_plt_func(m, sym, bias + sh->sh_addr + off,
					    ent);
	}
	return err;
}

/* True if section @name holds PLT entries. */
static bool is_plt_section(const char *name)
{
	return name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			!strcmp(name, ".plt.got"));
}

/* Adds "sym@plt" functions for the PLT entries of @m's main file. */
static int load_plt(struct sym_module *m)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	struct got_slots gs = { NULL, 0 };
	size_t shstrndx;
	int err = 0;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	for (int pass = 0; pass < 2 && !err; pass++) {
		for (Elf_Scn *scn = NULL;
		     !err && (scn = elf_nextscn(elf, scn)) != NULL;) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh))
				continue;
			if (pass == 0 && sh.sh_type == SHT_RELA)
				err = collect_relocs(elf, scn, &sh, &gs);
			else if (pass == 1 && gs.n && is_plt_section(
					 elf_strptr(elf, shstrndx, sh.sh_name)))
				err = add_plt_section(m, scn, &sh, bias, &gs);
		}
	}
	free(gs.v);
	return err;
}

/* Orders functions by address, the preferred alias first. */
static int func_cmp(const void *a, const void *b)
{
	const struct sym_func *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return (x->size == 0) - (y->size == 0);
}

/* Sorts @m's functions, keeps one per address and gives each a range
 * that ends where the next function starts (or its section ends, for
 * symbols without a size). */
static void finish_funcs(struct sym_module *m)
{
	size_t n = 0;

	qsort(m->funcs, m->nfuncs, sizeof(*m->funcs), func_cmp);
	for (size_t i = 0; i < m->nfuncs; i++)
		if (!n || m->funcs[n - 1].start != m->funcs[i].start)
			m->funcs[n++] = m->funcs[i];
	m->nfuncs = n;
	for (size_t i = 0; i < n; i++) {
		struct sym_func *f = &m->funcs[i];

		f->end = f->size ? f->start + f->size :
			 section_end(m, f->start);
		if (f->end <= f->start)
			f->end = f->start + 1;
		if (i + 1 < n && f->end > m->funcs[i + 1].start)
			f->end = m->funcs[i + 1].start;
	}
}

/* Builds @m's function table on first use. */
static int module_load(struct sym_module *m)
{
	int err;

	if (m->loaded)
		return 0;
	err = load_symbols(m);
	if (!err)
		err = load_plt(m);
	if (err)
		return err;
	finish_funcs(m);
	m->loaded = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Lookups                                                             */
/* ------------------------------------------------------------------ */

/* Index of the function of @m whose range holds @ip, or NO_FUNC. */
static uint32_t func_search(const struct sym_module *m, uint64_t ip)
{
	size_t lo = 0, hi = m->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->funcs[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || ip >= m->funcs[lo - 1].end)
		return NO_FUNC;
	return (uint32_t) (lo - 1);
}

/* The module reported at @ip, or NULL. */
static struct sym_module *module_at(struct hist_symtab *st, uint64_t ip)
{
	Dwfl_Module *mod = dwfl_addrmodule(st->dwfl, ip);
	void **userdata;

	if (!mod)
		return NULL;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	return *userdata;
}

/* The cache slot for @ip. */
static struct cache_slot *cache_slot(struct hist_symtab *st, uint64_t ip)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull;

	return &st->cache[h >> 54 & (CACHE_SLOTS - 1)];
}

/* Fills @slot with the answer for @ip, searching the tables. */
static int cache_fill(struct hist_symtab *st, uint64_t ip,
		      struct cache_slot *slot)
{
	struct sym_module *m = module_at(st, ip);
	int err = m ? module_load(m) : 0;

	if (err)
		return err;
	slot->ip = ip;
	slot->mod = m ? m->index : 0;
	slot->func = m ? func_search(m, ip) : NO_FUNC;
	return 0;
}

int hist_sym_lookup(struct hist_symtab *st, uint64_t ip,
		    struct hist_sym *out)
{
	struct cache_slot *slot;
	int err = 0;

	pthread_mutex_lock(&st->lock);
	slot = cache_slot(st, ip);
	if (slot->ip != ip)
		err = cache_fill(st, ip, slot);
	if (!err && slot->func == NO_FUNC)
		err = ptrr_fail_at(PTRR_ERR_NOTFOUND,
				   "no function symbol at", ip);
	if (!err) {
		const struct sym_module *m = st->mods[slot->mod];
		const struct sym_func *f = &m->funcs[slot->func];

		*out = (struct hist_sym) { .name = f->name, .start = f->start,
					   .size = f->size,
					   .module = m->name };
	}
	pthread_mutex_unlock(&st->lock);
	return err;
}

/* Looks for function @name in @m's table. */
static bool find_func(const struct sym_module *m, const char *name,
		      uint64_t *addr)
{
	for (size_t i = 0; i < m->nfuncs; i++) {
		if (!strcmp(m->funcs[i].name, name)) {
			*addr = m->funcs[i].start;
			return true;
		}
	}
	return false;
}

/* Looks for any defined symbol @name (a variable, say) in @m. */
static bool find_any(const struct sym_module *m, const char *name,
		     uint64_t *addr)
{
	GElf_Sym sym;

	return hist_dwfl_find_symbol(m->mod, name, &sym, addr);
}

int hist_sym_find(struct hist_symtab *st, const char *name, uint64_t *addr)
{
	int err = 0;
	bool found = false;

	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; !err && !found && i < st->nmods; i++) {
		err = module_load(st->mods[i]);
		found = !err && find_func(st->mods[i], name, addr);
	}
	for (size_t i = 0; !err && !found && i < st->nmods; i++)
		found = find_any(st->mods[i], name, addr);
	pthread_mutex_unlock(&st->lock);
	if (err)
		return err;
	return found ? 0 : ptrr_fail(PTRR_ERR_NOTFOUND,
				     "no symbol \"%s\" in the program", name);
}

int hist_line_lookup(struct hist_symtab *st, uint64_t ip,
		     struct hist_line *out)
{
	Dwfl_Module *mod;
	Dwfl_Line *line;
	const char *file = NULL;
	int lineno = 0;

	pthread_mutex_lock(&st->lock);
	mod = dwfl_addrmodule(st->dwfl, ip);
	line = mod ? dwfl_module_getsrc(mod, ip) : NULL;
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	pthread_mutex_unlock(&st->lock);
	if (!file)
		return ptrr_fail(PTRR_ERR_NOTFOUND,
				 "no line information for 0x%llx",
				 (unsigned long long) ip);
	out->file = file;
	out->line = lineno;
	return 0;
}

Dwfl *hist_symtab_lock(struct hist_symtab *st)
{
	pthread_mutex_lock(&st->lock);
	return st->dwfl;
}

void hist_symtab_unlock(struct hist_symtab *st)
{
	pthread_mutex_unlock(&st->lock);
}
