/* Following code without trace: classifying one instruction with Zydis,
 * and walking from one address to another through code whose successor
 * needs no trace (what a CPU-less decoder does past the last packet). */
#include "history_internal.h"

#include <Zydis/Zydis.h>
#include <stdlib.h>

/* The decoder used for walking; immutable once initialized. */
static ZydisDecoder walk_decoder;
static pthread_once_t walk_once = PTHREAD_ONCE_INIT;

static void walk_decoder_init(void)
{
	ZydisDecoderInit(&walk_decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
}

/* Classifies a decoded instruction into @out. */
static void classify(const ZydisDecodedInstruction *zi, uint64_t ip,
		     struct hist_insn_info *out)
{
	/* A relative immediate makes a branch direct; IS_RELATIVE alone
	 * is also set for RIP-relative memory (jmp *x(%rip) in a PLT). */
	bool relative = zi->raw.imm[0].is_relative;

	out->size = zi->length;
	out->iclass = HIST_IC_OTHER;
	out->needs_trace = false;
	out->has_target = false;
	switch (zi->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		/* XBEGIN and XEND are in this category but produce no TNT
		 * bit (libipt classifies them as other instructions). */
		if (zi->mnemonic == ZYDIS_MNEMONIC_XBEGIN ||
		    zi->mnemonic == ZYDIS_MNEMONIC_XEND)
			break;
		out->iclass = HIST_IC_COND_JUMP;
		out->needs_trace = true;
		break;
	case ZYDIS_CATEGORY_UNCOND_BR:
		out->iclass = HIST_IC_JUMP;
		out->needs_trace = !relative;
		break;
	case ZYDIS_CATEGORY_CALL:
		out->iclass = HIST_IC_CALL;
		out->needs_trace = !relative;
		break;
	case ZYDIS_CATEGORY_RET:
		out->iclass = HIST_IC_RETURN;
		out->needs_trace = true;
		break;
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSTEM:
		if (zi->mnemonic == ZYDIS_MNEMONIC_SYSCALL ||
		    zi->mnemonic == ZYDIS_MNEMONIC_SYSENTER ||
		    zi->mnemonic == ZYDIS_MNEMONIC_INT ||
		    zi->mnemonic == ZYDIS_MNEMONIC_INT3 ||
		    zi->mnemonic == ZYDIS_MNEMONIC_INT1 ||
		    zi->mnemonic == ZYDIS_MNEMONIC_INTO) {
			out->iclass = HIST_IC_FAR_CALL;
			out->needs_trace = true;
		} else if (zi->mnemonic == ZYDIS_MNEMONIC_IRET ||
			   zi->mnemonic == ZYDIS_MNEMONIC_IRETD ||
			   zi->mnemonic == ZYDIS_MNEMONIC_IRETQ ||
			   zi->mnemonic == ZYDIS_MNEMONIC_SYSRET ||
			   zi->mnemonic == ZYDIS_MNEMONIC_SYSEXIT) {
			out->iclass = HIST_IC_FAR_RETURN;
			out->needs_trace = true;
		}
		break;
	default:
		break;
	}
	if (relative && !out->needs_trace &&
	    (out->iclass == HIST_IC_JUMP || out->iclass == HIST_IC_CALL)) {
		out->has_target = true;
		out->target = ip + zi->length + (uint64_t) zi->raw.imm[0].value.s;
	}
}

int hist_insn_info_at(struct hist_image *img, uint64_t ip,
		      struct hist_insn_info *out)
{
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction zi;
	uint8_t code[ZYDIS_MAX_INSTRUCTION_LENGTH];
	ssize_t n;

	pthread_once(&walk_once, walk_decoder_init);
	n = hist_image_read(img, ip, code, sizeof(code));
	if (n <= 0)
		return ptrr_fail(PTRR_ERR_NOTFOUND,
				 "no code mapped at 0x%llx",
				 (unsigned long long) ip);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&walk_decoder, &ctx,
							code, (size_t) n,
							&zi)))
		return ptrr_fail(PTRR_ERR_DECODE,
				 "cannot decode the instruction at 0x%llx",
				 (unsigned long long) ip);
	classify(&zi, ip, out);
	return 0;
}

int hist_runs_push(struct hist_runs *rs, const struct hist_run *r)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 16;
		struct hist_run *v = realloc(rs->v, cap * sizeof(*v));

		if (!v)
			return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = *r;
	return 0;
}

/* Appends instruction @ip of class @ic to @runs, extending the last run
 * when @ip directly follows it. */
static int runs_add_insn(struct hist_runs *runs, uint64_t ip,
			 enum hist_iclass ic, bool *extend)
{
	struct hist_run r = {
		.ip = ip, .end_ip = ip, .ninsn = 1, .iclass = ic,
		.flags = HIST_F_WALKED, .kind = HIST_ENTRY_INSN,
	};

	if (*extend) {
		struct hist_run *last = &runs->v[runs->n - 1];

		last->end_ip = ip;
		last->ninsn++;
		last->iclass = ic;
	} else if (hist_runs_push(runs, &r)) {
		return PTRR_ERR_NOMEM;
	}
	*extend = (ic == HIST_IC_OTHER);
	return 0;
}

int hist_walk(struct hist_image *img, uint64_t from, uint64_t to,
	      uint64_t limit, struct hist_runs *runs)
{
	uint64_t ip = from;
	bool extend = false;

	for (uint64_t n = 0; ip != to; n++) {
		struct hist_insn_info info;
		int err;

		if (n >= limit)
			return PTRR_ERR_NOTFOUND;
		err = hist_insn_info_at(img, ip, &info);
		if (err)
			return PTRR_ERR_NOTFOUND;
		if (info.needs_trace)
			return PTRR_ERR_NOTFOUND;
		err = runs_add_insn(runs, ip, info.iclass, &extend);
		if (err)
			return err;
		ip = info.has_target ? info.target : ip + info.size;
	}
	return 0;
}
