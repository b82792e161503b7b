# plugin/live/: a live, traced process under ptrr's control, for the
# server: run, stop, step, breakpoints, tracing on and off, the trace of
# each stop; and its tests.
noinst_LIBRARIES += plugin/live/liblive.a
plugin_live_liblive_a_SOURCES = plugin/live/live.h plugin/live/live_internal.h \
	plugin/live/live.c plugin/live/live_trace.c
# The server's target interface over a live session (for `ptrr serve --
# PROG`, once the server opens it).
plugin_live_liblive_a_SOURCES += plugin/gdbremote/live_target.h \
	plugin/gdbremote/live_target.c

# tests/live.sh drives tests/unit/test-live on the test programs.
noinst_PROGRAMS += tests/unit/test-live
tests_unit_test_live_SOURCES = tests/unit/test-live.c tests/unit/test.h
tests_unit_test_live_LDADD = plugin/live/liblive.a plugin/libcapture.a \
	history/libhistory.a $(DEPS_LIBS) -lpthread
check_SCRIPTS += tests/live.sh
EXTRA_DIST += tests/live.sh
