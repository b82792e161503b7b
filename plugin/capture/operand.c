/* The memory an instruction is about to access (operand.h). */
#include <config.h>

#include "capture/operand.h"
#include "capture/insn.h"
#include "history.h"

#include <Zydis/Zydis.h>
#include <string.h>

/* Decodes @code (@n bytes) into @zi and @ops, with @ctx holding the
 * general registers of @regs (HIST_* order) and rip @ip; false if it
 * does not decode. */
static bool decode(const uint8_t *code, size_t n, uint64_t ip,
		   const uint64_t *regs, ZydisDecodedInstruction *zi,
		   ZydisDecodedOperand *ops, ZydisRegisterContext *ctx)
{
	/* The registers of HIST_R15 .. HIST_RDI, 64 and 32 bits. */
	static const ZydisRegister gpr[][2] = {
		{ ZYDIS_REGISTER_R15, ZYDIS_REGISTER_R15D },
		{ ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R14D },
		{ ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R13D },
		{ ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R12D },
		{ ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_EBP },
		{ ZYDIS_REGISTER_RBX, ZYDIS_REGISTER_EBX },
		{ ZYDIS_REGISTER_R11, ZYDIS_REGISTER_R11D },
		{ ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R10D },
		{ ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R9D },
		{ ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R8D },
		{ ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_EAX },
		{ ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_ECX },
		{ ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_EDX },
		{ ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_ESI },
		{ ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_EDI },
	};
	ZydisDecoder dec;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	if (!n || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code,
			n < CAP_INSN_MAX ? n : CAP_INSN_MAX, zi, ops)))
		return false;
	memset(ctx, 0, sizeof(*ctx));
	for (size_t i = 0; i < sizeof(gpr) / sizeof(gpr[0]); i++) {
		ctx->values[gpr[i][0]] = regs[i];
		ctx->values[gpr[i][1]] = (uint32_t) regs[i];
	}
	ctx->values[ZYDIS_REGISTER_RSP] = regs[HIST_RSP];
	ctx->values[ZYDIS_REGISTER_ESP] = (uint32_t) regs[HIST_RSP];
	ctx->values[ZYDIS_REGISTER_RIP] = ip;
	return true;
}

/* The address of memory operand @op (not an address computation);
 * false if Zydis cannot tell it (a vector index). */
static bool address_of(const ZydisDecodedInstruction *zi,
		       const ZydisDecodedOperand *op, uint64_t ip,
		       const uint64_t *regs, ZydisRegisterContext *ctx,
		       uint64_t *addr)
{
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    op->mem.type != ZYDIS_MEMOP_TYPE_MEM ||
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddressEx(zi, op, ip, ctx, addr)))
		return false;
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		*addr += regs[HIST_FS_BASE];
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		*addr += regs[HIST_GS_BASE];
	return true;
}

uint64_t cap_operand_address(const uint8_t *code, size_t n, uint64_t ip,
			     const uint64_t *regs)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisRegisterContext ctx;
	uint64_t addr;

	if (!decode(code, n, ip, regs, &zi, ops, &ctx))
		return 0;
	for (unsigned i = 0; i < zi.operand_count_visible; i++)
		if (address_of(&zi, &ops[i], ip, regs, &ctx, &addr))
			return addr;
	return 0;
}

bool cap_operand_covers(const uint8_t *code, size_t n, uint64_t ip,
			const uint64_t *regs, uint64_t addr)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisRegisterContext ctx;

	/* Its own bytes: where they cannot all be read, the fetch may be
	 * what faulted, anywhere an instruction can reach. */
	if (!decode(code, n, ip, regs, &zi, ops, &ctx))
		return addr - ip < CAP_INSN_MAX;
	if (addr - ip < zi.length)
		return true;
	for (unsigned i = 0; i < zi.operand_count; i++) {
		uint64_t at, size = ops[i].size / 8;

		if (!address_of(&zi, &ops[i], ip, regs, &ctx, &at))
			continue;
		/* The stack's: a push writes below the rsp it names. */
		if (ops[i].visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT &&
		    ops[i].mem.base == ZYDIS_REGISTER_RSP) {
			at -= size;
			size *= 2;
		}
		if (addr - at < (size ? size : 1))
			return true;
	}
	return false;
}
