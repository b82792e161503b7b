# plugin/live/: a live, traced process under ptrr's control, for the
# server: run, stop, step, breakpoints, tracing on and off, the trace of
# each stop; and its tests.
noinst_LIBRARIES += plugin/live/liblive.a
plugin_live_liblive_a_SOURCES = plugin/live/live.h plugin/live/live_internal.h \
	plugin/live/live.c plugin/live/live_trace.c \
	plugin/live/live_watch.c plugin/live/live_source.c \
	plugin/live/live_qemu.c plugin/live/qemu_stub.c plugin/live/qemu_stub.h
# The server's target interface over a live session (for `ptrr serve --
# PROG`, once the server opens it).
plugin_live_liblive_a_SOURCES += plugin/gdbremote/live_target.h \
	plugin/gdbremote/live_target.c plugin/gdbremote/live_files.c

# tests/live.sh drives tests/unit/test-live on the test programs.
noinst_PROGRAMS += tests/unit/test-live
tests_unit_test_live_SOURCES = tests/unit/test-live.c tests/unit/test.h \
	plugin/cli_history.c
tests_unit_test_live_LDADD = plugin/librecord.a plugin/live/liblive.a \
	plugin/gdbremote/libgdbremote.a replay/libreplay.a \
	plugin/libcapture.a plugin/liblaunch.a history/libhistory.a \
	$(DEPS_LIBS) -lpthread
check_SCRIPTS += tests/live.sh
EXTRA_DIST += tests/live.sh

# gdb against a live session: tests/live-gdb.sh runs gdb on ptrr serve
# --stdio; tests/qemu-live-gdb.sh on a QEMU session.
check_SCRIPTS += tests/live-gdb.sh tests/qemu-live-gdb.sh
EXTRA_DIST += tests/live-gdb.sh tests/qemu-live-gdb.sh
# gdb's watch, rwatch, awatch, hbreak, a faulting breakpoint and passed
# signals against `ptrr serve -- PROG`.
check_SCRIPTS += tests/live-gdb-watch.sh
EXTRA_DIST += tests/live-gdb-watch.sh
# A traced session steps in blocks (as ptrr record): stops and the
# history equal single-stepping's (--soft-step=insn), pt info says how.
check_SCRIPTS += tests/gdb-live-block.sh
EXTRA_DIST += tests/gdb-live-block.sh
