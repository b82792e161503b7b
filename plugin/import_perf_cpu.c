/* `ptrr import --perf` of a per-CPU recording (perf record -e
 * intel_pt//u without --per-thread): each CPU's trace holds every thread
 * that ran there, and is split into the threads' traces by the
 * context-switch sideband (PERF_RECORD_SWITCH_CPU_WIDE, SWITCH,
 * ITRACE_START) and the trace's time: its TSC packets, and its MTC
 * packets counted from the TSC and TMA of the last PSB+ with the TSC/CTC
 * ratio of AUXTRACE_INFO.
 *
 * With user-only tracing a thread's trace on a CPU is a run of packets
 * from a TIP.PGE (or a PSB+ with a FUP) to a TIP.PGD: switches happen in
 * the kernel, between runs.  A run belongs to the thread that ran at the
 * time of a TSC or MTC packet inside it; a run without one, to the
 * thread that ran from the last such time before it to the first after
 * it, if no switch falls in between.  Otherwise no thread can be named: the run is left
 * out, and the threads that may have run it get a gap there.
 *
 * Each run is copied packet by packet into its thread's trace, every IP
 * written in full (last-IP compression followed the CPU's packets, not
 * the thread's) and the timing packets (TSC, MTC, CYC, CBR, TMA), PIP,
 * VMCS and PAD left out: used for the time as above, or ignored.  A thread's trace starts
 * with a PSB+ of its own, so that decoders can synchronize.
 */
#include <config.h>

#include "import_perf.h"

#include <intel-pt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Sideband                                                            */
/* ------------------------------------------------------------------ */

int pimp_cpu_sideband(struct pimp *im, const uint8_t *rec, size_t size,
		      uint64_t at)
{
	const struct perf_event_header *h = (const void *)rec;
	struct pimp_sample s;
	struct pimp_switch *w;
	uint32_t body[2] = { 0, 0 };
	int32_t tid;

	if (h->type != PERF_RECORD_SWITCH && size < 16)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "%s is damaged at byte %" PRIu64 " (a switch record): re-record it",
				 im->path, at);
	if (h->type != PERF_RECORD_SWITCH)
		memcpy(body, rec + 8, 8);
	pimp_read_trailer(im, rec, size, &s);
	if (h->type == PERF_RECORD_ITRACE_START)
		tid = body[1];
	else if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT))
		tid = s.tid;
	else if (h->type == PERF_RECORD_SWITCH_CPU_WIDE)
		tid = body[1];
	else
		tid = -1;	/* out, to a thread perf did not trace */
	if (!s.have_time || s.cpu < 0)
		im->switches_untimed = true;
	if (!(w = pimp_grow(&im->switches, &im->nswitches, sizeof(*w))))
		return pimp_nomem();
	*w = (struct pimp_switch){
		.time = s.time, .cpu = s.cpu, .tid = tid,
		.seq = im->nswitches,
	};
	return 0;
}

/* Orders switches by CPU, time, then file order. */
static int switch_cmp(const void *a, const void *b)
{
	const struct pimp_switch *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The thread that ran on @cpu at perf time @t (-1 if none is known);
 * with @until > @t, -2 if another thread ran there too in (@t, @until]. */
static int32_t thread_at(const struct pimp *im, int32_t cpu, uint64_t t,
			 uint64_t until)
{
	int32_t tid = -1;
	size_t i = 0;

	while (i < im->nswitches && im->switches[i].cpu < cpu)
		i++;
	for (; i < im->nswitches && im->switches[i].cpu == cpu &&
	     im->switches[i].time <= t; i++)
		tid = im->switches[i].tid;
	for (; i < im->nswitches && im->switches[i].cpu == cpu &&
	     im->switches[i].time <= until; i++)
		if (im->switches[i].tid != tid)
			return -2;
	return tid;
}

/* Perf time of TSC value @tsc (perf's tsc_to_perf_time()). */
static uint64_t perf_time(const struct pimp *im, uint64_t tsc)
{
	uint64_t shift = im->info[PT_INFO_TIME_SHIFT] & 63;
	uint64_t mult = im->info[PT_INFO_TIME_MULT];
	uint64_t quot = tsc >> shift, rem = tsc & ((1ull << shift) - 1);

	return im->info[PT_INFO_TIME_ZERO] + quot * mult +
	       ((rem * mult) >> shift);
}

/* ------------------------------------------------------------------ */
/* Runs                                                                */
/* ------------------------------------------------------------------ */

/* A run of one thread's packets, re-encoded, waiting for its owner. */
struct run {
	struct pimp_stream bytes;	/* its packets (tid unused) */
	uint64_t lo;		/* perf time of the last TSC before it */
	bool have_lo;
	uint64_t at;		/* perf time of a TSC inside it */
	bool have_at;
	bool ended;		/* its TIP.PGD (or the trace's end) seen */
	bool damaged;		/* it ended at undecodable bytes */
};

/* Splitting one CPU's trace. */
struct splitter {
	struct pimp *im;
	int32_t cpu;
	struct pt_encoder *enc;
	uint8_t scratch[64];
	uint64_t last_ip;	/* the CPU's last IP, for decompression */
	uint8_t mode_exec[8];	/* the last MODE.Exec, encoded */
	size_t mode_exec_len;
	bool enabled;		/* packets flow (between PGE and PGD) */
	bool in_psb;		/* inside a PSB+ */
	bool psb_fup;		/* that PSB+ has a FUP */
	uint64_t tsc;		/* perf time of the last TSC (or MTC) */
	bool have_tsc;
	uint64_t raw_tsc;	/* the last TSC packet's value */
	bool have_raw_tsc;
	/* MTC timing: the TSC and CTC of the last TMA, the CTC of the
	 * last MTC, and where an MTC's 8 bits sit in the CTC */
	uint64_t base_tsc, base_ctc, last_ctc;
	bool have_base;
	unsigned mtc_shift;
	struct run *runs;	/* waiting, oldest first; the last may be open */
	size_t nruns;
};

/* Encodes packet @p (IPs already full) and appends it to run @r. */
static int put_packet(struct splitter *sp, struct run *r,
		      const struct pt_packet *p)
{
	int n;

	if (pt_enc_sync_set(sp->enc, 0) < 0 ||
	    (n = pt_enc_next(sp->enc, p)) < 0)
		return ptrr_fail(PTRR_ERR_INTERNAL, "cannot re-encode a %d "
				 "packet of CPU %d's trace", p->type, sp->cpu);
	return pimp_stream_put(&r->bytes, sp->scratch, n);
}

/* Makes the IP of packet @p full (from the CPU's last IP). */
static void full_ip(struct splitter *sp, struct pt_packet *p)
{
	struct pt_packet_ip *ip = &p->payload.ip;
	uint64_t v;

	if (ip->ipc == pt_ipc_suppressed)
		return;
	v = pimp_full_ip(&sp->last_ip, ip);
	ip->ip = v;
	ip->ipc = (uint64_t)((int64_t)(v << 16) >> 16) == v ? pt_ipc_sext_48 :
							       pt_ipc_full;
}

/* Starts a run; its first packets are the last MODE.Exec and, if it
 * starts at a PSB+, nothing else yet. */
static struct run *start_run(struct splitter *sp)
{
	struct run *r = pimp_grow(&sp->runs, &sp->nruns, sizeof(*r));

	if (!r)
		return NULL;
	r->lo = sp->tsc;
	r->have_lo = sp->have_tsc;
	return r;
}

/* The open run, or NULL. */
static struct run *open_run(struct splitter *sp)
{
	struct run *r = sp->nruns ? &sp->runs[sp->nruns - 1] : NULL;

	return r && !r->ended ? r : NULL;
}

/* Appends run @r to thread @tid's trace: after a PSB+ of the thread's
 * own if it is new, after an OVF if trace of it was lost. */
static int give_run(struct splitter *sp, struct run *r, int32_t tid)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};
	static const uint8_t psbend[2] = { 0x02, 0x23 }, ovf[2] = { 0x02, 0xf3 };
	struct pimp_stream *s = pimp_thread_stream(sp->im, tid);
	int err = 0;

	if (!s)
		return pimp_nomem();
	if (!s->len) {
		err = pimp_stream_put(s, psb, sizeof(psb));
		if (!err && sp->mode_exec_len)
			err = pimp_stream_put(s, sp->mode_exec,
					      sp->mode_exec_len);
		if (!err)
			err = pimp_stream_put(s, psbend, sizeof(psbend));
		s->unknown_runs = 0;
	}
	if (!err && s->unknown_runs) {
		err = pimp_stream_put(s, ovf, sizeof(ovf));
		s->lost_pieces++;
		s->unknown_runs = 0;
	}
	if (!err)
		err = pimp_stream_put(s, r->bytes.data, r->bytes.len);
	/* the rest of it was lost: a gap before the thread's next run */
	s->unknown_runs += r->damaged;
	return err;
}

/* Marks a run that no thread can be named for as lost to every thread
 * that ran on the CPU in [@lo, @hi]. */
static int lose_run(struct splitter *sp, uint64_t lo, uint64_t hi)
{
	struct pimp *im = sp->im;
	int32_t first = thread_at(im, sp->cpu, lo, lo);
	struct pimp_stream *s;

	im->ambiguous_runs++;
	if (first >= 0 && (s = pimp_thread_stream(im, first)))
		s->unknown_runs++;
	for (size_t i = 0; i < im->nswitches; i++) {
		const struct pimp_switch *w = &im->switches[i];

		if (w->cpu == sp->cpu && w->time > lo && w->time <= hi &&
		    w->tid >= 0 && (s = pimp_thread_stream(im, w->tid)))
			s->unknown_runs++;
	}
	return 0;
}

/* Gives the waiting runs whose owner is known by now (@hi: the perf
 * time of a TSC after them, if @have_hi) to their threads, in order. */
static int settle_runs(struct splitter *sp, uint64_t hi, bool have_hi)
{
	size_t done = 0;
	int err = 0;

	for (; !err && done < sp->nruns; done++) {
		struct run *r = &sp->runs[done];
		int32_t tid;

		if (!r->ended)
			break;
		if (r->have_at)
			tid = thread_at(sp->im, sp->cpu, r->at, r->at);
		else if (have_hi && r->have_lo)
			tid = thread_at(sp->im, sp->cpu, r->lo, hi);
		else
			tid = -3;	/* no TSC before it, or none after */
		if (tid >= 0)
			err = give_run(sp, r, tid);
		else if (r->bytes.len)
			err = lose_run(sp, r->have_lo ? r->lo : 0,
				       have_hi ? hi : UINT64_MAX);
		free(r->bytes.data);
	}
	memmove(sp->runs, sp->runs + done, (sp->nruns - done) * sizeof(*sp->runs));
	sp->nruns -= done;
	return err;
}

/* ------------------------------------------------------------------ */
/* Packets                                                             */
/* ------------------------------------------------------------------ */

/* A TSC packet: the time inside the open run, and the end of the wait
 * of the runs before it. */
static int on_tsc(struct splitter *sp, uint64_t tsc)
{
	struct run *r = open_run(sp);
	uint64_t t = perf_time(sp->im, tsc);

	sp->tsc = t;
	sp->have_tsc = true;
	if (r && (sp->enabled || sp->in_psb) && !r->have_at) {
		r->at = t;
		r->have_at = true;
	}
	return settle_runs(sp, t, true);
}

/* A TMA packet: the CTC at the time of the TSC before it. */
static void on_tma(struct splitter *sp, uint64_t ctc)
{
	if (!sp->have_raw_tsc)
		return;
	sp->base_tsc = sp->raw_tsc;
	sp->base_ctc = ctc;
	sp->last_ctc = ctc;
	sp->have_base = true;
}

/* An MTC packet: CTC bits [shift + 7, shift] now; a time like a TSC's,
 * counted from the last TMA with the TSC/CTC ratio of AUXTRACE_INFO. */
static int on_mtc(struct splitter *sp, uint8_t payload)
{
	uint64_t n = sp->im->info[PT_INFO_TSC_CTC_N];
	uint64_t d = sp->im->info[PT_INFO_TSC_CTC_D];
	uint64_t field = 0xffull << sp->mtc_shift, ctc;

	if (!sp->have_base || !n || !d)
		return 0;
	ctc = (sp->last_ctc & ~field) | ((uint64_t)payload << sp->mtc_shift);
	if (ctc < sp->last_ctc)
		ctc += 0x100ull << sp->mtc_shift;
	sp->last_ctc = ctc;
	return on_tsc(sp, sp->base_tsc + (ctc - sp->base_ctc) * n / d);
}

/* One packet of the CPU's trace. */
static int on_packet(struct splitter *sp, struct pt_packet *p)
{
	struct run *r = open_run(sp);
	int err = 0;

	switch (p->type) {
	case ppt_tsc:
		sp->raw_tsc = p->payload.tsc.tsc;
		sp->have_raw_tsc = true;
		sp->have_base = false;
		return on_tsc(sp, p->payload.tsc.tsc);
	case ppt_tma:
		on_tma(sp, p->payload.tma.ctc);
		return 0;
	case ppt_mtc:
		return on_mtc(sp, p->payload.mtc.ctc);
	case ppt_pad: case ppt_cyc: case ppt_cbr:
	case ppt_pip: case ppt_vmcs:
		return 0;	/* decoded and ignored */
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec &&
		    !pt_enc_sync_set(sp->enc, 0)) {
			int n = pt_enc_next(sp->enc, p);

			if (n > 0 && (size_t)n <= sizeof(sp->mode_exec)) {
				memcpy(sp->mode_exec, sp->scratch, n);
				sp->mode_exec_len = n;
			}
		}
		return r ? put_packet(sp, r, p) : 0;
	case ppt_psb:
		sp->in_psb = true;
		sp->psb_fup = false;
		sp->last_ip = 0;
		if (!r && !(r = start_run(sp)))
			return pimp_nomem();
		return put_packet(sp, r, p);
	case ppt_psbend:
		sp->in_psb = false;
		if (!r)
			return 0;
		if ((err = put_packet(sp, r, p)))
			return err;
		if (!sp->enabled && !sp->psb_fup) {
			/* a PSB+ while tracing is off: no run */
			free(r->bytes.data);
			sp->nruns--;
		} else {
			sp->enabled = true;
		}
		return 0;
	case ppt_tip_pge:
		full_ip(sp, p);
		if (r && sp->enabled) {
			/* no TIP.PGD before it: the last run ends anyway */
			r->ended = true;
			r = NULL;
		}
		if (!r && !(r = start_run(sp)))
			return pimp_nomem();
		if (sp->mode_exec_len &&
		    (err = pimp_stream_put(&r->bytes, sp->mode_exec,
					   sp->mode_exec_len)))
			return err;
		sp->enabled = true;
		return put_packet(sp, r, p);
	case ppt_tip_pgd:
		full_ip(sp, p);
		sp->enabled = false;
		if (!r)
			return 0;
		err = put_packet(sp, r, p);
		r->ended = true;
		return err;
	case ppt_fup:
		if (sp->in_psb)
			sp->psb_fup = true;
		else if (r)	/* after an OVF: tracing goes on here */
			sp->enabled = true;
		full_ip(sp, p);
		return r ? put_packet(sp, r, p) : 0;
	case ppt_ovf:
		/* packets were lost; tracing goes on at a FUP or TIP.PGE */
		if (!r && !(r = start_run(sp)))
			return pimp_nomem();
		return put_packet(sp, r, p);
	case ppt_tip:
		full_ip(sp, p);
		return r ? put_packet(sp, r, p) : 0;
	default:		/* TNT, OVF, MODE.TSX, PTW, power events */
		return r ? put_packet(sp, r, p) : 0;
	}
}

/* Splits CPU @cpu's trace @s into its threads' traces. */
static int split_cpu(struct pimp *im, int32_t cpu, const struct pimp_stream *s)
{
	struct splitter sp = { .im = im, .cpu = cpu };
	uint64_t freq = im->info[PT_INFO_MTC_FREQ_BITS], config = 0;
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	int err = 0, r;

	for (size_t i = 0; i < im->nevents; i++)
		if (im->events[i].type == im->info[PT_INFO_PMU_TYPE])
			config = im->events[i].config;
	/* the MTC period: where the config's mtc_period field sits */
	if (freq)
		sp.mtc_shift = ((config & freq) >> __builtin_ctzll(freq)) & 15;
	pt_config_init(&cfg);
	cfg.begin = sp.scratch;
	cfg.end = sp.scratch + sizeof(sp.scratch);
	if (!(sp.enc = pt_alloc_encoder(&cfg)))
		return pimp_nomem();
	pt_config_init(&cfg);
	cfg.begin = s->data;
	cfg.end = s->data + s->len;
	if (!s->len || !(dec = pt_pkt_alloc_decoder(&cfg))) {
		pt_free_encoder(sp.enc);
		return s->len ? pimp_nomem() : 0;
	}
	r = pt_pkt_sync_forward(dec);
	while (!err && r >= 0) {
		struct pt_packet p;

		r = pt_pkt_next(dec, &p, sizeof(p));
		if (r >= 0) {
			err = on_packet(&sp, &p);
			continue;
		}
		if (r == -pte_eos)
			break;
		/* Undecodable bytes: the open run ends here; go on at the
		 * next PSB. */
		if (open_run(&sp)) {
			open_run(&sp)->damaged = true;
			open_run(&sp)->ended = true;
		}
		sp.enabled = false;
		fprintf(stderr, "warning: %s: CPU %d's trace is damaged (%s): "
			"going on at the next PSB\n", im->path, cpu,
			pt_errstr(pt_errcode(r)));
		r = pt_pkt_sync_forward(dec);
	}
	if (open_run(&sp))
		open_run(&sp)->ended = true;
	if (!err)
		err = settle_runs(&sp, 0, false);
	for (size_t i = 0; i < sp.nruns; i++)
		free(sp.runs[i].bytes.data);
	free(sp.runs);
	pt_pkt_free_decoder(dec);
	pt_free_encoder(sp.enc);
	return err;
}

/* Checks that the recording can be split by time. */
static int check_timed(const struct pimp *im)
{
	uint64_t config = 0;

	for (size_t i = 0; i < im->nevents; i++)
		if (im->events[i].type == im->info[PT_INFO_PMU_TYPE])
			config = im->events[i].config;
	if (!(config & im->info[PT_INFO_TSC_BIT]) || !im->info[PT_INFO_TSC_BIT])
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s is a per-CPU recording without TSC packets, so its threads cannot be told apart: record with perf record -e intel_pt/tsc/u, or with --per-thread",
				 im->path);
	if ((!im->info[PT_INFO_CAP_USER_TIME_ZERO] && !im->have_time_conv) ||
	    !im->info[PT_INFO_TIME_MULT] || im->switches_untimed ||
	    !im->nswitches)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s is a per-CPU recording without timed context switches (or TSC conversion), so its threads cannot be told apart: record with perf record --switch-events -e intel_pt//u, or with --per-thread",
				 im->path);
	return 0;
}

int pimp_cpu_streams(struct pimp *im)
{
	int err = check_timed(im);
	int32_t cpu = -1;

	qsort(im->switches, im->nswitches, sizeof(*im->switches), switch_cmp);
	while (!err) {
		struct pimp_stream s = { .tid = -1 };
		int32_t next = INT32_MAX;

		/* the next CPU, in order */
		for (size_t i = 0; i < im->npieces; i++) {
			int32_t c = im->pieces[i].cpu >= 0 ? im->pieces[i].cpu :
				    (int32_t)im->pieces[i].idx;

			if (c > cpu && c < next)
				next = c;
		}
		if (next == INT32_MAX)
			break;
		cpu = next;
		for (size_t i = 0; !err && i < im->npieces; i++) {
			const struct pimp_piece *p = &im->pieces[i];

			if ((p->cpu >= 0 ? p->cpu : (int32_t)p->idx) == cpu)
				err = pimp_stream_add_piece(im, &s, p);
		}
		if (!err)
			err = split_cpu(im, cpu, &s);
		free(s.data);
	}
	if (!err && im->ambiguous_runs)
		fprintf(stderr, "warning: %s: %u runs of trace left out: no "
			"TSC or MTC packet tells which thread ran them (the "
			"threads that may have run them have gaps there)\n", im->path,
			im->ambiguous_runs);
	return err;
}
