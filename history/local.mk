# history/: bundles, image, index, cursor, calls, symbols, disassembly.
noinst_LIBRARIES += history/libhistory.a
history_libhistory_a_SOURCES = \
	history/history.h \
	history/error.h \
	history/error.c
history_libhistory_a_SOURCES += \
	history/history_internal.h \
	history/image.c \
	history/walk.c \
	history/segment.c \
	history/index.c \
	history/index_file.c \
	history/parallel.c \
	history/cursor.c \
	history/search.c \
	history/recording.c
history_libhistory_a_SOURCES += \
	history/bundle_internal.h \
	history/bundle.c \
	history/bundle_fs.c \
	history/bundle_save.c \
	history/bundle_load.c \
	history/bundle_json.c \
	history/buildid.c
history_libhistory_a_SOURCES += \
	history/symbols.c \
	history/cfi.c \
	history/stack.c \
	history/effect.c \
	history/regsnap.c \
	history/debuginfo.c
history_libhistory_a_SOURCES += \
	history/disasm.c
history_libhistory_a_SOURCES += \
	history/calls.c \
	history/calls_store.c
