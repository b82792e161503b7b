/* pt-insns TRACE FILE@ADDR,OFFSET,SIZE...: decodes raw Intel PT file
 * TRACE with libipt's instruction decoder alone (pt_insn_next over an
 * image of the files given: SIZE bytes of FILE from OFFSET at ADDR),
 * from its first PSB to its end, and prints one line per instruction,
 * "0xADDRESS", and "[gap]" where the decoder fails and resynchronizes —
 * the plain libipt decode that tests/raw-import.sh compares `ptrr import
 * --raw` with.  Exit status 2 if a file cannot be read. */
#include <intel-pt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) || !(p = malloc(n + 1)) ||
	    fread(p, 1, n, f) != (size_t)n) {
		fprintf(stderr, "pt-insns: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*size = n;
	return p;
}

int main(int argc, char **argv)
{
	struct pt_config cfg;
	struct pt_insn_decoder *d;
	struct pt_image *image;
	size_t size;
	uint8_t *trace;
	int st;

	if (argc < 3) {
		fprintf(stderr, "usage: pt-insns TRACE FILE@ADDR,OFFSET,SIZE...\n");
		return 1;
	}
	trace = read_all(argv[1], &size);
	pt_config_init(&cfg);
	cfg.begin = trace;
	cfg.end = trace + size;
	d = pt_insn_alloc_decoder(&cfg);
	image = d ? pt_insn_get_image(d) : NULL;
	for (int i = 2; image && i < argc; i++) {
		char *at = strrchr(argv[i], '@');
		uint64_t addr, off, len;

		if (!at || sscanf(at + 1, "%" SCNi64 ",%" SCNi64 ",%" SCNi64,
				  &addr, &off, &len) != 3)
			return 1;
		*at = 0;
		if (pt_image_add_file(image, argv[i], off, len, NULL, addr) < 0) {
			fprintf(stderr, "pt-insns: cannot map %s\n", argv[i]);
			return 2;
		}
	}
	if (!image)
		return 2;
	st = pt_insn_sync_forward(d);
	for (;;) {
		struct pt_insn insn;
		struct pt_event ev;

		if (st < 0) {
			if (st == -pte_eos)
				break;
			printf("[gap]\n");
			st = pt_insn_sync_forward(d);
			continue;
		}
		while (st >= 0 && (st & pts_event_pending))
			st = pt_insn_event(d, &ev, sizeof(ev));
		if (st < 0)
			continue;
		st = pt_insn_next(d, &insn, sizeof(insn));
		if (st >= 0)
			printf("0x%" PRIx64 "\n", insn.ip);
	}
	pt_insn_free_decoder(d);
	free(trace);
	return 0;
}
