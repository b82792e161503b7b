/* history/ — the public API: recordings on disk (bundles), the memory
 * image, the indexed instruction history, function-call segments,
 * symbols and disassembly.
 *
 * This is all that replay/ and plugin/ may call.  history/ knows nothing of
 * ptrace, sockets or debuggers: it turns raw Intel PT bytes plus a memory
 * image into a random-access sequence of numbered entries (instructions and
 * gaps), numbered from 1 like GDB's btrace.
 *
 * Errors are negative enum ptrr_error values; ptrr_errmsg() says why.
 */
#ifndef PTRR_HISTORY_H
#define PTRR_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* ------------------------------------------------------------------ */
/* Bundles: a recording on disk (history/bundle.c)                     */
/* ------------------------------------------------------------------ */

/* The manifest format version this ptrr writes and the newest it reads. */
#define HIST_BUNDLE_VERSION 1

/* The CPU the trace was recorded on (libipt applies errata by it). */
struct hist_cpu {
	char vendor[16];	/* "GenuineIntel", or "" if unknown */
	uint16_t family;
	uint8_t model;
	uint8_t stepping;
};

/* How the trace was produced. */
struct hist_ptconf {
	char backend[8];	/* "soft" or "perf" */
	uint32_t psb_period;	/* bytes of trace between PSBs, 0 unknown */
	bool ret_compression;
	uint32_t nfilters;
	struct { uint64_t start, size; } filters[4];	/* IP filter ranges */
};

enum hist_stop_kind {
	HIST_STOP_NONE = 0,	/* still running when the recording ended */
	HIST_STOP_EXITED,	/* exited; code = exit status, or -1 if it
				 * ended in a way not recorded (an import
				 * from perf: its EXIT record has none) */
	HIST_STOP_SIGNALED,	/* killed by a signal; code = signal */
	HIST_STOP_FAULT,	/* stopped by a fatal signal before delivery;
				 * code = signal, addr = fault address */
	HIST_STOP_INTERRUPTED,	/* the user interrupted ptrr */
	HIST_STOP_EXEC,		/* the program called execve and another
				 * followed: for a thread, it ran the execve
				 * (its last instruction) or was killed by
				 * another thread's */
};

struct hist_stop {
	enum hist_stop_kind kind;
	int code;
	uint64_t addr;
};

/* x86-64 user registers, in the order of <sys/user.h> user_regs_struct so
 * a ptrace GETREGS result can be copied in directly. */
enum hist_reg {
	HIST_R15, HIST_R14, HIST_R13, HIST_R12, HIST_RBP, HIST_RBX, HIST_R11,
	HIST_R10, HIST_R9, HIST_R8, HIST_RAX, HIST_RCX, HIST_RDX, HIST_RSI,
	HIST_RDI, HIST_ORIG_RAX, HIST_RIP, HIST_CS, HIST_EFLAGS, HIST_RSP,
	HIST_SS, HIST_FS_BASE, HIST_GS_BASE, HIST_DS, HIST_ES, HIST_FS,
	HIST_GS, HIST_NREGS
};

struct hist_regs {
	bool valid;
	uint64_t r[HIST_NREGS];
};

/* Name of register @reg as written in manifests ("rip"). */
const char *hist_reg_name(enum hist_reg reg);

struct hist_thread {
	int tid;
	char *trace_file;	/* path relative to the bundle directory */
	uint8_t *trace;		/* raw PT bytes (owned) */
	size_t trace_size;
	bool trace_mapped;	/* trace is a mapping of the bundle's file */
	uint64_t trace_lost;	/* bytes the ring overwrote before the start */
	struct hist_regs regs;	/* registers at the end of the trace */
	struct hist_regs start_regs;	/* at its first instruction, if the
					 * recorder read them as tracing
					 * began (and lost none of it) */
	struct hist_stop stop;
	/* Where the thread was when its trace ended, known from the trace
	 * alone where there are no registers (an import: the IP of the
	 * trace's last asynchronous disable, a FUP before the TIP.PGD): the
	 * history ends there, as it ends at regs' rip otherwise.  Written as
	 * "end_ip" in the manifest. */
	bool have_end_ip;
	uint64_t end_ip;
	/* Its history's saved index (index_file.c), owned; written as
	 * threads/TID.idx when set, read back when the history is built
	 * (hist_recording_history), never loaded with the bundle. */
	uint8_t *index;
	size_t index_size;
	/* Its table of PSBs (owned unless the recording is a live one's);
	 * NULL if none (a perf or imported trace, an older bundle).  Saved
	 * as threads/TID.psbs with @psbs_key, the key of the saved index
	 * (hist_recording_index_key(): a hash of the trace, its end and the
	 * code) when @psbs_keyed, and read back with the bundle: a history
	 * uses a table read back only if the key is still the bundle's (a
	 * damaged trace, a module missing now: the trace decodes otherwise
	 * than the emitter counted). */
	struct hist_psb *psbs;
	size_t npsbs;
	uint64_t psbs_key;
	bool psbs_keyed;
	/* Registers the recorder read on the way (struct hist_regsnap,
	 * owned, by trace offset), saved as threads/TID.regs; NULL if
	 * none (another backend, --regs-every=0, an older bundle). */
	struct hist_regsnap *snaps;
	size_t nsnaps;
};

/* A file-backed executable mapping, as in /proc/PID/maps. */
struct hist_module {
	char *path;		/* absolute path on the recording machine */
	char *file;		/* path inside the bundle when packed, or NULL */
	char *build_id;		/* lower-case hex, or NULL if none */
	uint64_t start;		/* load address of the mapping */
	uint64_t size;		/* size of the mapping */
	uint64_t offset;	/* file offset of the mapping */
	bool usable;		/* false if the loader found its file missing
				 * or of another build-id: the image skips it */
};

/* A copy of memory kept in the bundle: anonymous executable memory (the
 * vDSO, JIT code) or a region of the post-mortem memory snapshot. */
struct hist_blob {
	char *name;		/* "[vdso]", "[heap]", "" ... */
	char *file;		/* path relative to the bundle directory */
	uint64_t start;
	uint64_t size;
	uint8_t *data;		/* the bytes (owned), size bytes */
};

struct hist_bundle {
	int version;
	char *dir;		/* where it was loaded from, or NULL */
	struct hist_cpu cpu;
	struct hist_ptconf pt;
	char *exe;		/* absolute path of the program */
	char **argv;		/* NULL-terminated */
	struct hist_thread *threads;
	size_t nthreads;
	struct hist_module *modules;
	size_t nmodules;
	struct hist_blob *code;		/* anonymous executable memory */
	size_t ncode;
	struct hist_blob *snapshot;	/* optional memory snapshot */
	size_t nsnapshot;
	struct hist_stop stop;		/* how the process ended */
	char **notes;		/* NULL-terminated; e.g. "fork: child 123 not traced" */
	/* The recording of the program this one was execve'd from: a
	 * complete bundle kept inside this one, in the directory
	 * HIST_BEFORE_EXEC_DIR (which may hold the one before it, and so
	 * on).  The writer sets before_exec (owned, saved with this one);
	 * the reader sets before_exec_dir (relative to this bundle's
	 * directory) and leaves before_exec NULL: open it on its own. */
	struct hist_bundle *before_exec;
	char *before_exec_dir;
	char **warnings;	/* NULL-terminated; set by the loader for parts it
				 * could not use (the rest still opens) */
};

/* Where a bundle keeps the recording of the program before an execve. */
#define HIST_BEFORE_EXEC_DIR "before-exec.ptrr"

/* Flags for hist_bundle_save(). */
#define HIST_SAVE_PACK 0x1	/* copy module files into the bundle */

/* An empty bundle, for a recorder to fill with the helpers below. */
int hist_bundle_new(struct hist_bundle **out);
void hist_bundle_free(struct hist_bundle *b);

/* Helpers that append to a bundle; data and strings are copied. */
struct hist_thread *hist_bundle_add_thread(struct hist_bundle *b, int tid);
int hist_thread_set_trace(struct hist_thread *t, const uint8_t *trace,
			  size_t size);
int hist_bundle_add_module(struct hist_bundle *b, const char *path,
			   uint64_t start, uint64_t size, uint64_t offset);
int hist_bundle_add_code(struct hist_bundle *b, const char *name,
			 uint64_t start, const uint8_t *data, uint64_t size);
int hist_bundle_add_snapshot(struct hist_bundle *b, const char *name,
			     uint64_t start, const uint8_t *data,
			     uint64_t size);
/* Sets @b's argv to a copy of NULL-terminated @argv (NULL: empty); on
 * failure @b keeps its argv. */
int hist_bundle_set_argv(struct hist_bundle *b, char *const argv[]);
int hist_bundle_add_note(struct hist_bundle *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Writes @b to directory @dir (conventionally NAME.ptrr) atomically: into a
 * temporary sibling directory that is renamed over @dir at the end, so a
 * killed writer leaves the old bundle or the new one, never half of one.
 * Build-ids of modules are read from the files if not set. */
int hist_bundle_save(const struct hist_bundle *b, const char *dir,
		     unsigned flags);

/* Writes the saved index of every thread of @b, loaded from its
 * directory, that has one in memory (hist_recording_make_index()) into
 * that directory, over its threads/TID.idx: each is written to a new
 * file first, and those renamed over the old ones once all are written,
 * so that a failure leaves the bundle as it was (bar a thread's rename
 * failing after another's). */
int hist_bundle_save_index(const struct hist_bundle *b);

/* Checks, before a recording, that hist_bundle_save() may write @dir:
 * it does not exist (and its parent directory is writable), or it is a
 * bundle or an empty directory; otherwise fails with a one-line message
 * naming @dir and the fix. */
int hist_bundle_check_target(const char *dir);

/* Reads the bundle in @dir.  A bundle that is damaged beyond use, or of a
 * newer version, is refused with PTRR_ERR_BUNDLE / PTRR_ERR_VERSION and a
 * one-line message.  Parts that cannot be used (a missing module file, a
 * build-id that does not match) become warnings; the rest opens. */
int hist_bundle_load(const char *dir, struct hist_bundle **out);

/* Path at which module @m can be read: the packed copy inside the bundle,
 * else the original path.  Returns a malloc'd string. */
char *hist_module_open_path(const struct hist_bundle *b,
			    const struct hist_module *m);

/* Opens the file of module @m of loaded bundle @b for reading, checked
 * as the loader checks it: the packed copy inside the bundle (no
 * symbolic link followed), else the original path, holding the recorded
 * build-id.  Returns the fd, or a negative error with a one-line message
 * saying why the file is not the module's. */
int hist_module_open(const struct hist_bundle *b, const struct hist_module *m);

/* Reads the GNU build-id note of ELF file @path as lower-case hex into a
 * malloc'd string, or returns NULL if it has none or cannot be read. */
char *hist_read_build_id(const char *path);

/* The same for the ELF file open on @fd. */
char *hist_read_build_id_fd(int fd);

/* ------------------------------------------------------------------ */
/* The memory image: code bytes for decoding (history/image.c)        */
/* ------------------------------------------------------------------ */

struct hist_image;

int hist_image_new(struct hist_image **out);
void hist_image_free(struct hist_image *img);

/* Maps @size bytes of file @path starting at @offset to address @vaddr. */
int hist_image_add_file(struct hist_image *img, const char *path,
			uint64_t offset, uint64_t size, uint64_t vaddr);

/* Maps a copy of @size bytes of @data to @vaddr (served to libipt through
 * its memory callback).  Later additions take precedence. */
int hist_image_add_copy(struct hist_image *img, uint64_t vaddr,
			const uint8_t *data, uint64_t size);

/* The image of bundle @b: its modules (packed copies if present) and its
 * copies of anonymous code.  Unusable modules are skipped (the loader
 * already warned); decoding will report gaps where their code runs. */
int hist_image_from_bundle(const struct hist_bundle *b,
			   struct hist_image **out);

/* Adds the read-only data of ELF file @path, mapped (its code) at
 * @start from file offset @offset: its PT_LOAD segments that are neither
 * writable nor executable (.rodata, .eh_frame ...), at the addresses the
 * mapping implies.  They are served by hist_image_read(), never to the
 * decoder.  Contents that never change while the program runs, so they
 * are known at every position of a history.  Files that cannot be read
 * add nothing. */
int hist_image_add_rodata(struct hist_image *img, const char *path,
			  uint64_t start, uint64_t offset);

/* Reads up to @size bytes at @vaddr; returns the number of bytes read
 * (0 if nothing is mapped there) or a negative error. */
ssize_t hist_image_read(struct hist_image *img, uint64_t vaddr,
			uint8_t *buf, size_t size);

/* ------------------------------------------------------------------ */
/* Symbols and source lines (history/symbols.c, libdwfl)              */
/* ------------------------------------------------------------------ */

struct hist_symtab;

int hist_symtab_new(struct hist_symtab **out);
void hist_symtab_free(struct hist_symtab *st);

/* Adds the ELF file @path mapped at @start (file offset @offset, @size
 * bytes), as one line of /proc/PID/maps.  Several mappings of one file
 * are reported to libdwfl once, with the load bias they imply. */
int hist_symtab_add_mapping(struct hist_symtab *st, const char *path,
			    uint64_t start, uint64_t size, uint64_t offset);

/* The symbols of bundle @b's modules (packed copies if present). */
int hist_symtab_from_bundle(const struct hist_bundle *b,
			    struct hist_symtab **out);

struct hist_sym {
	const char *name;	/* valid until the symtab is freed */
	uint64_t start;		/* address of the symbol */
	uint64_t size;
	const char *module;	/* path of the module */
};

/* The function symbol containing @ip.  PTRR_ERR_NOTFOUND if none. */
int hist_sym_lookup(struct hist_symtab *st, uint64_t ip,
		    struct hist_sym *out);

/* Finds symbol @name; returns its address in @addr. */
int hist_sym_find(struct hist_symtab *st, const char *name, uint64_t *addr);

/* Looks symbol @name up in ELF file @path as gdb does: in its .symtab,
 * else in that of its separate debug file (by build-id or
 * .gnu_debuglink, under /usr/lib/debug or the directories of
 * $PTRR_DEBUG_FILE_DIRECTORY), else in its .dynsym.  Its link-time
 * address in @value, its size in @size.  PTRR_ERR_NOTFOUND if none. */
int hist_elf_find_symbol(const char *path, const char *name,
			 uint64_t *value, uint64_t *size);

struct hist_line {
	const char *file;	/* valid until the symtab is freed */
	int line;
};

/* The source line of @ip.  PTRR_ERR_NOTFOUND if there is no line info. */
int hist_line_lookup(struct hist_symtab *st, uint64_t ip,
		     struct hist_line *out);

/* ------------------------------------------------------------------ */
/* Disassembly (history/disasm.c, Zydis)                              */
/* ------------------------------------------------------------------ */

/* Length of the 64-bit instruction at @code, or a negative error. */
int hist_insn_length(const uint8_t *code, size_t avail);

/* Formats the instruction at @code (address @ip) in AT&T syntax like GDB
 * ("call   0x401136 <fact>") into @buf.  @st may be NULL.  Returns the
 * instruction length or a negative error. */
int hist_disasm(const uint8_t *code, size_t avail, uint64_t ip,
		struct hist_symtab *st, char *buf, size_t bufsz);

/* ------------------------------------------------------------------ */
/* Stack facts: call frame information and stack effects               */
/* (history/cfi.c, stack.c)                                           */
/* ------------------------------------------------------------------ */

/* How the CFI says a register of the caller is found. */
enum hist_cfi_how {
	HIST_CFI_OTHER = 0,	/* some other rule: not known here */
	HIST_CFI_UNDEFINED,	/* lost (call-clobbered) */
	HIST_CFI_SAME,		/* unchanged by this frame */
	HIST_CFI_AT,		/* saved in memory at CFA + off */
	HIST_CFI_VALUE,		/* is CFA + off */
};

struct hist_cfi_reg {
	enum hist_cfi_how how;
	int64_t off;
};

/* The callee-saved registers of the psABI, in hist_cfi.saved's order:
 * rbx, rbp, r12, r13, r14, r15 (hist_cfi_saved_reg gives each one's
 * enum hist_reg). */
#define HIST_CFI_NSAVED 6
extern const int hist_cfi_saved_reg[HIST_CFI_NSAVED];

/* What the CFI says of a frame at one address. */
struct hist_cfi {
	int cfa_reg;		/* the CFA is register HIST_RSP or HIST_RBP */
	int64_t cfa_off;	/* plus this */
	struct hist_cfi_reg ra;	/* the return address */
	struct hist_cfi_reg rbp;	/* the caller's rbp */
	/* the caller's callee-saved registers (rbp again among them) */
	struct hist_cfi_reg saved[HIST_CFI_NSAVED];
	bool signal;		/* a signal trampoline's frame */
};

/* The CFI of the code at @pc (.eh_frame, else .debug_frame, of the
 * module there): PTRR_ERR_NOTFOUND if there is none or the CFA is not a
 * register (rsp, rbp) plus an offset.  For a caller's frame ask at its
 * return address minus one. */
int hist_cfi_at(struct hist_symtab *st, uint64_t pc, struct hist_cfi *out);

/* What an instruction does to rsp. */
enum hist_rsp_kind {
	HIST_RSP_NONE = 0,	/* nothing */
	HIST_RSP_DELTA,		/* adds delta (push: -8, pop: 8, sub $n: -n) */
	HIST_RSP_FROM_RBP,	/* sets it to rbp (before) + delta (leave: 8) */
	HIST_RSP_CALL,		/* a call: -8, then the callee's own */
	HIST_RSP_UNKNOWN,	/* anything else (a load, a register amount,
				 * a return) */
};

struct hist_rsp_effect {
	enum hist_rsp_kind kind;
	int64_t delta;
};

/* The effect on rsp of the instruction at @code; returns its length, or
 * a negative error if it does not decode. */
int hist_rsp_effect(const uint8_t *code, size_t avail,
		    struct hist_rsp_effect *out);

/* A memory operand: the address is @disp + reg @base + reg @index * @scale
 * + the @seg base register (HIST_FS_BASE, HIST_GS_BASE), each register
 * (a hist_reg) only if >= 0, computed from the registers before the
 * instruction; rip-relative ones have the address in @disp. */
struct hist_memref {
	int8_t base, index, seg;
	uint8_t scale;
	uint16_t size;		/* bytes */
	int64_t disp;
};

/* The forms of hist_effect (effect.c) whose effect is known exactly. */
enum hist_effect_kind {
	HIST_EFF_OTHER = 0,	/* only what the writes say */
	HIST_EFF_ADD,		/* r1 += imm (width 4 or 8: 4 zero-extends) */
	HIST_EFF_MOV,		/* r1 = r2 (width 4 or 8) */
	HIST_EFF_ADD_REG,	/* r1 += r2 * imm (imm 1 or -1; width 4 or 8) */
	HIST_EFF_MOVSX,		/* r1 (width) = sign-extended low imm bytes of r2 */
	HIST_EFF_LEA,		/* r1 = r2 + imm (width 4 or 8; r1 != r2) */
	HIST_EFF_ADD_MEM,	/* [writes[0]] += sign * (r2, or imm if r2 < 0) */
	HIST_EFF_MUL,		/* r1 = r1 * r2, or r2 * imm if imm (width 4, 8) */
	HIST_EFF_XCHG,		/* swap r1, r2 (64-bit) */
	HIST_EFF_LOAD,		/* r1 = zero-extended [load], sign-extended
				 * if sign (width: r1's) */
	HIST_EFF_STORE,		/* [writes[0]] = low bytes of r2 */
	HIST_EFF_STORE_IMM,	/* [writes[0]] = imm */
	HIST_EFF_PUSH,		/* rsp -= 8; [rsp] = r2 (if >= 0) */
	HIST_EFF_PUSH_IMM,	/* rsp -= 8; [rsp] = imm */
	HIST_EFF_POP,		/* r1 = [rsp]; rsp += 8 */
	HIST_EFF_CALL,		/* rsp -= 8; [rsp] = imm (the return address) */
	HIST_EFF_RET,		/* rsp += 8 + imm */
	HIST_EFF_LEAVE,		/* rsp = rbp + 8; rbp = [rbp] */
	HIST_EFF_SYSCALL,	/* the kernel: rax, rcx, r11; any memory */
	HIST_EFF_SET,		/* r1 = imm (width 4 zero-extends, or 8):
				 * mov $imm, xor r,r */
};

#define HIST_EFFECT_MAXW 2

/* What an instruction does to the general-purpose registers and memory. */
struct hist_effect {
	enum hist_effect_kind kind;
	int8_t r1, r2;		/* hist_reg operands of the kind, or -1 */
	uint8_t width;		/* operand bytes of the kind */
	int8_t sign;		/* HIST_EFF_ADD_MEM: 1 (add) or -1 (sub);
				 * HIST_EFF_LOAD: 1 if sign-extending */
	uint8_t length;		/* instruction bytes */
	int64_t imm;
	uint8_t regs[HIST_NREGS];	/* bytes of each register written */
	uint32_t wrote;		/* bit r: regs[r] is not 0 */
	uint32_t zext;		/* bit r: r written as a 32-bit register,
				 * so its upper four bytes are zero after */
	struct hist_memref load;	/* HIST_EFF_LOAD's source */
	struct hist_memref writes[HIST_EFFECT_MAXW];
	unsigned nwrites;
	bool mem_unbounded;	/* writes memory the operands do not bound */
	uint64_t target;	/* a direct jump's or call's destination, or 0 */
};

/* The effect of the instruction at @code (at address @ip) into @fx;
 * 0, or a negative error if it does not decode. */
int hist_effect_of(const uint8_t *code, size_t len, uint64_t ip,
		   struct hist_effect *fx);

/* ------------------------------------------------------------------ */
/* The instruction history (history/index.c, segment.c, cursor.c)     */
/* ------------------------------------------------------------------ */

struct history;

/* One entry of a thread's table of PSBs, written by the emitter that made
 * its trace (plugin/capture/emit.c; docs/history.md, "Segments numbered
 * from the emitter's table of PSBs"): the PSB at trace offset @offset
 * came after (@insns & ~HIST_PSB_INEXACT) instructions (counted from any
 * point: only differences are used).  HIST_PSB_INEXACT: the segment
 * ending at this PSB holds something the decoder counts otherwise than
 * the emitter (an overflow, filtered code): it must be decoded.  Saved
 * in threads/TID.psbs after its header (HIST_PSBS_MAGIC, then the key of
 * struct hist_thread's psbs_key), 16 bytes an entry, little-endian. */
struct hist_psb {
	uint64_t offset;
	uint64_t insns;
};
#define HIST_PSB_INEXACT (1ull << 63)
#define HIST_PSBS_MAGIC "PTRRPSB1"

/* Registers recorded at an instruction boundary of a thread (the
 * software backend's --regs-every; docs/history.md, "Registers recorded
 * on the way"): all of them (@r, as struct hist_regs) before the
 * instruction that is the @k-th after the first instruction of the
 * segment whose PSB is at trace offset @offset (k 0: that first
 * instruction, the PSB's FUP).  The recorder takes them only where the
 * segment so far holds nothing the decoder counts otherwise than the
 * emitter, so the history's entry is its segment's first plus @k; a
 * reader still checks that entry's address against r[HIST_RIP]. */
struct hist_regsnap {
	uint64_t offset;
	uint64_t k;
	uint64_t r[HIST_NREGS];
};
#define HIST_REGS_MAGIC "PTRRREG1"

/* Encodes @n snapshots (by offset) as threads/TID.regs holds them:
 * HIST_REGS_MAGIC, then per snapshot its offset and k (8 bytes each), a
 * 4-byte mask of the registers that differ from the snapshot before
 * (all of them for the first) and those registers' values (8 bytes
 * each, in struct hist_regs order), little-endian.  Into *@out
 * (malloc'd), its size into *@size. */
int hist_regsnaps_encode(const struct hist_regsnap *v, size_t n,
			 uint8_t **out, size_t *size);

/* Decodes what hist_regsnaps_encode() wrote (@size bytes at @data) into
 * *@out (malloc'd), their number into *@n; PTRR_ERR_BUNDLE if it is not
 * that (a wrong magic, a truncated record, offsets out of order). */
int hist_regsnaps_decode(const uint8_t *data, size_t size,
			 struct hist_regsnap **out, size_t *n);

struct hist_config {
	struct hist_cpu cpu;
	const uint8_t *trace;	/* raw PT; must outlive the history */
	size_t size;
	struct hist_image *image;	/* must outlive the history */
	struct hist_symtab *symtab;	/* optional; names call segments */
	bool have_end_ip;	/* the thread's PC when the trace ended is */
	uint64_t end_ip;	/* known: the history is walked up to it */
	/* Optional: the trace's table of PSBs, by offset.  With it, every
	 * segment but the last is numbered from the table instead of being
	 * decoded (the last is decoded: it ends where the thread stopped),
	 * if the table lists exactly the PSBs in the trace and marks none of
	 * their segments inexact; else it is not used.  Only read while the
	 * history is built or extended. */
	const struct hist_psb *psbs;
	size_t npsbs;
};

/* Builds the segment index of @cfg's trace in one pass.  Decode errors do
 * not fail this: they become gap entries. */
int hist_open(const struct hist_config *cfg, struct history **out);
void hist_close(struct history *h);

/* Extends @h to trace @trace of @size bytes: the trace it was opened or
 * last extended with, with bytes appended (it may have moved; it must
 * outlive the history), and the thread's final PC now (@have_end_ip,
 * @end_ip).  Only the last segment is decoded again, with the new ones:
 * entries before it keep their numbers; the call segments are brought up
 * to date on next use, from that segment on.  Cursors move on correctly.  Must not run
 * concurrently with any other call on @h. */
int hist_extend(struct history *h, const uint8_t *trace, size_t size,
		bool have_end_ip, uint64_t end_ip);

/* The table of PSBs the next hist_extend() of @h may number its new
 * segments from (see struct hist_config; borrowed until then). */
void hist_set_psbs(struct history *h, const struct hist_psb *psbs,
		   size_t npsbs);

/* True if @h numbered some of its segments from a table of PSBs that no
 * decode has contradicted so far. */
bool hist_numbered_from_table(const struct history *h);

/* Decodes every segment of @h that was numbered from the table of PSBs
 * and not decoded yet, which fills in their code summaries, last
 * addresses and call depths (the saved index keeps them); the depths
 * are then put in sequence.  An error if a decode disagreed with the
 * table (h->table_wrong). */
int hist_learn_segments(struct history *h);

/* Number of entries; they are numbered 1 .. hist_size(). */
uint64_t hist_size(const struct history *h);

/* Number of instruction entries (entries that are not gaps). */
uint64_t hist_insn_count(const struct history *h);

/* Bytes of memory the index uses (for the 1-byte-per-instruction bar). */
size_t hist_index_bytes(const struct history *h);

enum hist_entry_kind {
	HIST_ENTRY_INSN = 0,
	HIST_ENTRY_GAP = 1,
};

/* Instruction classes, as libipt's enum pt_insn_class; only the last
 * instruction of a straight-line run is ever a branch. */
enum hist_iclass {
	HIST_IC_OTHER = 0,
	HIST_IC_CALL,
	HIST_IC_RETURN,
	HIST_IC_JUMP,
	HIST_IC_COND_JUMP,
	HIST_IC_FAR_CALL,	/* syscall, int n */
	HIST_IC_FAR_RETURN,	/* iret, sysret */
	HIST_IC_FAR_JUMP,
	HIST_IC_PTWRITE,
};

/* Entry flags. */
#define HIST_F_RESUMED	0x1	/* tracing (re)started at this instruction
				 * (after a syscall, a signal, a filter) */
#define HIST_F_WALKED	0x2	/* reached by walking past the last packet
				 * to the known end IP */
#define HIST_F_INTERRUPTED 0x4	/* an asynchronous event (signal,
				 * interrupt) stopped tracing here */

/* Gap codes that are not libipt errors. */
#define HIST_GAP_OVERFLOW	(-1001)	/* the CPU's buffer overflowed (OVF) */
#define HIST_GAP_DISCONNECTED	(-1002)	/* a segment's end does not lead to
					 * the next segment's start */
#define HIST_GAP_NO_END		(-1003)	/* the trace does not lead to the
					 * thread's final PC */
#define HIST_GAP_ENDLESS	(-1004)	/* a million instructions on no trace:
					 * a loop of direct branches, which
					 * the trace never says was left */

/* The instructions decoded on no trace before a HIST_GAP_ENDLESS gap.  A
 * fuzzing build (configure --enable-fuzz) stops sooner: under ASan a
 * million took fuzz-pt 2 s an input, and its corpus filled with them. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define HIST_NO_TRACE_LIMIT	20000
#else
#define HIST_NO_TRACE_LIMIT	1000000
#endif

struct hist_entry {
	uint64_t number;
	uint64_t ip;		/* gap: where decoding stopped, or 0 */
	enum hist_entry_kind kind;
	enum hist_iclass iclass;
	uint8_t size;		/* instruction length in bytes */
	uint8_t flags;
	int gap_code;		/* gap: negative libipt pt_error_code or
				 * HIST_GAP_* */
	uint64_t gap_offset;	/* gap: trace offset of the error */
};

/* One line describing why a gap entry is a gap ("decode error at trace
 * offset 0x1f40: no memory mapped at 0x7ffff7fc1000"), into @buf. */
const char *hist_gap_reason(const struct hist_entry *e, char *buf,
			    size_t bufsz);

/* A position in the history that moves in both directions. */
struct hist_cursor;

int hist_cursor_new(struct history *h, struct hist_cursor **out);
void hist_cursor_free(struct hist_cursor *c);

/* Moves to entry @number.  PTRR_ERR_RANGE if outside 1 .. hist_size(). */
int hist_cursor_seek(struct hist_cursor *c, uint64_t number);

/* Moves one entry forward / backward.  PTRR_ERR_RANGE at either end, and
 * the cursor stays where it was. */
int hist_cursor_next(struct hist_cursor *c);
int hist_cursor_prev(struct hist_cursor *c);

/* The entry under the cursor; valid until the cursor moves. */
const struct hist_entry *hist_cursor_entry(const struct hist_cursor *c);

/* One PSB-delimited stretch of trace, as recorded in the index. */
struct hist_segment {
	uint64_t offset;	/* trace offset of its PSB */
	uint64_t end_offset;	/* trace offset of the next PSB (or end) */
	uint64_t first;		/* number of its first entry */
	uint64_t count;		/* entries (instructions and gaps) in it */
	uint64_t start_ip;	/* first and last instruction address */
	uint64_t end_ip;
	int32_t depth_in;	/* call depth at start and end, relative */
	int32_t depth_out;	/* to the start of the trace */
	uint64_t gaps;		/* gap entries among count */
	uint64_t summary[8];	/* Bloom filter of the 64-byte code lines
				 * its instructions touched */
};

size_t hist_nsegments(const struct history *h);

/* The offset, in *@at, of the first PSB of @trace (@size bytes) that
 * starts at or after @from; -1 if there is none.  As libipt finds them (a
 * longer run of the PSB's byte pairs ends in the PSB), but without
 * libipt 2.0.5's pt_sync_forward(), which reads the byte after the end
 * of the trace when the trace ends in PSB bytes: fuzz-pt found it
 * faulting at the end of a page. */
int hist_next_psb(const uint8_t *trace, size_t size, uint64_t from,
		  uint64_t *at);

/* The size of a PSB packet: the next one starts no earlier than this
 * after one hist_next_psb() found. */
#define HIST_PSB_SIZE 16
const struct hist_segment *hist_segment_at(const struct history *h,
					   size_t i);

/* Index of the segment holding entry @number. */
int hist_segment_find(const struct history *h, uint64_t number,
		      size_t *index);

/* False if segment @s certainly never executed the instruction at @ip. */
bool hist_segment_may_touch(const struct hist_segment *s, uint64_t ip);

/* Finds the nearest instruction entry strictly before (@dir < 0) or after
 * (@dir > 0) entry @from whose address is one of @ips, skipping segments
 * whose summary excludes them all.  Sets @found, or returns
 * PTRR_ERR_NOTFOUND. */
int hist_search_ips(struct history *h, uint64_t from, int dir,
		    const uint64_t *ips, size_t nips, uint64_t *found);

/* hist_search_ips() that calls @stop(@arg), if @stop is not NULL, before
 * each segment it comes to, and ends when it says true: then *@stopped
 * is set, and *@found is the far end of the segments searched (the first
 * entry of the last one back, the last entry of the last one forward),
 * or @from if none was.  No entry between @from and it matched. */
int hist_search_ips_until(struct history *h, uint64_t from, int dir,
			  const uint64_t *ips, size_t nips,
			  bool (*stop)(void *arg), void *arg,
			  uint64_t *found, bool *stopped);

/* ------------------------------------------------------------------ */
/* Function-call segments (history/calls.c), like GDB's btrace         */
/* ------------------------------------------------------------------ */

/* Call-segment flags. */
#define HIST_CALL_GAP		0x1	/* a gap, not a function */
#define HIST_CALL_TAILCALL	0x2	/* entered by a jump (tail call) */
#define HIST_CALL_UP_RETURN	0x4	/* @up was guessed from a return to
					 * a frame not seen being called */

/* A contiguous run of entries in one function instance. */
struct hist_call {
	uint64_t first;		/* first and last entry number (inclusive) */
	uint64_t last;
	uint64_t func;		/* function symbol address, or first IP if no
				 * symbol covers it */
	uint32_t id;		/* 1-based, in execution order */
	int32_t level;		/* call depth; the lowest level seen is 0 */
	uint32_t up;		/* caller's segment id, 0 if unknown */
	uint32_t inst;		/* the first segment of its function instance
				 * (its own id if it is the first) */
	uint32_t next;		/* the same function instance after a call
				 * out of it, 0 if none */
	uint32_t flags;
};

/* The call segments of @h are computed by one pass over its entries, on
 * first use; after hist_extend() the pass goes on from the start of the
 * segment hist_extend() decoded again.  Levels are relative to the lowest
 * level seen, so they may all shift when the history grows; ids, entry
 * ranges and links of segments before that segment stay.  Each call
 * below brings the segments up to date first.  Safe to call from several
 * threads (not concurrently with hist_extend()). */

/* The number of call segments of @h (their ids are 1 .. @ncalls). */
int hist_calls_count(struct history *h, size_t *ncalls);

/* Call segment @id of @h, into @call.  PTRR_ERR_RANGE if there is none. */
int hist_call_get(struct history *h, uint32_t id, struct hist_call *call);

/* The call segment (1-based id) containing entry @number. */
int hist_call_find(struct history *h, uint64_t number, uint32_t *id);

/* Brings the call segments of @h up to date now, for a thread that
 * prepares them before they are asked for: returns 1, keeping what it
 * did (the next call goes on from there), once *@stop becomes true. */
int hist_calls_prepare(struct history *h, const bool *stop);

/* True if the call segments of @h cover all of it now, so that the calls
 * above answer without walking; false while a walk is going on (on
 * another thread: hist_calls_prepare) or before one.  Never waits. */
bool hist_calls_ready(struct history *h);

/* True if the pass over @h's call segments is no more than @slack
 * entries from its end (or @h has no more than @slack entries), so
 * that a call above waits for no more than that much of it; false
 * before the pass, or while one far behind is going on.  Never waits.
 * (A history renumbered or damaged since the pass walked it may say
 * true: the call then waits for the walk again.) */
bool hist_calls_near(struct history *h, uint64_t slack);

/* Bytes of memory the call segments of @h use (0 before first use). */
size_t hist_calls_bytes(struct history *h);

/* True if the call segments of @h were read from a saved index rather
 * than computed by the pass (a saved index leaves them out when they
 * would make it larger than the trace: docs/history.md). */
bool hist_calls_from_index(struct history *h);

/* ------------------------------------------------------------------ */
/* A recording: a bundle with its image, symbols and histories        */
/* ------------------------------------------------------------------ */

struct hist_recording;

int hist_recording_open(const char *dir, struct hist_recording **out);
void hist_recording_close(struct hist_recording *r);

const struct hist_bundle *hist_recording_bundle(
	const struct hist_recording *r);
struct hist_image *hist_recording_image(struct hist_recording *r);
struct hist_symtab *hist_recording_symtab(struct hist_recording *r);

/* Thread @i's history, built (indexed) on first use. */
int hist_recording_history(struct hist_recording *r, size_t i,
			   struct history **out);

/* Saves thread @i's history — its index and call segments, computed now
 * if they are not yet — into the bundle's thread (hist_thread.index), for
 * hist_bundle_save() to write: opening the bundle then reads them instead
 * of decoding the trace again.  hist_recording_drop_index() frees them. */
int hist_recording_make_index(struct hist_recording *r);
void hist_recording_drop_index(struct hist_recording *r);

/* Makes the complete index of recording @r, opened from a bundle
 * directory (hist_recording_open()), and writes it into the bundle
 * (hist_bundle_save_index()): `ptrr index`.  Refuses a bundle the
 * loader found damaged (its warnings): an index of what is left of it
 * would stand for the whole. */
int hist_recording_save_index(struct hist_recording *r);

/* The same for bundle @b not yet opened (a recorder's, before it saves
 * it): builds each thread's history on a recording that borrows @b.
 * Not @complete: the index as opening the trace makes it, without call
 * segments and without decoding the segments a table of PSBs numbered
 * (no per-instruction work; docs/history.md, "The saved index"). */
int hist_bundle_make_index(struct hist_bundle *b, bool complete);

/* True if thread @i's history was read from the bundle's saved index. */
bool hist_recording_index_saved(const struct hist_recording *r, size_t i);

/* Index of the thread with task id @tid. */
int hist_recording_find_tid(const struct hist_recording *r, int tid,
			    size_t *i);

/* A recording that grows: a live session's trace so far.  @b (taken
 * over, freed with the recording) says what is known now; its threads'
 * traces are borrowed, not owned: each must stay valid until the next
 * hist_recording_set_trace() of its thread or the recording's close.
 * The helpers below add to it as the program runs, and histories
 * already built grow with hist_extend() (never decoded again). */
int hist_recording_new(struct hist_bundle *b, struct hist_recording **out);

/* The bundle of a growing recording, for hist_bundle_save(). */
struct hist_bundle *hist_recording_bundle_mut(struct hist_recording *r);

/* While the traces a live recording borrows grow (the process runs),
 * their buffers may move: hist_recording_hold_walks(@r, true) pauses
 * every walk for call segments over its histories that another thread
 * makes (replay_new()'s) until hist_recording_hold_walks(@r, false).  A
 * recording is not to be changed while its walks are held. */
void hist_recording_hold_walks(struct hist_recording *r, bool hold);

/* Adds the mapping of file @path (as hist_bundle_add_module()) to the
 * bundle, the image and the symbols, unless the bundle has it already. */
int hist_recording_add_module(struct hist_recording *r, const char *path,
			      uint64_t start, uint64_t size, uint64_t offset);

/* Adds a copy of anonymous code (the vDSO, a JIT's) to the bundle and
 * the image, unless the image has these bytes there already. */
int hist_recording_add_code(struct hist_recording *r, const char *name,
			    uint64_t start, const uint8_t *data,
			    uint64_t size);

/* Adds thread @tid, with no trace yet; its index in *@i. */
int hist_recording_add_thread(struct hist_recording *r, int tid, size_t *i);

/* Thread @i's trace is now @trace, @size bytes (the previous one with
 * bytes appended; borrowed), its registers at the end @regs and how it
 * stopped @stop; a history already built is extended. */
int hist_recording_set_trace(struct hist_recording *r, size_t i,
			     const uint8_t *trace, size_t size,
			     const struct hist_psb *psbs, size_t npsbs,
			     const struct hist_regs *regs,
			     const struct hist_stop *stop);

#endif
