/* `ptrr record` internals shared by record.c (options, the run) and
 * record_bundle.c (writing the bundle). */
#ifndef PTRR_RECORD_H
#define PTRR_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "capture/emit.h"
#include "capture/ring.h"
#include "capture/stepper.h"
#include "history.h"

enum rec_backend { REC_BACKEND_AUTO, REC_BACKEND_SOFT, REC_BACKEND_PERF };

struct rec_opts {
	const char *out;	/* -o BUNDLE */
	enum rec_backend backend;
	size_t buffer_size;	/* snapshot: ring size; full: the cap */
	bool full;		/* --mode=full */
	const char *start;	/* --start=SYMBOL|ADDR */
	bool pack;
	const char *truth;	/* --ground-truth=FILE */
	char **argv;		/* PROG ARGS */
};

struct recorder {
	const struct rec_opts *opts;
	struct cap_stepper st;
	struct cap_ring ring;
	struct cap_emit em;
	char *exe;		/* /proc/PID/exe */
	FILE *truth;
	bool overflowed;	/* full mode passed its cap */
	uint64_t dropped;	/* instructions lost to that */
	struct timespec t0;
};

/* Writes the recording @r to bundle directory @out; @interrupted says
 * the user stopped it. */
int rec_write_bundle(struct recorder *r, const char *out, bool interrupted);

#endif
