#!/bin/sh
# How `ptrr record` chooses its backend (DESIGN.md §3, §4): without the
# intel_pt PMU, --backend=perf fails (exit 2) with the cause and the fix
# in one line and writes nothing, and --backend=auto says in one line that
# it uses QEMU (where qemu-x86_64 is) or else the software backend; with
# it, both use perf (tests/perf-record.sh
# records with it against a fake kernel).  The PMU is looked for under
# $PTRR_SYSFS_ROOT, the test hook, so both sides can be tried here.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir perf-backend
loops="$top_builddir/tests/progs/loops"
pmu=bus/event_source/devices/intel_pt

# lines_matching N PATTERN: the last command's stderr has N lines matching
# the extended regular expression PATTERN.
lines_matching() {
	got=$(grep -Ec -- "$2" "$work/err")
	[ "$got" -eq "$1" ] ||
		{ fail "wanted $1 lines matching '$2', got $got:"; cat "$work/err"; }
}

# No PMU: this machine as it is, and an empty sysfs root.
for root in "" "$work/nosys"; do
	expect_exit 2 \
	    "^ptrr record: intel_pt PMU not found \\(${root:-/sys}/$pmu\\): this CPU or VM has no Intel PT; use --backend=soft or --backend=qemu\$" \
	    env PTRR_SYSFS_ROOT="$root" "$ptrr" record --backend=perf \
	    -o "$work/perf.ptrr" -- "$loops"
	lines_matching 1 .
	[ ! -e "$work/perf.ptrr" ] || fail "--backend=perf wrote a bundle"
done
[ -d "/sys/$pmu" ] && echo "note: this machine has intel_pt"

expect_exit 0 '' env PTRR_SYSFS_ROOT="$work/nosys" \
	PTRR_QEMU=/nonexistent/qemu-x86_64 "$ptrr" record \
	--backend=auto --start=main -o "$work/auto.ptrr" -- "$loops"
lines_matching 1 "^ptrr record: intel_pt PMU not found \\($work/nosys/$pmu\\): this CPU or VM has no Intel PT; no qemu-x86_64 found; using the software backend\$"
lines_matching 1 'intel_pt|Intel PT|software backend'
grep -q '"backend": "soft"' "$work/auto.ptrr/manifest.json" ||
	fail "--backend=auto did not record with the software backend"
# With qemu-x86_64 (a stand-in: auto only looks for it), QEMU; with an
# option QEMU does not take, the software backend, saying why.
rm -rf "$work/auto.ptrr"
printf '#!/bin/sh\nexit 1\n' >"$work/qemu" && chmod +x "$work/qemu"
expect_exit 2 '' env PTRR_SYSFS_ROOT="$work/nosys" PTRR_QEMU="$work/qemu" \
	"$ptrr" record --backend=auto -o "$work/auto.ptrr" -- "$loops"
lines_matching 1 "^ptrr record: intel_pt PMU not found \\($work/nosys/$pmu\\): this CPU or VM has no Intel PT; using QEMU \\($work/qemu\\)\$"
expect_exit 0 '' env PTRR_SYSFS_ROOT="$work/nosys" PTRR_QEMU="$work/qemu" \
	"$ptrr" record --backend=auto --soft-step=insn -o "$work/auto.ptrr" \
	-- "$loops"
lines_matching 1 "^ptrr record: intel_pt PMU not found \\($work/nosys/$pmu\\): this CPU or VM has no Intel PT; QEMU does not take --pid, --ground-truth or --soft-step yet; using the software backend\$"

# A PMU (a fake tree) on a kernel without it: found, so both --backend=perf
# and --backend=auto choose perf, and the kernel's refusal comes as one
# line with the fix; no bundle.
mkdir -p "$work/sys/$pmu" && echo 8 >"$work/sys/$pmu/type" || exit 99
for backend in perf auto; do
	expect_exit 2 \
	    "^ptrr record: perf_event_open: .*; use --backend=soft\$" \
	    env PTRR_SYSFS_ROOT="$work/sys" "$ptrr" record --backend=$backend \
	    -o "$work/perf.ptrr" -- "$loops"
	lines_matching 1 .
	[ ! -e "$work/perf.ptrr" ] || fail "--backend=$backend wrote a bundle"
done

finish
