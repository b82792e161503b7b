/* `ptrr import --perf`: the threads' traces, assembled from the pieces
 * of AUX data perf wrote (PERF_RECORD_AUXTRACE), in order: pieces that
 * follow on are joined, overlapping snapshots joined where they
 * overlap, and where trace was lost the trace goes on at the next PSB
 * after an OVF packet (the history's gap).  Per-thread recordings are
 * done here; per-CPU ones are split in import_perf_cpu.c. */
#include <config.h>

#include "import_perf.h"

#include <intel-pt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Traces                                                              */
/* ------------------------------------------------------------------ */

/* The offset of the first PSB in @p[0, @n), or @n. */
size_t pimp_find_psb(const uint8_t *p, size_t n)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};

	for (size_t i = 0; i + sizeof(psb) <= n; i++)
		if (p[i] == 0x02 && !memcmp(p + i, psb, sizeof(psb)))
			return i;
	return n;
}

uint64_t pimp_full_ip(uint64_t *last_ip, const struct pt_packet_ip *ip)
{
	uint64_t v = ip->ip;

	switch (ip->ipc) {
	case pt_ipc_suppressed:
		return *last_ip;
	case pt_ipc_update_16:
		v = (*last_ip & ~0xffffull) | (v & 0xffff);
		break;
	case pt_ipc_update_32:
		v = (*last_ip & ~0xffffffffull) | (v & 0xffffffff);
		break;
	case pt_ipc_update_48:
		v = (*last_ip & ~0xffffffffffffull) | (v & 0xffffffffffffull);
		break;
	case pt_ipc_sext_48:
		v = (uint64_t)((int64_t)(v << 16) >> 16);
		break;
	default:
		break;
	}
	*last_ip = v;
	return v;
}

bool pimp_async_end(const uint8_t *trace, size_t n, uint64_t *ip)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	struct pt_packet p;
	uint64_t last = 0, fup = 0;
	bool in_psb = false, have_fup = false, ended = false;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)trace;
	cfg.end = (uint8_t *)trace + n;
	if (!n || !(d = pt_pkt_alloc_decoder(&cfg)))
		return false;
	while (pt_pkt_sync_forward(d) >= 0) {
		while (pt_pkt_next(d, &p, sizeof(p)) >= 0) {
			switch (p.type) {
			case ppt_psb:
				in_psb = true;
				last = 0;
				have_fup = false;
				break;
			case ppt_psbend:
				in_psb = false;
				break;
			case ppt_fup:
				pimp_full_ip(&last, &p.payload.ip);
				/* In a PSB+, the FUP says tracing is on. */
				if (in_psb)
					ended = false;
				else if (p.payload.ip.ipc != pt_ipc_suppressed)
					fup = last, have_fup = true;
				break;
			case ppt_tip_pgd:
				pimp_full_ip(&last, &p.payload.ip);
				ended = have_fup;
				*ip = fup;
				have_fup = false;
				break;
			case ppt_tip:
			case ppt_tip_pge:
				pimp_full_ip(&last, &p.payload.ip);
				/* fall through */
			case ppt_tnt_8:
			case ppt_tnt_64:
			case ppt_ovf:
				ended = have_fup = false;
				break;
			default:
				break;
			}
		}
	}
	pt_pkt_free_decoder(d);
	return ended;
}

/* Appends @n bytes to stream @s. */
int pimp_stream_put(struct pimp_stream *s, const void *p, size_t n)
{
	if (s->len + n > s->cap) {
		size_t cap = (s->len + n) * 2 + 4096;
		uint8_t *d = realloc(s->data, cap);

		if (!d)
			return pimp_nomem();
		s->data = d;
		s->cap = cap;
	}
	memcpy(s->data + s->len, p, n);
	s->len += n;
	return 0;
}

/* The offset of stream @s's last PSB, or its length if it has none. */
static size_t last_psb(const struct pimp_stream *s)
{
	size_t last = s->len;

	for (size_t i = pimp_find_psb(s->data, s->len); i < s->len;
	     i = i + 1 + pimp_find_psb(s->data + i + 1, s->len - i - 1))
		last = i;
	return last;
}

/* Where, in @p[0, @n), the snapshot @p goes on from stream @s: the end
 * of a copy of the stream's last PSB segment that starts at a PSB of
 * @p, or @n + 1 if there is none (they do not overlap). */
static size_t snapshot_overlap(const struct pimp_stream *s, const uint8_t *p,
			       size_t n)
{
	size_t last = last_psb(s), k;

	if (last >= s->len)
		return n + 1;
	k = s->len - last;
	for (size_t i = pimp_find_psb(p, n); i + k <= n;
	     i = i + 1 + pimp_find_psb(p + i + 1, n - i - 1))
		if (!memcmp(p + i, s->data + last, k))
			return i + k;
	return n + 1;
}

/* Where stream @s's last whole packet ends.  Trace cut where it was
 * lost can end inside a packet, whose bytes would make the OVF put
 * after them undecodable.  Packets are read from the last PSB; bytes
 * that are not a packet (damage) are left to the decoder's gap. */
static size_t whole_packets_end(const struct pimp_stream *s)
{
	size_t last = last_psb(s);
	struct pt_packet_decoder *dec;
	struct pt_config cfg;
	struct pt_packet pkt;
	uint64_t off = 0;
	int r;

	if (last >= s->len)
		return s->len;
	pt_config_init(&cfg);
	cfg.begin = s->data + last;
	cfg.end = s->data + s->len;
	if (!(dec = pt_pkt_alloc_decoder(&cfg)))
		return s->len;
	r = pt_pkt_sync_set(dec, 0);
	while (r >= 0)
		r = pt_pkt_next(dec, &pkt, sizeof(pkt));
	if (r != -pte_eos || pt_pkt_get_offset(dec, &off) < 0)
		off = s->len - last;
	pt_pkt_free_decoder(dec);
	return last + (size_t)off;
}

/* Appends piece @p[0, @n), which began at offset @off of its AUX area,
 * to stream @s; @cut: trace was lost right before it.  A piece that
 * does not follow on goes on from its first PSB, after an OVF. */
int pimp_stream_add(struct pimp *im, struct pimp_stream *s, const uint8_t *p,
		    size_t n, uint64_t off, bool cut)
{
	static const uint8_t ovf[2] = { 0x02, 0xf3 };
	size_t from = 0;
	int err;

	if (!n)
		return 0;
	if (!s->len)
		from = 0;
	else if (cut || s->need_psb)
		from = n + 1;
	else if (im->snapshot)	/* offsets say nothing: the contents do */
		from = snapshot_overlap(s, p, n);
	else if (off == s->end_off)
		from = 0;
	else if (off < s->end_off)
		from = s->end_off - off < n ? s->end_off - off : n;
	else
		from = n + 1;
	if (from > n) {
		/* Trace was lost: the history shows a gap (OVF), and goes
		 * on at the next PSB. */
		from = pimp_find_psb(p, n);
		if (!s->need_psb) {
			s->lost_pieces++;
			s->len = whole_packets_end(s);
			if ((err = pimp_stream_put(s, ovf, sizeof(ovf))))
				return err;
		}
		s->need_psb = from == n;
	}
	s->end_off = off + n;
	return pimp_stream_put(s, p + from, n - from);
}

/* Appends piece @p to stream @s, split where the cuts of its queue
 * (@tid for per-thread, @cpu for per-CPU data) fall inside it. */
int pimp_stream_add_piece(struct pimp *im, struct pimp_stream *s,
			  const struct pimp_piece *p)
{
	uint64_t done = 0;
	int err = 0;

	for (size_t i = 0; !err && i < im->ncuts; i++) {
		const struct pimp_cut *c = &im->cuts[i];
		bool mine = im->per_cpu ? c->cpu == p->cpu : c->tid == p->tid;

		if (!mine || c->at <= p->offset + done ||
		    c->at >= p->offset + p->size)
			continue;
		err = pimp_stream_add(im, s, p->data + done,
				      c->at - p->offset - done,
				      p->offset + done, done > 0);
		done = c->at - p->offset;
	}
	if (!err)
		err = pimp_stream_add(im, s, p->data + done, p->size - done,
				      p->offset + done, done > 0 ||
				      pimp_cut_at(im, p, p->offset));
	return err;
}

/* True if a cut of @p's queue is at AUX offset @at. */
bool pimp_cut_at(const struct pimp *im, const struct pimp_piece *p,
		 uint64_t at)
{
	for (size_t i = 0; i < im->ncuts; i++)
		if ((im->per_cpu ? im->cuts[i].cpu == p->cpu :
		     im->cuts[i].tid == p->tid) && im->cuts[i].at == at)
			return true;
	return false;
}

/* The per-thread traces: each mmap's pieces in order. */
int pimp_thread_streams(struct pimp *im)
{
	int err = 0;

	for (size_t i = 0; !err && i < im->npieces; i++) {
		const struct pimp_piece *p = &im->pieces[i];
		struct pimp_stream *s = pimp_thread_stream(im, p->tid);

		if (p->tid < 0) {
			fprintf(stderr, "warning: %s: %" PRIu64 " bytes of "
				"trace of no thread skipped\n", im->path,
				p->size);
			continue;
		}
		err = s ? pimp_stream_add_piece(im, s, p) : pimp_nomem();
	}
	return err;
}

/* The stream of thread @tid, created if new; NULL if out of memory. */
struct pimp_stream *pimp_thread_stream(struct pimp *im, int32_t tid)
{
	struct pimp_stream *s;

	for (size_t i = 0; i < im->nstreams; i++)
		if (im->streams[i].tid == tid)
			return &im->streams[i];
	s = pimp_grow(&im->streams, &im->nstreams, sizeof(*s));
	if (s)
		s->tid = tid;
	return s;
}

