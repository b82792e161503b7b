/* plugin/ private: `ptrr import --perf` (import_perf.c reads the file
 * and makes the bundle; import_perf_stream.c assembles the traces;
 * import_perf_cpu.c splits per-CPU traces into threads).  The pointers into the file point into its read-only map. */
#ifndef PTRR_IMPORT_PERF_H
#define PTRR_IMPORT_PERF_H

#include "history.h"
#include "perf_data.h"

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An event of the file's attribute section. */
struct pimp_event {
	uint32_t type;
	uint64_t config;
	uint64_t sample_type;
	bool sample_id_all;
	const uint64_t *ids;
	size_t nids;
};

/* A record's sample_id trailer; absent fields are -1 (time: have_time
 * false). */
struct pimp_sample {
	int32_t pid, tid, cpu;
	uint64_t time;
	bool have_time;
};

/* A PERF_RECORD_AUXTRACE: @size bytes of trace at @data that began at
 * offset @offset of the AUX area of mmap @idx (thread @tid or CPU @cpu,
 * -1 if none). */
struct pimp_piece {
	const uint8_t *data;
	uint64_t size, offset;
	uint32_t idx;
	int32_t tid, cpu;
};

/* An executable mapping of file @name. */
struct pimp_mmap {
	uint32_t pid;
	uint64_t start, len, pgoff;
	const char *name;
	uint8_t build_id[20];
	size_t build_id_size;	/* 0: none in the record */
};

/* A COMM (comm set), FORK or EXIT record. */
struct pimp_task {
	uint32_t kind;		/* PERF_RECORD_COMM, _FORK, _EXIT */
	uint32_t pid, tid;
	const char *comm;
	bool exec;
};

struct pimp_build_id {
	const char *name;
	uint8_t id[20];
	size_t size;
};

/* Trace was lost at AUX offset @at of thread @tid's or CPU @cpu's area
 * (PERF_AUX_FLAG_TRUNCATED). */
struct pimp_cut {
	uint64_t at;
	int32_t tid, cpu;
};

/* On CPU @cpu, thread @tid runs from perf time @time (a switch into
 * it, or out of another one into it, or ITRACE_START). */
struct pimp_switch {
	uint64_t time;
	int32_t cpu, tid;
	uint32_t seq;		/* file order, for equal times */
};

/* A thread's trace being assembled. */
struct pimp_stream {
	int32_t tid, pid;
	uint8_t *data;
	size_t len, cap;
	uint64_t end_off;	/* AUX offset after the last piece */
	unsigned lost_pieces;	/* places where trace was lost */
	bool need_psb;		/* after a loss, until a PSB follows */
	unsigned unknown_runs;	/* per-CPU: runs of no known thread */
};

/* The full IP of IP packet payload @ip, from and into the last IP
 * *@last_ip (unchanged by a suppressed IP). */
uint64_t pimp_full_ip(uint64_t *last_ip, const struct pt_packet_ip *ip);

/* True if thread trace @trace (@n bytes) ends with tracing turned off
 * by an asynchronous event (a FUP, then a TIP.PGD: an interrupt, a
 * fault, a signal): where the thread was then, the IP its FUP names, in
 * *@ip. */
bool pimp_async_end(const uint8_t *trace, size_t n, uint64_t *ip);

/* One import under way. */
struct pimp {
	const char *path;
	const uint8_t *data;
	uint64_t size;
	struct perf_data_header h;
	struct pimp_event *events;
	size_t nevents;
	bool have_info, have_time_conv;
	uint64_t info[PT_INFO_MAX];	/* AUXTRACE_INFO's private words */
	bool snapshot, per_cpu;
	struct hist_cpu cpu;
	struct pimp_build_id *build_ids;
	size_t nbuild_ids;
	struct pimp_piece *pieces;
	size_t npieces;
	struct pimp_mmap *mmaps;
	size_t nmmaps;
	struct pimp_task *tasks;
	size_t ntasks;
	struct pimp_cut *cuts;
	size_t ncuts;
	struct pimp_switch *switches;
	size_t nswitches;
	bool switches_untimed;	/* a switch record without a time */
	struct pimp_stream *streams;
	size_t nstreams;
	int want_pid;		/* --pid, or -1 */
	int32_t pid;		/* the process imported */
	unsigned ambiguous_runs;	/* per-CPU runs left out */
};

/* Imports perf.data @file (process @pid, or -1 for the one with the
 * most trace) into the new bundle @out. */
int import_perf(const char *file, int pid, const char *out);

/* import_perf.c, for import_perf_cpu.c.  Each is described where it is
 * defined. */
void *pimp_grow(void *arr, size_t *n, size_t size);
int pimp_nomem(void);
size_t pimp_find_psb(const uint8_t *p, size_t n);
int pimp_stream_put(struct pimp_stream *s, const void *p, size_t n);
int pimp_stream_add(struct pimp *im, struct pimp_stream *s, const uint8_t *p,
		    size_t n, uint64_t off, bool cut);
int pimp_stream_add_piece(struct pimp *im, struct pimp_stream *s,
			  const struct pimp_piece *p);
bool pimp_cut_at(const struct pimp *im, const struct pimp_piece *p,
		 uint64_t at);
struct pimp_stream *pimp_thread_stream(struct pimp *im, int32_t tid);
int pimp_thread_streams(struct pimp *im);
void pimp_read_trailer(const struct pimp *im, const uint8_t *rec,
		       size_t size, struct pimp_sample *s);

/* import_perf_cpu.c: a context-switch or ITRACE_START record, and the
 * per-thread streams of a per-CPU recording. */
int pimp_cpu_sideband(struct pimp *im, const uint8_t *rec, size_t size,
		      uint64_t at);
int pimp_cpu_streams(struct pimp *im);

#endif
