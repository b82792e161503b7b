/* pt-packets TRACE: counts the packets of a raw Intel PT file with
 * libipt's packet decoder — a decoder independent of ptrr's emitter and of
 * its history — for tests/record-ptconf.sh.  Prints one line per PSB,
 * "psb OFFSET" (decimal), then the totals:
 *   tip N        TIP packets (indirect branches, uncompressed returns)
 *   tnt_bits N   conditional-branch and compressed-return bits
 *   psbs N
 *   errors N     places where the decoder had to resynchronize
 * Exit status 2 if the file cannot be read or holds no PSB. */
#include <config.h>

#include <intel-pt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct counts {
	uint64_t tip, tnt_bits, psbs, errors;
};

/* Reads all of @path into a malloc'd buffer; sets @size. */
static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t) len)) &&
	    fread(buf, 1, (size_t) len, f) == (size_t) len)
		*size = (size_t) len;
	else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Adds packet @pkt (at trace offset @offset) to @c. */
static void count(struct counts *c, const struct pt_packet *pkt,
		  uint64_t offset)
{
	switch (pkt->type) {
	case ppt_psb:
		printf("psb %" PRIu64 "\n", offset);
		c->psbs++;
		break;
	case ppt_tip:
		c->tip++;
		break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		c->tnt_bits += pkt->payload.tnt.bit_size;
		break;
	default:
		break;
	}
}

/* Walks every packet of @dec, resynchronizing after errors. */
static void walk(struct pt_packet_decoder *dec, struct counts *c)
{
	struct pt_packet pkt;
	uint64_t offset;
	int rc = pt_pkt_sync_forward(dec);

	while (rc >= 0) {
		if (pt_pkt_get_offset(dec, &offset) < 0)
			break;
		rc = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (rc >= 0) {
			count(c, &pkt, offset);
			continue;
		}
		if (rc == -pte_eos)
			break;
		c->errors++;
		rc = pt_pkt_sync_forward(dec);
	}
}

int main(int argc, char **argv)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct counts c = { 0 };
	uint8_t *buf;
	size_t size = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: pt-packets TRACE\n");
		return 1;
	}
	buf = slurp(argv[1], &size);
	if (!buf) {
		fprintf(stderr, "pt-packets: cannot read %s\n", argv[1]);
		return 2;
	}
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (dec)
		walk(dec, &c);
	pt_pkt_free_decoder(dec);
	free(buf);
	printf("tip %" PRIu64 "\ntnt_bits %" PRIu64 "\npsbs %" PRIu64
	       "\nerrors %" PRIu64 "\n", c.tip, c.tnt_bits, c.psbs, c.errors);
	return c.psbs ? 0 : 2;
}
