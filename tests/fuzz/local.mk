# tests/fuzz/: a harness per input ptrr never trusts (docs/reliability.md,
# "Fuzzing"): gdb's packets to ptrr serve, bundles, PT bytes, and a
# bundle's saved index (threads/TID.idx).  Each is
# built twice: with a plain driver (main.c) that `make check` runs over
# the inputs kept in tests/fuzz/HARNESS/ (tests/fuzz-regress.sh), and,
# under configure --enable-fuzz CC=clang, with libFuzzer, which `make
# fuzz` runs for FUZZ_TIME seconds each (tests/fuzz/run.sh).
FUZZ_NAMES = serve bundle pt index
FUZZ_COMMON = tests/fuzz/fuzz.h tests/fuzz/fuzz_common.c
FUZZ_LIBS = plugin/gdbremote/libgdbremote.a replay/libreplay.a \
	history/libhistory.a $(DEPS_LIBS)
FUZZ_REPLAY = tests/fuzz/replay-serve tests/fuzz/replay-bundle \
	tests/fuzz/replay-pt tests/fuzz/replay-index
EXTRA_PROGRAMS += $(FUZZ_REPLAY)
check_DATA += $(FUZZ_REPLAY)
CLEANFILES += $(FUZZ_REPLAY)
tests_fuzz_replay_serve_SOURCES = tests/fuzz/main.c \
	tests/fuzz/fuzz-serve.c plugin/cli_history.c $(FUZZ_COMMON)
tests_fuzz_replay_serve_LDADD = $(FUZZ_LIBS)
tests_fuzz_replay_bundle_SOURCES = tests/fuzz/main.c \
	tests/fuzz/fuzz-bundle.c $(FUZZ_COMMON)
tests_fuzz_replay_bundle_LDADD = $(FUZZ_LIBS)
tests_fuzz_replay_pt_SOURCES = tests/fuzz/main.c tests/fuzz/fuzz-pt.c \
	$(FUZZ_COMMON)
tests_fuzz_replay_pt_LDADD = $(FUZZ_LIBS)
tests_fuzz_replay_index_SOURCES = tests/fuzz/main.c \
	tests/fuzz/fuzz-index.c $(FUZZ_COMMON)
tests_fuzz_replay_index_LDADD = $(FUZZ_LIBS)

check_SCRIPTS += tests/fuzz-regress.sh
EXTRA_DIST += tests/fuzz-regress.sh tests/fuzz/run.sh tests/fuzz/serve.dict \
	tests/fuzz/bundle.dict tests/fuzz/coverage.ignore \
	tests/fuzz/serve tests/fuzz/bundle tests/fuzz/pt tests/fuzz/index

FUZZ_PROGS = tests/fuzz/fuzz-serve tests/fuzz/fuzz-bundle tests/fuzz/fuzz-pt \
	tests/fuzz/fuzz-index
EXTRA_PROGRAMS += $(FUZZ_PROGS)
CLEANFILES += $(FUZZ_PROGS)
tests_fuzz_fuzz_serve_SOURCES = tests/fuzz/fuzz-serve.c \
	plugin/cli_history.c $(FUZZ_COMMON)
tests_fuzz_fuzz_serve_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_serve_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_bundle_SOURCES = tests/fuzz/fuzz-bundle.c $(FUZZ_COMMON)
tests_fuzz_fuzz_bundle_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_bundle_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_pt_SOURCES = tests/fuzz/fuzz-pt.c $(FUZZ_COMMON)
tests_fuzz_fuzz_pt_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_pt_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_index_SOURCES = tests/fuzz/fuzz-index.c $(FUZZ_COMMON)
tests_fuzz_fuzz_index_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_index_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer

# make fuzz [FUZZ_TIME=SECONDS] [FUZZ_NAMES='serve pt'] [FUZZ_FLAGS=-runs=N]:
# each harness in turn on its corpus in fuzz/NAME (seeded from a
# recording of tests/progs/crash and tests/fuzz/NAME/), new crash
# inputs in fuzz/NAME-crash-*.
FUZZ_TIME = 60
FUZZ_FLAGS =
.PHONY: fuzz
if FUZZ
fuzz: $(FUZZ_PROGS) ptrr tests/progs/crash tests/progs/fnptr
	FUZZ_TIME='$(FUZZ_TIME)' FUZZ_FLAGS='$(FUZZ_FLAGS)' \
	  $(SHELL) $(srcdir)/tests/fuzz/run.sh '$(abs_top_srcdir)' $(FUZZ_NAMES)
else
fuzz:
	@echo "make fuzz: configure with --enable-fuzz CC=clang first" >&2; exit 1
endif
