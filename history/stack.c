/* What an instruction does to the stack pointer, for replay/'s proofs of
 * rsp at past positions: a constant change (push, pop, sub $16,%rsp),
 * rsp set from rbp (leave, mov %rbp,%rsp, lea -16(%rbp),%rsp), nothing,
 * or something that cannot be known from the instruction alone (a load
 * into rsp, sub %rax,%rsp).
 */
#include "config.h"
#include "history.h"

#include <Zydis/Zydis.h>
#include <pthread.h>
#include <string.h>

static ZydisDecoder decoder;
static pthread_once_t decoder_once = PTHREAD_ONCE_INIT;

static void decoder_init(void)
{
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
}

/* True if operand @op is register rsp. */
static bool is_rsp(const ZydisDecodedOperand *op)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
	       op->reg.value == ZYDIS_REGISTER_RSP;
}

/* True if operand @op is register @reg. */
static bool is_reg(const ZydisDecodedOperand *op, ZydisRegister reg)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->reg.value == reg;
}

/* The effect of an instruction that names rsp as its destination
 * (operand 0) explicitly. */
static void explicit_write(const ZydisDecodedInstruction *in,
			   const ZydisDecodedOperand *ops,
			   struct hist_rsp_effect *out)
{
	const ZydisDecodedOperand *src = &ops[1];
	bool imm = in->operand_count_visible == 2 &&
		   src->type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	int64_t v = imm ? src->imm.value.s : 0;

	out->kind = HIST_RSP_UNKNOWN;
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (imm) {
			out->kind = HIST_RSP_DELTA;
			out->delta = in->mnemonic == ZYDIS_MNEMONIC_ADD ? v : -v;
		}
		break;
	case ZYDIS_MNEMONIC_MOV:
		if (in->operand_count_visible == 2 &&
		    is_reg(src, ZYDIS_REGISTER_RBP)) {
			out->kind = HIST_RSP_FROM_RBP;
			out->delta = 0;
		}
		break;
	case ZYDIS_MNEMONIC_LEA:
		if (src->type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    src->mem.index != ZYDIS_REGISTER_NONE ||
		    !src->mem.disp.has_displacement)
			break;
		if (src->mem.base == ZYDIS_REGISTER_RSP) {
			out->kind = HIST_RSP_DELTA;
			out->delta = src->mem.disp.value;
		} else if (src->mem.base == ZYDIS_REGISTER_RBP) {
			out->kind = HIST_RSP_FROM_RBP;
			out->delta = src->mem.disp.value;
		}
		break;
	default:
		break;
	}
}

int hist_rsp_effect(const uint8_t *code, size_t avail,
		    struct hist_rsp_effect *out)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	unsigned width;

	pthread_once(&decoder_once, decoder_init);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, code, avail, &in,
						 ops)))
		return PTRR_ERR_DECODE;
	memset(out, 0, sizeof(*out));
	out->kind = HIST_RSP_NONE;
	width = in.operand_width / 8;
	switch (in.mnemonic) {
	case ZYDIS_MNEMONIC_PUSH:
	case ZYDIS_MNEMONIC_PUSHFQ:
	case ZYDIS_MNEMONIC_PUSHF:
		out->kind = HIST_RSP_DELTA;
		out->delta = -(int64_t) (width ? width : 8);
		return in.length;
	case ZYDIS_MNEMONIC_POP:
		if (is_rsp(&ops[0])) {
			out->kind = HIST_RSP_UNKNOWN;
			return in.length;
		}
		/* fall through */
	case ZYDIS_MNEMONIC_POPFQ:
	case ZYDIS_MNEMONIC_POPF:
		out->kind = HIST_RSP_DELTA;
		out->delta = width ? width : 8;
		return in.length;
	case ZYDIS_MNEMONIC_LEAVE:
		out->kind = HIST_RSP_FROM_RBP;
		out->delta = 8;
		return in.length;
	case ZYDIS_MNEMONIC_CALL:
		out->kind = HIST_RSP_CALL;
		return in.length;
	case ZYDIS_MNEMONIC_RET:
	case ZYDIS_MNEMONIC_ENTER:
	case ZYDIS_MNEMONIC_IRETQ:
		out->kind = HIST_RSP_UNKNOWN;
		return in.length;
	default:
		break;
	}
	for (unsigned i = 0; i < in.operand_count; i++) {
		if (!(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (ops[i].reg.value == ZYDIS_REGISTER_RSP ||
		     ops[i].reg.value == ZYDIS_REGISTER_ESP ||
		     ops[i].reg.value == ZYDIS_REGISTER_SP ||
		     ops[i].reg.value == ZYDIS_REGISTER_SPL)) {
			if (i == 0 && is_rsp(&ops[0]))
				explicit_write(&in, ops, out);
			else
				out->kind = HIST_RSP_UNKNOWN;
			break;
		}
	}
	return in.length;
}
