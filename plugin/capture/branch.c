/* Exact emulation of near branches; see branch.h. */
#include <config.h>

#include "capture/branch.h"
#include "error.h"

#include <pthread.h>
#include <string.h>
#include <Zydis/Zydis.h>

#define FLAG_CF (1u << 0)
#define FLAG_PF (1u << 2)
#define FLAG_ZF (1u << 6)
#define FLAG_SF (1u << 7)
#define FLAG_OF (1u << 11)

static ZydisDecoder decoder;
static pthread_once_t decoder_once = PTHREAD_ONCE_INIT;

static void decoder_init(void)
{
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
}

/* A decoded branch. */
struct branch {
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
};

/* True if @m is one of the conditional branches emulated. */
static bool is_cond(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_JO: case ZYDIS_MNEMONIC_JNO:
	case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JNB:
	case ZYDIS_MNEMONIC_JZ: case ZYDIS_MNEMONIC_JNZ:
	case ZYDIS_MNEMONIC_JBE: case ZYDIS_MNEMONIC_JNBE:
	case ZYDIS_MNEMONIC_JS: case ZYDIS_MNEMONIC_JNS:
	case ZYDIS_MNEMONIC_JP: case ZYDIS_MNEMONIC_JNP:
	case ZYDIS_MNEMONIC_JL: case ZYDIS_MNEMONIC_JNL:
	case ZYDIS_MNEMONIC_JLE: case ZYDIS_MNEMONIC_JNLE:
	case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		return true;
	default:
		return false;
	}
}

/* Decodes @code into @b; true if it is a branch emulated exactly: a
 * near jmp, call, ret or conditional branch with 64-bit operands (no
 * 66h-prefixed 16-bit forms, no 67h-prefixed loop on ecx). */
static bool decode(const uint8_t *code, size_t avail, struct branch *b)
{
	ZydisDecodedInstruction *zi = &b->zi;

	pthread_once(&decoder_once, decoder_init);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, code, avail, zi,
						 b->op)))
		return false;
	/* 66h without REX.W: a 16-bit operand on AMD, ignored on Intel. */
	if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR ||
	    zi->operand_width != 64 ||
	    (zi->attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE && !zi->raw.rex.W))
		return false;
	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
	case ZYDIS_MNEMONIC_CALL:
		return b->op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ||
		       b->op[0].type == ZYDIS_OPERAND_TYPE_MEMORY ||
		       (b->op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64,
					      b->op[0].reg.value) == 64);
	case ZYDIS_MNEMONIC_RET:
		return true;
	case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		return zi->address_width == 64;
	default:
		return is_cond(zi->mnemonic) &&
		       b->op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	}
}

bool cap_branch_emulable(const uint8_t *code, size_t avail)
{
	struct branch b;

	return decode(code, avail, &b);
}

/* Whether jcc @m is taken with flags @fl (SDM vol. 2, Jcc). */
static bool flags_say(ZydisMnemonic m, uint64_t fl)
{
	bool cf = fl & FLAG_CF, pf = fl & FLAG_PF, zf = fl & FLAG_ZF,
	     sf = fl & FLAG_SF, of = fl & FLAG_OF;

	switch (m) {
	case ZYDIS_MNEMONIC_JO: return of;
	case ZYDIS_MNEMONIC_JNO: return !of;
	case ZYDIS_MNEMONIC_JB: return cf;
	case ZYDIS_MNEMONIC_JNB: return !cf;
	case ZYDIS_MNEMONIC_JZ: return zf;
	case ZYDIS_MNEMONIC_JNZ: return !zf;
	case ZYDIS_MNEMONIC_JBE: return cf || zf;
	case ZYDIS_MNEMONIC_JNBE: return !cf && !zf;
	case ZYDIS_MNEMONIC_JS: return sf;
	case ZYDIS_MNEMONIC_JNS: return !sf;
	case ZYDIS_MNEMONIC_JP: return pf;
	case ZYDIS_MNEMONIC_JNP: return !pf;
	case ZYDIS_MNEMONIC_JL: return sf != of;
	case ZYDIS_MNEMONIC_JNL: return sf == of;
	case ZYDIS_MNEMONIC_JLE: return zf || sf != of;
	default: return !zf && sf == of;	/* JNLE */
	}
}

/* Whether conditional branch @m is taken on @regs; loops decrement rcx
 * (in @regs) first. */
static bool taken(ZydisMnemonic m, struct user_regs_struct *regs)
{
	bool zf = regs->eflags & FLAG_ZF;

	switch (m) {
	case ZYDIS_MNEMONIC_JECXZ: return (uint32_t) regs->rcx == 0;
	case ZYDIS_MNEMONIC_JRCXZ: return regs->rcx == 0;
	case ZYDIS_MNEMONIC_LOOP: return --regs->rcx != 0;
	case ZYDIS_MNEMONIC_LOOPE: return --regs->rcx != 0 && zf;
	case ZYDIS_MNEMONIC_LOOPNE: return --regs->rcx != 0 && !zf;
	default: return flags_say(m, regs->eflags);
	}
}

/* The general-purpose registers of @regs in Zydis' order (rax, rcx,
 * rdx, rbx, rsp, rbp, rsi, rdi, r8 ... r15). */
static void gprs(const struct user_regs_struct *regs, uint64_t v[16])
{
	const uint64_t g[16] = {
		regs->rax, regs->rcx, regs->rdx, regs->rbx, regs->rsp,
		regs->rbp, regs->rsi, regs->rdi, regs->r8, regs->r9,
		regs->r10, regs->r11, regs->r12, regs->r13, regs->r14,
		regs->r15,
	};

	for (int i = 0; i < 16; i++)
		v[i] = g[i];
}

/* The target of indirect or relative branch @b at @ip on @regs; reads a
 * memory operand through @mem.  PTRR_ERR_IO if that read fails. */
static int target_of(const struct branch *b, uint64_t ip,
		     const struct user_regs_struct *regs,
		     const struct cap_mem *mem, uint64_t *target)
{
	const ZydisDecodedOperand *op = &b->op[0];
	ZydisRegisterContext ctx;
	uint64_t v[16], addr;

	if (op->type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&b->zi, op, ip,
							     target)) ?
		       0 : PTRR_ERR_DECODE;
	memset(&ctx, 0, sizeof(ctx));
	gprs(regs, v);
	for (int i = 0; i < 16; i++) {
		ctx.values[ZYDIS_REGISTER_RAX + i] = v[i];
		ctx.values[ZYDIS_REGISTER_EAX + i] = (uint32_t) v[i];
	}
	ctx.values[ZYDIS_REGISTER_RIP] = ip + b->zi.length;
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		*target = ctx.values[op->reg.value];
		return 0;
	}
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddressEx(&b->zi, op, ip, &ctx,
						     &addr)))
		return PTRR_ERR_DECODE;
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		addr += regs->fs_base;
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		addr += regs->gs_base;
	return mem->read(mem->arg, addr, target, 8) == 8 ? 0 : PTRR_ERR_IO;
}

int cap_branch_emulate(const uint8_t *code, size_t avail, uint64_t ip,
		       struct user_regs_struct *regs,
		       const struct cap_mem *mem, uint64_t *next)
{
	struct user_regs_struct r = *regs;
	uint64_t after, target;
	struct branch b;
	int err;

	if (!decode(code, avail, &b))
		return PTRR_ERR_DECODE;
	after = ip + b.zi.length;
	switch (b.zi.mnemonic) {
	case ZYDIS_MNEMONIC_RET:
		if (mem->read(mem->arg, r.rsp, &target, 8) != 8)
			return PTRR_ERR_IO;
		r.rsp += 8 + (b.zi.operand_count_visible ?
			      b.op[0].imm.value.u : 0);
		break;
	case ZYDIS_MNEMONIC_JMP:
	case ZYDIS_MNEMONIC_CALL:
		err = target_of(&b, ip, &r, mem, &target);
		if (err)
			return err;
		if (b.zi.mnemonic == ZYDIS_MNEMONIC_CALL) {
			if (mem->write(mem->arg, r.rsp - 8, &after, 8) != 8)
				return PTRR_ERR_IO;
			r.rsp -= 8;
		}
		break;
	default:
		err = target_of(&b, ip, &r, mem, &target);
		if (err)
			return err;
		if (!taken(b.zi.mnemonic, &r))
			target = after;
		break;
	}
	r.rip = target;
	*regs = r;
	*next = target;
	return 0;
}
