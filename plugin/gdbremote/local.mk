# plugin/gdbremote/: `ptrr serve`, the gdb remote serial protocol server
# (docs/server.md), and its tests.  The protocol and the replay target
# are a library, shared by ptrr and tests/unit/test-rsp.
noinst_LIBRARIES += plugin/gdbremote/libgdbremote.a
plugin_gdbremote_libgdbremote_a_SOURCES = \
	plugin/gdbremote/rsp_conn.h \
	plugin/gdbremote/rsp_conn.c \
	plugin/gdbremote/server.h \
	plugin/gdbremote/server.c \
	plugin/gdbremote/processes.c \
	plugin/gdbremote/nonstop.c \
	plugin/gdbremote/regs.c \
	plugin/gdbremote/btrace.h \
	plugin/gdbremote/btrace.c \
	plugin/gdbremote/target.h \
	plugin/gdbremote/target_replay.h \
	plugin/gdbremote/target_replay.c \
	plugin/gdbremote/unwind_range.c \
	plugin/gdbremote/libs.c \
	plugin/gdbremote/monitor.c \
	plugin/gdbremote/hostio.c \
	plugin/gdbremote/module_files.c \
	plugin/gdbremote/debug_files.h \
	plugin/gdbremote/debug_files.c \
	plugin/gdbremote/lldb_query.h \
	plugin/gdbremote/lldb_query.c
ptrr_SOURCES += plugin/gdbremote/serve.c
# The live target (plugin/live/liblive.a) for `ptrr serve -- PROG`.
ptrr_LDADD += plugin/live/liblive.a plugin/gdbremote/libgdbremote.a \
	replay/libreplay.a plugin/libcapture.a history/libhistory.a \
	$(DEPS_LIBS) -lpthread

# gdb on recordings through ptrr replay: reverse execution from a crash,
# breakpoints backwards, the ends of history, threads, libraries, the pt
# listings, malformed packets (tests/gdb-replay.sh).
check_SCRIPTS += tests/gdb-replay.sh
EXTRA_DIST += tests/gdb-replay.sh

# gdb reading the program's files through the server (vFile), and only
# those (tests/gdb-hostio.sh).
check_SCRIPTS += tests/gdb-hostio.sh
EXTRA_DIST += tests/gdb-hostio.sh
# Quiet sessions: gdb reads local files in ptrr replay and ptrr gdb;
# through the server, the debug files of the program's modules and no
# other (tests/gdb-debug-files.sh).
check_SCRIPTS += tests/gdb-debug-files.sh
EXTRA_DIST += tests/gdb-debug-files.sh

# Recordings that moved (--pack, the program gone) or were damaged,
# through ptrr replay (tests/replay-damaged.sh).
check_SCRIPTS += tests/replay-damaged.sh
EXTRA_DIST += tests/replay-damaged.sh

# The index a bundle keeps (threads/TID.idx): read instead of decoding
# the trace again, the same history with it and without, damaged ones
# not used (tests/replay-index.sh).
check_SCRIPTS += tests/replay-index.sh
EXTRA_DIST += tests/replay-index.sh

# Reverse execution in live sessions: ptrr gdb with pt start or
# --record-from-start, back and forth through the trace so far, pt save
# (tests/gdb-live-reverse.sh).
check_SCRIPTS += tests/gdb-live-reverse.sh
EXTRA_DIST += tests/gdb-live-reverse.sh

# A run that overfills a live session's trace buffer: the warning, the
# count, an overflow gap before the stop, and the history going on after
# it (tests/gdb-live-overflow.sh).
check_SCRIPTS += tests/gdb-live-overflow.sh
EXTRA_DIST += tests/gdb-live-overflow.sh

# Running a live program again in ptrr gdb (extended-remote): run, start,
# kill, detach and quit, the history of each run its own, and vRun
# packets, malformed or refused (tests/gdb-live-restart.sh).
check_SCRIPTS += tests/gdb-live-restart.sh
EXTRA_DIST += tests/gdb-live-restart.sh
# gdbserver's --multi and --attach: no program until gdb runs one, runs
# between which the program exits, gdb's attach, detach, kill, the
# server listening on (tests/gdb-multi.sh).
check_SCRIPTS += tests/gdb-multi.sh
EXTRA_DIST += tests/gdb-multi.sh
# Several processes under one --multi server with gdb's multiprocess
# extensions: each traced and reversed on its own, thread lists per
# process, kill and detach of one leaving the other
# (tests/gdb-multiproc.sh).
check_SCRIPTS += tests/gdb-multiproc.sh
EXTRA_DIST += tests/gdb-multiproc.sh

# gdb killed mid-command (continue, traced or not; stepping back through
# a recording): the program killed, stopped or let
# go as --on-disconnect says, and the server ends (tests/gdb-disconnect.sh).
check_SCRIPTS += tests/gdb-disconnect.sh
EXTRA_DIST += tests/gdb-disconnect.sh

# gdb's own record pt through ptrr serve, decoded by gdb's libipt: its
# histories against ptrr's (tests/gdb-btrace.sh).
check_SCRIPTS += tests/gdb-btrace.sh
EXTRA_DIST += tests/gdb-btrace.sh

# What GDB's own testsuite found gdbserver does and ptrr did not (issue
# 22; tests/gdbsuite/run.sh runs that suite): empty traces, the buffer
# size in effect, "new" trace reads (tests/gdb-conformance.sh).
check_SCRIPTS += tests/gdb-conformance.sh
EXTRA_DIST += tests/gdb-conformance.sh tests/gdbsuite/run.sh \
	tests/gdbsuite/ptrr.exp

# The protocol's framing on pipes (tests/unit/test-rsp.c); with a bundle,
# which tests/gdb-rsp-dispatch.sh records, malformed and random packets
# dispatched to the replay target.
check_PROGRAMS += tests/unit/test-rsp
tests_unit_test_rsp_SOURCES = tests/unit/test-rsp.c tests/unit/test.h \
	plugin/cli_history.c
tests_unit_test_rsp_LDADD = plugin/gdbremote/libgdbremote.a \
	replay/libreplay.a history/libhistory.a $(DEPS_LIBS)
check_SCRIPTS += tests/gdb-rsp-dispatch.sh
EXTRA_DIST += tests/gdb-rsp-dispatch.sh

# gdb's non-stop mode on live sessions, through expect
# (tests/gdb-nonstop.sh).
check_SCRIPTS += tests/gdb-nonstop.sh
EXTRA_DIST += tests/gdb-nonstop.sh tests/gdb-nonstop.exp

# ptrr replay on a terminal, through expect (tests/gdb-tty.sh).
check_SCRIPTS += tests/gdb-tty.sh
EXTRA_DIST += tests/gdb-tty.sh tests/gdb-tty.exp
