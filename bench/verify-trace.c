/* bench/verify-trace — checks a generated trace against the walk that
 * produced it: decodes BASE.pt with libipt's instruction decoder
 * (pt_insn_next) and compares every instruction address with BASE.ips
 * (written by gen-trace --ips), then the count with BASE.info.
 *
 * usage: verify-trace BASE.info BASE.ips
 * Exit status: 0 if they match, 1 on usage errors, 2 if they differ.
 */
#include "trace-info.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The walked addresses, as gen-trace --ips wrote them. */
struct ip_log {
	const uint64_t *ips;
	size_t n;
	size_t mapped;
};

/* Maps @path as an array of addresses. */
static void read_ips(const char *path, struct ip_log *log)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		bench_die(path, "cannot read");
	log->mapped = (size_t) st.st_size;
	log->n = log->mapped / sizeof(uint64_t);
	p = log->n ? mmap(NULL, log->mapped, PROT_READ, MAP_PRIVATE, fd, 0)
		: NULL;
	close(fd);
	if (p == MAP_FAILED)
		bench_die(path, "cannot map");
	log->ips = p;
}

/* Handles the events libipt has pending; returns the last status. */
static int drain_events(struct pt_insn_decoder *dec, int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;

		status = pt_insn_event(dec, &ev, sizeof(ev));
	}
	return status;
}

/* Decodes the whole trace, comparing with @log.  Returns the number of
 * instructions decoded, or stops at the first difference. */
static uint64_t compare(struct pt_insn_decoder *dec, const struct ip_log *log,
			int *end_status)
{
	uint64_t n = 0;
	int status = pt_insn_sync_forward(dec);

	for (;;) {
		struct pt_insn insn;

		status = drain_events(dec, status);
		if (status < 0)
			break;
		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0)
			break;
		if (n >= log->n || insn.ip != log->ips[n]) {
			printf("instruction %" PRIu64 ": decoded 0x%" PRIx64
			       ", walked 0x%" PRIx64 "\n", n + 1, insn.ip,
			       n < log->n ? log->ips[n] : 0);
			status = -pte_internal;
			break;
		}
		n++;
	}
	*end_status = status;
	return n;
}

/* Decodes @bt's trace and reports whether it matches @log. */
static int verify(const struct bench_trace *bt, const struct ip_log *log)
{
	struct pt_image_section_cache *iscache = pt_iscache_alloc("verify");
	struct pt_image *image = iscache ? bench_trace_pt_image(bt, iscache)
		: NULL;
	struct pt_insn_decoder *dec;
	struct pt_config config;
	uint8_t *trace;
	size_t size;
	uint64_t n;
	int status;

	trace = bench_trace_map(bt, &size);
	if (!image || !trace)
		return 2;
	bench_trace_pt_config(bt, trace, size, &config);
	dec = pt_insn_alloc_decoder(&config);
	if (!dec || pt_insn_set_image(dec, image) < 0)
		bench_die("verify-trace", "cannot set up the decoder");
	n = compare(dec, log, &status);
	pt_insn_free_decoder(dec);
	pt_image_free(image);
	pt_iscache_free(iscache);
	bench_trace_unmap(trace, size);
	printf("decoded %" PRIu64 " instructions (%s), walked %zu, info says %"
	       PRIu64 "\n", n, pt_errstr(pt_errcode(status)), log->n,
	       bt->insns);
	return status == -pte_eos && n == log->n && n == bt->insns ? 0 : 2;
}

int main(int argc, char **argv)
{
	struct bench_trace bt;
	struct ip_log log;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: verify-trace BASE.info BASE.ips\n");
		return 1;
	}
	if (bench_trace_read(argv[1], &bt) < 0)
		return 2;
	read_ips(argv[2], &log);
	rc = verify(&bt, &log);
	if (log.n)
		munmap((void *) log.ips, log.mapped);
	printf("%s\n", rc == 0 ? "OK: the trace decodes to the walk"
	       : "FAIL: the trace does not decode to the walk");
	return rc;
}
