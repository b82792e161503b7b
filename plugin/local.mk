# plugin/: the ptrr program — its subcommands, the history browser and
# shell, and (as they land) capture, the gdb server and the gdb plugin.
bin_PROGRAMS += ptrr
ptrr_SOURCES = \
	plugin/ptrr.c \
	plugin/commands.h \
	plugin/cli.h \
	plugin/cli_history.c \
	plugin/shell.c \
	plugin/lldb_trace.h \
	plugin/lldb_trace.c \
	plugin/export_lldb.c \
	plugin/import_lldb.c \
	plugin/perf_data.h \
	plugin/export_perf.h \
	plugin/export_perf.c \
	plugin/import_perf.h \
	plugin/import_perf.c \
	plugin/import_perf_stream.c \
	plugin/import_perf_cpu.c \
	plugin/import_raw.h \
	plugin/import_raw.c
ptrr_LDADD = history/libhistory.a $(DEPS_LIBS) -lreadline

# ptrr export --perfetto / --svg: the call history as a timeline.
ptrr_SOURCES += plugin/timeline.h plugin/timeline.c plugin/timeline_time.c \
	plugin/timeline_json.c plugin/timeline_svg.c plugin/export_timeline.c
ptrr_LDADD += -lm

# Capture: the software PT backend (plugin/capture) and `ptrr record`.
# The library is shared with the tests and bench/.
noinst_LIBRARIES += plugin/libcapture.a
plugin_libcapture_a_SOURCES = \
	plugin/capture/insn.h \
	plugin/capture/insn.c \
	plugin/capture/operand.h \
	plugin/capture/operand.c \
	plugin/capture/ring.h \
	plugin/capture/ring.c \
	plugin/capture/emit.h \
	plugin/capture/emit.c \
	plugin/capture/stepper.h \
	plugin/capture/stepper_internal.h \
	plugin/capture/stepper.c \
	plugin/capture/signals.c \
	plugin/capture/threads.c \
	plugin/capture/loop.c \
	plugin/capture/launch.c \
	plugin/capture/runto.c \
	plugin/capture/branch.h \
	plugin/capture/branch.c \
	plugin/capture/block.c \
	plugin/capture/procmaps.h \
	plugin/capture/procmaps.c \
	plugin/capture/elfsym.h \
	plugin/capture/elfsym.c \
	plugin/capture/affinity.h \
	plugin/capture/affinity.c
# The hardware backend: perf intel_pt events (perf_pt.h), the PMU in
# sysfs, the AUX area.
plugin_libcapture_a_SOURCES += \
	plugin/capture/pmu.h \
	plugin/capture/pmu.c \
	plugin/capture/aux.h \
	plugin/capture/aux.c \
	plugin/capture/perf_pt.h \
	plugin/capture/perf_pt.c \
	plugin/capture/perf_filter.c \
	plugin/capture/perf_err.c \
	plugin/capture/native.c
# The trace sources (source.h): soft, perf and QEMU behind one table,
# and `ptrr record` over them; a library for tests/unit/test-source.
noinst_LIBRARIES += plugin/librecord.a
plugin_librecord_a_SOURCES = plugin/source.h plugin/source.c \
	plugin/record.h plugin/record.c plugin/record_soft.c \
	plugin/record_threads.c plugin/record_regs.c plugin/record_bundle.c \
	plugin/record_filter.c \
	plugin/record_perf.c plugin/record_progress.c plugin/record_qemu.c \
	plugin/qemu/qemu_shm.h plugin/qemu/qemu_code.c plugin/qemu/qemu_code.h \
	plugin/qemu/qemu_host.c plugin/qemu/qemu_host.h
ptrr_LDADD += plugin/librecord.a plugin/libcapture.a plugin/liblaunch.a \
	history/libhistory.a $(DEPS_LIBS)

# `ptrr replay` and `ptrr gdb` (plugin/gdb_launch.c) start gdb with the
# server, the unwinder and the command file (plugin/gdb/ptrr.gdb): found
# in the build tree when ptrr runs from it, else where they are installed.
noinst_LIBRARIES += plugin/liblaunch.a
plugin_liblaunch_a_SOURCES = plugin/launch.h plugin/gdb_launch.c \
	plugin/lldb_launch.c plugin/launch_qemu.c plugin/launch_symbols.c
plugin_liblaunch_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPTRR_BUILDDIR='"$(abs_top_builddir)"' \
	-DPTRR_SRCDIR='"$(abs_top_srcdir)"' \
	-DPTRR_LAUNCH_PKGLIBDIR='"$(pkglibdir)"' \
	-DPTRR_LAUNCH_PKGDATADIR='"$(pkgdatadir)"'
ptrr_LDADD += plugin/liblaunch.a
dist_pkgdata_DATA = plugin/gdb/ptrr.gdb
# `ptrr replay --lldb` and `ptrr lldb` (plugin/lldb_launch.c) start LLDB
# on `ptrr serve --listen` with the command file plugin/lldb/ptrr.lldb.
dist_pkgdata_DATA += plugin/lldb/ptrr.lldb
