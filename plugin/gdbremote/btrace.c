/* gdb's branch-trace documents (btrace.h). */
#include <config.h>

#include "gdbremote/btrace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rsp_btrace_parse_read(const char *annex)
{
	if (!strcmp(annex, "all"))
		return RSP_BTRACE_ALL;
	if (!strcmp(annex, "new"))
		return RSP_BTRACE_NEW;
	if (!strcmp(annex, "delta"))
		return RSP_BTRACE_DELTA;
	return -1;
}

char *rsp_btrace_conf_xml(int enabled, uint64_t size)
{
	char format[64] = "";
	char *xml;

	if (enabled)
		snprintf(format, sizeof(format), "<pt size=\"0x%" PRIx64
			 "\"/>\n", size);
	if (asprintf(&xml, "<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n"
		     "<btrace-conf version=\"1.0\">\n%s</btrace-conf>\n",
		     format) < 0)
		return NULL;
	return xml;
}

char *rsp_btrace_xml(const struct hist_cpu *cpu, const uint8_t *trace,
		     size_t size, size_t *len)
{
	static const char hex[] = "0123456789abcdef";
	char head[256], *xml, *p;
	int n;

	n = snprintf(head, sizeof(head),
		     "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n"
		     "<btrace version=\"1.0\">\n<pt>\n<pt-config>\n");
	if (!strcmp(cpu->vendor, "GenuineIntel"))
		n += snprintf(head + n, sizeof(head) - (size_t) n,
			      "<cpu vendor=\"GenuineIntel\" family=\"%u\" "
			      "model=\"%u\" stepping=\"%u\"/>\n",
			      cpu->family, cpu->model, cpu->stepping);
	n += snprintf(head + n, sizeof(head) - (size_t) n, "</pt-config>\n");
	if (size > (SIZE_MAX - 64 - (size_t) n) / 2)
		return NULL;
	xml = malloc((size_t) n + 2 * size + 64);
	if (!xml)
		return NULL;
	memcpy(xml, head, (size_t) n);
	p = xml + n;
	/* gdbserver writes no raw element for an empty trace. */
	if (size) {
		p += sprintf(p, "<raw>\n");
		for (size_t i = 0; i < size; i++) {
			*p++ = hex[trace[i] >> 4];
			*p++ = hex[trace[i] & 0xf];
		}
		p += sprintf(p, "</raw>\n");
	}
	p += sprintf(p, "</pt>\n</btrace>\n");
	*len = (size_t) (p - xml);
	return xml;
}

int rsp_btrace_parse_size(const char *arg, uint64_t *size)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 16);
	if (errno || end == arg || *end || v == 0 || arg[0] == '-')
		return -1;
	/* perf's AUX area: a power of two of 4kB pages. */
	*size = 4096;
	while (*size < v && *size < RSP_BTRACE_SIZE_MAX)
		*size <<= 1;
	return 0;
}

size_t rsp_btrace_window(const uint8_t *trace, size_t size,
			 uint64_t buffer)
{
	uint64_t at;

	if (size <= buffer)
		return 0;
	if (hist_next_psb(trace, size, size - buffer, &at) < 0)
		return size;
	return (size_t) at;
}
