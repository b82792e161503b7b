/* The perf.data file format, as far as ptrr writes and reads it
 * (plugin/export_perf.c, plugin/import_perf.c).
 *
 * Sources: Linux's tools/perf/Documentation/perf.data-file-format.txt
 * (the header, the attribute and feature sections, perf's own record
 * types from 64 on), include/uapi/linux/perf_event.h (the kernel's
 * records, which this file takes from <linux/perf_event.h>) and
 * tools/perf/Documentation/perf-intel-pt.txt with util/intel-pt.h (the
 * private words of PERF_RECORD_AUXTRACE_INFO for Intel PT).  Every
 * number is little-endian; every record is a perf_event_header followed
 * by its body, and records in the data section are 8-byte aligned.
 */
#ifndef PTRR_PERF_DATA_H
#define PTRR_PERF_DATA_H

#include <linux/perf_event.h>
#include <stdint.h>

/* The first eight bytes of a perf.data file ("PERFILE2"). */
#define PERF_DATA_MAGIC 0x32454c4946524550ull

/* A part of the file: where it starts and how long it is. */
struct perf_data_section {
	uint64_t offset;
	uint64_t size;
};

/* The file header.  adds_features is a bitmap of the PERF_FEAT_* that
 * follow the data section: a table of one section per feature set, in
 * bit order, at data.offset + data.size. */
struct perf_data_header {
	uint64_t magic;
	uint64_t size;		/* sizeof(struct perf_data_header) */
	uint64_t attr_size;	/* one attribute entry: attr + ids section */
	struct perf_data_section attrs;
	struct perf_data_section data;
	struct perf_data_section event_types;	/* unused */
	uint64_t adds_features[4];
};

/* Feature bits used here. */
enum {
	PERF_FEAT_BUILD_ID = 2,
	PERF_FEAT_ARCH = 6,
	PERF_FEAT_NRCPUS = 7,
	PERF_FEAT_CPUID = 9,
	PERF_FEAT_EVENT_DESC = 12,
	PERF_FEAT_PMU_MAPPINGS = 16,
	PERF_FEAT_AUXTRACE = 18,
};

/* perf's own records (the kernel's end below 64). */
enum {
	PERF_REC_HEADER_ATTR = 64,
	PERF_REC_HEADER_BUILD_ID = 67,
	PERF_REC_FINISHED_ROUND = 68,
	PERF_REC_ID_INDEX = 69,
	PERF_REC_AUXTRACE_INFO = 70,
	PERF_REC_AUXTRACE = 71,
	PERF_REC_AUXTRACE_ERROR = 72,
	PERF_REC_THREAD_MAP = 73,
	PERF_REC_CPU_MAP = 74,
	PERF_REC_TIME_CONV = 79,
	PERF_REC_HEADER_FEATURE = 80,
	PERF_REC_COMPRESSED = 81,
	PERF_REC_FINISHED_INIT = 82,
};

/* A build-id feature entry (PERF_FEAT_BUILD_ID): the header, the pid,
 * the id in 20 bytes with its length in the 21st (when header.misc has
 * PERF_RECORD_MISC_BUILD_ID_SIZE), then the file name up to header.size. */
struct perf_data_build_id {
	struct perf_event_header header;
	uint32_t pid;
	uint8_t id[20];
	uint8_t id_size;
	uint8_t reserved[3];
};
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)

/* PERF_RECORD_AUXTRACE_INFO: what made the AUX data and how. */
struct perf_data_auxtrace_info {
	struct perf_event_header header;
	uint32_t type;		/* PERF_AUXTRACE_INTEL_PT */
	uint32_t reserved;
	/* uint64_t priv[]: PT_INFO_* for Intel PT */
};
#define PERF_AUXTRACE_INTEL_PT 1

/* The private words of an Intel PT AUXTRACE_INFO, by index. */
enum {
	PT_INFO_PMU_TYPE,	/* attr.type of the intel_pt event */
	PT_INFO_TIME_SHIFT,
	PT_INFO_TIME_MULT,
	PT_INFO_TIME_ZERO,
	PT_INFO_CAP_USER_TIME_ZERO,
	PT_INFO_TSC_BIT,	/* config bit of TSCEn */
	PT_INFO_NORETCOMP_BIT,	/* config bit that disables compression */
	PT_INFO_HAVE_SCHED_SWITCH,
	PT_INFO_SNAPSHOT_MODE,
	PT_INFO_PER_CPU_MMAPS,
	PT_INFO_MIN = PT_INFO_PER_CPU_MMAPS + 1,	/* words always there */
	PT_INFO_MTC_BIT = PT_INFO_MIN,
	PT_INFO_MTC_FREQ_BITS,
	PT_INFO_TSC_CTC_N,
	PT_INFO_TSC_CTC_D,
	PT_INFO_CYC_BIT,
	PT_INFO_MAX_NONTURBO_RATIO,
	PT_INFO_FILTER_STR_LEN,
	PT_INFO_MAX,
};

/* PERF_RECORD_AUXTRACE: a piece of AUX data, whose @size bytes follow
 * the record (header.size does not count them).  @offset is where the
 * piece began in its AUX area, @idx the mmap (per thread or per CPU) it
 * was read from. */
struct perf_data_auxtrace {
	struct perf_event_header header;
	uint64_t size;
	uint64_t offset;
	uint64_t reference;
	uint32_t idx;
	uint32_t tid;
	uint32_t cpu;
	uint32_t reserved;
};

/* The Intel PT config bits of perf's default PMU format (and of the
 * fake Skylake-like PMU of the tests): pt, cyc, mtc, tsc, noretcomp,
 * branch, mtc_period (4 bits), psb_period (4 bits). */
#define PT_CONFIG_PT (1ull << 0)
#define PT_CONFIG_CYC (1ull << 1)
#define PT_CONFIG_MTC (1ull << 9)
#define PT_CONFIG_TSC (1ull << 10)
#define PT_CONFIG_NORETCOMP (1ull << 11)
#define PT_CONFIG_BRANCH (1ull << 13)
#define PT_CONFIG_MTC_PERIOD (0xfull << 14)
#define PT_CONFIG_PSB_PERIOD_SHIFT 24
#define PT_CONFIG_PSB_PERIOD (0xfull << PT_CONFIG_PSB_PERIOD_SHIFT)

#endif
