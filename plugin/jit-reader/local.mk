# plugin/jit-reader/: ptrr's gdb JIT-reader unwinder (docs/unwinder.md),
# a module gdb loads with jit-reader-load: never sanitized (gdb is not),
# built where gdb's jit-reader.h is.  In the build tree it is
# plugin/jit-reader/.libs/ptrr-unwind.so, where `ptrr replay` finds it.
if HAVE_JIT_READER
pkglib_LTLIBRARIES = plugin/jit-reader/ptrr-unwind.la
plugin_jit_reader_ptrr_unwind_la_SOURCES = plugin/jit-reader/ptrr-unwind.c \
	plugin/unwind_abi.h
plugin_jit_reader_ptrr_unwind_la_CFLAGS = -std=gnu11 -g -O2 $(WARN_CFLAGS)
plugin_jit_reader_ptrr_unwind_la_LDFLAGS = -module -avoid-version -shared
endif
