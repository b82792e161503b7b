# bench/: benchmarks.  Not built by `make all`, not run by `make check`:
# `make bench` builds them, bench/run-history.sh runs them, and the
# results go to docs/performance.md.
BENCH_PROGS = bench/gen-trace bench/verify-trace bench/bench-history
EXTRA_PROGRAMS = $(BENCH_PROGS)

BENCH_TRACE_SOURCES = bench/trace-info.c bench/trace-info.h
bench_gen_trace_SOURCES = bench/gen-trace.c bench/code.c bench/code.h \
	$(BENCH_TRACE_SOURCES)
bench_gen_trace_LDADD = $(DEPS_LIBS)
bench_verify_trace_SOURCES = bench/verify-trace.c $(BENCH_TRACE_SOURCES)
bench_verify_trace_LDADD = $(DEPS_LIBS)
bench_bench_history_SOURCES = bench/bench-history.c $(BENCH_TRACE_SOURCES)
bench_bench_history_LDADD = history/libhistory.a $(DEPS_LIBS)

EXTRA_DIST += bench/run-history.sh
CLEANFILES += $(BENCH_PROGS)

.PHONY: bench
bench: $(BENCH_PROGS)
