/* The .info file of a generated benchmark trace: writing, reading, and
 * turning it into libipt objects.  See trace-info.h. */
#include "trace-info.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Writes the cpu line: "unknown" or "intel FAMILY MODEL STEPPING". */
static void write_cpu(FILE *f, const struct pt_cpu *cpu)
{
	if (cpu->vendor == pcv_intel)
		fprintf(f, "cpu intel %u %u %u\n", cpu->family, cpu->model,
			cpu->stepping);
	else
		fprintf(f, "cpu unknown\n");
}

int bench_trace_write(const char *path, const struct bench_trace *bt,
		      const char *trace_name)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# ptrr benchmark trace, made by bench/gen-trace; "
		"see docs/performance.md\n");
	fprintf(f, "trace %s\n", trace_name);
	fprintf(f, "binary %s\n", bt->binary);
	fprintf(f, "bias 0x%" PRIx64 "\n", bt->bias);
	for (size_t i = 0; i < bt->nsect; i++)
		fprintf(f, "section 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64
			"\n", bt->sect[i].offset, bt->sect[i].size,
			bt->sect[i].vaddr);
	fprintf(f, "insns %" PRIu64 "\n", bt->insns);
	fprintf(f, "seed %" PRIu64 "\n", bt->seed);
	fprintf(f, "psb_period %" PRIu32 "\n", bt->psb_period);
	write_cpu(f, &bt->cpu);
	if (fclose(f) != 0) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Sets bt->trace to @name, relative to the directory of @info_path unless
 * it is absolute. */
static int resolve_trace(struct bench_trace *bt, const char *info_path,
			 const char *name)
{
	const char *slash = strrchr(info_path, '/');
	int dirlen = slash ? (int) (slash - info_path) : 0;
	int n;

	if (name[0] == '/' || !slash)
		n = snprintf(bt->trace, sizeof(bt->trace), "%s", name);
	else
		n = snprintf(bt->trace, sizeof(bt->trace), "%.*s/%s", dirlen,
			     info_path, name);
	return n > 0 && (size_t) n < sizeof(bt->trace) ? 0 : -1;
}

/* Parses the cpu line's value. */
static int parse_cpu(const char *val, struct pt_cpu *cpu)
{
	unsigned family, model, stepping;

	memset(cpu, 0, sizeof(*cpu));
	if (strcmp(val, "unknown") == 0)
		return 0;
	if (sscanf(val, "intel %u %u %u", &family, &model, &stepping) != 3)
		return -1;
	cpu->vendor = pcv_intel;
	cpu->family = (uint16_t) family;
	cpu->model = (uint8_t) model;
	cpu->stepping = (uint8_t) stepping;
	return 0;
}

/* Parses one "key value" line into @bt. */
static int parse_line(struct bench_trace *bt, const char *path,
		      const char *key, const char *val)
{
	struct bench_section *s;

	if (strcmp(key, "trace") == 0)
		return resolve_trace(bt, path, val);
	if (strcmp(key, "binary") == 0)
		return snprintf(bt->binary, sizeof(bt->binary), "%s", val) > 0
			? 0 : -1;
	if (strcmp(key, "bias") == 0)
		return sscanf(val, "%" SCNx64, &bt->bias) == 1 ? 0 : -1;
	if (strcmp(key, "section") == 0) {
		if (bt->nsect == BENCH_MAX_SECTIONS)
			return -1;
		s = &bt->sect[bt->nsect++];
		return sscanf(val, "%" SCNx64 " %" SCNx64 " %" SCNx64,
			      &s->offset, &s->size, &s->vaddr) == 3 ? 0 : -1;
	}
	if (strcmp(key, "insns") == 0)
		return sscanf(val, "%" SCNu64, &bt->insns) == 1 ? 0 : -1;
	if (strcmp(key, "seed") == 0)
		return sscanf(val, "%" SCNu64, &bt->seed) == 1 ? 0 : -1;
	if (strcmp(key, "psb_period") == 0)
		return sscanf(val, "%" SCNu32, &bt->psb_period) == 1 ? 0 : -1;
	if (strcmp(key, "cpu") == 0)
		return parse_cpu(val, &bt->cpu);
	return 0;	/* unknown keys are for humans */
}

int bench_trace_read(const char *path, struct bench_trace *bt)
{
	char line[PATH_MAX + 64];
	FILE *f = fopen(path, "r");
	int lineno = 0;

	if (!f) {
		fprintf(stderr, "cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	memset(bt, 0, sizeof(*bt));
	while (fgets(line, sizeof(line), f)) {
		char *val;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		val = strchr(line, ' ');
		if (val)
			*val++ = '\0';
		if (!val || parse_line(bt, path, line, val) < 0) {
			fprintf(stderr, "%s:%d: malformed line\n", path, lineno);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	if (!bt->trace[0] || !bt->binary[0] || !bt->nsect) {
		fprintf(stderr, "%s: needs trace, binary and section lines\n",
			path);
		return -1;
	}
	return 0;
}

uint8_t *bench_trace_map(const struct bench_trace *bt, size_t *size)
{
	struct stat st;
	void *p;
	int fd = open(bt->trace, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		fprintf(stderr, "cannot read trace %s: %s\n", bt->trace,
			fd < 0 ? strerror(errno) : "empty or unreadable");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "cannot map %s: %s\n", bt->trace,
			strerror(errno));
		return NULL;
	}
	*size = (size_t) st.st_size;
	return p;
}

void bench_trace_unmap(uint8_t *trace, size_t size)
{
	if (trace)
		munmap(trace, size);
}

struct pt_image *bench_trace_pt_image(const struct bench_trace *bt,
				      struct pt_image_section_cache *iscache)
{
	struct pt_image *image = pt_image_alloc("bench");

	if (!image)
		return NULL;
	for (size_t i = 0; i < bt->nsect; i++) {
		const struct bench_section *s = &bt->sect[i];
		int isid = pt_iscache_add_file(iscache, bt->binary, s->offset,
					       s->size, s->vaddr);
		int err = isid < 0 ? isid
			: pt_image_add_cached(image, iscache, isid, NULL);

		if (err < 0) {
			fprintf(stderr, "cannot map %s at 0x%" PRIx64 ": %s\n",
				bt->binary, s->vaddr, pt_errstr(pt_errcode(err)));
			pt_image_free(image);
			return NULL;
		}
	}
	return image;
}

void bench_trace_pt_config(const struct bench_trace *bt, uint8_t *begin,
			   size_t size, struct pt_config *config)
{
	pt_config_init(config);
	config->begin = begin;
	config->end = begin + size;
	config->cpu = bt->cpu;
	if (bt->cpu.vendor != pcv_unknown)
		(void) pt_cpu_errata(&config->errata, &config->cpu);
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

void bench_die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s\n", what, why);
	exit(2);
}
