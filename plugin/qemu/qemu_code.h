/* plugin/qemu — `ptrr record --backend=qemu`'s side of the code the
 * plugin keeps from anonymous memory (qemu_shm.h, the file "code"). */
#ifndef PTRR_QEMU_CODE_H
#define PTRR_QEMU_CODE_H

#include "history.h"
#include "qemu/qemu_shm.h"

/* Adds to @b the code the guest ran in anonymous mapping @m, from the
 * records in @dir/code: one code blob per stretch of bytes QEMU
 * translated there, each byte as last translated; a note where the code
 * was rewritten while the program ran, or where none was kept. */
int qcode_add(struct hist_bundle *b, const char *dir,
	      const struct qshm_module *m);

/* Calls @fn with each block of code the plugin kept in @dir/code from
 * byte *@off of the file on (guest address, bytes), and moves *@off past
 * the last whole record: a live session's new code at each stop.  The
 * first error @fn returns ends it. */
int qcode_each(const char *dir, uint64_t *off,
	       int (*fn)(void *arg, uint64_t addr, const uint8_t *bytes,
			 size_t len),
	       void *arg);

#endif
