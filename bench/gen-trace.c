/* bench/gen-trace — writes a large, valid Intel PT trace of a walk through
 * the real code of a real binary (libc.so.6 by default).
 *
 * The development machines have no Intel PT, and single-stepping 100M
 * instructions takes about an hour, so the benchmark trace is made here:
 * start at a function symbol, decode instruction by instruction with Zydis,
 * pick conditional branch outcomes with a seeded generator (backward
 * branches are taken 3 times in 4, so loops run a few iterations), follow
 * direct jumps and calls, send indirect jumps and calls to function entry
 * symbols, and return through a shadow stack.  Packets are what the SDM
 * prescribes for that execution, written with libipt's encoder: a TNT bit
 * per conditional branch, a taken bit for a return whose call came after the
 * last PSB (return compression), TIP for other returns and for indirect and
 * far transfers, and PSB+ (PSB, MODE.Exec, FUP, PSBEND) every --psb-period
 * bytes.  Instructions that cannot be walked (hlt, ud2, privileged
 * control transfers, undecodable bytes, code that leaves the executable
 * segments, or a trace-less loop back onto itself) end tracing there
 * (FUP + TIP.PGD, as an interrupt would) and tracing resumes at a random
 * function (TIP.PGE).  The trace ends with FUP + TIP.PGD at the next
 * instruction, so a decoder sees exactly the instructions walked.
 *
 * Output: BASE.pt (raw PT), BASE.info (see trace-info.h) and, with --ips,
 * BASE.ips (each walked instruction address as a little-endian uint64) for
 * verify-trace.
 */
#include "code.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TNT_BITS	6	/* conditional branches per short TNT packet */
#define MAX_RUNS	16	/* direct branches followed without trace */
#define STACK_CAP	4096	/* shadow stack entries */
#define RETSTACK_DEPTH	64	/* libipt's return-compression stack */
#define OUTBUF_SIZE	(1u << 20)

/* A straight run of instructions walked since the last packet. */
struct walk_run {
	uint64_t start, end;
};

struct gen_stats {
	uint64_t tnt_bits, tips, compressed, psbs, restarts;
};

/* The walk and the packet stream it produces. */
struct gen {
	struct code *code;
	struct pt_encoder *enc;
	uint8_t *buf;
	FILE *out, *ips;
	uint64_t written;	/* bytes of trace already in @out */
	uint64_t last_ip;	/* IP compression reference */
	bool have_last_ip;
	uint64_t tnt;
	unsigned ntnt;
	uint64_t psb_offset;	/* trace offset of the last PSB */
	uint32_t psb_period;
	uint64_t rng;
	uint64_t *stack;	/* shadow stack of return addresses */
	size_t depth;
	unsigned retcomp;	/* of those, how many a decoder's
				 * return-compression stack holds */
	struct walk_run runs[MAX_RUNS];	/* since the last packet */
	size_t nruns;
	uint64_t run_start;
	uint64_t ip;		/* next instruction to walk */
	uint64_t ninsn, limit;
	struct gen_stats stats;
};

/* ------------------------------------------------------------------ */
/* Packets                                                            */
/* ------------------------------------------------------------------ */

/* Trace bytes produced so far. */
static uint64_t trace_offset(const struct gen *g)
{
	uint64_t off = 0;

	(void) pt_enc_get_offset(g->enc, &off);
	return g->written + off;
}

/* Writes the encoder's buffer out and starts it over. */
static void flush_out(struct gen *g)
{
	uint64_t off = 0;

	(void) pt_enc_get_offset(g->enc, &off);
	if (off && fwrite(g->buf, 1, off, g->out) != off)
		bench_die("trace", strerror(errno));
	g->written += off;
	if (pt_enc_sync_set(g->enc, 0) < 0)
		bench_die("encoder", "cannot rewind");
}

/* Encodes @pkt, making room first. */
static void emit(struct gen *g, struct pt_packet *pkt)
{
	uint64_t off = 0;
	int err;

	(void) pt_enc_get_offset(g->enc, &off);
	if (off + 64 > OUTBUF_SIZE)
		flush_out(g);
	err = pt_enc_next(g->enc, pkt);
	if (err < 0)
		bench_die("encoder", pt_errstr(pt_errcode(err)));
}

/* The shortest IP compression that gives @ip from the last IP. */
static enum pt_ip_compression ip_compression(const struct gen *g, uint64_t ip)
{
	uint64_t diff = ip ^ g->last_ip;
	bool sext48 = (uint64_t) ((int64_t) (ip << 16) >> 16) == ip;

	if (g->have_last_ip && diff >> 16 == 0)
		return pt_ipc_update_16;
	if (g->have_last_ip && diff >> 32 == 0)
		return pt_ipc_update_32;
	if (sext48)
		return pt_ipc_sext_48;
	if (g->have_last_ip && diff >> 48 == 0)
		return pt_ipc_update_48;
	return pt_ipc_full;
}

/* Emits an IP packet of @type (TIP, TIP.PGE, FUP) for @ip. */
static void emit_ip(struct gen *g, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet pkt = { .type = type };

	pkt.payload.ip.ipc = ip_compression(g, ip);
	pkt.payload.ip.ip = ip;
	emit(g, &pkt);
	g->last_ip = ip;
	g->have_last_ip = true;
}

/* Emits the pending conditional-branch bits as one short TNT packet. */
static void tnt_flush(struct gen *g)
{
	struct pt_packet pkt = { .type = ppt_tnt_8 };

	if (!g->ntnt)
		return;
	pkt.payload.tnt.bit_size = (uint8_t) g->ntnt;
	pkt.payload.tnt.payload = g->tnt;
	emit(g, &pkt);
	g->tnt = 0;
	g->ntnt = 0;
}

/* Records one TNT bit (oldest branch in the most significant bit). */
static void tnt_add(struct gen *g, bool taken)
{
	g->tnt = g->tnt << 1 | taken;
	g->stats.tnt_bits++;
	if (++g->ntnt == TNT_BITS)
		tnt_flush(g);
}

/* Emits PSB+; with @enabled, its FUP says where execution resumes.  The
 * decoder resets last-IP and its return stack here, and so do we. */
static void psb_plus(struct gen *g, bool enabled)
{
	struct pt_packet pkt = { .type = ppt_psb };

	tnt_flush(g);
	g->psb_offset = trace_offset(g);
	emit(g, &pkt);
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	emit(g, &pkt);
	g->have_last_ip = false;
	if (enabled)
		emit_ip(g, ppt_fup, g->ip);
	pkt.type = ppt_psbend;
	emit(g, &pkt);
	g->retcomp = 0;
	g->stats.psbs++;
}

/* ------------------------------------------------------------------ */
/* The walk                                                           */
/* ------------------------------------------------------------------ */

/* The next pseudo-random number (xorshift64*). */
static uint64_t rng_next(struct gen *g)
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545f4914f6cdd1dull;
}

/* A random function entry. */
static uint64_t random_function(struct gen *g)
{
	const struct code *c = g->code;

	return c->funcs[(uint64_t) (((unsigned __int128) rng_next(g) *
				     c->nfuncs) >> 64)];
}

/* Counts the instruction at g->ip as executed. */
static void retire(struct gen *g)
{
	g->ninsn++;
	if (g->ips && fwrite(&g->ip, sizeof(g->ip), 1, g->ips) != 1)
		bench_die("ips", strerror(errno));
}

/* Execution continues at @to after a packet: the walk without trace
 * starts over there, and a PSB+ goes out if one is due. */
static void traced(struct gen *g, uint64_t to)
{
	g->ip = to;
	g->nruns = 0;
	g->run_start = to;
	if (trace_offset(g) - g->psb_offset >= g->psb_period)
		psb_plus(g, true);
}

/* Stops tracing before g->ip (FUP + TIP.PGD) and resumes at a random
 * function (TIP.PGE), with an empty stack. */
static void restart(struct gen *g)
{
	struct pt_packet pgd = { .type = ppt_tip_pgd };
	uint64_t to = random_function(g);

	tnt_flush(g);
	emit_ip(g, ppt_fup, g->ip);
	pgd.payload.ip.ipc = pt_ipc_suppressed;
	emit(g, &pgd);
	emit_ip(g, ppt_tip_pge, to);
	g->depth = 0;
	g->retcomp = 0;
	g->stats.restarts++;
	traced(g, to);
}

/* An indirect transfer to @to (TIP). */
static void tip(struct gen *g, uint64_t to)
{
	tnt_flush(g);
	emit_ip(g, ppt_tip, to);
	g->stats.tips++;
	traced(g, to);
}

/* Pushes a return address; a decoder's return stack gets it too. */
static void push(struct gen *g, uint64_t ret)
{
	if (g->depth == STACK_CAP) {
		memmove(g->stack, g->stack + STACK_CAP / 2,
			STACK_CAP / 2 * sizeof(*g->stack));
		g->depth -= STACK_CAP / 2;
	}
	g->stack[g->depth++] = ret;
	if (g->retcomp < RETSTACK_DEPTH)
		g->retcomp++;
}

/* True if @to was walked since the last packet (the current run ends at
 * @end): a decoder looking for a FUP there would stop at the first visit. */
static bool revisits(const struct gen *g, uint64_t end, uint64_t to)
{
	if (to - g->run_start < end - g->run_start)
		return true;
	for (size_t i = 0; i < g->nruns; i++)
		if (to - g->runs[i].start < g->runs[i].end - g->runs[i].start)
			return true;
	return false;
}

/* Executes the instruction at g->ip (ending at @end), which continues at
 * @to without trace (@branch: by a direct jump or call).  Restarts instead
 * if @to leaves the code or closes a loop without trace. */
static bool move_untraced(struct gen *g, uint64_t end, uint64_t to,
			  bool branch)
{
	if (code_section_of(g->code, to) < 0 || revisits(g, end, to) ||
	    (branch && g->nruns == MAX_RUNS)) {
		restart(g);
		return false;
	}
	retire(g);
	if (branch) {
		g->runs[g->nruns].start = g->run_start;
		g->runs[g->nruns++].end = end;
		g->run_start = to;
	}
	g->ip = to;
	return true;
}

/* A conditional branch: picks the outcome, backward branches (loops)
 * taken 3 times in 4, forward ones every other time. */
static void cond_branch(struct gen *g, const struct insn_slot *s)
{
	uint64_t fall = g->ip + s->len;
	uint64_t target = fall + (uint64_t) (int64_t) s->disp;
	uint64_t r = rng_next(g) >> 62;
	bool taken = target <= g->ip ? r != 0 : (r & 1);

	if (code_section_of(g->code, taken ? target : fall) < 0)
		taken = !taken;
	if (code_section_of(g->code, taken ? target : fall) < 0) {
		restart(g);
		return;
	}
	retire(g);
	tnt_add(g, taken);
	traced(g, taken ? target : fall);
}

/* A near return: to the shadow stack's top, compressed if the decoder's
 * return stack has it; with an empty stack, to a random function. */
static void ret(struct gen *g)
{
	uint64_t to = 0;

	retire(g);
	if (g->depth)
		to = g->stack[--g->depth];
	if (to && code_section_of(g->code, to) >= 0 && g->retcomp) {
		g->retcomp--;
		g->stats.compressed++;
		tnt_add(g, true);
		traced(g, to);
		return;
	}
	if (!to || code_section_of(g->code, to) < 0)
		to = random_function(g);
	g->retcomp = 0;	/* the decoder did not pop: stop trusting it */
	tip(g, to);
}

/* Walks one instruction (or restarts before it). */
static void step(struct gen *g)
{
	const struct insn_slot *s = code_insn_at(g->code, g->ip);
	uint64_t next = s ? g->ip + s->len : 0;

	switch (s ? s->kind : K_STOP) {
	case K_OTHER:
		move_untraced(g, next, next, false);
		break;
	case K_JMP:
		move_untraced(g, next, next + (uint64_t) (int64_t) s->disp,
			      true);
		break;
	case K_CALL:
		/* A call to the next instruction reads the PC; it is not
		 * a call and the decoder does not push it. */
		if (move_untraced(g, next, next + (uint64_t) (int64_t) s->disp,
				  true) && s->disp)
			push(g, next);
		break;
	case K_COND:
		cond_branch(g, s);
		break;
	case K_IND_CALL:
		retire(g);
		push(g, next);
		tip(g, random_function(g));
		break;
	case K_IND_JMP:
	case K_FAR:
		retire(g);
		tip(g, random_function(g));
		break;
	case K_RET:
		ret(g);
		break;
	default:
		restart(g);
		break;
	}
}

/* Walks @g->limit instructions: PSB+, TIP.PGE, the walk, FUP + TIP.PGD. */
static void generate(struct gen *g)
{
	struct pt_packet pgd = { .type = ppt_tip_pgd };

	psb_plus(g, false);
	g->ip = random_function(g);
	emit_ip(g, ppt_tip_pge, g->ip);
	traced(g, g->ip);
	while (g->ninsn < g->limit)
		step(g);
	tnt_flush(g);
	emit_ip(g, ppt_fup, g->ip);
	pgd.payload.ip.ipc = pt_ipc_suppressed;
	emit(g, &pgd);
	flush_out(g);
}

/* ------------------------------------------------------------------ */
/* Command line                                                       */
/* ------------------------------------------------------------------ */

struct options {
	const char *binary;
	const char *base;
	uint64_t insns, seed, bias;
	uint32_t psb_period;
	bool ips;
};

/* The default binary: the first of a few big ones every Debian machine
 * with ptrr's dependencies has. */
static const char *default_binary(void)
{
	static const char *const candidates[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/bin/gdb",
	};

	for (size_t i = 0; i < sizeof(candidates) / sizeof(*candidates); i++)
		if (access(candidates[i], R_OK) == 0)
			return candidates[i];
	return candidates[0];
}

/* Prints usage to @f. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: gen-trace -o BASE [--binary ELF] [--insns N] "
		"[--seed S]\n"
		"                 [--psb-period BYTES] [--bias ADDR] [--ips]\n"
		"Writes BASE.pt, BASE.info and, with --ips, BASE.ips.\n");
}

/* Parses an unsigned number (decimal, 0x hex, or with a k/M/G suffix). */
static uint64_t parse_num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': v *= 1000; end++; break;
	case 'M': v *= 1000000; end++; break;
	case 'G': v *= 1000000000; end++; break;
	default: break;
	}
	if (*end || !*s) {
		fprintf(stderr, "gen-trace: bad number '%s'\n", s);
		exit(1);
	}
	return v;
}

/* Fills @o from argv; exits on usage errors. */
static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "binary", required_argument, NULL, 'b' },
		{ "insns", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "psb-period", required_argument, NULL, 'p' },
		{ "bias", required_argument, NULL, 'B' },
		{ "ips", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*o = (struct options) { .binary = default_binary(),
		.insns = 100000000, .seed = 1, .bias = 0x7ffff7c00000ull,
		.psb_period = 4096 };
	while ((opt = getopt_long(argc, argv, "o:b:n:s:p:B:ih", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'o': o->base = optarg; break;
		case 'b': o->binary = optarg; break;
		case 'n': o->insns = parse_num(optarg); break;
		case 's': o->seed = parse_num(optarg); break;
		case 'p': o->psb_period = (uint32_t) parse_num(optarg); break;
		case 'B': o->bias = parse_num(optarg); break;
		case 'i': o->ips = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(1);
		}
	}
	if (!o->base || optind != argc || o->psb_period < 256) {
		usage(stderr);
		exit(1);
	}
}

/* Opens BASE@suffix for writing. */
static FILE *open_out(const char *base, const char *suffix)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", base, suffix);
	f = fopen(path, "wb");
	if (!f)
		bench_die(path, strerror(errno));
	return f;
}

/* Sets up the encoder and the walk's state. */
static void gen_init(struct gen *g, struct code *c, const struct options *o)
{
	struct pt_config config;

	memset(g, 0, sizeof(*g));
	g->code = c;
	g->buf = malloc(OUTBUF_SIZE);
	g->stack = malloc(STACK_CAP * sizeof(*g->stack));
	if (!g->buf || !g->stack)
		bench_die("gen-trace", strerror(ENOMEM));
	pt_config_init(&config);
	config.begin = g->buf;
	config.end = g->buf + OUTBUF_SIZE;
	g->enc = pt_alloc_encoder(&config);
	if (!g->enc)
		bench_die("encoder", "cannot allocate");
	g->rng = o->seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	g->psb_period = o->psb_period;
	g->limit = o->insns;
	g->out = open_out(o->base, ".pt");
	g->ips = o->ips ? open_out(o->base, ".ips") : NULL;
}

/* Frees what gen_init() allocated. */
static void gen_fini(struct gen *g)
{
	pt_free_encoder(g->enc);
	free(g->buf);
	free(g->stack);
}

/* Writes BASE.info. */
static void write_info(const struct gen *g, const struct options *o)
{
	char path[PATH_MAX], name[PATH_MAX];
	struct bench_trace bt = g->code->bt;
	const char *slash = strrchr(o->base, '/');

	bt.insns = g->ninsn;
	bt.seed = o->seed;
	bt.psb_period = o->psb_period;
	memset(&bt.cpu, 0, sizeof(bt.cpu));	/* unknown: no errata */
	snprintf(name, sizeof(name), "%s.pt", slash ? slash + 1 : o->base);
	snprintf(path, sizeof(path), "%s.info", o->base);
	if (bench_trace_write(path, &bt, name) < 0)
		exit(2);
}

/* Prints what was generated. */
static void report(const struct gen *g, double secs)
{
	const struct gen_stats *s = &g->stats;

	fprintf(stderr, "gen-trace: %" PRIu64 " instructions of %s (%zu "
		"functions) in %.1f s: %" PRIu64 " bytes of trace (%.3f "
		"bytes/insn), %" PRIu64 " PSBs, %" PRIu64 " TNT bits, %"
		PRIu64 " compressed returns, %" PRIu64 " TIPs, %" PRIu64
		" restarts\n", g->ninsn, g->code->bt.binary,
		g->code->nfuncs, secs, g->written,
		(double) g->written / (double) (g->ninsn ? g->ninsn : 1),
		s->psbs, s->tnt_bits, s->compressed, s->tips, s->restarts);
}

int main(int argc, char **argv)
{
	struct options o;
	struct code code;
	struct gen g;
	double t0;

	parse_options(argc, argv, &o);
	memset(&code, 0, sizeof(code));
	code_load(&code, o.binary, o.bias);
	gen_init(&g, &code, &o);
	t0 = bench_now();
	generate(&g);
	if (fclose(g.out) != 0 || (g.ips && fclose(g.ips) != 0))
		bench_die(o.base, strerror(errno));
	write_info(&g, &o);
	report(&g, bench_now() - t0);
	gen_fini(&g);
	code_free(&code);
	return 0;
}
