/* plugin/gdbremote — separate debug files gdb asks the server for
 * (debug_files.c). */
#ifndef PTRR_RSP_DEBUG_FILES_H
#define PTRR_RSP_DEBUG_FILES_H

#include <stdbool.h>
#include <stddef.h>

/* True if @name is what gdb opens when it looks for a separate debug
 * file (DIR/.build-id/xx/rest.debug, DIR/NAME.debug ...): a refusal of
 * it is no news worth a line. */
bool rsp_debug_file_name(const char *name);

/* Opens @name, for gdb's vFile:open, if it is a separate debug file of a
 * module whose build-id (lower-case hex) is one of the @n in @ids: a
 * debug-file name, absolute, without "." or ".." components, of a
 * regular ELF file on this machine with that build-id.  An fd, or a
 * negative error saying why not. */
int rsp_open_debug_file(const char *name, char *const *ids, size_t n);

#endif
