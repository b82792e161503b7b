/* Where ptrr's QEMU plugin is: the build tree's when this program runs
 * from the build tree (ptrr, or a test of tests/unit), else the
 * installed one in $(pkglibdir). */
#include <config.h>

#include "launch.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *launch_qemu_plugin(void)
{
	char self[PATH_MAX], built[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = 0;
	snprintf(built, sizeof(built), "%s/", PTRR_BUILDDIR);
	if (!strncmp(self, built, strlen(built)))
		snprintf(path, sizeof(path), "%s/plugin/qemu/.libs/"
			 "ptrr-qemu.so", PTRR_BUILDDIR);
	else
		snprintf(path, sizeof(path), "%s/ptrr-qemu.so",
			 PTRR_LAUNCH_PKGLIBDIR);
	return access(path, R_OK) == 0 ? strdup(path) : NULL;
}
