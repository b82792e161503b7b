# bench/: benchmarks.  Not built by `make all`, not run by `make check`:
# `make bench` builds them (run-record.sh also needs `make`: ptrr and
# tests/progs/fnptr), bench/run-history.sh and bench/run-record.sh run
# them, and the results go to docs/performance.md.
BENCH_PROGS = bench/gen-trace bench/verify-trace bench/bench-history \
	bench/bare-step bench/sigstep bench/progs/mixed bench/progs/threads \
	bench/progs/recover
EXTRA_PROGRAMS = $(BENCH_PROGS)

BENCH_TRACE_SOURCES = bench/trace-info.c bench/trace-info.h
bench_gen_trace_SOURCES = bench/gen-trace.c bench/code.c bench/code.h \
	$(BENCH_TRACE_SOURCES)
bench_gen_trace_LDADD = $(DEPS_LIBS)
bench_verify_trace_SOURCES = bench/verify-trace.c $(BENCH_TRACE_SOURCES)
bench_verify_trace_LDADD = $(DEPS_LIBS)
bench_bench_history_SOURCES = bench/bench-history.c $(BENCH_TRACE_SOURCES)
bench_bench_history_LDADD = history/libhistory.a $(DEPS_LIBS)

# Recording (docs/performance.md, "Recording with the software backend"):
# the bare single-step rate, and the workload, built like the test
# programs (tests/local.mk's PROG_CFLAGS: plain -O2 -g, never sanitized).
bench_bare_step_SOURCES = bench/bare-step.c
bench_bare_step_LDADD = -lelf
bench_progs_mixed_SOURCES = bench/progs/mixed.c
bench_progs_mixed_CFLAGS = $(PROG_CFLAGS)
bench_progs_mixed_LDFLAGS =

# The QEMU backend (docs/performance.md, "Recording under QEMU"):
# threads computing, for the recording rate with 1, 4 and 16 threads
# (bench/run-qemu.sh).
# The native instruction count between two signals (bench/sigstep.c).
bench_sigstep_SOURCES = bench/sigstep.c
bench_progs_threads_SOURCES = bench/progs/threads.c
bench_progs_threads_CFLAGS = $(PROG_CFLAGS)
bench_progs_threads_LDFLAGS =
bench_progs_threads_LDADD = -lpthread

# Value recovery at a past position far from the end (docs/performance.md,
# "Value recovery at past positions").
bench_progs_recover_SOURCES = bench/progs/recover.c
bench_progs_recover_CFLAGS = -O1 -g -fno-omit-frame-pointer
bench_progs_recover_LDFLAGS =

EXTRA_DIST += bench/run-history.sh bench/run-record.sh bench/run-live-speed.sh \
	bench/run-live-stepi.sh \
	bench/run-depth.sh bench/run-qemu.sh bench/compare-histories.sh \
	bench/run-live-qemu.sh bench/run-first-step-cost.sh \
	bench/run-known.sh bench/run-recover.sh \
	bench/run-regs.sh \
	bench/run-values-real.sh
CLEANFILES += $(BENCH_PROGS)

.PHONY: bench
bench: $(BENCH_PROGS)

# The replay engine (replay/) on a generated trace: the first reverse
# step, reverse-continue across the whole history, the call stack.
BENCH_PROGS += bench/bench-replay
bench_bench_replay_SOURCES = bench/bench-replay.c $(BENCH_TRACE_SOURCES)
bench_bench_replay_LDADD = replay/libreplay.a history/libhistory.a \
	$(DEPS_LIBS)

# A bundle of a generated trace, for the gdb benchmark (bench/run-gdb.sh):
# gdb's record pt and ptrr's commands on the same bytes.
BENCH_PROGS += bench/trace-bundle
bench_trace_bundle_SOURCES = bench/trace-bundle.c $(BENCH_TRACE_SOURCES)
bench_trace_bundle_LDADD = history/libhistory.a $(DEPS_LIBS)

# What replay/known.c proves at past positions of real recordings
# (docs/performance.md, "What is known at past positions").
BENCH_PROGS += bench/known-coverage
bench_known_coverage_SOURCES = bench/known-coverage.c
bench_known_coverage_LDADD = replay/libreplay.a history/libhistory.a \
	$(DEPS_LIBS)
