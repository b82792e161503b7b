/* plugin/capture — reading a perf event's AUX area and its data ring.
 *
 * The kernel's side (include/uapi/linux/perf_event.h, struct
 * perf_event_mmap_page; Documentation/userspace-api/perf_ring_buffer.rst):
 * the first mapped page is the control page, followed by the data ring
 * (records such as PERF_RECORD_AUX), and, at aux_offset, the AUX area the
 * CPU writes Intel PT into.  Pointers are read with acquire and written
 * with release ordering, pairing with the kernel's barriers.
 *
 * Snapshot (overwrite) mode, the AUX area mapped read-only: the CPU never
 * waits; aux_head is the offset in the area where the next byte will go,
 * and aux_tail is ignored.  Once the area has wrapped, the data in order
 * is [head, end) then [0, head); before, it is [0, head).  The kernel
 * zeroes the area when it allocates it, so it has wrapped exactly when
 * [head, end) holds a non-zero byte (a wrapped stretch that is all zero
 * would be PAD packets, which carry nothing).
 *
 * Full-trace mode, the AUX area mapped read-write: aux_head counts every
 * byte ever written; the consumer owns aux_tail and the CPU stops rather
 * than overwrite [tail, head).  Stopping is reported by a PERF_RECORD_AUX
 * carrying PERF_AUX_FLAG_TRUNCATED, after which the kernel disables the
 * event until it is enabled again: the trace then restarts with a PSB.
 * Truncation is reported to the caller as a place in its byte stream; it
 * writes nothing there (the history shows the gap from the next PSB).
 */
#ifndef PTRR_CAP_AUX_H
#define PTRR_CAP_AUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/ring.h"

struct perf_event_mmap_page;

/* What the records of the data ring said, cumulated over reads. */
struct cap_aux_stats {
	uint64_t aux_records;		/* PERF_RECORD_AUX */
	uint64_t truncated;		/* ... with PERF_AUX_FLAG_TRUNCATED */
	uint64_t partial;		/* ... with PERF_AUX_FLAG_PARTIAL */
	uint64_t collisions;		/* ... with PERF_AUX_FLAG_COLLISION */
	uint64_t lost_records;		/* records the data ring dropped */
	uint64_t itrace_starts;		/* PERF_RECORD_ITRACE_START */
};

/* What one read found. */
struct cap_aux_read {
	uint64_t bytes;		/* trace bytes delivered */
	bool wrapped;		/* snapshot: older trace was overwritten */
	uint64_t truncations;	/* full: times the CPU stopped, area full */
	uint64_t cut_at;	/* full: offset in the caller's stream where
				 * the first of those cut the trace */
};

struct cap_aux {
	struct perf_event_mmap_page *pc;	/* the control page */
	const uint8_t *data;			/* the data ring */
	uint64_t data_size;
	const uint8_t *area;			/* the AUX area */
	uint64_t area_size;
	bool overwrite;				/* snapshot mode */
	bool wrapped;				/* seen wrapped once */
	uint64_t head_pos;	/* full: AUX position of the last drain */
	uint64_t stream_end;	/* ... and the caller's stream offset there */
	uint64_t last_kept;	/* bytes that drain appended */
	struct cap_aux_stats stats;
};

/* Prepares to read the mapping at @pc (control page, then the data ring
 * as pc->data_offset/data_size say) and the AUX area @area
 * (pc->aux_size bytes); @overwrite for snapshot mode. */
void cap_aux_init(struct cap_aux *a, void *pc, const void *area,
		  bool overwrite);

/* Snapshot mode: copies the trace the area holds, oldest byte first,
 * to @dst (area_size bytes available); sets @rd. */
void cap_aux_snapshot(struct cap_aux *a, uint8_t *dst,
		      struct cap_aux_read *rd);

/* Full mode: appends the bytes written since the last drain to @out and
 * gives the space back to the kernel (aux_tail); sets @rd.  @out's
 * stream is the concatenation of every drain. */
int cap_aux_drain(struct cap_aux *a, struct cap_ring *out,
		  struct cap_aux_read *rd);

/* Full mode, when the caller cannot keep the bytes: gives the space back
 * without copying; returns how many bytes were dropped. */
uint64_t cap_aux_discard(struct cap_aux *a);

/* Reads the records of the data ring (both modes) into a->stats, and
 * notes truncations in @rd (may be NULL); frees their space. */
void cap_aux_records(struct cap_aux *a, struct cap_aux_read *rd);

#endif
