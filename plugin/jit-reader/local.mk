# plugin/jit-reader/: ptrr's gdb JIT-reader unwinder (docs/unwinder.md),
# a module gdb loads with jit-reader-load: never sanitized (gdb is not:
# the per-target CFLAGS and LDFLAGS replace AM_CFLAGS and AM_LDFLAGS,
# which carry SAN_CFLAGS and SAN_LDFLAGS), built where gdb's
# jit-reader.h is.  In the build tree it is
# plugin/jit-reader/.libs/ptrr-unwind.so, installed
# $(pkglibdir)/ptrr-unwind.so: `ptrr replay` looks in both
# (plugin/gdb_launch.c).
if HAVE_JIT_READER
pkglib_LTLIBRARIES = plugin/jit-reader/ptrr-unwind.la
plugin_jit_reader_ptrr_unwind_la_SOURCES = plugin/jit-reader/ptrr-unwind.c \
	plugin/unwind_abi.h
plugin_jit_reader_ptrr_unwind_la_CFLAGS = -std=gnu11 -g -O2 $(WARN_CFLAGS)
plugin_jit_reader_ptrr_unwind_la_LDFLAGS = -module -avoid-version -shared

# The unwinder loaded with dlopen and driven through fake gdb callbacks
# (tests/unit/test-unwind.c, run by tests/unwind-unit.sh with the path
# of the module).
noinst_PROGRAMS += tests/unit/test-unwind
tests_unit_test_unwind_SOURCES = tests/unit/test-unwind.c tests/unit/test.h
tests_unit_test_unwind_LDADD = -ldl
tests_unit_test_unwind_DEPENDENCIES = plugin/jit-reader/ptrr-unwind.la
check_SCRIPTS += tests/unwind-unit.sh

# The unwinder in real gdb against ptrr serve, on recordings
# (tests/gdb-unwind.sh).
check_SCRIPTS += tests/gdb-unwind.sh
endif
EXTRA_DIST += tests/unwind-unit.sh tests/gdb-unwind.sh
