/* Instruction lengths and disassembly in GDB's AT&T syntax.
 *
 * Zydis decodes; the text is written here rather than by Zydis's AT&T
 * formatter, whose output differs from GDB's (objdump's) in many small
 * ways: "je" not "jz", "movzbl" not "movzx", "*%rax" for indirect
 * branches, "0x0(%rax,%rax,1)", rip-relative operands with the address
 * in a comment, "<sym+off>" after branch targets, operands separated by a
 * bare comma and the mnemonic padded to six columns.
 */
#include "config.h"
#include "history.h"

#include <Zydis/Zydis.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static ZydisDecoder full_decoder;	/* operands too */
static ZydisDecoder length_decoder;	/* ZYDIS_DECODER_MODE_MINIMAL */
static pthread_once_t decoders_once = PTHREAD_ONCE_INIT;

/* Initialises both 64-bit decoders, once per process. */
static void decoders_init(void)
{
	ZydisDecoderInit(&full_decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	ZydisDecoderInit(&length_decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	ZydisDecoderEnableMode(&length_decoder, ZYDIS_DECODER_MODE_MINIMAL,
			       ZYAN_TRUE);
}

/* The error for Zydis status @s on @avail bytes of code; @where says
 * where they are (" at 0x401000"), or is "". */
static int decode_error(ZyanStatus s, const char *where, size_t avail)
{
	if (s == ZYDIS_STATUS_NO_MORE_DATA)
		return ptrr_fail(PTRR_ERR_DECODE, "instruction%s is cut off "
				 "after %zu bytes", where, avail);
	return ptrr_fail(PTRR_ERR_DECODE, "invalid instruction%s", where);
}

int hist_insn_length(const uint8_t *code, size_t avail)
{
	ZydisDecodedInstruction insn;
	ZyanStatus s;

	pthread_once(&decoders_once, decoders_init);
	s = ZydisDecoderDecodeInstruction(&length_decoder, NULL, code, avail,
					  &insn);
	return ZYAN_SUCCESS(s) ? insn.length : decode_error(s, "", avail);
}

/* ------------------------------------------------------------------ */
/* Text                                                                */
/* ------------------------------------------------------------------ */

/* A bounded string being appended to. */
struct text {
	char buf[256];
	size_t len;
};

/* Appends formatted text to @t, truncating at its end. */
static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t) n < sizeof(t->buf) - t->len ?
			  (size_t) n : sizeof(t->buf) - t->len - 1;
}

/* The instruction being formatted. */
struct insn_ctx {
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint64_t ip;
	struct hist_symtab *st;
	bool has_riprel;	/* a rip-relative operand, at: */
	uint64_t riprel;
};

/* Appends address @addr and, if a symbol covers it, " <sym+off>". */
static void put_address(struct text *t, struct insn_ctx *c, uint64_t addr)
{
	struct hist_sym sym;

	put(t, "0x%llx", (unsigned long long) addr);
	if (!c->st || hist_sym_lookup(c->st, addr, &sym))
		return;
	if (addr == sym.start)
		put(t, " <%s>", sym.name);
	else
		put(t, " <%s+%llu>", sym.name,
		    (unsigned long long) (addr - sym.start));
}

/* Appends signed hex @v ("-0x8"). */
static void put_signed(struct text *t, int64_t v)
{
	if (v < 0)
		put(t, "-0x%llx", (unsigned long long) -(uint64_t) v);
	else
		put(t, "0x%llx", (unsigned long long) v);
}

/* ------------------------------------------------------------------ */
/* Operands                                                            */
/* ------------------------------------------------------------------ */

/* Appends register @r ("%rax"); x87 registers are "%st(1)", or "%st"
 * for the top of the stack when it is implied by the opcode (@modrm
 * false). */
static void put_reg(struct text *t, ZydisRegister r, bool modrm)
{
	if (r == ZYDIS_REGISTER_ST0 && !modrm)
		put(t, "%%st");
	else if (r >= ZYDIS_REGISTER_ST0 && r <= ZYDIS_REGISTER_ST7)
		put(t, "%%st(%d)", (int) (r - ZYDIS_REGISTER_ST0));
	else
		put(t, "%%%s", ZydisRegisterGetString(r));
}

/* Appends memory operand @op: "%fs:-0x8(%rbp,%rax,4)". */
static void put_mem(struct text *t, struct insn_ctx *c,
		    const ZydisDecodedOperand *op)
{
	const ZydisDecodedOperandMem *m = &op->mem;
	bool regs = m->base != ZYDIS_REGISTER_NONE ||
		    m->index != ZYDIS_REGISTER_NONE;

	if (m->segment == ZYDIS_REGISTER_FS || m->segment == ZYDIS_REGISTER_GS)
		put(t, "%%%s:", ZydisRegisterGetString(m->segment));
	if (m->base == ZYDIS_REGISTER_RIP) {
		c->has_riprel = true;
		c->riprel = c->ip + c->insn.length + (uint64_t) m->disp.value;
	}
	if (!regs)
		put(t, "0x%llx", (unsigned long long) m->disp.value);
	else if (m->disp.has_displacement)
		put_signed(t, m->disp.value);
	if (!regs)
		return;
	put(t, "(");
	if (m->base != ZYDIS_REGISTER_NONE)
		put_reg(t, m->base, false);
	if (m->index != ZYDIS_REGISTER_NONE) {
		put(t, ",");
		put_reg(t, m->index, false);
		put(t, ",%d", m->scale);
	}
	put(t, ")");
}

/* Appends immediate @op: "$0x10", or a branch target "0x401136 <f>".
 * Sign-extended immediates are shown at the operation's width, as
 * unsigned ("$0xfffffffffffffff0"). */
static void put_imm(struct text *t, struct insn_ctx *c,
		    const ZydisDecodedOperand *op)
{
	uint64_t v = op->imm.value.u;
	unsigned bits;

	if (op->imm.is_relative) {
		put_address(t, c, c->ip + c->insn.length + v);
		return;
	}
	bits = op->imm.is_signed ? c->insn.operand_width : op->size;
	if (bits && bits < 64)
		v &= (1ull << bits) - 1;
	put(t, "$0x%llx", (unsigned long long) v);
}

/* True if @c is a call or jump, whose register and memory operands are
 * written "*%rax". */
static bool is_branch(const struct insn_ctx *c)
{
	switch (c->insn.meta.category) {
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_COND_BR:
		return true;
	default:
		return false;
	}
}

/* Appends operand @op. */
static void put_operand(struct text *t, struct insn_ctx *c,
			const ZydisDecodedOperand *op)
{
	if ((op->type == ZYDIS_OPERAND_TYPE_REGISTER ||
	     op->type == ZYDIS_OPERAND_TYPE_MEMORY) && is_branch(c))
		put(t, "*");
	switch (op->type) {
	case ZYDIS_OPERAND_TYPE_REGISTER:
		put_reg(t, op->reg.value,
			op->encoding == ZYDIS_OPERAND_ENCODING_MODRM_RM);
		break;
	case ZYDIS_OPERAND_TYPE_MEMORY:
		put_mem(t, c, op);
		break;
	case ZYDIS_OPERAND_TYPE_POINTER:
		put(t, "$0x%x,$0x%llx", op->ptr.segment,
		    (unsigned long long) op->ptr.offset);
		break;
	case ZYDIS_OPERAND_TYPE_IMMEDIATE:
		put_imm(t, c, op);
		break;
	default:
		break;
	}
}

/* Predicates of AVX-512 integer compares (vpcmp[u]{b,w,d,q}). */
static const char *const vpcmp_predicates[8] = {
	"eq", "lt", "le", "false", "neq", "nlt", "nle", "true",
};

/* Predicates of SSE and AVX floating-point compares (cmpps ...). */
static const char *const cmp_predicates[32] = {
	"eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord",
	"eq_uq", "nge", "ngt", "false", "neq_oq", "ge", "gt", "true",
	"eq_os", "lt_oq", "le_oq", "unord_s", "neq_us", "nlt_uq", "nle_uq",
	"ord_s", "eq_us", "nge_uq", "ngt_uq", "false_os", "neq_os", "ge_oq",
	"gt_oq", "true_us",
};

/* The predicate of compare @c that GDB writes into its mnemonic instead
 * of an immediate ("vpcmpneqb", "cmpltsd"), or NULL. */
static const char *predicate(const struct insn_ctx *c)
{
	int n = c->insn.operand_count_visible;
	const ZydisDecodedOperand *op = n ? &c->ops[n - 1] : NULL;
	uint64_t v;

	if (!op || op->type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return NULL;
	v = op->imm.value.u;
	switch (c->insn.mnemonic) {
	case ZYDIS_MNEMONIC_VPCMPB: case ZYDIS_MNEMONIC_VPCMPW:
	case ZYDIS_MNEMONIC_VPCMPD: case ZYDIS_MNEMONIC_VPCMPQ:
	case ZYDIS_MNEMONIC_VPCMPUB: case ZYDIS_MNEMONIC_VPCMPUW:
	case ZYDIS_MNEMONIC_VPCMPUD: case ZYDIS_MNEMONIC_VPCMPUQ:
		return v < 8 ? vpcmp_predicates[v] : NULL;
	case ZYDIS_MNEMONIC_CMPPS: case ZYDIS_MNEMONIC_CMPPD:
	case ZYDIS_MNEMONIC_CMPSS: case ZYDIS_MNEMONIC_CMPSD:
		return v < 8 ? cmp_predicates[v] : NULL;
	case ZYDIS_MNEMONIC_VCMPPS: case ZYDIS_MNEMONIC_VCMPPD:
	case ZYDIS_MNEMONIC_VCMPSS: case ZYDIS_MNEMONIC_VCMPSD:
		return v < 32 ? cmp_predicates[v] : NULL;
	default:
		return NULL;
	}
}

/* True if operand @op is printed: explicit operands, and implicit ones
 * other than constants ("shl %eax" hides its 1, "shl %cl,%eax" shows
 * %cl); "nopw 0x0(%rax)" hides its register. */
static bool shown(const struct insn_ctx *c, const ZydisDecodedOperand *op)
{
	if (op->visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN)
		return false;
	if (op->visibility == ZYDIS_OPERAND_VISIBILITY_IMPLICIT &&
	    op->type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return false;
	if (op->encoding == ZYDIS_OPERAND_ENCODING_MASK)
		return false;
	if (op->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && predicate(c))
		return false;
	return !(c->insn.mnemonic == ZYDIS_MNEMONIC_NOP &&
		 op->type == ZYDIS_OPERAND_TYPE_REGISTER);
}

/* The shown operands of @c, in AT&T order (the reverse of Intel's, except
 * for instructions with only immediates, like "enter $0x10,$0x0"), as
 * indices into c->ops.  Returns their number. */
static int att_operands(const struct insn_ctx *c, int idx[])
{
	int n = 0;
	bool reverse = false;

	for (int i = 0; i < c->insn.operand_count_visible; i++) {
		if (!shown(c, &c->ops[i]))
			continue;
		idx[n++] = i;
		reverse |= c->ops[i].type != ZYDIS_OPERAND_TYPE_IMMEDIATE;
	}
	for (int i = 0; reverse && i < n / 2; i++) {
		int x = idx[i];

		idx[i] = idx[n - 1 - i];
		idx[n - 1 - i] = x;
	}
	return n;
}

/* Appends the AVX-512 decorators of the destination: "{%k1}{z}". */
static void put_mask(struct text *t, const struct insn_ctx *c)
{
	if (c->insn.avx.mask.reg == ZYDIS_REGISTER_NONE ||
	    c->insn.avx.mask.reg == ZYDIS_REGISTER_K0)
		return;
	put(t, "{%%%s}", ZydisRegisterGetString(c->insn.avx.mask.reg));
	if (c->insn.raw.evex.z)
		put(t, "{z}");
}

/* Appends the operands in AT&T order, comma separated. */
static void put_operands(struct text *t, struct insn_ctx *c, const int idx[],
			 int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			put(t, ",");
		put_operand(t, c, &c->ops[idx[i]]);
		if (idx[i] == 0)
			put_mask(t, c);
	}
}

/* ------------------------------------------------------------------ */
/* Mnemonics                                                           */
/* ------------------------------------------------------------------ */

/* Condition codes Zydis spells differently from GDB. */
static const char *const cc_names[][2] = {
	{ "z", "e" }, { "nz", "ne" }, { "nb", "ae" }, { "nbe", "a" },
	{ "nl", "ge" }, { "nle", "g" },
};

/* Mnemonics with other names in AT&T syntax. */
static const struct { ZydisMnemonic m; const char *att; } renamed[] = {
	{ ZYDIS_MNEMONIC_CDQE, "cltq" }, { ZYDIS_MNEMONIC_CQO, "cqto" },
	{ ZYDIS_MNEMONIC_CDQ, "cltd" }, { ZYDIS_MNEMONIC_CWDE, "cwtl" },
	{ ZYDIS_MNEMONIC_CBW, "cbtw" }, { ZYDIS_MNEMONIC_CWD, "cwtd" },
	{ ZYDIS_MNEMONIC_MOVSXD, "movslq" }, { ZYDIS_MNEMONIC_PUSHFQ, "pushf" },
	{ ZYDIS_MNEMONIC_POPFQ, "popf" },
};

/* The AT&T size suffix of an operand of @bits bits ("l"), or "". */
static const char *att_suffix_of_size(unsigned bits)
{
	switch (bits) {
	case 8: return "b";
	case 16: return "w";
	case 32: return "l";
	case 64: return "q";
	default: return "";
	}
}

/* Writes mnemonic @m with its condition code renamed ("jz" -> "je"). */
static void put_cc_mnemonic(struct text *t, const char *m)
{
	static const char *const stems[] = { "cmov", "set", "j" };

	for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++) {
		size_t k = strlen(stems[i]);

		if (strncmp(m, stems[i], k))
			continue;
		for (size_t j = 0; j < sizeof(cc_names) / sizeof(cc_names[0]);
		     j++) {
			if (!strcmp(m + k, cc_names[j][0])) {
				put(t, "%s%s", stems[i], cc_names[j][1]);
				return;
			}
		}
		break;
	}
	put(t, "%s", m);
}

/* True if @op is the %cl count of a shift or rotate, which does not give
 * the operation's size. */
static bool is_shift_count(const struct insn_ctx *c,
			   const ZydisDecodedOperand *op)
{
	return op->reg.value == ZYDIS_REGISTER_CL &&
	       (c->insn.meta.category == ZYDIS_CATEGORY_SHIFT ||
		c->insn.meta.category == ZYDIS_CATEGORY_ROTATE);
}

/* The memory operand among the shown ones of @c if no register operand
 * gives the operation's size, else NULL. */
static const ZydisDecodedOperand *sizeless_mem(const struct insn_ctx *c,
					       const int idx[], int n)
{
	const ZydisDecodedOperand *mem = NULL;

	for (int i = 0; i < n; i++) {
		const ZydisDecodedOperand *op = &c->ops[idx[i]];

		if (op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    op->mem.type == ZYDIS_MEMOP_TYPE_MEM)
			mem = op;
		else if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
			 !is_shift_count(c, op))
			return NULL;
	}
	return mem;
}

/* The x87 suffix of memory operand @op of mnemonic @name: "s", "l" or
 * "t" for floats, "s", "l" or "ll" for the integer forms ("fildll"). */
static const char *x87_suffix(const char *name, const ZydisDecodedOperand *op)
{
	switch (op->element_type) {
	case ZYDIS_ELEMENT_TYPE_FLOAT32: return "s";
	case ZYDIS_ELEMENT_TYPE_FLOAT64: return "l";
	case ZYDIS_ELEMENT_TYPE_FLOAT80: return "t";
	case ZYDIS_ELEMENT_TYPE_INT:
		if (strncmp(name, "fi", 2))
			return NULL;
		return op->size == 16 ? "s" : op->size == 32 ? "l" :
		       op->size == 64 ? "ll" : NULL;
	default: return NULL;
	}
}

/* The size suffix AT&T adds to @c's mnemonic @name, or NULL: integer
 * operations on memory with no register to give the size ("movl
 * $0x0,(%rax)", "nopw 0x0(%rax)"), and x87 loads and stores ("fldt"). */
static const char *att_suffix(const struct insn_ctx *c, const char *name,
			      const int idx[], int n)
{
	const ZydisDecodedOperand *mem = sizeless_mem(c, idx, n);
	unsigned bits;

	if (!mem)
		return NULL;
	switch (c->insn.meta.category) {
	case ZYDIS_CATEGORY_BINARY: case ZYDIS_CATEGORY_LOGICAL:
	case ZYDIS_CATEGORY_DATAXFER: case ZYDIS_CATEGORY_WIDENOP:
	case ZYDIS_CATEGORY_SHIFT: case ZYDIS_CATEGORY_ROTATE:
	case ZYDIS_CATEGORY_BITBYTE:
		break;
	case ZYDIS_CATEGORY_X87_ALU:
		return x87_suffix(name, mem);
	default:
		return NULL;
	}
	bits = mem->size ? mem->size : c->insn.operand_width;
	return *att_suffix_of_size(bits) ? att_suffix_of_size(bits) : NULL;
}

/* Writes compare mnemonic @name with @pred after its stem ("vpcmp",
 * "vcmp" or "cmp"): "vpcmpub" becomes "vpcmpnequb". */
static void put_predicated(struct text *t, const char *name,
			   const char *pred)
{
	int stem = !strncmp(name, "vpcmp", 5) ? 5 :
		   !strncmp(name, "vcmp", 4) ? 4 : 3;

	put(t, "%.*s%s%s", stem, name, pred, name + stem);
}

/* The x87 subtractions and divisions whose name AT&T swaps with the
 * reversed form when the destination is %st(i) (opcodes 0xdc and 0xde
 * with register operands), as GDB prints them. */
static const char *x87_swapped(const struct insn_ctx *c)
{
	static const struct { ZydisMnemonic a, b; } pairs[] = {
		{ ZYDIS_MNEMONIC_FSUB, ZYDIS_MNEMONIC_FSUBR },
		{ ZYDIS_MNEMONIC_FSUBP, ZYDIS_MNEMONIC_FSUBRP },
		{ ZYDIS_MNEMONIC_FDIV, ZYDIS_MNEMONIC_FDIVR },
		{ ZYDIS_MNEMONIC_FDIVP, ZYDIS_MNEMONIC_FDIVRP },
	};

	if ((c->insn.opcode != 0xdc && c->insn.opcode != 0xde) ||
	    c->insn.raw.modrm.mod != 3)
		return NULL;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		if (c->insn.mnemonic == pairs[i].a)
			return ZydisMnemonicGetString(pairs[i].b);
		if (c->insn.mnemonic == pairs[i].b)
			return ZydisMnemonicGetString(pairs[i].a);
	}
	return NULL;
}

/* Writes the mnemonics AT&T spells differently from Zydis, beyond
 * condition codes and suffixes; false for the others. */
static bool put_renamed(struct text *t, const struct insn_ctx *c,
			const int idx[], int n)
{
	ZydisMnemonic m = c->insn.mnemonic;
	const char *pred = predicate(c);

	for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++) {
		if (renamed[i].m == m) {
			put(t, "%s", renamed[i].att);
			return true;
		}
	}
	if (pred)
		put_predicated(t, ZydisMnemonicGetString(m), pred);
	else if ((m == ZYDIS_MNEMONIC_MOVZX || m == ZYDIS_MNEMONIC_MOVSX) &&
		 n == 2)
		put(t, "mov%c%s%s", m == ZYDIS_MNEMONIC_MOVZX ? 'z' : 's',
		    att_suffix_of_size(c->ops[idx[0]].size),
		    att_suffix_of_size(c->ops[idx[1]].size));
	else if (m == ZYDIS_MNEMONIC_NOP && c->insn.opcode == 0x90 &&
		 c->insn.operand_width == 16)
		put(t, "xchg   %%ax,%%ax");
	else if (m == ZYDIS_MNEMONIC_MOV && c->insn.raw.imm[0].size == 64)
		put(t, "movabs");
	else
		return false;
	return true;
}

/* Writes the mnemonic of @c as AT&T spells it. */
static void put_mnemonic(struct text *t, const struct insn_ctx *c,
			 const int idx[], int n)
{
	const char *name = x87_swapped(c);
	const char *suffix;

	if (put_renamed(t, c, idx, n))
		return;
	if (!name)
		name = ZydisMnemonicGetString(c->insn.mnemonic);
	put_cc_mnemonic(t, name);
	suffix = att_suffix(c, name, idx, n);
	if (suffix)
		put(t, "%s", suffix);
}

/* ------------------------------------------------------------------ */
/* String instructions: GDB shows their implicit operands              */
/* ------------------------------------------------------------------ */

#define SRC "%ds:(%rsi)"
#define DST "%es:(%rdi)"

static const struct {
	ZydisMnemonic m;
	const char *name;
	const char *operands;
} string_ops[] = {
	{ ZYDIS_MNEMONIC_MOVSB, "movsb", SRC "," DST },
	{ ZYDIS_MNEMONIC_MOVSW, "movsw", SRC "," DST },
	{ ZYDIS_MNEMONIC_MOVSD, "movsl", SRC "," DST },
	{ ZYDIS_MNEMONIC_MOVSQ, "movsq", SRC "," DST },
	{ ZYDIS_MNEMONIC_CMPSB, "cmpsb", DST "," SRC },
	{ ZYDIS_MNEMONIC_CMPSW, "cmpsw", DST "," SRC },
	{ ZYDIS_MNEMONIC_CMPSD, "cmpsl", DST "," SRC },
	{ ZYDIS_MNEMONIC_CMPSQ, "cmpsq", DST "," SRC },
	{ ZYDIS_MNEMONIC_STOSB, "stos", "%al," DST },
	{ ZYDIS_MNEMONIC_STOSW, "stos", "%ax," DST },
	{ ZYDIS_MNEMONIC_STOSD, "stos", "%eax," DST },
	{ ZYDIS_MNEMONIC_STOSQ, "stos", "%rax," DST },
	{ ZYDIS_MNEMONIC_LODSB, "lods", SRC ",%al" },
	{ ZYDIS_MNEMONIC_LODSW, "lods", SRC ",%ax" },
	{ ZYDIS_MNEMONIC_LODSD, "lods", SRC ",%eax" },
	{ ZYDIS_MNEMONIC_LODSQ, "lods", SRC ",%rax" },
	{ ZYDIS_MNEMONIC_SCASB, "scas", DST ",%al" },
	{ ZYDIS_MNEMONIC_SCASW, "scas", DST ",%ax" },
	{ ZYDIS_MNEMONIC_SCASD, "scas", DST ",%eax" },
	{ ZYDIS_MNEMONIC_SCASQ, "scas", DST ",%rax" },
};

/* The index in string_ops of string instruction @c, or -1 if it is not
 * one (the SSE movsd and cmpsd share mnemonics with them but have
 * operands). */
static int string_op(const struct insn_ctx *c)
{
	if (c->insn.operand_count_visible)
		return -1;
	for (size_t i = 0; i < sizeof(string_ops) / sizeof(string_ops[0]);
	     i++)
		if (string_ops[i].m == c->insn.mnemonic)
			return (int) i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Prefixes                                                            */
/* ------------------------------------------------------------------ */

/* The name GDB gives a repeat prefix (0xf3, 0xf2) of type @type, or NULL
 * where it is part of the opcode (endbr64, SSE instructions). */
static const char *rep_name(ZydisInstructionAttributes a, uint8_t b,
			    ZydisPrefixType type)
{
	if (b == 0xf3 && (a & ZYDIS_ATTRIB_HAS_REP))
		return "rep";
	if (b == 0xf2 && (a & ZYDIS_ATTRIB_HAS_BND))
		return "bnd";
	if ((a & (ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE)) ||
	    type == ZYDIS_PREFIX_TYPE_IGNORED)
		return b == 0xf3 ? "repz" : "repnz";
	return NULL;
}

/* The name GDB gives legacy prefix byte @b of @c when it is shown, or
 * NULL when it is part of the instruction (operand size, mandatory
 * prefixes, fs/gs on a memory operand). */
static const char *prefix_name(const struct insn_ctx *c, uint8_t b,
			       ZydisPrefixType type)
{
	ZydisInstructionAttributes a = c->insn.attributes;
	bool ignored = type == ZYDIS_PREFIX_TYPE_IGNORED;

	if (b == 0xf3 || b == 0xf2)
		return rep_name(a, b, type);
	if (type == ZYDIS_PREFIX_TYPE_MANDATORY)
		return NULL;
	switch (b) {
	case 0xf0: return "lock";
	case 0x2e: return "cs";
	case 0x36: return "ss";
	case 0x3e: return a & ZYDIS_ATTRIB_HAS_NOTRACK ? "notrack" : "ds";
	case 0x26: return "es";
	case 0x66: return ignored ? "data16" : NULL;
	case 0x67: return ignored ? "addr32" : NULL;
	case 0x64: return ignored ? "fs" : NULL;
	case 0x65: return ignored ? "gs" : NULL;
	default: return NULL;
	}
}

/* Appends the prefixes GDB shows before the mnemonic ("lock ", "rep "). */
static void put_prefixes(struct text *t, const struct insn_ctx *c)
{
	for (int i = 0; i < c->insn.raw.prefix_count; i++) {
		const char *name = prefix_name(c, c->insn.raw.prefixes[i].value,
					       c->insn.raw.prefixes[i].type);

		if (name)
			put(t, "%s ", name);
	}
}

/* ------------------------------------------------------------------ */

/* Pads @t with spaces to the operand column: mnemonics (with their
 * prefixes) take six columns, then one space. */
static void put_pad(struct text *t)
{
	put(t, "%*s", t->len < 6 ? (int) (7 - t->len) : 1, "");
}

/* Formats decoded instruction @c into @t. */
static void format(struct text *t, struct insn_ctx *c)
{
	int string = string_op(c);
	int idx[ZYDIS_MAX_OPERAND_COUNT];
	int n = att_operands(c, idx);

	put_prefixes(t, c);
	if (string >= 0) {
		put(t, "%s", string_ops[string].name);
		put_pad(t);
		put(t, "%s", string_ops[string].operands);
		return;
	}
	put_mnemonic(t, c, idx, n);
	if (!n)
		return;
	put_pad(t);
	put_operands(t, c, idx, n);
	if (c->has_riprel) {
		put(t, "        # ");
		put_address(t, c, c->riprel);
	}
}

int hist_disasm(const uint8_t *code, size_t avail, uint64_t ip,
		struct hist_symtab *st, char *buf, size_t bufsz)
{
	struct insn_ctx c = { .ip = ip, .st = st };
	struct text t = { .len = 0 };
	ZyanStatus s;

	pthread_once(&decoders_once, decoders_init);
	s = ZydisDecoderDecodeFull(&full_decoder, code, avail, &c.insn, c.ops);
	if (!ZYAN_SUCCESS(s)) {
		char where[32];

		snprintf(where, sizeof(where), " at 0x%llx",
			 (unsigned long long) ip);
		return decode_error(s, where, avail);
	}
	t.buf[0] = '\0';
	format(&t, &c);
	if (bufsz)
		snprintf(buf, bufsz, "%s", t.buf);
	return c.insn.length;
}
