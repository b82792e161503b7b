# plugin/qemu/: ptrr's TCG plugin for qemu-x86_64 (`ptrr record
# --backend=qemu`, plugin/record_qemu.c), a module QEMU loads with
# -plugin.  Never sanitized (QEMU is not): the per-target CFLAGS and
# LDFLAGS replace AM_CFLAGS and AM_LDFLAGS.  It carries its own copy of
# the software backend's emitter, ring and instruction classifier, so
# its packets follow the same rules.  In the build tree it is
# plugin/qemu/.libs/ptrr-qemu.so, installed $(pkglibdir)/ptrr-qemu.so
# (plugin/launch_qemu.c looks in both).
qemuplugindir = $(pkglibdir)
qemuplugin_LTLIBRARIES = plugin/qemu/ptrr-qemu.la
plugin_qemu_ptrr_qemu_la_SOURCES = plugin/qemu/ptrr-qemu.c \
	plugin/qemu/qemu_frame.c plugin/qemu/qemu_frame.h \
	plugin/qemu/qemu_shm.h \
	plugin/capture/emit.c plugin/capture/ring.c plugin/capture/insn.c \
	history/error.c
plugin_qemu_ptrr_qemu_la_CFLAGS = -std=gnu11 -g -O2 -fvisibility=hidden \
	$(WARN_CFLAGS)
plugin_qemu_ptrr_qemu_la_LDFLAGS = -module -avoid-version -shared
plugin_qemu_ptrr_qemu_la_LIBADD = -lipt -lZydis -lpthread
