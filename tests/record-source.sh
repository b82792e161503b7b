#!/bin/sh
# `ptrr record` drives every trace source (plugin/source.h) through the
# one table and the one bundle writer: tests/unit/test-source runs
# ptrr's record command with the source replaced by a table that wraps
# it, and checks that the bundle holds exactly what the source handed
# over (every thread's trace bytes, registers and end, the images before
# an execve, the memory, the end of the process).  Sources: the software
# backend (always), QEMU (where qemu-x86_64 is), perf (against the fake
# kernel of tests/perf-record.sh).
set -u
. "$top_srcdir/tests/lib.sh"
work_dir record-source
progs="$top_builddir/tests/progs"
test_source="$top_builddir/tests/unit/test-source"

# through NAME BACKEND [OPTIONS] -- PROG [ARGS]: test-source into
# $work/NAME.t.ptrr, its output in $work/NAME.t.log.
through() {
	name=$1 backend=$2
	shift 2
	${run_env:-} "$test_source" --backend="$backend" \
		-o "$work/$name.t.ptrr" "$@" >"$work/$name.t.log" 2>&1 ||
		fail "$name: test-source --backend=$backend: $(grep -v '^PASS' \
			"$work/$name.t.log" | tail -n 5)"
}

# ---- the software backend: one thread, threads, an execve, a crash ----
through soft-loops soft -- "$progs/loops"
through soft-threads soft -- "$progs/threads"
through soft-exec soft -- "$progs/exec" "$progs/loops"
grep -q "^soft: [0-9]* threads" "$work/soft-exec.t.log" &&
	[ -d "$work/soft-exec.t.ptrr/before-exec.ptrr" ] ||
	fail "soft-exec: the image before the execve was not saved"
through soft-crash soft -- "$progs/crash"

# ---- QEMU ----
if command -v qemu-x86_64 >/dev/null 2>&1; then
	# QEMU writes the guest's core (the crash's registers) here.
	cd "$work" || exit 99
	through qemu-loops qemu -- "$progs/loops"
	through qemu-threads qemu -- "$progs/threads"
	through qemu-crash qemu -- "$progs/crash"
	grep -q '"fault"' "$work/qemu-crash.t.ptrr/manifest.json" ||
		fail "qemu-crash: the crash was not handed over"
else
	echo "qemu-x86_64 not found: the QEMU source is not checked"
fi

# ---- perf, against the fake kernel ----
fake_pmu "$work/sys"
mkdir -p "$work/fake" || exit 99
run_env="env PTRR_SYSFS_ROOT=$work/sys PTRR_FAKE_PERF_DIR=$work/fake
LD_PRELOAD=$top_builddir/tests/unit/libfakeperf.so
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
through perf-threads perf -- "$progs/threads"
through perf-exec perf -- "$progs/exec" "$progs/loops"
run_env=

finish
