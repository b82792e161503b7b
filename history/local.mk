# history/: bundles, image, index, cursor, calls, symbols, disassembly.
noinst_LIBRARIES += history/libhistory.a
history_libhistory_a_SOURCES = \
	history/history.h \
	history/error.h \
	history/error.c
