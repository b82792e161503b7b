/* What an instruction does to the integer registers and to memory, for
 * replay/recover.c's value recovery (history.h, hist_effect_of).
 *
 * Zydis lists every operand an instruction reads and writes, hidden ones
 * included (push's stack slot, div's rdx, syscall's rcx and r11).  From
 * them this file says which register bytes an instruction writes, where it
 * writes memory (as base + index * scale + disp, to be computed from the
 * registers before it), and, for the few forms whose effect can be undone
 * or that tie a register to memory, what exactly they did:
 *
 *   r += imm (add, sub, inc, dec, lea r,[r+disp]; 32- or 64-bit),
 *   r1 = r2 (mov; 32- or 64-bit), xchg r1,r2 (64-bit),
 *   r = imm (mov $imm, xor r,r; 32- or 64-bit),
 *   a load r = [m] (mov, movzx, movsx, movslq; 8 to 64 bits), a store
 *   [m] = r or imm,
 *   push, pop, call, ret, leave, syscall.
 *
 * Anything else is described by its writes alone.  Writes the operands do
 * not bound (rep string instructions, xsave's area, scatter stores) make
 * hist_effect.mem_unbounded true: memory anywhere may have changed.
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

/* The hist_reg of 64-bit general-purpose register @r, or -1. */
static int gpr_of(ZydisRegister r)
{
	static const int map[16] = {
		HIST_RAX, HIST_RCX, HIST_RDX, HIST_RBX,
		HIST_RSP, HIST_RBP, HIST_RSI, HIST_RDI,
		HIST_R8, HIST_R9, HIST_R10, HIST_R11,
		HIST_R12, HIST_R13, HIST_R14, HIST_R15,
	};
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(
		ZYDIS_MACHINE_MODE_LONG_64, r);

	if (big < ZYDIS_REGISTER_RAX || big > ZYDIS_REGISTER_R15)
		return -1;
	return map[big - ZYDIS_REGISTER_RAX];
}

/* The bytes of its 64-bit register that register @r names: 0x01 for al,
 * 0x02 for ah, 0x03 for ax, 0x0f for eax, 0xff for rax. */
static uint8_t bytes_of(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_AH || r == ZYDIS_REGISTER_CH ||
	    r == ZYDIS_REGISTER_DH || r == ZYDIS_REGISTER_BH)
		return 0x02;
	switch (ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, r)) {
	case 8:
		return 0x01;
	case 16:
		return 0x03;
	case 32:
		return 0x0f;
	default:
		return 0xff;
	}
}

/* The bytes of its register a write to @r makes unknown before: a 32-bit
 * write zeroes the upper half, so all of it. */
static uint8_t written_bytes(ZydisRegister r)
{
	uint8_t b = bytes_of(r);

	return b == 0x0f ? 0xff : b;
}

/* Fills @m from memory operand @op of an instruction at @ip of @len
 * bytes; false if its address cannot be written that way. */
static bool memref_of(const ZydisDecodedOperand *op, uint64_t ip,
		      size_t len, struct hist_memref *m)
{
	memset(m, 0, sizeof(*m));
	m->base = m->index = -1;
	m->size = (uint16_t) (op->size / 8);
	m->disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		m->seg = HIST_FS_BASE;
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		m->seg = HIST_GS_BASE;
	else
		m->seg = -1;
	if (op->mem.base == ZYDIS_REGISTER_RIP) {
		m->disp += (int64_t) (ip + len);
	} else if (op->mem.base != ZYDIS_REGISTER_NONE) {
		m->base = (int8_t) gpr_of(op->mem.base);
		if (m->base < 0 ||
		    ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64,
					  op->mem.base) != 64)
			return false;
	}
	if (op->mem.index != ZYDIS_REGISTER_NONE) {
		m->index = (int8_t) gpr_of(op->mem.index);
		if (m->index < 0 ||
		    ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64,
					  op->mem.index) != 64)
			return false;
		m->scale = op->mem.scale;
	}
	return m->size > 0;
}

/* True if operand @op is a general-purpose register. */
static bool is_gpr(const ZydisDecodedOperand *op)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
	       gpr_of(op->reg.value) >= 0;
}

/* The special forms (see the top of the file), over the generic writes
 * already in @fx. */
static void special(const ZydisDecodedInstruction *in,
		    const ZydisDecodedOperand *ops, uint64_t ip,
		    struct hist_effect *fx)
{
	const ZydisDecodedOperand *d = &ops[0], *s = &ops[1];
	unsigned nv = in->operand_count_visible;
	int64_t sign = 1;

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_SUB:
		sign = -1;
		/* fall through */
	case ZYDIS_MNEMONIC_ADD:
		if (nv == 2 && is_gpr(d) && s->type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    (d->size == 64 || d->size == 32)) {
			fx->kind = HIST_EFF_ADD;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->imm = sign * s->imm.value.s;
			fx->width = (uint8_t) (d->size / 8);
		} else if (nv == 2 && d->type == ZYDIS_OPERAND_TYPE_MEMORY &&
			   fx->nwrites == 1 && d->size <= 64 &&
			   ((is_gpr(s) && s->size == d->size &&
			     bytes_of(s->reg.value) != 0x02) ||
			    s->type == ZYDIS_OPERAND_TYPE_IMMEDIATE)) {
			fx->kind = HIST_EFF_ADD_MEM;
			fx->sign = (int8_t) sign;
			if (is_gpr(s))
				fx->r2 = (int8_t) gpr_of(s->reg.value);
			else
				fx->imm = s->imm.value.s;
		} else if (nv == 2 && is_gpr(d) && is_gpr(s) &&
			   d->size == s->size &&
			   (d->size == 64 || d->size == 32) &&
			   gpr_of(d->reg.value) != gpr_of(s->reg.value)) {
			fx->kind = HIST_EFF_ADD_REG;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->r2 = (int8_t) gpr_of(s->reg.value);
			fx->imm = sign;
			fx->width = (uint8_t) (d->size / 8);
		}
		break;
	case ZYDIS_MNEMONIC_MOVSXD:
	case ZYDIS_MNEMONIC_MOVSX:
		if (nv == 2 && is_gpr(d) && s->type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    s->mem.type == ZYDIS_MEMOP_TYPE_MEM &&
		    s->mem.segment != ZYDIS_REGISTER_FS &&
		    s->mem.segment != ZYDIS_REGISTER_GS &&
		    (d->size == 64 || d->size == 32) &&
		    memref_of(s, ip, in->length, &fx->load) &&
		    fx->load.size < d->size / 8) {
			fx->kind = HIST_EFF_LOAD;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->width = (uint8_t) (d->size / 8);
			fx->sign = 1;
		} else if (nv == 2 && is_gpr(d) && is_gpr(s) &&
		    bytes_of(s->reg.value) != 0x02 &&
		    (d->size == 64 || d->size == 32) && s->size < d->size) {
			fx->kind = HIST_EFF_MOVSX;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->r2 = (int8_t) gpr_of(s->reg.value);
			fx->width = (uint8_t) (d->size / 8);
			fx->imm = s->size / 8;
		}
		break;
	case ZYDIS_MNEMONIC_INC:
	case ZYDIS_MNEMONIC_DEC:
		if (nv == 1 && is_gpr(d) && (d->size == 64 || d->size == 32)) {
			fx->kind = HIST_EFF_ADD;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->imm = in->mnemonic == ZYDIS_MNEMONIC_INC ? 1 : -1;
			fx->width = (uint8_t) (d->size / 8);
		} else if (nv == 1 && d->type == ZYDIS_OPERAND_TYPE_MEMORY &&
			   fx->nwrites == 1 && d->size <= 64) {
			fx->kind = HIST_EFF_ADD_MEM;
			fx->sign = 1;
			fx->imm = in->mnemonic == ZYDIS_MNEMONIC_INC ? 1 : -1;
		}
		break;
	case ZYDIS_MNEMONIC_LEA:
		if (nv == 2 && is_gpr(d) && (d->size == 64 || d->size == 32) &&
		    s->mem.index == ZYDIS_REGISTER_NONE &&
		    s->mem.base != ZYDIS_REGISTER_NONE &&
		    s->mem.base != ZYDIS_REGISTER_RIP &&
		    gpr_of(s->mem.base) == gpr_of(d->reg.value) &&
		    ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64,
					  s->mem.base) == 64) {
			fx->kind = HIST_EFF_ADD;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->imm = s->mem.disp.has_displacement ?
				  s->mem.disp.value : 0;
			fx->width = (uint8_t) (d->size / 8);
		} else if (nv == 2 && is_gpr(d) &&
			   (d->size == 64 || d->size == 32) &&
			   s->mem.index == ZYDIS_REGISTER_NONE &&
			   s->mem.segment != ZYDIS_REGISTER_FS &&
			   s->mem.segment != ZYDIS_REGISTER_GS &&
			   s->mem.base != ZYDIS_REGISTER_NONE &&
			   s->mem.base != ZYDIS_REGISTER_RIP &&
			   gpr_of(s->mem.base) >= 0 &&
			   ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64,
						 s->mem.base) == 64) {
			fx->kind = HIST_EFF_LEA;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->r2 = (int8_t) gpr_of(s->mem.base);
			fx->imm = s->mem.disp.has_displacement ?
				  s->mem.disp.value : 0;
			fx->width = (uint8_t) (d->size / 8);
		} else if (nv == 2 && is_gpr(d) && d->size == 64 &&
			   s->mem.base == ZYDIS_REGISTER_RIP &&
			   s->mem.index == ZYDIS_REGISTER_NONE) {
			/* lea sym(%rip): a constant, the address. */
			fx->kind = HIST_EFF_SET;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->imm = (int64_t) (ip + in->length) +
				  (s->mem.disp.has_displacement ?
				   s->mem.disp.value : 0);
			fx->width = 8;
		}
		break;
	case ZYDIS_MNEMONIC_MOV:
	case ZYDIS_MNEMONIC_MOVZX:
		if (nv != 2)
			break;
		if (is_gpr(d) && s->type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    in->mnemonic == ZYDIS_MNEMONIC_MOV &&
		    (d->size == 64 || d->size == 32)) {
			fx->kind = HIST_EFF_SET;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->imm = s->imm.value.s;
			fx->width = (uint8_t) (d->size / 8);
		} else if (is_gpr(d) && is_gpr(s) &&
			   in->mnemonic == ZYDIS_MNEMONIC_MOV &&
			   (d->size == 64 || d->size == 32)) {
			fx->kind = HIST_EFF_MOV;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->r2 = (int8_t) gpr_of(s->reg.value);
			fx->width = (uint8_t) (d->size / 8);
		} else if (is_gpr(d) && s->type == ZYDIS_OPERAND_TYPE_MEMORY &&
			   s->mem.type == ZYDIS_MEMOP_TYPE_MEM &&
			   s->mem.segment != ZYDIS_REGISTER_FS &&
			   s->mem.segment != ZYDIS_REGISTER_GS &&
			   bytes_of(d->reg.value) != 0x02 &&
			   memref_of(s, ip, in->length, &fx->load) &&
			   fx->load.size <= d->size / 8 &&
			   (in->mnemonic == ZYDIS_MNEMONIC_MOVZX ||
			    d->size >= 32)) {
			fx->kind = HIST_EFF_LOAD;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->width = (uint8_t) (d->size / 8);
		} else if (d->type == ZYDIS_OPERAND_TYPE_MEMORY &&
			   fx->nwrites == 1 && in->mnemonic == ZYDIS_MNEMONIC_MOV) {
			if (is_gpr(s) && bytes_of(s->reg.value) != 0x02) {
				fx->kind = HIST_EFF_STORE;
				fx->r2 = (int8_t) gpr_of(s->reg.value);
			} else if (s->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
				fx->kind = HIST_EFF_STORE_IMM;
				fx->imm = s->imm.value.s;
			}
		}
		break;
	case ZYDIS_MNEMONIC_IMUL:
		if ((nv == 2 || nv == 3) && is_gpr(d) && is_gpr(s) &&
		    (d->size == 64 || d->size == 32) && s->size == d->size &&
		    (nv == 2 || ops[2].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)) {
			fx->kind = HIST_EFF_MUL;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->r2 = (int8_t) gpr_of(s->reg.value);
			fx->imm = nv == 3 ? ops[2].imm.value.s : 0;
			fx->width = (uint8_t) (d->size / 8);
		}
		break;
	case ZYDIS_MNEMONIC_XOR:
		/* xor r,r: zero. */
		if (nv == 2 && is_gpr(d) && is_gpr(s) &&
		    d->reg.value == s->reg.value &&
		    (d->size == 64 || d->size == 32)) {
			fx->kind = HIST_EFF_SET;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->imm = 0;
			fx->width = (uint8_t) (d->size / 8);
		}
		break;
	case ZYDIS_MNEMONIC_CDQE:
		fx->kind = HIST_EFF_MOVSX;
		fx->r1 = fx->r2 = HIST_RAX;
		fx->width = 8;
		fx->imm = 4;
		break;
	case ZYDIS_MNEMONIC_XCHG:
		if (nv == 2 && is_gpr(d) && is_gpr(s) && d->size == 64) {
			fx->kind = HIST_EFF_XCHG;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
			fx->r2 = (int8_t) gpr_of(s->reg.value);
			fx->width = 8;
		}
		break;
	case ZYDIS_MNEMONIC_PUSH:
		if (in->operand_width == 64) {
			fx->kind = HIST_EFF_PUSH;
			if (nv == 1 && is_gpr(d))
				fx->r2 = (int8_t) gpr_of(d->reg.value);
			else if (nv == 1 &&
				 d->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
				fx->kind = HIST_EFF_PUSH_IMM;
				fx->imm = d->imm.value.s;
			}
		}
		break;
	case ZYDIS_MNEMONIC_POP:
		if (in->operand_width == 64 && nv == 1 && is_gpr(d) &&
		    gpr_of(d->reg.value) != HIST_RSP) {
			fx->kind = HIST_EFF_POP;
			fx->r1 = (int8_t) gpr_of(d->reg.value);
		}
		break;
	case ZYDIS_MNEMONIC_CALL:
		if (in->operand_width == 64) {
			fx->kind = HIST_EFF_CALL;
			fx->imm = (int64_t) (ip + in->length);
		}
		break;
	case ZYDIS_MNEMONIC_RET:
		if (in->operand_width == 64) {
			fx->kind = HIST_EFF_RET;
			fx->imm = nv == 1 && d->type == ZYDIS_OPERAND_TYPE_IMMEDIATE ?
				  d->imm.value.s : 0;
		}
		break;
	case ZYDIS_MNEMONIC_LEAVE:
		if (in->operand_width == 64)
			fx->kind = HIST_EFF_LEAVE;
		break;
	case ZYDIS_MNEMONIC_SYSCALL:
		fx->kind = HIST_EFF_SYSCALL;
		break;
	default:
		break;
	}
}

int hist_effect_of(const uint8_t *code, size_t len, uint64_t ip,
		   struct hist_effect *fx)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	bool stack_push = false;

	pthread_once(&decoder_once, decoder_init);
	memset(fx, 0, sizeof(*fx));
	fx->r1 = fx->r2 = -1;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, code, len, &in,
						 ops)))
		return -1;
	fx->length = in.length;
	if ((in.meta.category == ZYDIS_CATEGORY_COND_BR ||
	     in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
	     in.meta.category == ZYDIS_CATEGORY_CALL) &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
	    ops[0].imm.is_relative &&
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], ip,
						   &fx->target)))
		fx->target = 0;
	for (unsigned i = 0; i < in.operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		int r;

		if (!(op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			r = gpr_of(op->reg.value);
			if (r >= 0) {
				fx->regs[r] |= written_bytes(op->reg.value);
				/* A 32-bit destination: the upper half is
				 * written with zeros. */
				if (bytes_of(op->reg.value) == 0x0f)
					fx->zext |= 1u << r;
			}
			else if (op->reg.value == ZYDIS_REGISTER_FS ||
				 op->reg.value == ZYDIS_REGISTER_GS)
				fx->mem_unbounded = true;
			continue;
		}
		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
			continue;
		/* The stack slot of push and call: Zydis names it [rsp],
		 * the kinds say where it really is (below rsp). */
		if (op->visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN &&
		    op->mem.base == ZYDIS_REGISTER_RSP) {
			stack_push = true;
			continue;
		}
		if (op->mem.type != ZYDIS_MEMOP_TYPE_MEM ||
		    fx->nwrites == HIST_EFFECT_MAXW ||
		    !memref_of(op, ip, in.length, &fx->writes[fx->nwrites]))
			fx->mem_unbounded = true;
		else
			fx->nwrites++;
	}
	if (in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
			     ZYDIS_ATTRIB_HAS_REPNE))
		fx->mem_unbounded = fx->mem_unbounded || fx->nwrites;
	switch (in.mnemonic) {
	case ZYDIS_MNEMONIC_XSAVE: case ZYDIS_MNEMONIC_XSAVE64:
	case ZYDIS_MNEMONIC_XSAVEC: case ZYDIS_MNEMONIC_XSAVEC64:
	case ZYDIS_MNEMONIC_XSAVEOPT: case ZYDIS_MNEMONIC_XSAVEOPT64:
	case ZYDIS_MNEMONIC_XSAVES: case ZYDIS_MNEMONIC_XSAVES64:
	case ZYDIS_MNEMONIC_FXSAVE: case ZYDIS_MNEMONIC_FXSAVE64:
		fx->mem_unbounded = true;	/* the area's size varies */
		break;
	default:
		break;
	}
	special(&in, ops, ip, fx);
	if (stack_push && fx->kind != HIST_EFF_PUSH &&
	    fx->kind != HIST_EFF_PUSH_IMM && fx->kind != HIST_EFF_CALL)
		fx->mem_unbounded = true;	/* pushf, enter, a 16-bit push */
	if (fx->kind == HIST_EFF_SYSCALL)
		fx->regs[HIST_RAX] = 0xff;
	for (int r = 0; r < HIST_NREGS; r++)
		if (fx->regs[r])
			fx->wrote |= 1u << r;
	return 0;
}
