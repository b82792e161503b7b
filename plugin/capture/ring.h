/* plugin/capture — the trace buffer a PT backend writes into.
 *
 * Two behaviours, like the kernel's AUX area for intel_pt:
 *   - growing (wrap_size 0): keeps every byte, like full-trace mode;
 *   - overwriting (wrap_size N): keeps only the last N bytes, like
 *     snapshot mode's read-only AUX mapping, where the data is
 *     [head, end) followed by [0, head) once the ring has wrapped.
 * The bytes it dropped are counted (cap_ring_lost) so that a bundle can
 * say how much of the beginning of the trace is missing.
 */
#ifndef PTRR_CAP_RING_H
#define PTRR_CAP_RING_H

#include <stddef.h>
#include <stdint.h>

struct cap_ring {
	uint8_t *buf;
	size_t alloc;		/* bytes allocated at buf */
	size_t used;		/* bytes held */
	size_t head;		/* overwriting: where the next byte goes */
	size_t wrap_size;	/* 0: grow; else keep the last wrap_size */
	uint64_t total;		/* bytes ever written */
	int fixed;		/* buf is the caller's: never reallocated */
};

/* An empty ring; @wrap_size 0 grows, otherwise the ring keeps only the
 * last @wrap_size bytes (allocated up front). */
int cap_ring_init(struct cap_ring *r, size_t wrap_size);
void cap_ring_fini(struct cap_ring *r);

/* A ring in memory the caller provides (@size bytes at @buf, shared
 * memory for the QEMU backend): overwriting (@wrap) or growing up to
 * @size, past which a write fails with PTRR_ERR_NOMEM and writes
 * nothing.  cap_ring_fini() does not free @buf. */
void cap_ring_init_fixed(struct cap_ring *r, uint8_t *buf, size_t size,
			 int wrap);

/* Appends @n bytes. */
int cap_ring_write(struct cap_ring *r, const void *data, size_t n);

/* Bytes held, bytes ever written, and bytes overwritten (the difference). */
size_t cap_ring_size(const struct cap_ring *r);
static inline uint64_t cap_ring_total(const struct cap_ring *r)
{
	return r->total;
}
uint64_t cap_ring_lost(const struct cap_ring *r);

/* The bytes cap_ring_put() can append now: up to the end of an
 * overwriting ring's buffer, or of a growing ring's allocation. */
static inline size_t cap_ring_room(const struct cap_ring *r)
{
	return r->wrap_size ? r->wrap_size - r->head : r->alloc - r->used;
}

/* Where cap_ring_put() writes next: the caller may write up to
 * cap_ring_room() bytes there, then cap_ring_advance() over them. */
static inline uint8_t *cap_ring_at(const struct cap_ring *r)
{
	return r->buf + (r->wrap_size ? r->head : r->used);
}

/* The @n bytes (@n <= cap_ring_room()) written at cap_ring_at() are
 * appended. */
static inline __attribute__((always_inline)) void
cap_ring_advance(struct cap_ring *r, size_t n)
{
	r->total += n;
	if (!r->wrap_size) {
		r->used += n;
		return;
	}
	r->head += n;
	if (r->head == r->wrap_size)
		r->head = 0;
	r->used = r->used + n > r->wrap_size ? r->wrap_size : r->used + n;
}

/* Appends @n bytes, @n <= cap_ring_room(): what cap_ring_write() does
 * then, inline. */
static inline __attribute__((always_inline)) void
cap_ring_put(struct cap_ring *r, const uint8_t *data, size_t n)
{
	uint8_t *to = cap_ring_at(r);

	for (size_t i = 0; i < n; i++)
		to[i] = data[i];
	cap_ring_advance(r, n);
}

/* Copies the bytes held, oldest first, to @dst (cap_ring_size() bytes). */
void cap_ring_copy(const struct cap_ring *r, uint8_t *dst);

#endif
