/* Registers: the amd64 GNU/Linux target description and the g/p
 * replies (server.h).
 *
 * The description lists the registers in gdb's numbering for amd64
 * (the features org.gnu.gdb.i386.core, .sse, .linux and .segments gdb
 * requires or uses); the g packet sends them in that order.  Only the
 * general registers, rip, eflags, the segment registers, orig_rax and
 * fs_base/gs_base can be known (from the recording, at the end of
 * history); the x87 and SSE registers are always unavailable ("xx").
 * The last register, ptrr_goto (server.h), is ptrr's: unavailable, and
 * writing it moves the selected thread through its history.
 */
#include <config.h>

#include "gdbremote/server.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rsp_reg {
	const char *name;
	unsigned bits;
	const char *type;
	int hist;		/* enum hist_reg, or -1: never known */
	const char *feature;	/* starts a feature when set */
};

#define GPR(n, h) { n, 64, "int64", h, NULL }
#define SEG(n, h) { n, 32, "int32", h, NULL }
#define X87(n) { n, 32, "int", -1, NULL }

static const struct rsp_reg regs[] = {
	{ "rax", 64, "int64", HIST_RAX, "org.gnu.gdb.i386.core" },
	GPR("rbx", HIST_RBX), GPR("rcx", HIST_RCX), GPR("rdx", HIST_RDX),
	GPR("rsi", HIST_RSI), GPR("rdi", HIST_RDI),
	{ "rbp", 64, "data_ptr", HIST_RBP, NULL },
	{ "rsp", 64, "data_ptr", HIST_RSP, NULL },
	GPR("r8", HIST_R8), GPR("r9", HIST_R9), GPR("r10", HIST_R10),
	GPR("r11", HIST_R11), GPR("r12", HIST_R12), GPR("r13", HIST_R13),
	GPR("r14", HIST_R14), GPR("r15", HIST_R15),
	{ "rip", 64, "code_ptr", HIST_RIP, NULL },
	{ "eflags", 32, "i386_eflags", HIST_EFLAGS, NULL },
	SEG("cs", HIST_CS), SEG("ss", HIST_SS), SEG("ds", HIST_DS),
	SEG("es", HIST_ES), SEG("fs", HIST_FS), SEG("gs", HIST_GS),
	{ "st0", 80, "i387_ext", -1, NULL }, { "st1", 80, "i387_ext", -1, NULL },
	{ "st2", 80, "i387_ext", -1, NULL }, { "st3", 80, "i387_ext", -1, NULL },
	{ "st4", 80, "i387_ext", -1, NULL }, { "st5", 80, "i387_ext", -1, NULL },
	{ "st6", 80, "i387_ext", -1, NULL }, { "st7", 80, "i387_ext", -1, NULL },
	X87("fctrl"), X87("fstat"), X87("ftag"), X87("fiseg"), X87("fioff"),
	X87("foseg"), X87("fooff"), X87("fop"),
	{ "xmm0", 128, "vec128", -1, "org.gnu.gdb.i386.sse" },
	{ "xmm1", 128, "vec128", -1, NULL }, { "xmm2", 128, "vec128", -1, NULL },
	{ "xmm3", 128, "vec128", -1, NULL }, { "xmm4", 128, "vec128", -1, NULL },
	{ "xmm5", 128, "vec128", -1, NULL }, { "xmm6", 128, "vec128", -1, NULL },
	{ "xmm7", 128, "vec128", -1, NULL }, { "xmm8", 128, "vec128", -1, NULL },
	{ "xmm9", 128, "vec128", -1, NULL }, { "xmm10", 128, "vec128", -1, NULL },
	{ "xmm11", 128, "vec128", -1, NULL }, { "xmm12", 128, "vec128", -1, NULL },
	{ "xmm13", 128, "vec128", -1, NULL }, { "xmm14", 128, "vec128", -1, NULL },
	{ "xmm15", 128, "vec128", -1, NULL },
	{ "mxcsr", 32, "int", -1, NULL },
	{ "orig_rax", 64, "int", HIST_ORIG_RAX, "org.gnu.gdb.i386.linux" },
	{ "fs_base", 64, "int", HIST_FS_BASE, "org.gnu.gdb.i386.segments" },
	{ "gs_base", 64, "int", HIST_GS_BASE, NULL },
	{ "ptrr_goto", 64, "uint64", RSP_REG_GOTO, "org.ptrr.history" },
};

#define NREGS (sizeof(regs) / sizeof(regs[0]))

/* Types the core feature uses beyond gdb's predefined ones ... */
static const char types[] =
	"<flags id=\"i386_eflags\" size=\"4\">"
	"<field name=\"CF\" start=\"0\" end=\"0\"/>"
	"<field name=\"\" start=\"1\" end=\"1\"/>"
	"<field name=\"PF\" start=\"2\" end=\"2\"/>"
	"<field name=\"AF\" start=\"4\" end=\"4\"/>"
	"<field name=\"ZF\" start=\"6\" end=\"6\"/>"
	"<field name=\"SF\" start=\"7\" end=\"7\"/>"
	"<field name=\"TF\" start=\"8\" end=\"8\"/>"
	"<field name=\"IF\" start=\"9\" end=\"9\"/>"
	"<field name=\"DF\" start=\"10\" end=\"10\"/>"
	"<field name=\"OF\" start=\"11\" end=\"11\"/>"
	"</flags>";

/* ... and the SSE feature's. */
static const char sse_types[] =
	"<vector id=\"v4f\" type=\"ieee_single\" count=\"4\"/>"
	"<vector id=\"v2d\" type=\"ieee_double\" count=\"2\"/>"
	"<vector id=\"v16i8\" type=\"int8\" count=\"16\"/>"
	"<vector id=\"v8i16\" type=\"int16\" count=\"8\"/>"
	"<vector id=\"v4i32\" type=\"int32\" count=\"4\"/>"
	"<vector id=\"v2i64\" type=\"int64\" count=\"2\"/>"
	"<union id=\"vec128\">"
	"<field name=\"v4_float\" type=\"v4f\"/>"
	"<field name=\"v2_double\" type=\"v2d\"/>"
	"<field name=\"v16_int8\" type=\"v16i8\"/>"
	"<field name=\"v8_int16\" type=\"v8i16\"/>"
	"<field name=\"v4_int32\" type=\"v4i32\"/>"
	"<field name=\"v2_int64\" type=\"v2i64\"/>"
	"<field name=\"uint128\" type=\"uint128\"/>"
	"</union>";

/* Appends the description to @out (of @cap bytes); its length. */
static size_t write_xml(char *out, size_t cap)
{
	size_t n = 0;

#define PUT(...) n += (size_t) snprintf(out ? out + (n < cap ? n : cap) : \
					 NULL, n < cap ? cap - n : 0, __VA_ARGS__)
	PUT("<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM "
	    "\"gdb-target.dtd\">\n<target version=\"1.0\">"
	    "<architecture>i386:x86-64</architecture><osabi>GNU/Linux</osabi>");
	for (size_t i = 0; i < NREGS; i++) {
		if (regs[i].feature)
			PUT("%s<feature name=\"%s\">%s", i ? "</feature>" : "",
			    regs[i].feature, i == 0 ? types :
			    !strcmp(regs[i].name, "xmm0") ? sse_types : "");
		PUT("<reg name=\"%s\" bitsize=\"%u\" type=\"%s\" regnum=\"%zu\""
		    "%s/>", regs[i].name, regs[i].bits, regs[i].type, i,
		    regs[i].hist == RSP_REG_GOTO ?
		    " group=\"system\" save-restore=\"no\"" :
		    regs[i].bits == 80 || strstr(regs[i].name, "xmm") ||
		    !strcmp(regs[i].name, "mxcsr") ? " group=\"float\"" : "");
	}
	PUT("</feature></target>\n");
#undef PUT
	return n;
}

const char *rsp_target_xml(void)
{
	static char *xml;

	if (!xml) {
		size_t n = write_xml(NULL, 0);

		xml = malloc(n + 1);
		if (!xml)
			return "";
		write_xml(xml, n + 1);
	}
	return xml;
}

/* Register @i's value in @s's reply for thread @thr. */
static void reply_reg(struct rsp_server *s, size_t i, const uint64_t *vals,
		      const bool *known)
{
	size_t bytes = regs[i].bits / 8;

	if (regs[i].hist >= 0 && known[regs[i].hist]) {
		rsp_reply_le(s, vals[regs[i].hist], bytes);
		return;
	}
	for (size_t k = 0; k < bytes; k++)
		rsp_reply_str(s, "xx");
}

void rsp_reply_registers(struct rsp_server *s, size_t thr)
{
	uint64_t vals[HIST_NREGS];
	bool known[HIST_NREGS];

	s->target->ops->regs(s->target, thr, vals, known);
	for (size_t i = 0; i < NREGS; i++)
		reply_reg(s, i, vals, known);
}

void rsp_reply_register(struct rsp_server *s, size_t thr, unsigned regno)
{
	uint64_t vals[HIST_NREGS];
	bool known[HIST_NREGS];

	if (regno >= NREGS) {
		rsp_reply_str(s, "E01");
		return;
	}
	s->target->ops->regs(s->target, thr, vals, known);
	reply_reg(s, regno, vals, known);
}

int rsp_reg_hist(unsigned regno)
{
	return regno < NREGS ? regs[regno].hist : -1;
}

int rsp_reg_goto(struct rsp_server *s, uint64_t insn)
{
	char cmd[32], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int err;

	if (!out)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (insn)
		snprintf(cmd, sizeof(cmd), "goto %" PRIu64, insn);
	else
		snprintf(cmd, sizeof(cmd), "goto end");
	err = s->target->ops->monitor(s->target, s->g_thread, out, cmd);
	fclose(out);
	free(text);
	return err;
}

void rsp_reply_stop_registers(struct rsp_server *s, size_t thr)
{
	static const unsigned stop_regs[] = { 6, 7, 16 };	/* rbp rsp rip */
	uint64_t vals[HIST_NREGS];
	bool known[HIST_NREGS];

	s->target->ops->regs(s->target, thr, vals, known);
	for (size_t i = 0; i < 3; i++) {
		const struct rsp_reg *r = &regs[stop_regs[i]];

		if (!known[r->hist])
			continue;
		rsp_reply_printf(s, "%02x:", stop_regs[i]);
		rsp_reply_le(s, vals[r->hist], 8);
		rsp_reply_str(s, ";");
	}
}
