# replay/: the reverse-execution engine over history/ (replay.h), and
# its tests.  Link order: replay/libreplay.a history/libhistory.a
# $(DEPS_LIBS).
noinst_LIBRARIES += replay/libreplay.a
replay_libreplay_a_SOURCES = \
	replay/replay.h \
	replay/replay_internal.h \
	replay/replay.c \
	replay/frames.c \
	replay/known.c \
	replay/recover_internal.h \
	replay/recover.c \
	replay/forward.c \
	replay/saved.c \
	replay/evidence.c \
	replay/watch.c

# The engine on real recordings: tests/replay.sh records the test
# programs and runs tests/unit/test-replay on the bundles.
noinst_PROGRAMS += tests/unit/test-replay
tests_unit_test_replay_SOURCES = tests/unit/test-replay.c \
	tests/unit/test-replay.h tests/unit/test-replay-continue.c \
	tests/unit/test-replay-frames.c tests/unit/test-replay-window.c \
	tests/unit/test.h
tests_unit_test_replay_LDADD = replay/libreplay.a history/libhistory.a \
	$(DEPS_LIBS)
check_SCRIPTS += tests/replay.sh
EXTRA_DIST += tests/replay.sh
