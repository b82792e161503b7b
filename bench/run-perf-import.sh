#!/bin/sh
# The perf.data benchmark (docs/performance.md, "perf.data import and
# export (issue 20)"): on one generated trace (bench/gen-trace, a walk
# through libc's real code, made a bundle by bench/trace-bundle and a
# perf.data by `ptrr export --perf`), the wall time and peak memory of
# `ptrr import --perf` (which reads the file and builds the history's
# index: it decodes every instruction once) next to `perf script
# --itrace=i1i -F ip` (perf's decoder, every instruction to /dev/null),
# one after the other in one run, and of the export itself.
#
# usage: run-perf-import.sh [--builddir DIR] [--dir SCRATCH] [--sizes "10M 100M"]
#
# Run after 'make && make bench'; needs perf (linux-perf).
set -eu

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench-perf
sizes="10M 100M"

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	*) sed -n '/^# usage:/s/^# //p' "$0" >&2; exit 1 ;;
	esac
done
ptrr=$(realpath "$builddir/ptrr")
for prog in "$ptrr" "$builddir/bench/gen-trace" "$builddir/bench/trace-bundle"; do
	[ -x "$prog" ] || { echo "run-perf-import.sh: $prog not found: run" \
		"'make && make bench' (or pass --builddir)" >&2; exit 2; }
done
command -v perf >/dev/null ||
	{ echo "run-perf-import.sh: perf not found: apt-get install linux-perf" >&2; exit 2; }
mkdir -p "$scratch"
export HOME="$scratch"	# perf's build-id cache stays here

# measure LABEL CMD...: runs CMD, prints "LABEL WALL-S USER-S MAX-RSS-KIB".
measure() {
	label=$1
	shift
	/usr/bin/time -f "$label %e %U %M" -o "$scratch/time" "$@" >/dev/null
	cat "$scratch/time"
}

echo "| instructions (imported) | perf.data | ptrr export --perf | ptrr import --perf | perf script --itrace=i1i |"
echo "|---|---|---|---|---|"
for size in $sizes; do
	base=$scratch/trace-$size
	[ -f "$base.pt" ] || "$builddir/bench/gen-trace" -o "$base" \
		--insns "$size" --seed 1 --psb-period 4096 >/dev/null 2>&1
	rm -rf "$base.ptrr" "$base.data" "$base.data.vdso" "$base.back.ptrr"
	"$builddir/bench/trace-bundle" "$base.info" "$base.ptrr" >/dev/null
	e=$(measure export "$ptrr" export --perf="$base.data" "$base.ptrr")
	i=$(measure import "$ptrr" import --perf="$base.data" -o "$base.back.ptrr")
	p=$(measure perf perf script -i "$base.data" --itrace=i1i -F ip)
	n=$("$ptrr" info "$base.back.ptrr" | sed -n 's/.*Recorded \([0-9]*\) instructions.*/\1/p')
	kib=$(($(wc -c <"$base.data") / 1024))
	set -- $e $i $p
	echo "| $size ($n) | $kib KiB | $2 s ($3 s user), $4 KiB | $6 s ($7 s user), $8 KiB | ${10} s (${11} s user), ${12} KiB |"
done
