/* `ptrr import --perf=FILE -o BUNDLE`: a perf.data recorded with
 * `perf record -e intel_pt//u` (or written by `ptrr export --perf`) as a
 * ptrr recording.
 *
 * The file is input to be checked, not trusted (plugin/perf_data.h):
 * every section and record is bounded by the file, and a file that is
 * not a perf.data, holds no Intel PT or ends early is refused with one
 * line naming the cause.  What the bundle gets:
 *  - the CPU from the CPUID feature; the PSB period and return
 *    compression from the intel_pt event's config;
 *  - one process (the one with the most trace, or --pid): its threads'
 *    traces, per thread as perf read them (--per-thread) or split from
 *    the per-CPU streams by the context-switch sideband
 *    (import_perf_cpu.c);
 *  - its executable mappings (MMAP, MMAP2) as modules, with build-ids
 *    from MMAP2 or the BUILD_ID feature; the vDSO's code from perf's
 *    build-id cache (perf record puts a copy there);
 *  - where AUX data was lost (pieces that do not follow on, a
 *    PERF_AUX_FLAG_TRUNCATED record), the trace goes on at the next PSB
 *    after an OVF packet, which the history shows as a gap.
 * A perf.data has no registers or memory: the replay starts at the end
 * of each thread's trace with the instruction pointer only, and the
 * bundle's note says so.
 */
#include <config.h>

#include "import_perf.h"
#include "import_raw.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* Grows array *@arr of *@n elements of @size bytes by one; the new
 * element, zeroed, or NULL. */
void *pimp_grow(void *arr, size_t *n, size_t size)
{
	void **a = arr;
	char *p = realloc(*a, (*n + 1) * size);

	if (!p)
		return NULL;
	*a = p;
	memset(p + *n * size, 0, size);
	return p + (*n)++ * size;
}

int pimp_nomem(void)
{
	return ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
}

/* The file is damaged at byte @at. */
static int damaged(const struct pimp *im, uint64_t at, const char *what)
{
	return ptrr_fail(PTRR_ERR_BUNDLE,
			 "%s is damaged or truncated at byte %" PRIu64 " (%s): "
			 "re-record it, or copy it again", im->path, at, what);
}

/* True if [@off, @off + @size) lies inside the file. */
static bool inside(const struct pimp *im, uint64_t off, uint64_t size)
{
	return off <= im->size && size <= im->size - off;
}

/* ------------------------------------------------------------------ */
/* Header, attributes, features                                        */
/* ------------------------------------------------------------------ */

/* Checks the file header and copies it to im->h. */
static int read_header(struct pimp *im)
{
	struct perf_data_header *h = &im->h;

	if (im->size < 8 || memcmp(im->data, "PERFILE2", 8))
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "%s is not a perf.data file (it does not start with PERFILE2): name the file perf record wrote",
				 im->path);
	if (im->size < sizeof(*h))
		return damaged(im, im->size, "the header");
	memcpy(h, im->data, sizeof(*h));
	if (h->size == 16)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s was written to a pipe (perf record -o -): write it to a file with perf inject -i %s -o FILE",
				 im->path, im->path);
	if (h->size != sizeof(*h) || h->attr_size < PERF_ATTR_SIZE_VER0 + 16 ||
	    !inside(im, h->attrs.offset, h->attrs.size))
		return damaged(im, sizeof(*h), "the header or its attributes");
	if (!inside(im, h->data.offset, h->data.size))
		return damaged(im, im->size, "the data section is longer than the file");
	return 0;
}

/* Reads the event attributes and their ids. */
static int read_attrs(struct pimp *im)
{
	const struct perf_data_header *h = &im->h;
	size_t n = h->attrs.size / h->attr_size;

	for (size_t i = 0; i < n; i++) {
		uint64_t at = h->attrs.offset + i * h->attr_size;
		const uint8_t *p = im->data + at;
		struct perf_event_attr a = { 0 };
		struct perf_data_section ids;
		struct pimp_event *e;
		size_t asize = h->attr_size - sizeof(ids);

		memcpy(&a, p, asize < sizeof(a) ? asize : sizeof(a));
		memcpy(&ids, p + asize, sizeof(ids));
		if (!inside(im, ids.offset, ids.size))
			return damaged(im, at, "the ids of an event");
		if (!(e = pimp_grow(&im->events, &im->nevents, sizeof(*e))))
			return pimp_nomem();
		e->type = a.type;
		e->config = a.config;
		e->sample_type = a.sample_type;
		e->sample_id_all = a.sample_id_all;
		e->ids = (const uint64_t *)(im->data + ids.offset);
		e->nids = ids.size / 8;
	}
	if (!im->nevents)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "%s has no events: record with perf record -e intel_pt//u",
				 im->path);
	return 0;
}

/* The string of a perf header string at @p (length, then bytes) of
 * at most @max bytes, or NULL. */
static const char *header_string(const uint8_t *p, uint64_t max)
{
	uint32_t len;

	if (max < 4)
		return NULL;
	memcpy(&len, p, 4);
	if (len == 0 || len > max - 4 || memchr(p + 4, 0, len) == NULL)
		return NULL;
	return (const char *)p + 4;
}

/* The BUILD_ID feature: the build-ids by file name. */
static int read_build_ids(struct pimp *im, const struct perf_data_section *s)
{
	for (uint64_t at = s->offset; at + sizeof(struct perf_data_build_id) <
	     s->offset + s->size;) {
		struct perf_data_build_id e;
		struct pimp_build_id *b;
		const char *name;
		size_t n;

		memcpy(&e, im->data + at, sizeof(e));
		if (e.header.size <= sizeof(e) ||
		    at + e.header.size > s->offset + s->size)
			return damaged(im, at, "the build-id feature");
		name = (const char *)im->data + at + sizeof(e);
		n = e.header.size - sizeof(e);
		if (!memchr(name, 0, n))
			return damaged(im, at, "the build-id feature");
		if (!(b = pimp_grow(&im->build_ids, &im->nbuild_ids,
				    sizeof(*b))))
			return pimp_nomem();
		b->name = name;
		b->size = e.header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE ?
			  (e.id_size <= 20 ? e.id_size : 20) : 20;
		memcpy(b->id, e.id, 20);
		at += e.header.size;
	}
	return 0;
}

/* The CPUID feature: "GenuineIntel,6,85,4" on x86. */
static void read_cpuid(struct pimp *im, const struct perf_data_section *s)
{
	const char *str = header_string(im->data + s->offset, s->size);
	unsigned family, model, stepping;
	char vendor[16];

	if (str && sscanf(str, "%15[^,],%u,%u,%u", vendor, &family, &model,
			  &stepping) == 4) {
		snprintf(im->cpu.vendor, sizeof(im->cpu.vendor), "%s", vendor);
		im->cpu.family = family;
		im->cpu.model = model;
		im->cpu.stepping = stepping;
	}
}

/* Reads the features ptrr uses. */
static int read_features(struct pimp *im)
{
	uint64_t at = im->h.data.offset + im->h.data.size;
	int err = 0;

	for (int f = 0; !err && f < 256; f++) {
		struct perf_data_section s;

		if (!(im->h.adds_features[f / 64] >> (f % 64) & 1))
			continue;
		if (!inside(im, at, sizeof(s)))
			return damaged(im, at, "the feature table");
		memcpy(&s, im->data + at, sizeof(s));
		at += sizeof(s);
		if (!inside(im, s.offset, s.size))
			return damaged(im, s.offset, "a feature");
		if (f == PERF_FEAT_BUILD_ID)
			err = read_build_ids(im, &s);
		else if (f == PERF_FEAT_CPUID)
			read_cpuid(im, &s);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/* The event a record with sample_id trailer @rec of @size bytes belongs
 * to: by its identifier if the events have one, else the first. */
static const struct pimp_event *event_of(const struct pimp *im,
					 const uint8_t *rec, size_t size)
{
	uint64_t id;

	if (im->nevents == 1 ||
	    !(im->events[0].sample_type & PERF_SAMPLE_IDENTIFIER) || size < 16)
		return &im->events[0];
	memcpy(&id, rec + size - 8, 8);
	for (size_t i = 0; i < im->nevents; i++)
		for (size_t j = 0; j < im->events[i].nids; j++)
			if (im->events[i].ids[j] == id)
				return &im->events[i];
	return &im->events[0];
}

/* Reads the sample_id trailer of record @rec (@size bytes) into @s;
 * fields it lacks are -1 (time 0). */
void pimp_read_trailer(const struct pimp *im, const uint8_t *rec,
			 size_t size, struct pimp_sample *s)
{
	const struct pimp_event *e = event_of(im, rec, size);
	static const uint64_t bits[] = {
		PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER,
	};
	size_t n = 0;
	const uint8_t *p;

	*s = (struct pimp_sample){ .pid = -1, .tid = -1, .cpu = -1 };
	if (!e->sample_id_all)
		return;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		n += (e->sample_type & bits[i]) != 0;
	if (n * 8 > size - sizeof(struct perf_event_header))
		return;
	p = rec + size - n * 8;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		uint32_t w[2];

		if (!(e->sample_type & bits[i]))
			continue;
		memcpy(w, p, 8);
		if (bits[i] == PERF_SAMPLE_TID) {
			s->pid = (int32_t)w[0];
			s->tid = (int32_t)w[1];
		} else if (bits[i] == PERF_SAMPLE_TIME) {
			memcpy(&s->time, p, 8);
			s->have_time = true;
		} else if (bits[i] == PERF_SAMPLE_CPU) {
			s->cpu = (int32_t)w[0];
		}
		p += 8;
	}
}

/* PERF_RECORD_AUXTRACE_INFO: must be Intel PT. */
static int read_auxtrace_info(struct pimp *im, const uint8_t *rec,
			      size_t size, uint64_t at)
{
	struct perf_data_auxtrace_info info;
	size_t n;

	if (size < sizeof(info))
		return damaged(im, at, "PERF_RECORD_AUXTRACE_INFO");
	memcpy(&info, rec, sizeof(info));
	if (info.type != PERF_AUXTRACE_INTEL_PT)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s holds no Intel PT trace (its AUX trace is of type %u, not Intel PT's 1): record with perf record -e intel_pt//u",
				 im->path, info.type);
	n = (size - sizeof(info)) / 8;
	if (n < PT_INFO_MIN)
		return damaged(im, at, "PERF_RECORD_AUXTRACE_INFO");
	memcpy(im->info, rec + sizeof(info),
	       (n < PT_INFO_MAX ? n : PT_INFO_MAX) * 8);
	im->have_info = true;
	return 0;
}

/* PERF_RECORD_AUXTRACE at @at (its data follows): a piece of trace. */
static int read_auxtrace(struct pimp *im, uint64_t at, uint64_t *next)
{
	struct perf_data_auxtrace a;
	struct pimp_piece *p;

	if (!inside(im, at, sizeof(a)))
		return damaged(im, at, "PERF_RECORD_AUXTRACE");
	memcpy(&a, im->data + at, sizeof(a));
	if (a.header.size < sizeof(a) ||
	    !inside(im, at + a.header.size, a.size))
		return damaged(im, at, "PERF_RECORD_AUXTRACE data");
	if (!(p = pimp_grow(&im->pieces, &im->npieces, sizeof(*p))))
		return pimp_nomem();
	*p = (struct pimp_piece){
		.data = im->data + at + a.header.size, .size = a.size,
		.offset = a.offset, .idx = a.idx, .tid = (int32_t)a.tid,
		.cpu = (int32_t)a.cpu,
	};
	*next = at + a.header.size + a.size;
	return 0;
}

/* PERF_RECORD_MMAP / MMAP2: an executable mapping of a file. */
static int read_mmap(struct pimp *im, const uint8_t *rec, size_t size,
		     uint64_t at)
{
	const struct perf_event_header *h = (const void *)rec;
	bool v2 = h->type == PERF_RECORD_MMAP2;
	size_t fixed = 8 + 8 + 24 + (v2 ? 24 + 8 : 0);
	struct pimp_mmap *m;
	const char *name;
	uint32_t prot = PROT_EXEC;

	if (size <= fixed)
		return damaged(im, at, "PERF_RECORD_MMAP");
	name = (const char *)rec + fixed;
	if (!memchr(name, 0, size - fixed))
		return damaged(im, at, "PERF_RECORD_MMAP");
	if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
	    PERF_RECORD_MISC_KERNEL)
		return 0;
	if (v2)
		memcpy(&prot, rec + fixed - 8, 4);
	else if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
		prot = 0;
	if (!(prot & PROT_EXEC))
		return 0;
	if (!(m = pimp_grow(&im->mmaps, &im->nmmaps, sizeof(*m))))
		return pimp_nomem();
	memcpy(&m->pid, rec + 8, 4);
	memcpy(&m->start, rec + 16, 8);
	memcpy(&m->len, rec + 24, 8);
	memcpy(&m->pgoff, rec + 32, 8);
	m->name = name;
	if (v2 && (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m->build_id_size = rec[40] <= 20 ? rec[40] : 20;
		memcpy(m->build_id, rec + 44, 20);
	}
	return 0;
}

/* PERF_RECORD_COMM, FORK, EXIT: the processes' threads. */
static int read_task(struct pimp *im, const uint8_t *rec, size_t size,
		     uint64_t at)
{
	const struct perf_event_header *h = (const void *)rec;
	struct pimp_task *t;
	uint32_t w[4];

	if (size < 8 + (h->type == PERF_RECORD_COMM ? 8 : 16))
		return damaged(im, at, "a COMM, FORK or EXIT record");
	memcpy(w, rec + 8, h->type == PERF_RECORD_COMM ? 8 : 16);
	if (!(t = pimp_grow(&im->tasks, &im->ntasks, sizeof(*t))))
		return pimp_nomem();
	t->kind = h->type;
	t->pid = w[0];
	t->tid = h->type == PERF_RECORD_COMM ? w[1] : w[2];
	if (h->type == PERF_RECORD_COMM) {
		t->comm = (const char *)rec + 16;
		if (!memchr(t->comm, 0, size - 16))
			return damaged(im, at, "PERF_RECORD_COMM");
		t->exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
	}
	return 0;
}

/* PERF_RECORD_AUX with PERF_AUX_FLAG_TRUNCATED: a place where trace
 * was lost. */
static int read_aux(struct pimp *im, const uint8_t *rec, size_t size,
		    uint64_t at)
{
	uint64_t f[3];
	struct pimp_sample s;
	struct pimp_cut *c;

	if (size < 8 + sizeof(f))
		return damaged(im, at, "PERF_RECORD_AUX");
	memcpy(f, rec + 8, sizeof(f));
	if (!(f[2] & PERF_AUX_FLAG_TRUNCATED))
		return 0;
	pimp_read_trailer(im, rec, size, &s);
	if (!(c = pimp_grow(&im->cuts, &im->ncuts, sizeof(*c))))
		return pimp_nomem();
	c->at = f[0] + f[1];
	c->tid = s.tid;
	c->cpu = s.cpu;
	return 0;
}

/* Reads one record at @at of @size bytes; @next is where the next one
 * starts. */
static int read_record(struct pimp *im, uint64_t at, uint64_t *next)
{
	const uint8_t *rec = im->data + at;
	struct perf_event_header h;

	memcpy(&h, rec, sizeof(h));
	if (h.size < sizeof(h) || !inside(im, at, h.size))
		return damaged(im, at, "a record's size");
	*next = at + h.size;
	switch (h.type) {
	case PERF_REC_AUXTRACE_INFO:
		return read_auxtrace_info(im, rec, h.size, at);
	case PERF_REC_AUXTRACE:
		return read_auxtrace(im, at, next);
	case PERF_REC_COMPRESSED:
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s is compressed (perf record -z): write an uncompressed copy with perf inject -i %s -o FILE",
				 im->path, im->path);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return read_mmap(im, rec, h.size, at);
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return read_task(im, rec, h.size, at);
	case PERF_RECORD_AUX:
		return read_aux(im, rec, h.size, at);
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return pimp_cpu_sideband(im, rec, h.size, at);
	case PERF_REC_TIME_CONV:
		if (h.size >= 8 + 24) {
			memcpy(&im->info[PT_INFO_TIME_SHIFT], rec + 8, 8);
			memcpy(&im->info[PT_INFO_TIME_MULT], rec + 16, 8);
			memcpy(&im->info[PT_INFO_TIME_ZERO], rec + 24, 8);
			im->have_time_conv = true;
		}
		return 0;
	default:
		return 0;
	}
}

/* Reads the data section's records. */
static int read_data(struct pimp *im)
{
	uint64_t at = im->h.data.offset, end = at + im->h.data.size;
	int err = 0;

	while (!err && at < end) {
		uint64_t next = end;

		if (end - at < sizeof(struct perf_event_header))
			return damaged(im, at, "a record header");
		err = read_record(im, at, &next);
		if (!err && next > end)
			return damaged(im, at, "a record past the data section");
		at = next;
	}
	if (!err && !im->have_info)
		err = ptrr_fail(PTRR_ERR_UNSUPPORTED,
				"%s holds no Intel PT trace (no PERF_RECORD_AUXTRACE_INFO): record with perf record -e intel_pt//u",
				im->path);
	return err;
}

/* ------------------------------------------------------------------ */
/* The bundle                                                          */
/* ------------------------------------------------------------------ */

/* The process of thread @tid (from COMM, FORK, EXIT, MMAP), or -1. */
static int32_t pid_of(const struct pimp *im, int32_t tid)
{
	for (size_t i = 0; i < im->ntasks; i++)
		if (im->tasks[i].tid == (uint32_t)tid)
			return im->tasks[i].pid;
	return -1;
}

/* The process of stream @s: its thread's, else the thread itself. */
static int32_t process_of(const struct pimp *im, const struct pimp_stream *s)
{
	int32_t pid = pid_of(im, s->tid);

	return pid < 0 ? s->tid : pid;
}

/* Chooses the process to import: --pid, else the one with the most
 * trace; warns once about each other one. */
static int choose_process(struct pimp *im)
{
	uint64_t best = 0;

	for (size_t i = 0; i < im->nstreams; i++) {
		uint64_t total = 0;

		im->streams[i].pid = process_of(im, &im->streams[i]);
		for (size_t j = 0; j < im->nstreams; j++)
			if (process_of(im, &im->streams[j]) ==
			    im->streams[i].pid)
				total += im->streams[j].len;
		if (total > best) {
			best = total;
			im->pid = im->streams[i].pid;
		}
	}
	if (im->want_pid >= 0) {
		im->pid = -1;
		for (size_t i = 0; i < im->nstreams; i++)
			if (im->streams[i].pid == im->want_pid &&
			    im->streams[i].len)
				im->pid = im->want_pid;
		if (im->pid < 0)
			return ptrr_fail(PTRR_ERR_NOTFOUND,
					 "%s holds no trace of process %d: name another with --pid, or leave it out",
					 im->path, im->want_pid);
	}
	for (size_t i = 0; i < im->nstreams; i++) {
		bool seen = im->streams[i].pid == im->pid ||
			    !im->streams[i].len;

		for (size_t j = 0; !seen && j < i; j++)
			seen = im->streams[j].pid == im->streams[i].pid &&
			       im->streams[j].len;
		if (!seen)
			fprintf(stderr, "warning: %s: process %d not imported: "
				"import it with --pid=%d\n", im->path,
				im->streams[i].pid, im->streams[i].pid);
	}
	return 0;
}

/* Lower-case hex of @n bytes at @id, malloc'd. */
static char *hex_id(const uint8_t *id, size_t n)
{
	char *s = malloc(2 * n + 1);

	for (size_t i = 0; s && i < n; i++)
		sprintf(s + 2 * i, "%02x", id[i]);
	return s;
}

/* The build-id perf knew for mapping @m, malloc'd, or NULL. */
static char *build_id_of(const struct pimp *im, const struct pimp_mmap *m)
{
	if (m->build_id_size)
		return hex_id(m->build_id, m->build_id_size);
	for (size_t i = 0; i < im->nbuild_ids; i++)
		if (!strcmp(im->build_ids[i].name, m->name))
			return hex_id(im->build_ids[i].id,
				      im->build_ids[i].size);
	return NULL;
}

/* Checks module file @path against build-id @want (may be NULL): a
 * warning if it is missing or of another build. */
static void check_module(const struct pimp *im, const char *path,
			 const char *want)
{
	char *have;

	if (access(path, R_OK) < 0) {
		fprintf(stderr, "warning: %s: module %s is missing (%s): the "
			"history has gaps where its code ran; copy it there "
			"from the recording machine\n", im->path, path,
			strerror(errno));
		return;
	}
	have = want ? hist_read_build_id(path) : NULL;
	if (want && (!have || strcmp(have, want)))
		fprintf(stderr, "warning: %s: module %s is of another build "
			"(build-id %s, the file's %s): the history has gaps "
			"where its code ran; copy the recorded file there\n",
			im->path, path, want, have ? have : "none");
	free(have);
}

/* perf's build-id cache: $PERF_BUILDID_DIR (which perf sets for the
 * tools it runs), else ~/.debug, perf's default; malloc'd, or NULL. */
static char *buildid_dir(void)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char *dir;

	if (env && *env)
		return strdup(env);
	if (asprintf(&dir, "%s/.debug", home ? home : ".") < 0)
		return NULL;
	return dir;
}

/* The copy of the vDSO of build-id @id in perf's build-id cache @dir,
 * as perf record leaves it there: DIR/[vdso]/ID/vdso, reached also by
 * the link DIR/.build-id/ID[0..1]/ID[2..] to its directory; the older
 * layouts keep the file itself at DIR/.build-id/ID[0..1]/ID[2..] or
 * DIR/[vdso]/ID.  Its path (malloc'd) if a file there holds build-id
 * @id, else NULL. */
static char *cached_vdso(const char *dir, const char *id)
{
	char *paths[4] = { NULL };
	char *found = NULL;
	bool ok = strlen(id) > 2 &&
		asprintf(&paths[0], "%s/[vdso]/%s/vdso", dir, id) >= 0 &&
		asprintf(&paths[1], "%s/.build-id/%.2s/%s/vdso", dir, id,
			 id + 2) >= 0 &&
		asprintf(&paths[2], "%s/.build-id/%.2s/%s", dir, id,
			 id + 2) >= 0 &&
		asprintf(&paths[3], "%s/[vdso]/%s", dir, id) >= 0;

	for (size_t i = 0; ok && !found && i < 4; i++) {
		struct stat st;
		char *have;

		if (stat(paths[i], &st) || !S_ISREG(st.st_mode))
			continue;
		have = hist_read_build_id(paths[i]);
		if (have && !strcmp(have, id)) {
			found = paths[i];
			paths[i] = NULL;
		}
		free(have);
	}
	for (size_t i = 0; i < 4; i++)
		free(paths[i]);
	return found;
}

/* The vDSO mapping @m: a perf.data holds no copy of its code, but perf
 * record keeps one in its build-id cache; that copy becomes the
 * bundle's, else a warning says that it ran without code. */
static int add_vdso(const struct pimp *im, struct hist_bundle *b,
		    const struct pimp_mmap *m)
{
	char *id = build_id_of(im, m), *dir = buildid_dir(), *path = NULL;
	uint8_t *data = NULL;
	size_t size = 0;
	int err = 0;

	if (!dir)
		err = pimp_nomem();
	else if (!id)
		fprintf(stderr, "warning: %s: [vdso] at 0x%" PRIx64 " not "
			"imported (the file names no build-id for it, and "
			"holds no copy of its code): the history has gaps "
			"where it ran\n", im->path, m->start);
	else if (!(path = cached_vdso(dir, id)))
		fprintf(stderr, "warning: %s: [vdso] at 0x%" PRIx64 " not "
			"imported (perf's build-id cache %s has no copy of "
			"build-id %s: point PERF_BUILDID_DIR at the recording "
			"machine's ~/.debug): the history has gaps where it "
			"ran\n", im->path, m->start, dir, id);
	else if ((err = import_read_whole(path, &data, &size)))
		;
	else if (m->pgoff >= size)
		fprintf(stderr, "warning: %s: [vdso] at 0x%" PRIx64 " not "
			"imported (its copy %s is shorter than the mapping's "
			"offset): the history has gaps where it ran\n",
			im->path, m->start, path);
	else
		err = hist_bundle_add_code(b, "[vdso]", m->start,
					   data + m->pgoff,
					   size - m->pgoff < m->len ?
					   size - m->pgoff : m->len);
	free(data);
	free(path);
	free(dir);
	free(id);
	return err;
}

/* The process's executable mappings as modules; the program is the
 * first whose name ends in the process's command name. */
static int add_modules(struct pimp *im, struct hist_bundle *b)
{
	const char *comm = NULL;
	int err = 0;

	for (size_t i = 0; i < im->ntasks; i++)
		if (im->tasks[i].pid == (uint32_t)im->pid && im->tasks[i].comm)
			comm = im->tasks[i].comm;
	for (size_t i = 0; !err && i < im->nmmaps; i++) {
		const struct pimp_mmap *m = &im->mmaps[i];
		const char *base = strrchr(m->name, '/');
		char *id;

		if (m->pid != (uint32_t)im->pid)
			continue;
		if (!strcmp(m->name, "[vdso]")) {
			err = add_vdso(im, b, m);
			continue;
		}
		if (m->name[0] != '/') {
			fprintf(stderr, "warning: %s: %s at 0x%" PRIx64 " not "
				"imported (perf.data holds no copy of its "
				"code): the history has gaps where it ran\n",
				im->path, m->name, m->start);
			continue;
		}
		if ((err = hist_bundle_add_module(b, m->name, m->start, m->len,
						  m->pgoff)))
			break;
		id = build_id_of(im, m);
		b->modules[b->nmodules - 1].build_id = id;
		check_module(im, m->name, id);
		if (!b->exe && comm && base &&
		    !strncmp(base + 1, comm, strlen(comm)) &&
		    !(b->exe = strdup(m->name)))
			err = pimp_nomem();
	}
	if (!err && !b->exe && b->nmodules &&
	    !(b->exe = strdup(b->modules[0].path)))
		err = pimp_nomem();
	return err;
}

/* True if the file has an EXIT record of thread @tid of process @pid. */
static bool exited(const struct pimp *im, int32_t pid, int32_t tid)
{
	for (size_t i = 0; i < im->ntasks; i++)
		if (im->tasks[i].kind == PERF_RECORD_EXIT &&
		    im->tasks[i].pid == (uint32_t)pid &&
		    im->tasks[i].tid == (uint32_t)tid)
			return true;
	return false;
}

/* How thread @t of the process ended, as far as perf's sideband and the
 * trace tell: an EXIT record says it ended, but not how (no exit status
 * or signal); a trace that ends with an asynchronous disable (an
 * interrupt, a fault) names where the thread was then, which ends its
 * history, as a crashed thread's final PC does. */
static void thread_end(const struct pimp *im, const struct pimp_stream *s,
		       struct hist_thread *t)
{
	if (exited(im, im->pid, s->tid))
		t->stop = (struct hist_stop){ HIST_STOP_EXITED, -1, 0 };
	t->have_end_ip = pimp_async_end(s->data, s->len, &t->end_ip);
}

/* The process's threads, main thread first, with their traces. */
static int add_threads(struct pimp *im, struct hist_bundle *b)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < im->nstreams; i++) {
			const struct pimp_stream *s = &im->streams[i];
			struct hist_thread *t;

			if (s->pid != im->pid || (s->tid == im->pid) != !pass ||
			    !s->len)
				continue;
			if (!(t = hist_bundle_add_thread(b, s->tid)))
				return pimp_nomem();
			if (hist_thread_set_trace(t, s->data, s->len))
				return pimp_nomem();
			thread_end(im, s, t);
			if (s->lost_pieces &&
			    hist_bundle_add_note(b, "thread %d: trace was lost "
						 "(gaps in the history: %u)",
						 s->tid, s->lost_pieces))
				return pimp_nomem();
		}
	}
	if (!b->nthreads)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED,
				 "%s holds no Intel PT trace of any thread: record with perf record -e intel_pt//u",
				 im->path);
	return 0;
}

/* The bundle: CPU, configuration, threads, modules, notes. */
static int make_bundle(struct pimp *im, struct hist_bundle *b)
{
	const struct pimp_event *pt = NULL;
	unsigned n;
	int err;

	for (size_t i = 0; i < im->nevents; i++)
		if (im->events[i].type == im->info[PT_INFO_PMU_TYPE])
			pt = &im->events[i];
	if (!pt)
		return ptrr_fail(PTRR_ERR_BUNDLE,
				 "%s has no event of the Intel PT PMU (type %" PRIu64 ") that PERF_RECORD_AUXTRACE_INFO names",
				 im->path, im->info[PT_INFO_PMU_TYPE]);
	b->cpu = im->cpu;
	snprintf(b->pt.backend, sizeof(b->pt.backend), "perf");
	n = (pt->config & PT_CONFIG_PSB_PERIOD) >> PT_CONFIG_PSB_PERIOD_SHIFT;
	b->pt.psb_period = 2048u << n;
	b->pt.ret_compression = !(pt->config & im->info[PT_INFO_NORETCOMP_BIT]);
	if ((err = add_threads(im, b)) || (err = add_modules(im, b)))
		return err;
	if (exited(im, im->pid, im->pid))
		b->stop = (struct hist_stop){ HIST_STOP_EXITED, -1, 0 };
	if (b->exe && hist_bundle_set_argv(b, (char *const[]){ b->exe, NULL }))
		return pimp_nomem();
	if (hist_bundle_add_note(b, "imported from the perf.data %s (%s): it "
				 "holds no registers or memory, so the replay "
				 "starts at the end of each thread's trace with "
				 "the instruction pointer only", im->path,
				 im->per_cpu ? "per-CPU trace, split by the "
				 "context switches" : "per-thread trace"))
		return pimp_nomem();
	return 0;
}

/* ------------------------------------------------------------------ */
/* The import                                                          */
/* ------------------------------------------------------------------ */

/* Maps FILE and reads it into @im. */
static int read_file(struct pimp *im)
{
	struct stat st;
	int fd = open(im->path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0 || fstat(fd, &st) < 0) {
		err = ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", im->path,
				strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	im->size = st.st_size;
	im->data = im->size ? mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, fd,
				   0) : NULL;
	close(fd);
	if (im->data == MAP_FAILED) {
		im->data = NULL;
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", im->path,
				 strerror(errno));
	}
	if ((err = read_header(im)) || (err = read_attrs(im)) ||
	    (err = read_features(im)) || (err = read_data(im)))
		return err;
	im->snapshot = im->info[PT_INFO_SNAPSHOT_MODE];
	im->per_cpu = im->info[PT_INFO_PER_CPU_MMAPS];
	return im->per_cpu ? pimp_cpu_streams(im) : pimp_thread_streams(im);
}

/* Frees what @im holds. */
static void pimp_free(struct pimp *im)
{
	for (size_t i = 0; i < im->nstreams; i++)
		free(im->streams[i].data);
	free(im->streams);
	free(im->events);
	free(im->build_ids);
	free(im->pieces);
	free(im->mmaps);
	free(im->tasks);
	free(im->cuts);
	free(im->switches);
	if (im->data)
		munmap((void *)im->data, im->size);
}

int import_perf(const char *file, int pid, const char *out)
{
	struct pimp im = { .path = file, .want_pid = pid, .pid = -1 };
	struct hist_bundle *b = NULL;
	int err;

	if ((err = hist_bundle_check_target(out)))
		return err;
	if (!(err = read_file(&im)) && !(err = choose_process(&im)) &&
	    !(err = hist_bundle_new(&b)) && !(err = make_bundle(&im, b))) {
		err = import_save(b, out);
	}
	hist_bundle_free(b);
	pimp_free(&im);
	return err;
}
