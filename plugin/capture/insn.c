/* Instruction classification with Zydis; see insn.h. */
#include <config.h>

#include "capture/insn.h"
#include "error.h"

#include <pthread.h>
#include <Zydis/Zydis.h>

static ZydisDecoder decoder;
static pthread_once_t decoder_once = PTHREAD_ONCE_INIT;

/* Sets up the shared (read-only after this) 64-bit decoder. */
static void decoder_init(void)
{
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
}

/* The class of an unconditional jump or call @zi; @near_rel and
 * @near_ind are the classes of its relative and indirect near forms. */
static enum cap_iclass branch_class(const ZydisDecodedInstruction *zi,
				    enum cap_iclass near_rel,
				    enum cap_iclass near_ind)
{
	if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return CAP_IC_FAR;
	/* A relative immediate, not ZYDIS_ATTRIB_IS_RELATIVE: that one is
	 * also set for RIP-relative memory, as in "call *x(%rip)". */
	if (zi->raw.imm[0].is_relative)
		return near_rel;
	return near_ind;
}

/* Maps Zydis' category of @zi to a COFI class (SDM table 33-1). */
static enum cap_iclass classify(const ZydisDecodedInstruction *zi)
{
	switch (zi->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		/* XBEGIN is filed here but is a transaction start, not a
		 * conditional branch for PT (and faults without RTM). */
		if (zi->mnemonic == ZYDIS_MNEMONIC_XBEGIN)
			return CAP_IC_OTHER;
		return CAP_IC_COND;
	case ZYDIS_CATEGORY_UNCOND_BR:
		return branch_class(zi, CAP_IC_JUMP, CAP_IC_JUMP_IND);
	case ZYDIS_CATEGORY_CALL:
		return branch_class(zi, CAP_IC_CALL, CAP_IC_CALL_IND);
	case ZYDIS_CATEGORY_RET:
		/* Near RET (C3, C2 iw); far RET and IRET are far transfers. */
		if (zi->mnemonic == ZYDIS_MNEMONIC_RET &&
		    zi->meta.branch_type != ZYDIS_BRANCH_TYPE_FAR)
			return CAP_IC_RET;
		return CAP_IC_FAR;
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_INTERRUPT:
		return CAP_IC_KERNEL;
	case ZYDIS_CATEGORY_SYSRET:
		return CAP_IC_FAR;
	default:
		return CAP_IC_OTHER;
	}
}

int cap_insn_decode(const uint8_t *code, size_t avail, struct cap_insn *out)
{
	ZydisDecodedInstruction zi;
	bool string;

	pthread_once(&decoder_once, decoder_init);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, NULL, code,
							avail, &zi)))
		return PTRR_ERR_DECODE;
	out->len = zi.length;
	out->iclass = (uint8_t) classify(&zi);
	string = zi.meta.category == ZYDIS_CATEGORY_STRINGOP ||
		 zi.meta.category == ZYDIS_CATEGORY_IOSTRINGOP;
	out->rep_string = string && (zi.attributes & (ZYDIS_ATTRIB_HAS_REP |
						      ZYDIS_ATTRIB_HAS_REPE |
						      ZYDIS_ATTRIB_HAS_REPNE));
	out->logs_call = out->iclass == CAP_IC_CALL_IND ||
			 (out->iclass == CAP_IC_CALL &&
			  zi.raw.imm[0].value.s != 0);
	return zi.length;
}
