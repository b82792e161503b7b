/* timeline-check FILE.json: checks that FILE is a Chrome trace-event
 * document as `ptrr export --perfetto` writes it, and lists its
 * activations for tests/export-timeline.sh to compare with ptrr
 * call-history.
 *
 * Checked: it is JSON (jansson reads it), with "traceEvents",
 * "displayTimeUnit" ("ms" or "ns") and "otherData" saying the time unit;
 * every complete event ("X") has a name, pid, tid, ts, dur >= 0 and its
 * entry range in args, its thread has a thread_name event, and within a
 * thread the events nest, in time and in entries: one that starts inside
 * another ends inside it, and they come in order of start.
 *
 * Prints one line per complete event, "TID FIRST LAST DEPTH NAME", and
 * exits 0; or says what is wrong on stderr and exits 1.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An open complete event of the thread being checked. */
struct open_event {
	long long end;		/* ns */
	json_int_t last;
};

static int fail(const char *what, size_t i)
{
	fprintf(stderr, "timeline-check: event %zu: %s\n", i, what);
	return 1;
}

/* Whether some thread_name event of @events names thread @tid. */
static int has_thread_name(json_t *events, json_int_t tid)
{
	size_t i;
	json_t *e;

	json_array_foreach(events, i, e) {
		if (!strcmp(json_string_value(json_object_get(e, "ph")) ?: "", "M") &&
		    !strcmp(json_string_value(json_object_get(e, "name")) ?: "",
			    "thread_name") &&
		    json_integer_value(json_object_get(e, "tid")) == tid &&
		    json_string_value(json_object_get(json_object_get(e, "args"),
						      "name")))
			return 1;
	}
	return 0;
}

/* Checks the complete events of thread @tid, in file order; prints them. */
static int check_thread(json_t *events, json_int_t tid,
			struct open_event *stack)
{
	size_t i, top = 0;
	long long prev_ts = -1;
	json_t *e;

	if (!has_thread_name(events, tid))
		return fail("its thread has no thread_name event", 0);
	json_array_foreach(events, i, e) {
		json_t *args = json_object_get(e, "args");
		/* In nanoseconds, the format's precision (ptrr writes TSC
		 * times as microseconds with three decimals): sums of the
		 * doubles themselves are off by rounding. */
		long long ts = llround(1000 *
			json_number_value(json_object_get(e, "ts")));
		long long dur = llround(1000 *
			json_number_value(json_object_get(e, "dur")));
		json_int_t first = json_integer_value(json_object_get(args, "first"));
		json_int_t last = json_integer_value(json_object_get(args, "last"));

		if (strcmp(json_string_value(json_object_get(e, "ph")), "X") ||
		    json_integer_value(json_object_get(e, "tid")) != tid)
			continue;
		if (ts < prev_ts)
			return fail("starts before the event before it", i);
		prev_ts = ts;
		while (top && stack[top - 1].last < first)
			top--;
		if (top && stack[top - 1].last < last)
			return fail("starts inside an event and ends after it", i);
		if (top && stack[top - 1].end < ts + dur)
			return fail("starts inside an event and ends after it "
				    "in time", i);
		printf("%lld %lld %lld %zu %s\n", (long long)tid,
		       (long long)first, (long long)last, top,
		       json_string_value(json_object_get(e, "name")));
		stack[top++] = (struct open_event){ ts + dur, last };
	}
	return 0;
}

/* Checks the fields of every event; the distinct tids into @tids. */
static int check_fields(json_t *events, json_int_t *tids, size_t *ntids)
{
	size_t i, k;
	json_t *e;

	json_array_foreach(events, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		json_t *args = json_object_get(e, "args");
		json_int_t tid;

		if (!ph || !json_is_integer(json_object_get(e, "pid")) ||
		    !json_is_integer(json_object_get(e, "tid")))
			return fail("no ph, pid or tid", i);
		if (strcmp(ph, "X"))
			continue;
		if (!json_string_value(json_object_get(e, "name")) ||
		    !json_is_number(json_object_get(e, "ts")) ||
		    !json_is_number(json_object_get(e, "dur")) ||
		    json_number_value(json_object_get(e, "dur")) < 0 ||
		    !json_is_integer(json_object_get(args, "first")) ||
		    !json_is_integer(json_object_get(args, "last")))
			return fail("an X event without name, ts, dur >= 0 or "
				    "args.first/last", i);
		tid = json_integer_value(json_object_get(e, "tid"));
		for (k = 0; k < *ntids && tids[k] != tid; k++)
			;
		if (k == *ntids)
			tids[(*ntids)++] = tid;
	}
	return 0;
}

int main(int argc, char **argv)
{
	json_error_t jerr;
	json_t *doc, *events, *other;
	const char *unit;
	json_int_t *tids;
	struct open_event *stack;
	size_t ntids = 0;
	int bad = 0;

	if (argc != 2) {
		fputs("usage: timeline-check FILE.json\n", stderr);
		return 2;
	}
	doc = json_load_file(argv[1], 0, &jerr);
	if (!doc) {
		fprintf(stderr, "timeline-check: %s:%d:%d: %s\n", argv[1],
			jerr.line, jerr.column, jerr.text);
		return 1;
	}
	events = json_object_get(doc, "traceEvents");
	unit = json_string_value(json_object_get(doc, "displayTimeUnit"));
	other = json_object_get(doc, "otherData");
	if (!json_is_array(events) || !unit || (strcmp(unit, "ms") &&
						strcmp(unit, "ns")) ||
	    !json_string_value(json_object_get(other, "time_unit"))) {
		fputs("timeline-check: no traceEvents array, displayTimeUnit "
		      "or otherData.time_unit\n", stderr);
		return 1;
	}
	tids = calloc(json_array_size(events) + 1, sizeof(*tids));
	stack = calloc(json_array_size(events) + 1, sizeof(*stack));
	bad = !tids || !stack || check_fields(events, tids, &ntids);
	for (size_t k = 0; !bad && k < ntids; k++)
		bad = check_thread(events, tids[k], stack);
	free(stack);
	free(tids);
	json_decref(doc);
	return bad;
}
