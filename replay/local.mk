# replay/: the reverse-execution engine over history/ (replay.h), and
# its tests.  Link order: replay/libreplay.a history/libhistory.a
# $(DEPS_LIBS).
noinst_LIBRARIES += replay/libreplay.a
replay_libreplay_a_SOURCES = \
	replay/replay.h \
	replay/replay_internal.h \
	replay/replay.c \
	replay/frames.c
