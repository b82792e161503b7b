/* Reading the AUX area and the data ring of a perf event; see aux.h. */
#include <config.h>

#include "capture/aux.h"
#include "error.h"

#include <linux/perf_event.h>
#include <string.h>

/* A load of a pointer the kernel publishes: later reads of the data it
 * covers are ordered after it (the kernel's smp_wmb before its store). */
static uint64_t load_acquire(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* A store of a consumer pointer: the reads of the data it frees are
 * ordered before it, so the kernel never overwrites data being read. */
static void store_release(__u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

void cap_aux_init(struct cap_aux *a, void *pc, const void *area,
		  bool overwrite)
{
	memset(a, 0, sizeof(*a));
	a->pc = pc;
	a->data = (const uint8_t *) pc + a->pc->data_offset;
	a->data_size = a->pc->data_size;
	a->area = area;
	a->area_size = a->pc->aux_size;
	a->overwrite = overwrite;
	a->head_pos = a->pc->aux_tail;
}

/* True if any byte of [@p, @p + @n) is not zero. */
static bool any_nonzero(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return true;
	return false;
}

void cap_aux_snapshot(struct cap_aux *a, uint8_t *dst,
		      struct cap_aux_read *rd)
{
	uint64_t head = load_acquire(&a->pc->aux_head) % a->area_size;
	uint64_t older = a->area_size - head;

	memset(rd, 0, sizeof(*rd));
	if (!a->wrapped)
		a->wrapped = any_nonzero(a->area + head, older);
	rd->wrapped = a->wrapped;
	if (a->wrapped) {
		memcpy(dst, a->area + head, older);
		memcpy(dst + older, a->area, head);
		rd->bytes = a->area_size;
	} else {
		memcpy(dst, a->area, head);
		rd->bytes = head;
	}
}

/* Appends AUX positions [@from, @to) (at most one area) to @out. */
static int copy_out(const struct cap_aux *a, uint64_t from, uint64_t to,
		    struct cap_ring *out)
{
	uint64_t off = from % a->area_size, n = to - from;
	uint64_t first = n < a->area_size - off ? n : a->area_size - off;
	int err = cap_ring_write(out, a->area + off, first);

	if (!err && n > first)
		err = cap_ring_write(out, a->area, n - first);
	return err;
}

/* The published head, checked against the tail the consumer owns. */
static int full_head(const struct cap_aux *a, uint64_t *head)
{
	uint64_t tail = a->pc->aux_tail;

	*head = load_acquire(&a->pc->aux_head);
	if (*head - tail > a->area_size)
		return ptrr_fail(PTRR_ERR_INTERNAL, "AUX head 0x%llx is more "
				 "than the area (0x%llx bytes) past its tail "
				 "0x%llx", (unsigned long long) *head,
				 (unsigned long long) a->area_size,
				 (unsigned long long) tail);
	return 0;
}

int cap_aux_drain(struct cap_aux *a, struct cap_ring *out,
		  struct cap_aux_read *rd)
{
	uint64_t head, tail = a->pc->aux_tail;
	int err = full_head(a, &head);

	memset(rd, 0, sizeof(*rd));
	if (!err)
		err = copy_out(a, tail, head, out);
	if (err)
		return err;
	store_release(&a->pc->aux_tail, head);
	rd->bytes = head - tail;
	a->head_pos = head;
	a->last_kept = head - tail;
	a->stream_end = cap_ring_total(out);
	return 0;
}

uint64_t cap_aux_discard(struct cap_aux *a)
{
	uint64_t head, tail = a->pc->aux_tail;

	if (full_head(a, &head))
		head = tail + a->area_size;	/* drop what can be there */
	store_release(&a->pc->aux_tail, head);
	a->head_pos = head;
	a->last_kept = 0;
	return head - tail;
}

/* The caller's stream offset of AUX position @pos: where the bytes kept
 * by the last drain put it (a cut in dropped bytes is at their end). */
static uint64_t stream_offset(const struct cap_aux *a, uint64_t pos)
{
	uint64_t back = a->head_pos - pos;

	if (pos > a->head_pos)
		return a->stream_end;
	return a->stream_end - (back < a->last_kept ? back : a->last_kept);
}

/* Accounts for one PERF_RECORD_AUX {aux_offset, aux_size, flags}. */
static void aux_record(struct cap_aux *a, const uint8_t *rec, size_t len,
		       struct cap_aux_read *rd)
{
	uint64_t f[3];

	if (len < sizeof(struct perf_event_header) + sizeof(f))
		return;
	memcpy(f, rec + sizeof(struct perf_event_header), sizeof(f));
	a->stats.aux_records++;
	if (f[2] & PERF_AUX_FLAG_PARTIAL)
		a->stats.partial++;
	if (f[2] & PERF_AUX_FLAG_COLLISION)
		a->stats.collisions++;
	if (!(f[2] & PERF_AUX_FLAG_TRUNCATED))
		return;
	a->stats.truncated++;
	if (rd && !rd->truncations++)
		rd->cut_at = stream_offset(a, f[0] + f[1]);
}

/* Accounts for one record (@len bytes of it copied at @rec). */
static void one_record(struct cap_aux *a, const uint8_t *rec, size_t len,
		       struct cap_aux_read *rd)
{
	const struct perf_event_header *h = (const void *) rec;
	uint64_t n;

	switch (h->type) {
	case PERF_RECORD_AUX:
		aux_record(a, rec, len, rd);
		break;
	case PERF_RECORD_LOST:	/* { id, lost } */
		if (len >= sizeof(*h) + 16) {
			memcpy(&n, rec + sizeof(*h) + 8, sizeof(n));
			a->stats.lost_records += n;
		}
		break;
	case PERF_RECORD_ITRACE_START:
		a->stats.itrace_starts++;
		break;
	}
}

/* Copies up to @size bytes of the data ring at position @pos to @dst. */
static void ring_copy(const struct cap_aux *a, uint64_t pos, uint8_t *dst,
		      size_t size)
{
	uint64_t off = pos % a->data_size;
	size_t first = size < a->data_size - off ? size
			: (size_t) (a->data_size - off);

	memcpy(dst, a->data + off, first);
	memcpy(dst + first, a->data, size - first);
}

void cap_aux_records(struct cap_aux *a, struct cap_aux_read *rd)
{
	uint64_t head = load_acquire(&a->pc->data_head);
	uint64_t tail = a->pc->data_tail;
	struct perf_event_header h;
	uint8_t rec[128];

	while (a->data_size && head - tail >= sizeof(h) &&
	       head - tail <= a->data_size) {
		ring_copy(a, tail, (uint8_t *) &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;		/* torn: drop the rest */
		ring_copy(a, tail, rec, h.size < sizeof(rec) ? h.size
							     : sizeof(rec));
		one_record(a, rec, h.size < sizeof(rec) ? h.size : sizeof(rec),
			   rd);
		tail += h.size;
	}
	store_release(&a->pc->data_tail, head);
}
