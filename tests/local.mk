# tests/: unit tests per module, test programs, end-to-end tests.

# Test programs: built plain (-O2 -g, never sanitized: they are the traced
# programs, not ptrr) so that their traces are small and realistic.
PROG_CFLAGS = -O2 -g -fno-omit-frame-pointer
noinst_PROGRAMS += tests/progs/loops tests/progs/recursion tests/progs/fnptr \
	tests/progs/jumptable tests/progs/tailcall tests/progs/plt \
	tests/progs/longjmp tests/progs/crash tests/progs/libc_crash \
	tests/progs/recjump
tests_progs_loops_CFLAGS = $(PROG_CFLAGS)
tests_progs_loops_LDFLAGS =
tests_progs_recursion_CFLAGS = $(PROG_CFLAGS)
tests_progs_recursion_LDFLAGS =
tests_progs_fnptr_CFLAGS = $(PROG_CFLAGS)
tests_progs_fnptr_LDFLAGS =
tests_progs_jumptable_CFLAGS = $(PROG_CFLAGS)
tests_progs_jumptable_LDFLAGS =
tests_progs_tailcall_CFLAGS = $(PROG_CFLAGS)
tests_progs_tailcall_LDFLAGS =
tests_progs_longjmp_CFLAGS = $(PROG_CFLAGS)
tests_progs_longjmp_LDFLAGS =
tests_progs_crash_CFLAGS = $(PROG_CFLAGS)
tests_progs_crash_LDFLAGS =
tests_progs_libc_crash_CFLAGS = $(PROG_CFLAGS)
tests_progs_libc_crash_LDFLAGS =
tests_progs_recjump_CFLAGS = $(PROG_CFLAGS)
tests_progs_recjump_LDFLAGS =

# Long, distinct function names for tests/export-timeline.sh to read off
# the SVG timeline.
noinst_PROGRAMS += tests/progs/timeline
tests_progs_timeline_CFLAGS = $(PROG_CFLAGS)
tests_progs_timeline_LDFLAGS =

# Sleeps N seconds: a long recording of next to nothing, for
# tests/record-progress.sh.
noinst_PROGRAMS += tests/progs/nap
tests_progs_nap_CFLAGS = $(PROG_CFLAGS)
tests_progs_nap_LDFLAGS =

# What a program does beyond plain code, for tests/record-fidelity.sh:
# vDSO calls, system calls (and a vfork), signals, C++ exceptions, threads,
# execve (also from a second thread), a crash with a snapshot to check,
# and a program that runs until it is stopped.
noinst_PROGRAMS += tests/progs/vdso tests/progs/syscalls tests/progs/signals \
	tests/progs/exceptions tests/progs/threads tests/progs/exec \
	tests/progs/segv tests/progs/spin tests/progs/forks tests/progs/watch
tests_progs_vdso_CFLAGS = $(PROG_CFLAGS)
tests_progs_vdso_LDFLAGS =
tests_progs_syscalls_CFLAGS = $(PROG_CFLAGS)
tests_progs_syscalls_LDFLAGS =
tests_progs_signals_CFLAGS = $(PROG_CFLAGS)
tests_progs_signals_LDFLAGS =
tests_progs_exceptions_SOURCES = tests/progs/exceptions.cc
tests_progs_exceptions_CXXFLAGS = $(PROG_CFLAGS)
tests_progs_exceptions_LDFLAGS =
tests_progs_threads_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_threads_LDFLAGS = -pthread
# Threads stopping apart, for gdb's non-stop mode (tests/gdb-nonstop.sh).
noinst_PROGRAMS += tests/progs/nonstop
tests_progs_nonstop_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_nonstop_LDFLAGS = -pthread
# threads, linked statically: code perf and LLDB read from the program
# alone (tests/perf-export.sh).
noinst_PROGRAMS += tests/progs/threads_static
tests_progs_threads_static_SOURCES = tests/progs/threads.c
tests_progs_threads_static_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_threads_static_LDFLAGS = -static -pthread
tests_progs_exec_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_exec_LDFLAGS = -pthread
tests_progs_segv_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_segv_LDFLAGS = -pthread
tests_progs_spin_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_spin_LDFLAGS = -pthread
tests_progs_forks_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_forks_LDFLAGS = -pthread
tests_progs_watch_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_watch_LDFLAGS = -pthread
# For tests/qemu-record.sh: faults a handler catches and a timer signal
# while the program computes (signals between two instructions); code
# generated at run time; sixteen threads computing at once.
noinst_PROGRAMS += tests/progs/faults tests/progs/jit tests/progs/threads16
tests_progs_faults_CFLAGS = $(PROG_CFLAGS)
tests_progs_faults_LDFLAGS =
tests_progs_jit_CFLAGS = $(PROG_CFLAGS)
tests_progs_jit_LDFLAGS =
# (Bound at load, -z now: else whichever thread first calls through a PLT
# stub runs the lazy binding's instructions in the program's PLT.)
tests_progs_threads16_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_threads16_LDFLAGS = -pthread -Wl,-z,now

# Globals and heap fields updated in a loop, then a crash, for
# tests/gdb-values.sh: as the other programs (-O2, frame pointers), at
# -O0 (arguments and locals in stack slots) and -O2 without frame
# pointers (rsp-based call frame information).
# (The two variants are built by their own rules: configure's CFLAGS
# come after a target's own and would turn -O0 into -O2.)
noinst_PROGRAMS += tests/progs/values
tests_progs_values_CFLAGS = $(PROG_CFLAGS)
tests_progs_values_LDFLAGS =
tests/progs/values_O0: $(srcdir)/tests/progs/values.c
	@$(MKDIR_P) tests/progs
	$(AM_V_CC)$(CC) -O0 -g -o $@ $(srcdir)/tests/progs/values.c
tests/progs/values_nofp: $(srcdir)/tests/progs/values.c
	@$(MKDIR_P) tests/progs
	$(AM_V_CC)$(CC) -O2 -g -fomit-frame-pointer -o $@ \
		$(srcdir)/tests/progs/values.c
check_DATA += tests/progs/values_O0 tests/progs/values_nofp
CLEANFILES += tests/progs/values_O0 tests/progs/values_nofp
# tests/progs/signals at -O0 (arguments in stack slots found from the
# frame's CFA), for tests/gdb-unwind.sh's signal handler frames.
tests/progs/signals_O0: $(srcdir)/tests/progs/signals.c
	@$(MKDIR_P) tests/progs
	$(AM_V_CC)$(CC) -O0 -g -o $@ $(srcdir)/tests/progs/signals.c
check_DATA += tests/progs/signals_O0
CLEANFILES += tests/progs/signals_O0
# Another thread's store between two loads of one global, for
# tests/gdb-values.sh.
noinst_PROGRAMS += tests/progs/loadrace
tests_progs_loadrace_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_loadrace_LDFLAGS = -pthread
# A signal handler calling code without debug information, for
# tests/gdb-unwind.sh's frames whose CFA the history cannot prove.
tests/progs/handler: $(srcdir)/tests/progs/handler.c $(srcdir)/tests/progs/nolines.c
	@$(MKDIR_P) tests/progs
	$(AM_V_CC)$(CC) -O0 -g0 -c -o tests/progs/nolines.o \
		$(srcdir)/tests/progs/nolines.c && \
	$(CC) -O0 -g -o $@ $(srcdir)/tests/progs/handler.c tests/progs/nolines.o
check_DATA += tests/progs/handler
CLEANFILES += tests/progs/handler tests/progs/nolines.o
EXTRA_DIST += tests/progs/handler.c tests/progs/nolines.c
check_SCRIPTS += tests/gdb-values.sh tests/gdb-values-regs.sh
EXTRA_DIST += tests/gdb-values.sh tests/gdb-values-regs.sh \
	tests/values-lib.sh tests/values-prog.sh
# Stores whose address the value recovery must search for, then a
# crash, for tests/gdb-values-far.sh.
noinst_PROGRAMS += tests/progs/valuesfar
tests_progs_valuesfar_CFLAGS = $(PROG_CFLAGS)
tests_progs_valuesfar_LDFLAGS =
check_SCRIPTS += tests/gdb-values-far.sh
EXTRA_DIST += tests/gdb-values-far.sh
# A pointer argument in a callee-saved register across a write(2), stored
# through at the function's tail, then a crash, for
# tests/gdb-values-put.sh.
noinst_PROGRAMS += tests/progs/valuesput
tests_progs_valuesput_CFLAGS = $(PROG_CFLAGS)
tests_progs_valuesput_LDFLAGS =
check_SCRIPTS += tests/gdb-values-put.sh
EXTRA_DIST += tests/gdb-values-put.sh tests/values-far-lib.sh \
	tests/progs/valueshelp.h
# A global written by a rep string and a read(2) between plain stores,
# then a crash, for tests/gdb-watch.sh.
noinst_PROGRAMS += tests/progs/watchrep
tests_progs_watchrep_CFLAGS = $(PROG_CFLAGS)
tests_progs_watchrep_LDFLAGS =
# A watched global unknown before 400 rep strings, for tests/gdb-watch.sh.
noinst_PROGRAMS += tests/progs/watchfog
tests_progs_watchfog_CFLAGS = $(PROG_CFLAGS)
tests_progs_watchfog_LDFLAGS =
tests/progs/watchloop: $(srcdir)/tests/progs/watchloop.c
	@$(MKDIR_P) tests/progs
	$(AM_V_CC)$(CC) -O0 -g -o $@ $(srcdir)/tests/progs/watchloop.c
check_DATA += tests/progs/watchloop
CLEANFILES += tests/progs/watchloop
EXTRA_DIST += tests/progs/watchloop.c
check_SCRIPTS += tests/gdb-watch.sh
EXTRA_DIST += tests/gdb-watch.sh
check_SCRIPTS += tests/gdb-lazy-bind.sh
EXTRA_DIST += tests/gdb-lazy-bind.sh

# Creates and joins 1,000 short threads, eight at a time, for
# tests/record-churn.sh.
noinst_PROGRAMS += tests/progs/churn
tests_progs_churn_CFLAGS = $(PROG_CFLAGS) -pthread
tests_progs_churn_LDFLAGS = -pthread

# A general protection fault after a page fault a handler caught, for
# the fault address of tests/gdb-live-reverse.sh's crashes.
noinst_PROGRAMS += tests/progs/gpfault
tests_progs_gpfault_CFLAGS = $(PROG_CFLAGS)
tests_progs_gpfault_LDFLAGS =

# Prints its arguments and, given -o FILE, writes FILE as it ends: a
# program run again, and let go, by tests/gdb-live-restart.sh.
noinst_PROGRAMS += tests/progs/greet
tests_progs_greet_CFLAGS = $(PROG_CFLAGS)
tests_progs_greet_LDFLAGS =

# plt calls into a real shared library through the PLT, lazily bound.
tests_progs_plt_CFLAGS = $(PROG_CFLAGS)
tests_progs_plt_LDFLAGS = -Wl,-z,lazy -Wl,-rpath,$(abs_builddir)/tests/progs
tests_progs_plt_LDADD = -Ltests/progs -lptrrplt
tests_progs_plt_DEPENDENCIES = tests/progs/libptrrplt.so
tests/progs/libptrrplt.so: $(srcdir)/tests/progs/plt_lib.c
	@$(MKDIR_P) tests/progs
	$(AM_V_CC)$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $(srcdir)/tests/progs/plt_lib.c
CLEANFILES += tests/progs/libptrrplt.so
EXTRA_DIST += tests/progs/plt_lib.c

TESTS += $(check_PROGRAMS) $(check_SCRIPTS)

# The bundle: a recording on disk (history/bundle.c).
check_PROGRAMS += tests/unit/test-bundle
tests_unit_test_bundle_SOURCES = tests/unit/test-bundle.c
tests_unit_test_bundle_LDADD = history/libhistory.a $(DEPS_LIBS)

# The indexed history on synthetic traces (history/index.c, cursor.c ...).
check_PROGRAMS += tests/unit/test-history
tests_unit_test_history_SOURCES = tests/unit/test-history.c tests/unit/test.h
tests_unit_test_history_LDADD = history/libhistory.a $(DEPS_LIBS)

# Symbols and source lines of the test programs (history/symbols.c).
check_PROGRAMS += tests/unit/test-symbols
tests_unit_test_symbols_SOURCES = tests/unit/test-symbols.c tests/unit/test.h
tests_unit_test_symbols_LDADD = history/libhistory.a $(DEPS_LIBS)

# Instruction lengths and GDB-style disassembly (history/disasm.c).
check_PROGRAMS += tests/unit/test-disasm
tests_unit_test_disasm_SOURCES = tests/unit/test-disasm.c tests/unit/test.h
tests_unit_test_disasm_LDADD = history/libhistory.a $(DEPS_LIBS)

# Function-call segments on a synthetic trace (history/calls.c).
check_PROGRAMS += tests/unit/test-calls
tests_unit_test_calls_SOURCES = tests/unit/test-calls.c tests/unit/test.h
tests_unit_test_calls_LDADD = history/libhistory.a $(DEPS_LIBS)

# The compact storage of call segments against a plain array
# (history/calls_store.c).
check_PROGRAMS += tests/unit/test-calls-store
tests_unit_test_calls_store_SOURCES = tests/unit/test-calls-store.c \
	tests/unit/test.h
tests_unit_test_calls_store_LDADD = history/libhistory.a $(DEPS_LIBS)

# The software PT emitter and ring (plugin/capture), judged by libipt.
check_PROGRAMS += tests/unit/test-emit
tests_unit_test_emit_SOURCES = tests/unit/test-emit.c tests/unit/test.h
tests_unit_test_emit_LDADD = plugin/libcapture.a history/libhistory.a \
	$(DEPS_LIBS)

# Branch emulation for block stepping (plugin/capture/branch.c), against
# the processor.
check_PROGRAMS += tests/unit/test-branch
tests_unit_test_branch_SOURCES = tests/unit/test-branch.c tests/unit/test.h
tests_unit_test_branch_LDADD = plugin/libcapture.a history/libhistory.a \
	$(DEPS_LIBS)

# docs/manual.md's contents list every section, with working anchors.
check_SCRIPTS += tests/manual-toc.sh
EXTRA_DIST += tests/manual-toc.sh

# ptrr record's progress line on a terminal (through expect), none
# without one, and the summary's rates.
check_SCRIPTS += tests/record-progress.sh
EXTRA_DIST += tests/record-progress.sh tests/record-progress.exp

# What ./quickstart installs for the demo and for the tests (stubbed apt).
check_SCRIPTS += tests/quickstart-packages.sh
EXTRA_DIST += tests/quickstart-packages.sh

# `ptrr record` end to end: every test program against its ground truth.
check_SCRIPTS += tests/record-truth.sh
EXTRA_DIST += tests/record-truth.sh

# The history-browsing commands: usage errors and exit statuses, the
# listings on recordings of the test programs, and the shell fed by a pipe.
check_SCRIPTS += tests/cli-usage.sh tests/cli-history.sh tests/cli-shell.sh
EXTRA_DIST += tests/cli-usage.sh tests/cli-history.sh tests/cli-shell.sh

# Recording what a program does beyond plain code, every thread checked
# against its ground truth; attaching; and the faults around a recording
# (tests/record-fidelity.sh).
check_SCRIPTS += tests/record-fidelity.sh
EXTRA_DIST += tests/record-fidelity.sh

# 1,000 threads made and ended at a high rate while tracing: every
# thread's history in the bundle, the replay (tests/record-churn.sh).
check_SCRIPTS += tests/record-churn.sh
EXTRA_DIST += tests/record-churn.sh

# Block stepping (--soft-step=block) against single-stepping: the same
# histories; children and a detached process untouched by its int3s.
check_SCRIPTS += tests/record-block.sh
EXTRA_DIST += tests/record-block.sh

# `ptrr record`'s options on real recordings: --filter against the ground
# truth, usage errors, the bundle name checked first, the full-mode cap,
# SIGKILL (tests/record-options.sh).
check_SCRIPTS += tests/record-options.sh
EXTRA_DIST += tests/record-options.sh

# --start=SYMBOL on stripped programs: symbols from separate debug files
# (build-id, .gnu_debuglink), main from the entry code; Debian's own
# programs if installed (tests/record-stripped.sh).
check_SCRIPTS += tests/record-stripped.sh
EXTRA_DIST += tests/record-stripped.sh

# Exact call trees, a mid-function start, a wrapped ring, a corrupted byte
# and a missing module on real recordings (tests/history-fidelity.sh).
check_SCRIPTS += tests/history-fidelity.sh
EXTRA_DIST += tests/lib.sh tests/history-fidelity.sh tests/expected

# The readline shell on a terminal, through expect.
check_SCRIPTS += tests/cli-shell-tty.sh
EXTRA_DIST += tests/cli-shell-tty.sh tests/cli-shell-tty.exp

# The perf intel_pt backend (plugin/capture/perf_pt.c, pmu.c, aux.c)
# against a fake PMU tree and a fake kernel with an AUX ring: setting the
# event up (test-perf-pt), reading the trace out (test-perf-aux).
check_PROGRAMS += tests/unit/test-perf-pt tests/unit/test-perf-aux
tests_unit_test_perf_pt_SOURCES = tests/unit/test-perf-pt.c \
	tests/unit/fake_perf.h tests/unit/fake_perf.c tests/unit/test.h
tests_unit_test_perf_pt_LDADD = plugin/libcapture.a history/libhistory.a \
	$(DEPS_LIBS)
tests_unit_test_perf_aux_SOURCES = tests/unit/test-perf-aux.c \
	tests/unit/fake_perf.h tests/unit/fake_perf.c tests/unit/test.h
tests_unit_test_perf_aux_LDADD = plugin/libcapture.a history/libhistory.a \
	$(DEPS_LIBS)

# How `ptrr record` chooses its backend, with and without an intel_pt
# PMU (a fake sysfs tree through PTRR_SYSFS_ROOT).
check_SCRIPTS += tests/perf-backend.sh
EXTRA_DIST += tests/perf-backend.sh

# `ptrr record --backend=perf` end to end: the real ptrr, the real
# programs at native speed, and the fake kernel of fake_perf.c put in
# place of the kernel's perf system calls by an LD_PRELOAD object built
# for the tests only (tests/unit/fake_perf_preload.c).  Built plain (no
# sanitizer: it is preloaded before the ASan runtime) and lazily bound,
# as fake_perf.c's helpers for the unit tests call into libcapture,
# which the preloaded object never uses.
check_DATA += tests/unit/libfakeperf.so
tests/unit/libfakeperf.so: $(srcdir)/tests/unit/fake_perf_preload.c \
		$(srcdir)/tests/unit/fake_perf.c $(srcdir)/tests/unit/fake_perf.h \
		$(srcdir)/tests/unit/preload_ptrr.h
	$(AM_V_CC)$(CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) \
		-std=gnu11 -O2 -g $(WARN_CFLAGS) -fPIC -shared -Wl,-z,lazy \
		-o $@ $(srcdir)/tests/unit/fake_perf_preload.c \
		$(srcdir)/tests/unit/fake_perf.c -lipt -ldl
CLEANFILES += tests/unit/libfakeperf.so
EXTRA_DIST += tests/unit/fake_perf_preload.c
check_SCRIPTS += tests/perf-record.sh
EXTRA_DIST += tests/perf-record.sh

# --psb-period and --noretcomp: histories against the ground truth, and
# the packets counted by libipt's own packet decoder (tests/pt-packets).
noinst_PROGRAMS += tests/pt-packets
tests_pt_packets_LDADD = -lipt
check_SCRIPTS += tests/record-ptconf.sh
EXTRA_DIST += tests/record-ptconf.sh

# hist_extend() on real recordings (history/index.c): tests/history-extend.sh
# records them and runs tests/unit/test-extend on the bundles.
noinst_PROGRAMS += tests/unit/test-extend
tests_unit_test_extend_SOURCES = tests/unit/test-extend.c tests/unit/test.h \
	tests/unit/history_compare.h
tests_unit_test_extend_LDADD = history/libhistory.a $(DEPS_LIBS)
check_SCRIPTS += tests/history-extend.sh
EXTRA_DIST += tests/history-extend.sh

# Histories numbered from the emitter's table of PSBs (history/index.c):
# tests/history-psbs.sh records them and runs tests/unit/test-psbs.
noinst_PROGRAMS += tests/unit/test-psbs
tests_unit_test_psbs_SOURCES = tests/unit/test-psbs.c tests/unit/test.h \
	tests/unit/history_compare.h
tests_unit_test_psbs_LDADD = history/libhistory.a $(DEPS_LIBS)
check_SCRIPTS += tests/history-psbs.sh
EXTRA_DIST += tests/history-psbs.sh

# ptrr export --lldb / import --lldb: LLDB's own decoder on the exported
# bundle lists the instructions and calls ptrr lists; the round trip.
check_SCRIPTS += tests/lldb-export.sh
EXTRA_DIST += tests/lldb-export.sh

# ptrr export --perf: perf's own Intel PT decoder (perf script --itrace)
# on the exported perf.data lists the instructions and branches ptrr
# lists, for recordings of the software backend, QEMU and the perf
# backend against the fake kernel.
check_SCRIPTS += tests/perf-export.sh tests/qemu-perf-export.sh
EXTRA_DIST += tests/perf-export.sh tests/qemu-perf-export.sh
# ptrr import --perf: export and import give the same histories; per-CPU
# recordings made by tests/perf-percpu (from an exported one) split back
# into the threads; lost trace, gdb on an imported bundle, bad input.
noinst_PROGRAMS += tests/perf-percpu
tests_perf_percpu_LDADD = -lipt
check_SCRIPTS += tests/perf-import.sh
EXTRA_DIST += tests/perf-import.sh

# ptrr import --raw: the history of a raw stream with its code images is
# what libipt's instruction decoder alone (tests/pt-insns) decodes.
noinst_PROGRAMS += tests/pt-insns
tests_pt_insns_LDADD = -lipt
check_SCRIPTS += tests/raw-import.sh
EXTRA_DIST += tests/raw-import.sh

# LLDB on ptrr serve over gdb-remote, by hand and through ptrr replay
# --lldb and ptrr lldb: a recorded crash, a live breakpoint and exit, a
# live crash, the pt commands (tests/lldb-remote.sh).
check_SCRIPTS += tests/lldb-remote.sh
EXTRA_DIST += tests/lldb-remote.sh

# ptrr export --perfetto / --svg: the JSON checked by tests/timeline-check
# (events nest, names and ranges as ptrr call-history lists them), the SVG
# drawn by headless Chromium and read back by OCR.
noinst_PROGRAMS += tests/timeline-check
tests_timeline_check_LDADD = -ljansson -lm
check_SCRIPTS += tests/export-timeline.sh
EXTRA_DIST += tests/export-timeline.sh

# Faults while saving a bundle: ptrr killed at each step of a save, a
# full disk at several sizes, for ptrr record -o and a live session's
# pt save (tests/fault-save.sh); the program killed by SIGKILL
# while ptrr record or a live session traces it (tests/fault-kill.sh).
# tests/unit/libfaultio.so (LD_PRELOAD, tests only, built plain like
# libfakeperf.so) makes the file writes of one ptrr process fail or
# stop.
check_DATA += tests/unit/libfaultio.so
tests/unit/libfaultio.so: $(srcdir)/tests/unit/fault_io_preload.c \
		$(srcdir)/tests/unit/preload_ptrr.h
	$(AM_V_CC)$(CC) -std=gnu11 -O2 -g $(WARN_CFLAGS) -fPIC -shared \
		-o $@ $(srcdir)/tests/unit/fault_io_preload.c -ldl
CLEANFILES += tests/unit/libfaultio.so
EXTRA_DIST += tests/unit/fault_io_preload.c tests/unit/preload_ptrr.h
check_SCRIPTS += tests/fault-save.sh tests/fault-kill.sh
EXTRA_DIST += tests/fault-save.sh tests/fault-kill.sh

# Every trace source goes through the one table (plugin/source.h) and
# the one bundle writer: test-source records through a table that wraps
# the source and checks the bundle against what it handed over.
noinst_PROGRAMS += tests/unit/test-source
tests_unit_test_source_SOURCES = tests/unit/test-source.c tests/unit/test.h
tests_unit_test_source_LDADD = plugin/librecord.a plugin/live/liblive.a \
	plugin/gdbremote/libgdbremote.a plugin/libcapture.a \
	plugin/liblaunch.a history/libhistory.a $(DEPS_LIBS)
check_SCRIPTS += tests/record-source.sh
EXTRA_DIST += tests/record-source.sh

# The QEMU backend (ptrr record --backend=qemu): the history against
# QEMU's own execution log, native single-stepping and the software
# backend's replay of a crash; bad input (tests/qemu-record.sh).
check_SCRIPTS += tests/qemu-record.sh
EXTRA_DIST += tests/qemu-record.sh
# gdb's record pt on QEMU recordings: tests/gdb-btrace.sh run with
# PTRR_TEST_BACKEND=qemu.
check_SCRIPTS += tests/qemu-gdb-btrace.sh
EXTRA_DIST += tests/qemu-gdb-btrace.sh
# LLDB's decoder on `ptrr export --lldb` of QEMU recordings:
# tests/lldb-export.sh run with PTRR_TEST_BACKEND=qemu.
check_SCRIPTS += tests/qemu-lldb-export.sh
EXTRA_DIST += tests/qemu-lldb-export.sh
# Live sessions on QEMU (ptrr gdb --backend=qemu): the live tests run
# with PTRR_TEST_BACKEND=qemu.
check_SCRIPTS += tests/qemu-gdb-live-reverse.sh
EXTRA_DIST += tests/qemu-gdb-live-reverse.sh
# The first reverse steps of a live session on QEMU before the call
# segments are ready: the same stops and values as with them.
check_SCRIPTS += tests/qemu-calls-later.sh
EXTRA_DIST += tests/qemu-calls-later.sh
check_SCRIPTS += tests/qemu-live-gdb-watch.sh
EXTRA_DIST += tests/qemu-live-gdb-watch.sh
check_SCRIPTS += tests/qemu-gdb-tty.sh
EXTRA_DIST += tests/qemu-gdb-tty.sh
check_SCRIPTS += tests/qemu-gdb-disconnect.sh
EXTRA_DIST += tests/qemu-gdb-disconnect.sh
check_SCRIPTS += tests/qemu-gdb-live-restart.sh
EXTRA_DIST += tests/qemu-gdb-live-restart.sh
check_SCRIPTS += tests/qemu-lldb-remote.sh
EXTRA_DIST += tests/qemu-lldb-remote.sh
check_SCRIPTS += tests/qemu-gdb-live-block.sh tests/qemu-gdb-live-overflow.sh
EXTRA_DIST += tests/qemu-gdb-live-block.sh tests/qemu-gdb-live-overflow.sh
check_SCRIPTS += tests/qemu-gdb-conformance.sh tests/qemu-fault-kill.sh
EXTRA_DIST += tests/qemu-gdb-conformance.sh tests/qemu-fault-kill.sh

# The call depth of the call segments against a shadow stack of the
# calls (tests/replay.sh; bench/run-depth.sh on real programs).
noinst_PROGRAMS += tests/unit/call-depth
tests_unit_call_depth_SOURCES = tests/unit/call-depth.c
tests_unit_call_depth_LDADD = history/libhistory.a $(DEPS_LIBS)

# GDB's own test suites through ptrr serve (docs/conformance.md), not
# part of make check: they fetch GDB's source once (or use GDB_SRC) and
# need runtest (dejagnu).  check-gdb-btrace fails on any unexpected
# failure; check-gdb-reverse reports its counts (some fail by cause, see
# conformance.md) and fails only when it cannot run.
EXTRA_DIST += tests/gdbsuite/run.sh tests/gdbsuite/ptrr.exp \
	tests/gdbsuite/ptrr-extended.exp tests/gdbsuite/gdb-source.sh
# How they get GDB's source (with stubs for apt-get and dpkg-source).
check_SCRIPTS += tests/gdbsuite-source.sh
EXTRA_DIST += tests/gdbsuite-source.sh
.PHONY: check-gdb-btrace check-gdb-reverse
check-gdb-btrace: all
	$(SHELL) $(srcdir)/tests/gdbsuite/run.sh
check-gdb-reverse: all
	$(SHELL) $(srcdir)/tests/gdbsuite/run.sh --reverse; test $$? -ne 2
