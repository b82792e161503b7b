/* Registers recorded on the way (struct hist_regsnap): their encoding in
 * a bundle's threads/TID.regs, each snapshot holding only the registers
 * that changed since the one before (most of 27 do not: the segment
 * registers, fs and gs bases, callee-saved registers of outer frames).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "history.h"

_Static_assert(HIST_NREGS <= 32, "a snapshot's mask has 32 bits");

/* Bytes of snapshot @s encoded after @prev (NULL: the first). */
static size_t encoded_size(const struct hist_regsnap *s,
			   const struct hist_regsnap *prev, uint32_t *mask)
{
	size_t n = 2 * sizeof(uint64_t) + sizeof(uint32_t);

	*mask = 0;
	for (int i = 0; i < HIST_NREGS; i++)
		if (!prev || prev->r[i] != s->r[i]) {
			*mask |= 1u << i;
			n += sizeof(uint64_t);
		}
	return n;
}

int hist_regsnaps_encode(const struct hist_regsnap *v, size_t n,
			 uint8_t **out, size_t *size)
{
	size_t total = 8;
	uint32_t mask;
	uint8_t *p;

	for (size_t i = 0; i < n; i++)
		total += encoded_size(&v[i], i ? &v[i - 1] : NULL, &mask);
	if (!(p = malloc(total)))
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	*out = p;
	*size = total;
	memcpy(p, HIST_REGS_MAGIC, 8);
	p += 8;
	for (size_t i = 0; i < n; i++) {
		encoded_size(&v[i], i ? &v[i - 1] : NULL, &mask);
		memcpy(p, &v[i].offset, 8);
		memcpy(p + 8, &v[i].k, 8);
		memcpy(p + 16, &mask, 4);
		p += 20;
		for (int r = 0; r < HIST_NREGS; r++)
			if (mask >> r & 1) {
				memcpy(p, &v[i].r[r], 8);
				p += 8;
			}
	}
	return 0;
}

int hist_regsnaps_decode(const uint8_t *data, size_t size,
			 struct hist_regsnap **out, size_t *n)
{
	struct hist_regsnap *v = NULL, cur;
	size_t at = 8, count = 0, cap = 0;
	uint32_t mask;

	*out = NULL;
	*n = 0;
	if (size < 8 || memcmp(data, HIST_REGS_MAGIC, 8))
		return ptrr_fail(PTRR_ERR_BUNDLE, "not a table of registers");
	memset(&cur, 0, sizeof(cur));
	while (at < size) {
		uint64_t off;

		if (size - at < 20)
			goto bad;
		memcpy(&off, data + at, 8);
		memcpy(&cur.k, data + at + 8, 8);
		memcpy(&mask, data + at + 16, 4);
		at += 20;
		if ((!count && mask != (1ull << HIST_NREGS) - 1) ||
		    mask >> HIST_NREGS || (count && off < cur.offset))
			goto bad;
		cur.offset = off;
		for (int r = 0; r < HIST_NREGS; r++) {
			if (!(mask >> r & 1))
				continue;
			if (size - at < 8)
				goto bad;
			memcpy(&cur.r[r], data + at, 8);
			at += 8;
		}
		if (count == cap) {
			struct hist_regsnap *w;

			cap = cap ? 2 * cap : 64;
			if (!(w = realloc(v, cap * sizeof(*v)))) {
				free(v);
				return ptrr_fail(PTRR_ERR_NOMEM,
						 "out of memory");
			}
			v = w;
		}
		v[count++] = cur;
	}
	*out = v;
	*n = count;
	return 0;
bad:
	free(v);
	return ptrr_fail(PTRR_ERR_BUNDLE, "a table of registers is damaged "
			 "at byte %zu", at);
}
