/* plugin/capture — the intel_pt PMU as the kernel describes it in sysfs.
 *
 * ROOT/bus/event_source/devices/intel_pt/ holds
 *   type         the number for perf_event_attr.type (decimal);
 *   format/NAME  where option NAME goes in perf_event_attr: a word and
 *                bit ranges, "config:0", "config:24-27", "config1:0-3,8"
 *                (a value's bits fill the ranges from the lowest bit up);
 *   caps/NAME    what this CPU supports, in hex ("psb_periods" "3f").
 * ROOT is /sys.  Tests point it at a tree of their own: a NULL @root
 * below means $PTRR_SYSFS_ROOT if set (a test hook, not for users), else
 * /sys.
 *
 * The CPU's identity for decoders (libipt applies errata by family,
 * model and stepping) comes from /proc/cpuinfo.
 */
#ifndef PTRR_CAP_PMU_H
#define PTRR_CAP_PMU_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "history.h"

#define CAP_PMU_SYSFS_ENV "PTRR_SYSFS_ROOT"
#define CAP_PMU_SUBDIR "/bus/event_source/devices/intel_pt"

struct cap_pmu {
	char dir[PATH_MAX];	/* ROOT/bus/event_source/devices/intel_pt */
	uint32_t type;
};

/* The three config words of perf_event_attr a format may name. */
struct cap_pmu_config {
	uint64_t word[3];	/* config, config1, config2 */
};

/* One parsed format/NAME file: which word, and which bits of it. */
struct cap_pmu_format {
	int word;		/* 0 config, 1 config1, 2 config2 */
	uint64_t mask;
};

/* Writes ROOT/bus/event_source/devices/intel_pt for @root (see above)
 * into @dir; true if that directory exists. */
bool cap_pmu_probe(const char *root, char *dir, size_t dirsz);

/* Opens the intel_pt PMU under @root: reads its type.  Without one,
 * PTRR_ERR_UNSUPPORTED with the message "intel_pt PMU not found (DIR):
 * this CPU or VM has no Intel PT". */
int cap_pmu_open(struct cap_pmu *p, const char *root);

/* Parses the text of a format file ("config:24-27"). */
int cap_pmu_parse_format(const char *text, struct cap_pmu_format *f);

/* True if the PMU has format term @name. */
bool cap_pmu_has(const struct cap_pmu *p, const char *name);

/* Sets term @name to @value in @cfg.  PTRR_ERR_NOTFOUND if the PMU has no
 * such term, PTRR_ERR_USAGE if @value does not fit its bits. */
int cap_pmu_set(const struct cap_pmu *p, const char *name, uint64_t value,
		struct cap_pmu_config *cfg);

/* Reads caps/@name (hex) into @value.  PTRR_ERR_NOTFOUND if absent. */
int cap_pmu_cap(const struct cap_pmu *p, const char *name, uint64_t *value);

/* Reads the CPU's vendor, family, model and stepping from @path (NULL:
 * /proc/cpuinfo), first processor. */
int cap_cpu_identify(const char *path, struct hist_cpu *cpu);

#endif
