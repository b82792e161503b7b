/* perf-percpu [OPTION] IN OUT: writes perf.data OUT, a variation of IN
 * (a per-thread perf.data as `ptrr export --perf` writes it), for
 * tests/perf-import.sh.
 *
 * Without an option, OUT is the per-CPU recording of the same threads
 * on CPU 0: each thread's trace is cut into runs (from tracing starting,
 * TIP.PGE, to it stopping, TIP.PGD), and the runs of the threads take
 * turns, as a CPU that switches between them would write them: before
 * each run, PERF_RECORD_SWITCH_CPU_WIDE records (out of the last thread,
 * into the next) at its time, and in the trace a PIP, PADs and a TSC;
 * after the run's TIP.PGE a TSC, an MTC, a CYC and a CBR.  Every IP is written
 * in full (the last IP of the CPU is not the thread's).  The records
 * get PERF_SAMPLE_TIME; AUXTRACE_INFO says per-CPU, with TSC == perf
 * time.
 *
 * Options (OUT stays per-thread otherwise):
 *   --lose        the first trace in two pieces with 104 bytes missing
 *                 between them (the second's offset says so);
 *   --snapshot    snapshot mode, the first trace in two snapshots that
 *                 overlap by a PSB segment;
 *   --truncate    the first trace whole, after a PERF_RECORD_AUX whose
 *                 truncated flag says trace was lost in its middle,
 *                 inside a packet (5 bytes into the first PSB after
 *                 half of it), as AUX data ends when the buffer fills;
 *   --mmap2       PERF_RECORD_MMAP2 for MMAP, each with the build-id the
 *                 BUILD_ID feature has for its file (which stays);
 *   --vdso=ID     the vDSO as perf record writes it: the MMAP of the
 *                 export's FILE.vdso an MMAP2 of "[vdso]" without
 *                 build-id, and the BUILD_ID feature's entry for
 *                 "[vdso]" build-id ID (hex);
 *   --aux-type=N  AUXTRACE_INFO of type N;
 *   --no-aux      no AUXTRACE_INFO;
 *   --untimed     per-CPU as above, without the TSC conversion;
 *   --pipe        the header's size is that of perf's pipe header (16),
 *                 as perf record -o - writes it;
 *   --compressed  a PERF_RECORD_COMPRESSED first, as perf record -z
 *                 writes them;
 *   --mtc         per-CPU as above, timed by MTC packets alone: a TSC
 *                 and a TMA in each PSB+, an MTC before each run's
 *                 TIP.PGE and one after it, none of the TSCs around it
 *                 (TSC == CTC, MTC period 0).
 */
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERF_REC_AUXTRACE_INFO 70
#define PERF_REC_AUXTRACE 71
#define INFO_TIME_SHIFT 1
#define INFO_TIME_MULT 2
#define INFO_TIME_ZERO 3
#define INFO_CAP_USER_TIME_ZERO 4
#define INFO_SNAPSHOT_MODE 8
#define INFO_PER_CPU_MMAPS 9
#define INFO_TSC_CTC_N 12
#define INFO_TSC_CTC_D 13
#define TSC_BIT (1ull << 10)

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void die(const char *what)
{
	fprintf(stderr, "perf-percpu: %s\n", what);
	exit(2);
}

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		if (!(b->p = realloc(b->p, b->cap)))
			die("out of memory");
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static uint64_t u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The input file, and where its parts are. */
static uint8_t *in;
static size_t in_size;
static uint64_t attr_size, data_off, data_size, sample_type;

/* One thread's trace, from IN. */
struct thread {
	uint32_t pid, tid;
	struct buf trace;
	/* its runs, re-encoded: offsets into runs.p */
	struct buf runs;
	size_t *ends;
	size_t nruns, next;
	uint64_t last_ip;
};
static struct thread threads[16];
static size_t nthreads;
static bool mtc_mode;

static struct thread *thread_of(uint32_t tid)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	if (nthreads == 16)
		die("too many threads");
	threads[nthreads].tid = tid;
	return &threads[nthreads++];
}

/* Encodes @pkt into @b. */
static void encode(struct buf *b, const struct pt_packet *pkt)
{
	uint8_t scratch[64];
	struct pt_config cfg;
	struct pt_encoder *e;
	int n;

	pt_config_init(&cfg);
	cfg.begin = scratch;
	cfg.end = scratch + sizeof(scratch);
	e = pt_alloc_encoder(&cfg);
	if (!e || (n = pt_enc_next(e, pkt)) < 0)
		die("cannot encode a packet");
	pt_free_encoder(e);
	put(b, scratch, n);
}

/* The full IP of IP packet @pkt, after last IP @last. */
static void decompress(uint64_t *last, struct pt_packet_ip *ip)
{
	static const uint64_t keep[] = {
		[pt_ipc_update_16] = 0xffff, [pt_ipc_update_32] = 0xffffffff,
		[pt_ipc_update_48] = 0xffffffffffffull,
	};

	if (ip->ipc == pt_ipc_suppressed)
		return;
	if (ip->ipc == pt_ipc_sext_48)
		ip->ip = (uint64_t)((int64_t)(ip->ip << 16) >> 16);
	else if (ip->ipc != pt_ipc_full)
		ip->ip = (*last & ~keep[ip->ipc]) | (ip->ip & keep[ip->ipc]);
	*last = ip->ip;
	ip->ipc = pt_ipc_full;
}

/* Cuts thread @t's trace into runs ending at TIP.PGD, IPs in full. */
static void make_runs(struct thread *t)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet pkt;
	bool open = false;

	if (!t->trace.n)
		return;
	pt_config_init(&cfg);
	cfg.begin = t->trace.p;
	cfg.end = t->trace.p + t->trace.n;
	if (!(d = pt_pkt_alloc_decoder(&cfg)) || pt_pkt_sync_forward(d) < 0)
		die("a thread's trace has no PSB");
	while (pt_pkt_next(d, &pkt, sizeof(pkt)) >= 0) {
		switch (pkt.type) {
		case ppt_psb:
			t->last_ip = 0;
			break;
		case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd: case ppt_fup:
			decompress(&t->last_ip, &pkt.payload.ip);
			break;
		default:
			break;
		}
		encode(&t->runs, &pkt);
		open = true;
		if (pkt.type == ppt_tip_pgd) {
			t->ends = realloc(t->ends, (t->nruns + 1) * sizeof(size_t));
			t->ends[t->nruns++] = t->runs.n;
			open = false;
		}
	}
	if (open) {	/* tracing stops as the CPU leaves the thread */
		pkt.type = ppt_tip_pgd;
		pkt.payload.ip.ipc = pt_ipc_suppressed;
		encode(&t->runs, &pkt);
		t->ends = realloc(t->ends, (t->nruns + 1) * sizeof(size_t));
		t->ends[t->nruns++] = t->runs.n;
	}
	pt_pkt_free_decoder(d);
}

/* Appends run @t->next of thread @t to @s, with the timing packets of
 * time @time inserted. */
static void put_run(struct buf *s, struct thread *t, uint64_t time)
{
	size_t from = t->next ? t->ends[t->next - 1] : 0, to = t->ends[t->next];
	struct pt_packet_decoder *d;
	struct pt_config cfg;
	struct pt_packet pkt = { .type = ppt_pip };
	bool tsc_done = false;

	pkt.payload.pip.cr3 = (uint64_t)t->pid << 12;
	encode(s, &pkt);
	pkt = (struct pt_packet){ .type = ppt_pad };
	encode(s, &pkt);
	pkt = (struct pt_packet){ .type = mtc_mode ? ppt_mtc : ppt_tsc };
	if (mtc_mode)
		pkt.payload.mtc.ctc = (time - 5) & 0xff;
	else
		pkt.payload.tsc.tsc = time - 5;
	encode(s, &pkt);
	pt_config_init(&cfg);
	cfg.begin = t->runs.p + from;
	cfg.end = t->runs.p + to;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d || pt_pkt_sync_set(d, 0) < 0)
		die("cannot read a run");
	while (pt_pkt_next(d, &pkt, sizeof(pkt)) >= 0) {
		encode(s, &pkt);
		if (pkt.type == ppt_psb && mtc_mode) {
			pkt = (struct pt_packet){ .type = ppt_tsc };
			pkt.payload.tsc.tsc = time - 5;
			encode(s, &pkt);
			pkt = (struct pt_packet){ .type = ppt_tma };
			pkt.payload.tma.ctc = (time - 5) & 0xffff;
			encode(s, &pkt);
		}
		if (pkt.type == ppt_tip_pge && !tsc_done) {
			if (!mtc_mode) {
				pkt = (struct pt_packet){ .type = ppt_tsc };
				pkt.payload.tsc.tsc = time;
				encode(s, &pkt);
			}
			pkt = (struct pt_packet){ .type = ppt_mtc };
			pkt.payload.mtc.ctc = time & 0xff;
			encode(s, &pkt);
			pkt = (struct pt_packet){ .type = ppt_cyc };
			pkt.payload.cyc.value = 3;
			encode(s, &pkt);
			pkt = (struct pt_packet){ .type = ppt_cbr };
			pkt.payload.cbr.ratio = 24;
			encode(s, &pkt);
			tsc_done = true;
		}
	}
	pt_pkt_free_decoder(d);
	t->next++;
}

/* The sample_id trailer for OUT: pid, tid, time, cpu, id. */
static void put_trailer(struct buf *b, uint32_t pid, uint32_t tid,
			uint64_t time, uint64_t id)
{
	uint32_t w[2] = { pid, tid }, c[2] = { 0, 0 };

	put(b, w, 8);
	put(b, &time, 8);
	put(b, c, 8);
	put(b, &id, 8);
}

/* A switch record on CPU 0 at @time: @out of thread @t (to @next). */
static void put_switch(struct buf *b, bool out, const struct thread *t,
		       const struct thread *next, uint64_t time)
{
	struct perf_event_header h = {
		.type = PERF_RECORD_SWITCH_CPU_WIDE,
		.misc = out ? PERF_RECORD_MISC_SWITCH_OUT : 0,
		.size = 8 + 8 + 32,
	};
	uint32_t np[2] = { next->pid, next->tid };

	put(b, &h, 8);
	put(b, np, 8);
	put_trailer(b, t->pid, t->tid, time, 1);
}

/* The per-CPU trace: the threads' runs taking turns. */
static void put_cpu_trace(struct buf *data)
{
	struct buf s = { 0 };
	struct thread *last = NULL;
	uint64_t time = 1000;
	bool more = true;
	struct {
		struct perf_event_header h;
		uint64_t size, offset, reference;
		uint32_t idx, tid, cpu, reserved;
	} a = { .h = { .type = PERF_REC_AUXTRACE, .size = 48 } };

	while (more) {
		more = false;
		for (size_t i = 0; i < nthreads; i++) {
			struct thread *t = &threads[i];

			if (t->next == t->nruns)
				continue;
			more = true;
			if (last)
				put_switch(data, true, last, t, time - 10);
			put_switch(data, false, t, last ? last : t, time - 9);
			put_run(&s, t, time);
			last = t;
			time += 100;
		}
	}
	while (s.n % 8)
		put(&s, "", 1);
	a.size = s.n;
	a.tid = UINT32_MAX;
	put(data, &a, sizeof(a));
	put(data, s.p, s.n);
	free(s.p);
}

/* The build-id IN's BUILD_ID feature (the first feature) has for file
 * @name: its 20 bytes at @id and its size, or 0. */
static size_t build_id_of(const char *name, uint8_t id[20])
{
	uint64_t table = data_off + data_size, at, end;

	if (!(u64(in + 72) & (1u << 2)))
		return 0;
	at = u64(in + table);
	end = at + u64(in + table + 8);
	while (at + 36 < end) {
		struct perf_event_header h;

		memcpy(&h, in + at, 8);
		if (!strcmp((const char *)in + at + 36, name)) {
			memcpy(id, in + at + 12, 20);
			return in[at + 32];
		}
		at += h.size;
	}
	return 0;
}

/* Writes MMAP record @rec as an MMAP2 with the file's build-id, or, if
 * @as is not NULL, of a mapping named @as without build-id. */
static void put_mmap2(struct buf *b, const uint8_t *rec, size_t size,
		      const char *as)
{
	const char *name = (const char *)rec + 40;
	size_t len = strlen(name) + 1, pad = (8 - len % 8) % 8, trailer;
	size_t new_len = strlen(as ? as : name) + 1;
	size_t new_pad = (8 - new_len % 8) % 8;
	struct perf_event_header h;
	uint8_t bid[24] = { 0 };
	uint32_t prot[2] = { 5 /* PROT_READ | PROT_EXEC */, 2 /* MAP_PRIVATE */ };

	memcpy(&h, rec, 8);
	trailer = size - 40 - len - pad;
	bid[0] = as ? 0 : build_id_of(name, bid + 4);
	h.type = PERF_RECORD_MMAP2;
	if (bid[0])
		h.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	h.size = 72 + new_len + new_pad + trailer;
	put(b, &h, 8);
	put(b, rec + 8, 32);
	put(b, bid, 24);
	put(b, prot, 8);
	put(b, as ? as : name, new_len);
	put(b, "\0\0\0\0\0\0\0", new_pad);
	put(b, rec + 40 + len + pad, trailer);
}

/* A BUILD_ID feature entry for "[vdso]" with build-id @hex, as perf
 * writes it (the name padded to 64 bytes). */
static void put_vdso_build_id(struct buf *b, const char *hex)
{
	struct perf_event_header h = {
		.type = 67, .misc = PERF_RECORD_MISC_USER | (1 << 15),
		.size = 36 + 64,
	};
	int32_t pid = -1;
	uint8_t id[24] = { 0 }, name[64] = "[vdso]";

	while (id[20] < 20 && sscanf(hex + 2 * id[20], "%2hhx", &id[id[20]]) == 1)
		id[20]++;
	put(b, &h, 8);
	put(b, &pid, 4);
	put(b, id, 24);
	put(b, name, 64);
}

/* Copies record @rec (@size bytes) to @b with the trailer of the
 * per-CPU file (time @time). */
static void put_retimed(struct buf *b, const uint8_t *rec, size_t size,
			uint64_t time)
{
	struct perf_event_header h;
	size_t old = 24;	/* pid, tid | cpu | identifier */
	uint32_t w[2];

	memcpy(&h, rec, 8);
	if (!(sample_type & PERF_SAMPLE_CPU) || size < 8 + old)
		die("IN is not as ptrr export --perf writes it");
	memcpy(w, rec + size - old, 8);
	h.size = size - old + 32;
	put(b, &h, 8);
	put(b, rec + 8, size - 8 - old);
	put_trailer(b, w[0], w[1], time, u64(rec + size - 8));
}

int main(int argc, char **argv)
{
	enum { PERCPU, LOSE, SNAPSHOT, TRUNCATE, MMAP2, VDSO, AUXTYPE, NOAUX,
	       UNTIMED, MTC, PIPE, COMPRESSED } mode = PERCPU;
	unsigned aux_type = 0;
	const char *vdso_id = NULL;
	struct buf out = { 0 }, data = { 0 }, extra = { 0 };
	struct perf_event_attr attr;
	FILE *f;
	int a = 1;

	if (argc == 4 && !strcmp(argv[1], "--lose"))
		mode = LOSE, a = 2;
	else if (argc == 4 && !strcmp(argv[1], "--snapshot"))
		mode = SNAPSHOT, a = 2;
	else if (argc == 4 && !strcmp(argv[1], "--mmap2"))
		mode = MMAP2, a = 2;
	else if (argc == 4 && !strncmp(argv[1], "--vdso=", 7))
		mode = VDSO, vdso_id = argv[1] + 7, a = 2;
	else if (argc == 4 && !strcmp(argv[1], "--truncate"))
		mode = TRUNCATE, a = 2;
	else if (argc == 4 && !strncmp(argv[1], "--aux-type=", 11))
		mode = AUXTYPE, aux_type = atoi(argv[1] + 11), a = 2;
	else if (argc == 4 && !strcmp(argv[1], "--no-aux"))
		mode = NOAUX, a = 2;
	else if (argc == 4 && !strcmp(argv[1], "--untimed"))
		mode = UNTIMED, a = 2;
	else if (argc == 4 && !strcmp(argv[1], "--mtc"))
		mode = MTC, a = 2, mtc_mode = true;
	else if (argc == 4 && !strcmp(argv[1], "--pipe"))
		mode = PIPE, a = 2;
	else if (argc == 4 && !strcmp(argv[1], "--compressed"))
		mode = COMPRESSED, a = 2;
	else if (argc != 3)
		die("usage: perf-percpu [--lose|--snapshot|--truncate|--mmap2|--vdso=ID|--aux-type=N|--no-aux|--untimed|--mtc|--pipe|--compressed] IN OUT");
	if (!(f = fopen(argv[a], "rb")))
		die("cannot read IN");
	in = malloc(1 << 26);
	in_size = fread(in, 1, 1 << 26, f);
	fclose(f);
	if (in_size < 104 || memcmp(in, "PERFILE2", 8))
		die("IN is not a perf.data");
	attr_size = u64(in + 16);
	data_off = u64(in + 40);
	data_size = u64(in + 48);
	memcpy(&attr, in + 104, sizeof(attr));
	sample_type = attr.sample_type;
	bool percpu = mode == PERCPU || mode == UNTIMED || mode == MTC;

	if (mode == COMPRESSED) {
		/* A PERF_RECORD_COMPRESSED (81), as perf record -z writes
		 * them, its body not zstd here. */
		struct perf_event_header ch = { .type = 81, .size = 16 };

		put(&data, &ch, 8);
		put(&data, "\x28\xb5\x2f\xfd\0\0\0\0", 8);
	}
	for (size_t at = data_off; at < data_off + data_size;) {
		struct perf_event_header h;
		const uint8_t *rec = in + at;

		memcpy(&h, rec, 8);
		if (h.type == PERF_REC_AUXTRACE) {
			uint64_t size = u64(rec + 8);
			uint32_t tid;
			struct thread *t;

			memcpy(&tid, rec + 36, 4);
			t = thread_of(tid);
			if (mode == LOSE && t == &threads[0] && !t->trace.n) {
				uint64_t half = size / 2 & ~7ull, skip = 104;
				uint8_t r[48];

				memcpy(r, rec, 48);
				memcpy(r + 8, &half, 8);
				put(&data, r, 48);
				put(&data, rec + 48, half);
				size -= half + skip;
				half += skip;
				memcpy(r + 8, &size, 8);
				memcpy(r + 16, &half, 8);
				put(&data, r, 48);
				put(&data, rec + 48 + half, size);
				t->trace.n = 1;
			} else if (mode == SNAPSHOT && t == &threads[0] &&
				   !t->trace.n) {
				uint64_t psb[3], k = 0, n1, n2, o2;
				uint8_t r[48];

				for (uint64_t i = 0; k < 3 && i + 16 <= size; i++)
					if (!memcmp(rec + 48 + i,
						    "\2\202\2\202\2\202\2\202", 8))
						psb[k++] = i, i += 15;
				if (k < 3)
					die("--snapshot: a trace of 3 PSBs is needed");
				n1 = psb[2];
				o2 = psb[1];
				n2 = size - o2;
				memcpy(r, rec, 48);
				memcpy(r + 8, &n1, 8);
				put(&data, r, 48);
				put(&data, rec + 48, n1);
				memcpy(r + 8, &n2, 8);
				memcpy(r + 16, &o2, 8);
				put(&data, r, 48);
				put(&data, rec + 48 + o2, n2);
				t->trace.n = 1;
			} else if (mode == TRUNCATE && t == &threads[0] &&
				   !t->trace.n) {
				struct perf_event_header ah = {
					.type = PERF_RECORD_AUX, .size = 56,
				};
				uint64_t aux[3] = { 0, size / 2, PERF_AUX_FLAG_TRUNCATED };
				uint32_t ids[4] = { tid, tid, 0, 0 };
				uint64_t id = 1;

				while (aux[1] + 16 <= size &&
				       memcmp(rec + 48 + aux[1], "\2\202\2\202\2\202\2\202", 8))
					aux[1]++;
				if (aux[1] + 16 > size)
					die("--truncate: no PSB in the trace's second half");
				aux[1] += 5;

				put(&data, &ah, 8);
				put(&data, aux, sizeof(aux));
				put(&data, ids, sizeof(ids));
				put(&data, &id, 8);
				put(&data, rec, 48 + size);
				t->trace.n = 1;
			} else if (!percpu) {
				put(&data, rec, 48 + size);
			} else {
				put(&t->trace, rec + 48, size);
			}
			at += 48 + u64(rec + 8);
			continue;
		}
		at += h.size;
		if (h.type == PERF_REC_AUXTRACE_INFO && mode == NOAUX)
			continue;
		if (h.type == PERF_REC_AUXTRACE_INFO) {
			uint8_t r[256];
			uint64_t one = 1, zero = 0;

			memcpy(r, rec, h.size);
			if (mode == AUXTYPE)
				memcpy(r + 8, &aux_type, 4);
			if (mode == SNAPSHOT)
				memcpy(r + 16 + 8 * INFO_SNAPSHOT_MODE, &one, 8);
			if (percpu) {
				memcpy(r + 16 + 8 * INFO_PER_CPU_MMAPS, &one, 8);
				memcpy(r + 16 + 8 * INFO_TIME_SHIFT, &zero, 8);
				memcpy(r + 16 + 8 * INFO_TIME_MULT, &one, 8);
				memcpy(r + 16 + 8 * INFO_TIME_ZERO, &zero, 8);
				memcpy(r + 16 + 8 * INFO_CAP_USER_TIME_ZERO,
				       mode == UNTIMED ? &zero : &one, 8);
				memcpy(r + 16 + 8 * INFO_TSC_CTC_N, &one, 8);
				memcpy(r + 16 + 8 * INFO_TSC_CTC_D, &one, 8);
			}
			put(&data, r, h.size);
		} else if (mode == MMAP2 && h.type == PERF_RECORD_MMAP) {
			put_mmap2(&data, rec, h.size, NULL);
		} else if (mode == VDSO && h.type == PERF_RECORD_MMAP &&
			   strlen((const char *)rec + 40) > 5 &&
			   !strcmp((const char *)rec + 40 +
				   strlen((const char *)rec + 40) - 5, ".vdso")) {
			put_mmap2(&data, rec, h.size, "[vdso]");
		} else if (percpu && h.type < 64) {
			uint32_t pid;

			memcpy(&pid, rec + 8, 4);
			if (h.type == PERF_RECORD_COMM)
				thread_of(u64(rec + 8) >> 32)->pid = pid;
			put_retimed(&data, rec, h.size,
				    h.type == PERF_RECORD_EXIT ? 1000000 : 1);
		} else {
			put(&data, rec, h.size);
		}
	}
	if (percpu) {
		for (size_t i = 0; i < nthreads; i++)
			make_runs(&threads[i]);
		put_cpu_trace(&data);
		attr.sample_type |= PERF_SAMPLE_TIME;
		attr.config |= TSC_BIT;
	}
	/* header, attr, ids, data, features (offsets moved) */
	{
		uint8_t h[104];
		int64_t delta = (int64_t)data.n - (int64_t)data_size;
		uint64_t feat_at = data_off + data_size, nfeat = 0;
		uint64_t new_size = data.n;

		memcpy(h, in, 104);
		memcpy(h + 48, &new_size, 8);
		if (mode == PIPE) {
			/* perf record -o -: the pipe header's size, 16. */
			uint64_t sixteen = 16;

			memcpy(h + 8, &sixteen, 8);
		}
		put(&out, h, 104);
		put(&out, &attr, sizeof(attr));
		put(&out, in + 104 + sizeof(attr), data_off - 104 - sizeof(attr));
		put(&out, data.p, data.n);
		for (int i = 0; i < 4; i++)
			nfeat += __builtin_popcountll(u64(in + 72 + 8 * i));
		uint64_t first = u64(in + feat_at + 8);

		/* The first feature is BUILD_ID, which --vdso adds to. */
		if (vdso_id) {
			if (!(u64(in + 72) & 4))
				die("--vdso: IN has no BUILD_ID feature");
			put_vdso_build_id(&extra, vdso_id);
		}
		for (uint64_t i = 0; i < nfeat; i++) {
			uint64_t off = u64(in + feat_at + 16 * i) + delta;
			uint64_t size = u64(in + feat_at + 16 * i + 8);

			if (i == 0)
				size += extra.n;
			else
				off += extra.n;
			put(&out, &off, 8);
			put(&out, &size, 8);
		}
		put(&out, in + feat_at + 16 * nfeat, first);
		if (extra.n)
			put(&out, extra.p, extra.n);
		put(&out, in + feat_at + 16 * nfeat + first,
		    in_size - feat_at - 16 * nfeat - first);
	}
	(void)attr_size;
	if (!(f = fopen(argv[a + 1], "wb")) || fwrite(out.p, 1, out.n, f) != out.n ||
	    fclose(f))
		die("cannot write OUT");
	free(out.p);
	free(data.p);
	free(extra.p);
	free(in);
	return 0;
}
