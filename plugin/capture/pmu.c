/* The intel_pt PMU in sysfs, and the CPU's identity; see pmu.h. */
#include <config.h>

#include "capture/pmu.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The sysfs root: @root, else $PTRR_SYSFS_ROOT, else /sys. */
static const char *sysfs_root(const char *root)
{
	const char *env = getenv(CAP_PMU_SYSFS_ENV);

	if (root)
		return root;
	return env && *env ? env : "/sys";
}

bool cap_pmu_probe(const char *root, char *dir, size_t dirsz)
{
	struct stat st;

	snprintf(dir, dirsz, "%s%s", sysfs_root(root), CAP_PMU_SUBDIR);
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Reads the first line of file @rel under the PMU directory into @buf,
 * without its newline.  PTRR_ERR_NOTFOUND if it does not exist. */
static int read_line(const struct cap_pmu *p, const char *rel, char *buf,
		     size_t size)
{
	char path[PATH_MAX + 64];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", p->dir, rel);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT
			? ptrr_fail(PTRR_ERR_NOTFOUND, "%s does not exist", path)
			: ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", path,
				    strerror(errno));
	buf[0] = 0;
	if (!fgets(buf, (int) size, f))
		err = ptrr_fail(PTRR_ERR_IO, "%s is empty", path);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return err;
}

int cap_pmu_open(struct cap_pmu *p, const char *root)
{
	char line[64], *end;
	unsigned long type;
	int err;

	memset(p, 0, sizeof(*p));
	if (!cap_pmu_probe(root, p->dir, sizeof(p->dir)))
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "intel_pt PMU not found "
				 "(%s): this CPU or VM has no Intel PT", p->dir);
	err = read_line(p, "type", line, sizeof(line));
	if (err)
		return err == PTRR_ERR_NOTFOUND
			? ptrr_fail(PTRR_ERR_IO, "%s/type is missing: the "
				    "intel_pt PMU is not usable", p->dir)
			: err;
	errno = 0;
	type = strtoul(line, &end, 10);
	if (errno || end == line || *end || type > UINT32_MAX)
		return ptrr_fail(PTRR_ERR_IO, "%s/type holds '%s', not a PMU "
				 "type number", p->dir, line);
	p->type = (uint32_t) type;
	return 0;
}

/* Parses one bit range "A" or "A-B" at *@s into @mask; advances *@s. */
static bool parse_range(const char **s, uint64_t *mask)
{
	char *end;
	unsigned long lo, hi;

	errno = 0;
	lo = strtoul(*s, &end, 10);
	if (errno || end == *s)
		return false;
	hi = lo;
	if (*end == '-') {
		const char *from = end + 1;

		hi = strtoul(from, &end, 10);
		if (errno || end == from)
			return false;
	}
	if (lo > hi || hi > 63)
		return false;
	for (unsigned long b = lo; b <= hi; b++)
		*mask |= 1ull << b;
	*s = end;
	return true;
}

int cap_pmu_parse_format(const char *text, struct cap_pmu_format *f)
{
	static const char *const words[] = { "config", "config1", "config2" };
	const char *colon = strchr(text, ':'), *s;
	size_t len = colon ? (size_t) (colon - text) : 0;

	memset(f, 0, sizeof(*f));
	f->word = -1;
	for (int i = 0; i < 3; i++)
		if (colon && strlen(words[i]) == len &&
		    !strncmp(text, words[i], len))
			f->word = i;
	s = colon ? colon + 1 : text;
	while (f->word >= 0 && parse_range(&s, &f->mask) && *s == ',' &&
	       s[1])
		s++;
	if (f->word < 0 || !f->mask || *s)
		return ptrr_fail(PTRR_ERR_UNSUPPORTED, "unknown PMU format "
				 "'%s' (expected config[12]:BITS)", text);
	return 0;
}

/* Reads and parses format/@name. */
static int read_format(const struct cap_pmu *p, const char *name,
		       struct cap_pmu_format *f)
{
	char rel[128], line[128];
	int err;

	snprintf(rel, sizeof(rel), "format/%s", name);
	err = read_line(p, rel, line, sizeof(line));
	return err ? err : cap_pmu_parse_format(line, f);
}

bool cap_pmu_has(const struct cap_pmu *p, const char *name)
{
	struct cap_pmu_format f;

	return read_format(p, name, &f) == 0;
}

/* Spreads the bits of @value over the set bits of @mask, lowest first;
 * false if @value has more bits than @mask has room for. */
static bool deposit(uint64_t value, uint64_t mask, uint64_t *out)
{
	*out = 0;
	for (int b = 0; b < 64 && value; b++) {
		if (!(mask >> b & 1))
			continue;
		*out |= (value & 1) << b;
		value >>= 1;
	}
	return value == 0;
}

int cap_pmu_set(const struct cap_pmu *p, const char *name, uint64_t value,
		struct cap_pmu_config *cfg)
{
	struct cap_pmu_format f;
	uint64_t bits;
	int err = read_format(p, name, &f);

	if (err)
		return err == PTRR_ERR_NOTFOUND
			? ptrr_fail(PTRR_ERR_NOTFOUND, "the intel_pt PMU has "
				    "no '%s' option (%s/format/%s)", name,
				    p->dir, name)
			: err;
	if (!deposit(value, f.mask, &bits))
		return ptrr_fail(PTRR_ERR_USAGE, "intel_pt option %s=%" PRIu64
				 " does not fit its bits (mask 0x%" PRIx64 ")",
				 name, value, f.mask);
	cfg->word[f.word] = (cfg->word[f.word] & ~f.mask) | bits;
	return 0;
}

int cap_pmu_cap(const struct cap_pmu *p, const char *name, uint64_t *value)
{
	char rel[128], line[64], *end;
	int err;

	snprintf(rel, sizeof(rel), "caps/%s", name);
	err = read_line(p, rel, line, sizeof(line));
	if (err)
		return err;
	errno = 0;
	*value = strtoull(line, &end, 16);
	if (errno || end == line || *end)
		return ptrr_fail(PTRR_ERR_IO, "%s/caps/%s holds '%s', not a hex "
				 "number", p->dir, name, line);
	return 0;
}

/* Stores the value of cpuinfo line "@key : value" from @line in @cpu. */
static void cpuinfo_field(const char *line, struct hist_cpu *cpu,
			  unsigned *seen)
{
	const char *colon = strchr(line, ':');
	const char *v = colon ? colon + 1 + strspn(colon + 1, " \t") : NULL;
	size_t klen = colon ? strcspn(line, "\t:") : 0;

	if (!v)
		return;
	if (klen == 9 && !strncmp(line, "vendor_id", 9)) {
		snprintf(cpu->vendor, sizeof(cpu->vendor), "%.*s",
			 (int) strcspn(v, " \n"), v);
		*seen |= 1;
	} else if (klen == 10 && !strncmp(line, "cpu family", 10)) {
		cpu->family = (uint16_t) strtoul(v, NULL, 10);
		*seen |= 2;
	} else if (klen == 5 && !strncmp(line, "model", 5)) {
		cpu->model = (uint8_t) strtoul(v, NULL, 10);
		*seen |= 4;
	} else if (klen == 8 && !strncmp(line, "stepping", 8)) {
		cpu->stepping = (uint8_t) strtoul(v, NULL, 10);
		*seen |= 8;
	}
}

int cap_cpu_identify(const char *path, struct hist_cpu *cpu)
{
	char line[512];
	unsigned seen = 0;
	FILE *f;

	if (!path)
		path = "/proc/cpuinfo";
	memset(cpu, 0, sizeof(*cpu));
	f = fopen(path, "r");
	if (!f)
		return ptrr_fail(PTRR_ERR_IO, "cannot read %s: %s", path,
				 strerror(errno));
	/* The first processor's block ends at the first empty line. */
	while (fgets(line, sizeof(line), f) && line[0] != '\n')
		cpuinfo_field(line, cpu, &seen);
	fclose(f);
	if (seen != 15)
		return ptrr_fail(PTRR_ERR_IO, "%s lacks the vendor_id, cpu "
				 "family, model or stepping of the CPU", path);
	return 0;
}
