/* A timeline as Chrome trace-event JSON (the "JSON Object Format" of the
 * Trace Event Format document), which Perfetto and chrome://tracing open:
 * one track per thread (pid = the process, tid = the thread, named by
 * thread_name metadata events), a complete event ("ph": "X") per
 * activation, an instant event per gap.
 *
 * Timestamps are microseconds in the format.  Without timing packets,
 * one microsecond is one instruction (entry) and "displayTimeUnit" is
 * "ms"; with TSC, one nanosecond is one TSC tick and it is "ns".
 * "otherData" says which in words.
 */
#include <config.h>

#include "timeline.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

/* Time @t of the timeline as a JSON timestamp (see above). */
static json_t *stamp(const struct tl_timeline *tl, double t)
{
	double units = round(t);

	if (!tl->tsc)
		return json_integer((json_int_t)units);
	return json_real(units / 1000.0);
}

/* @v as "0x..." */
static json_t *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

/* The complete event of activation @a of thread @t. */
static json_t *act_event(const struct tl_timeline *tl,
			 const struct tl_thread *t, const struct tl_act *a)
{
	double start = round(tl_time(tl, t, a->first));
	double end = round(tl_time(tl, t, a->last + 1));

	return json_pack("{s:s, s:s, s:s, s:i, s:i, s:o, s:o, s:{s:o, s:I, s:I, s:I, s:b}}",
			 "name", a->name, "cat", "call", "ph", "X",
			 "pid", tl->pid, "tid", t->tid,
			 "ts", stamp(tl, start), "dur", stamp(tl, end - start),
			 "args", "function", hex(a->func),
			 "first", (json_int_t)a->first,
			 "last", (json_int_t)a->last,
			 "segments", (json_int_t)a->segments,
			 "tailcall", (int)a->tailcall);
}

/* The instant event of gap @g of thread @t. */
static json_t *gap_event(const struct tl_timeline *tl,
			 const struct tl_thread *t, const struct tl_gap *g)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:o, s:{s:I, s:s}}",
			 "name", "gap", "cat", "gap", "ph", "i", "s", "t",
			 "pid", tl->pid, "tid", t->tid,
			 "ts", stamp(tl, tl_time(tl, t, g->entry)),
			 "args", "entry", (json_int_t)g->entry,
			 "reason", g->reason);
}

/* A metadata event @name of thread @tid with argument @key = @value. */
static json_t *meta_event(const struct tl_timeline *tl, const char *name,
			  int tid, const char *key, json_t *value)
{
	return json_pack("{s:s, s:s, s:i, s:i, s:{s:o}}", "name", name,
			 "ph", "M", "pid", tl->pid, "tid", tid, "args", key,
			 value);
}

/* Appends @t's events to @events: its name, then its activations in
 * order of start (callers before their callees), then its gaps. */
static int add_thread(const struct tl_timeline *tl, size_t i, json_t *events)
{
	const struct tl_thread *t = &tl->threads[i];
	char name[64];
	int err = 0;

	snprintf(name, sizeof(name), "thread %d", t->tid);
	err |= json_array_append_new(events, meta_event(tl, "thread_name",
				     t->tid, "name", json_string(name)));
	err |= json_array_append_new(events, meta_event(tl,
				     "thread_sort_index", t->tid,
				     "sort_index", json_integer((json_int_t)i)));
	for (size_t k = 0; k < t->nacts; k++)
		err |= json_array_append_new(events,
					     act_event(tl, t, &t->acts[k]));
	for (size_t k = 0; k < t->ngaps; k++)
		err |= json_array_append_new(events,
					     gap_event(tl, t, &t->gaps[k]));
	return err ? ptrr_fail(PTRR_ERR_NOMEM, "out of memory") : 0;
}

/* The "otherData" object: where the timeline comes from, its unit. */
static json_t *other_data(const struct tl_timeline *tl)
{
	const char *note = tl->tsc ?
		"ts and dur are TSC ticks read as nanoseconds (1 us = 1000 ticks): "
		"the TSC of each PSB, interpolated by instruction in between" :
		"ts and dur count instructions (history entries) read as "
		"microseconds (1 us = 1 instruction): the trace has no timing "
		"packets; entry N starts at N - 1";

	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "producer",
			 "ptrr " PACKAGE_VERSION, "program", tl->exe,
			 "time_unit", tl->tsc ? "tsc" : "instructions",
			 "note", note, "nesting",
			 "an activation spans a function instance from its "
			 "first call segment to its last, holding its callees");
}

/* tl_write_file() callback: dumps the JSON document @ctx to @out, one
 * event a line. */
static int dump_json(FILE *out, void *ctx)
{
	const size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15);
	json_t *events = json_object_get(ctx, "traceEvents"), *v;
	const char *key;
	size_t i;
	int err = fputs("{\"traceEvents\":[\n", out) < 0;

	json_array_foreach(events, i, v) {
		err |= json_dumpf(v, out, flags) < 0;
		err |= fputs(i + 1 < json_array_size(events) ? ",\n" : "\n",
			     out) < 0;
	}
	fputs("]", out);
	json_object_foreach(ctx, key, v) {
		if (v == events)
			continue;
		err |= fprintf(out, ",\n\"%s\":", key) < 0;
		err |= json_dumpf(v, out, flags | JSON_ENCODE_ANY) < 0;
	}
	err |= fputs("}\n", out) < 0;
	return err ? ptrr_fail(PTRR_ERR_IO, "cannot write the JSON") : 0;
}

int tl_write_perfetto(const struct tl_timeline *tl, const char *path)
{
	json_t *events = json_array(), *doc;
	const char *base = strrchr(tl->exe, '/');
	int err = events ? 0 : ptrr_fail(PTRR_ERR_NOMEM, "out of memory");

	if (!err && json_array_append_new(events, meta_event(tl,
			"process_name", tl->pid, "name",
			json_string(base ? base + 1 : tl->exe))) < 0)
		err = ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; !err && i < tl->nthreads; i++)
		err = add_thread(tl, i, events);
	doc = json_pack("{s:o, s:s, s:o}", "traceEvents", events,
			"displayTimeUnit", tl->tsc ? "ns" : "ms",
			"otherData", other_data(tl));
	if (!doc)
		return err ? err : ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
	if (!err)
		err = tl_write_file(path, dump_json, doc);
	json_decref(doc);
	return err;
}
