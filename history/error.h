/* ptrr's one error enum, shared by every module.
 *
 * Functions return 0 (or a non-negative count) on success and a negative
 * enum ptrr_error on failure.  The code says what kind of failure it was;
 * ptrr_errmsg() says, in one line a user can act on, what exactly failed
 * and what to do about it.  The message is per thread and is replaced by
 * the next failure on that thread.
 */
#ifndef PTRR_ERROR_H
#define PTRR_ERROR_H

#include <stdarg.h>
#include <stdint.h>

enum ptrr_error {
	PTRR_OK = 0,
	PTRR_ERR_NOMEM = -1,	/* out of memory */
	PTRR_ERR_IO = -2,	/* a system call on a file or process failed */
	PTRR_ERR_BUNDLE = -3,	/* a bundle is damaged or malformed */
	PTRR_ERR_VERSION = -4,	/* a bundle is of a newer format version */
	PTRR_ERR_DECODE = -5,	/* trace could not be decoded at all */
	PTRR_ERR_RANGE = -6,	/* position outside the recorded history */
	PTRR_ERR_NOTFOUND = -7,	/* no such symbol, thread, address ... */
	PTRR_ERR_USAGE = -8,	/* the caller asked for something invalid */
	PTRR_ERR_UNSUPPORTED = -9,	/* not available on this machine */
	PTRR_ERR_INTERNAL = -10,	/* a bug in ptrr */
	PTRR_ERR_GONE = -11,	/* the traced thread vanished (SIGKILL) */
};

/* A short, fixed description of @err ("out of memory"). */
const char *ptrr_errstr(int err);

/* Records a detailed message for the current failure and returns @err,
 * so that callers can write "return ptrr_fail(PTRR_ERR_IO, ...)". */
int ptrr_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int ptrr_vfail(int err, const char *fmt, va_list ap);

/* ptrr_fail(@err, "%s 0x%llx", @what, @addr), the message written only
 * when ptrr_errmsg() asks for it, for a failure that is an answer in a
 * hot loop (a symbol lookup that finds none, for every block the
 * call-segment pass walks in a program without symbols).  @what must be
 * a string constant. */
int ptrr_fail_at(int err, const char *what, uint64_t addr);

/* The detailed message of the last failure on this thread, or the fixed
 * description of @err if none was recorded since ptrr_clear_error(). */
const char *ptrr_errmsg(int err);
void ptrr_clear_error(void);

#endif
