/* The trace buffer; see ring.h. */
#include <config.h>

#include "capture/ring.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

int cap_ring_init(struct cap_ring *r, size_t wrap_size)
{
	memset(r, 0, sizeof(*r));
	r->wrap_size = wrap_size;
	if (!wrap_size)
		return 0;
	r->buf = malloc(wrap_size);
	if (!r->buf)
		return ptrr_fail(PTRR_ERR_NOMEM, "cannot allocate a %zu-byte "
				 "trace buffer: use a smaller --buffer-size",
				 wrap_size);
	r->alloc = wrap_size;
	return 0;
}

void cap_ring_init_fixed(struct cap_ring *r, uint8_t *buf, size_t size,
			 int wrap)
{
	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->alloc = size;
	r->wrap_size = wrap ? size : 0;
	r->fixed = 1;
}

void cap_ring_fini(struct cap_ring *r)
{
	if (!r->fixed)
		free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* Makes room for @n more bytes in a growing ring. */
static int grow(struct cap_ring *r, size_t n)
{
	size_t want = r->alloc ? r->alloc : 64 * 1024;
	uint8_t *buf;

	if (r->fixed)
		return PTRR_ERR_NOMEM;	/* the caller's to report */
	while (want - r->used < n)
		want *= 2;
	buf = realloc(r->buf, want);
	if (!buf)
		return ptrr_fail(PTRR_ERR_NOMEM, "cannot grow the trace buffer "
				 "to %zu bytes: use --mode=snapshot", want);
	r->buf = buf;
	r->alloc = want;
	return 0;
}

/* Writes @n bytes into an overwriting ring at its head, wrapping. */
static void wrap_write(struct cap_ring *r, const uint8_t *data, size_t n)
{
	size_t part;

	if (n > r->wrap_size) {	/* only the tail survives */
		r->head = (r->head + n - r->wrap_size) % r->wrap_size;
		data += n - r->wrap_size;
		n = r->wrap_size;
	}
	part = r->wrap_size - r->head;
	if (part > n)
		part = n;
	memcpy(r->buf + r->head, data, part);
	memcpy(r->buf, data + part, n - part);
	r->head = (r->head + n) % r->wrap_size;
	r->used = r->used + n > r->wrap_size ? r->wrap_size : r->used + n;
}

int cap_ring_write(struct cap_ring *r, const void *data, size_t n)
{
	int err;

	if (n <= 16 && n <= cap_ring_room(r)) {
		/* A packet or two (most writes): no wrap, no memcpy call. */
		cap_ring_put(r, data, n);
		return 0;
	}
	r->total += n;
	if (r->wrap_size) {
		wrap_write(r, data, n);
		return 0;
	}
	if (r->alloc - r->used < n) {
		err = grow(r, n);
		if (err < 0) {
			r->total -= n;
			return err;
		}
	}
	memcpy(r->buf + r->used, data, n);
	r->used += n;
	return 0;
}

size_t cap_ring_size(const struct cap_ring *r)
{
	return r->used;
}

uint64_t cap_ring_lost(const struct cap_ring *r)
{
	return r->total - r->used;
}

void cap_ring_copy(const struct cap_ring *r, uint8_t *dst)
{
	size_t older;

	if (!r->wrap_size || r->used < r->wrap_size) {
		/* Not wrapped: the data starts at 0 (head == used). */
		memcpy(dst, r->buf, r->used);
		return;
	}
	older = r->wrap_size - r->head;
	memcpy(dst, r->buf + r->head, older);
	memcpy(dst + older, r->buf, r->head);
}
