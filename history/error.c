/* ptrr's error strings and the per-thread detailed message. */
#include "error.h"

#include <stdio.h>

static _Thread_local char last_msg[1024];
/* A failure of ptrr_fail_at() not yet written into last_msg: @at_what
 * (a string constant) and @at_addr. */
static _Thread_local const char *at_what;
static _Thread_local uint64_t at_addr;

const char *ptrr_errstr(int err)
{
	switch (err) {
	case PTRR_OK: return "success";
	case PTRR_ERR_NOMEM: return "out of memory";
	case PTRR_ERR_IO: return "input/output error";
	case PTRR_ERR_BUNDLE: return "damaged recording";
	case PTRR_ERR_VERSION: return "recording from a newer ptrr";
	case PTRR_ERR_DECODE: return "trace decode error";
	case PTRR_ERR_RANGE: return "outside the recorded history";
	case PTRR_ERR_NOTFOUND: return "not found";
	case PTRR_ERR_USAGE: return "invalid request";
	case PTRR_ERR_UNSUPPORTED: return "not supported here";
	case PTRR_ERR_INTERNAL: return "internal error";
	case PTRR_ERR_GONE: return "the thread is gone";
	}
	return "unknown error";
}

int ptrr_vfail(int err, const char *fmt, va_list ap)
{
	at_what = NULL;
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	return err;
}

int ptrr_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ptrr_vfail(err, fmt, ap);
	va_end(ap);
	return err;
}

int ptrr_fail_at(int err, const char *what, uint64_t addr)
{
	at_what = what;
	at_addr = addr;
	return err;
}

/* Writes the failure ptrr_fail_at() recorded into last_msg. */
static void write_at(void)
{
	size_t n = 0, digits = 1;

	while (at_what[n] && n < sizeof(last_msg) - 20) {
		last_msg[n] = at_what[n];
		n++;
	}
	while (digits < 16 && at_addr >> 4 * digits)
		digits++;
	last_msg[n++] = ' ';
	last_msg[n++] = '0';
	last_msg[n++] = 'x';
	for (size_t i = digits; i-- > 0;)
		last_msg[n++] = "0123456789abcdef"[at_addr >> 4 * i & 0xf];
	last_msg[n] = '\0';
	at_what = NULL;
}

const char *ptrr_errmsg(int err)
{
	if (at_what)
		write_at();
	return last_msg[0] ? last_msg : ptrr_errstr(err);
}

void ptrr_clear_error(void)
{
	at_what = NULL;
	last_msg[0] = '\0';
}
