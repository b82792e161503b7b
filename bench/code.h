/* bench/ — the binary that gen-trace walks: its executable segments, its
 * function entries, and a cache of its instructions as Zydis decodes and
 * libipt would classify them. */
#ifndef PTRR_BENCH_CODE_H
#define PTRR_BENCH_CODE_H

#include "trace-info.h"

#include <Zydis/Zydis.h>

/* How the walk continues after an instruction. */
enum insn_kind {
	K_UNDECODED = 0,
	K_OTHER,	/* falls through */
	K_COND,		/* conditional branch: TNT bit */
	K_JMP,		/* direct near jump */
	K_CALL,		/* direct near call */
	K_IND_JMP,	/* indirect near jump: TIP */
	K_IND_CALL,	/* indirect near call: TIP */
	K_RET,		/* near return: compressed or TIP */
	K_FAR,		/* far transfer, syscall, int: TIP */
	K_STOP,		/* not walkable: tracing stops before it */
};

/* What the walk needs to know of the instruction at one code byte. */
struct insn_slot {
	int32_t disp;		/* branch displacement (direct branches) */
	uint8_t len;		/* 0 until decoded */
	uint8_t kind;		/* enum insn_kind */
};

/* The binary's executable segments, their decode cache and its functions. */
struct code {
	struct bench_trace bt;
	uint8_t *bytes[BENCH_MAX_SECTIONS];
	struct insn_slot *slots[BENCH_MAX_SECTIONS];
	uint64_t *funcs;
	size_t nfuncs;
	ZydisDecoder zydis;
};

/* Loads ELF file @path; a shared object or PIE is placed at @bias.  Exits
 * with a message if it cannot be walked. */
void code_load(struct code *c, const char *path, uint64_t bias);

/* Frees what code_load() allocated. */
void code_free(struct code *c);

/* Index of the section holding @ip, or -1. */
int code_section_of(const struct code *c, uint64_t ip);

/* The instruction at @ip, decoded on first use; NULL outside the code. */
const struct insn_slot *code_insn_at(struct code *c, uint64_t ip);

#endif
