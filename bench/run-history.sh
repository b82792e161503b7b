#!/bin/sh
# Runs the indexed-history benchmark (docs/performance.md, "Indexed history
# (issue 2)"): checks the trace generator on a small trace, generates a
# 100M-instruction trace into a scratch directory (never into the
# repository), and prints the machine and bench-history's Markdown table.
#
# usage: run-history.sh [--builddir DIR] [--dir SCRATCH] [--insns N]
#                       [--seed S] [--binary ELF] [--psb-period BYTES]
#                       [--keep] [-- BENCH-HISTORY-OPTIONS]
#
# Run it from a build directory after 'make bench', e.g.
#   cd build-bench && make bench && ../bench/run-history.sh
set -eu

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench
insns=100M
seed=1
binary=
psb_period=4096
keep=no

usage() {
	sed -n '/^# usage:/,/--keep/s/^# \{0,1\}//p' "$0" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--insns) insns=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--binary) binary=$2; shift 2 ;;
	--psb-period) psb_period=$2; shift 2 ;;
	--keep) keep=yes; shift ;;
	--) shift; break ;;
	*) usage ;;
	esac
done

bench=$builddir/bench
for prog in gen-trace verify-trace bench-history; do
	if [ ! -x "$bench/$prog" ]; then
		echo "run-history.sh: $bench/$prog not found: run 'make bench'" \
		     "in the build directory (or pass --builddir)" >&2
		exit 2
	fi
done
mkdir -p "$scratch"

gen() {
	if [ -n "$binary" ]; then
		"$bench/gen-trace" --binary "$binary" "$@"
	else
		"$bench/gen-trace" "$@"
	fi
}

# 1. The generator's trace must decode to exactly the walk it made.
gen -o "$scratch/verify" --insns 1M --seed "$seed" \
    --psb-period "$psb_period" --ips 2>/dev/null
"$bench/verify-trace" "$scratch/verify.info" "$scratch/verify.ips" >&2
rm -f "$scratch/verify.pt" "$scratch/verify.info" "$scratch/verify.ips"

# 2. The benchmark trace.
base=$scratch/trace-$insns-s$seed-p$psb_period
gen -o "$base" --insns "$insns" --seed "$seed" --psb-period "$psb_period"

# 3. The machine and the measurements.
echo "Machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' \
	/proc/cpuinfo | head -n 1), Linux $(uname -r), libipt" \
	"$(dpkg-query -W -f '${Version}' libipt2 2>/dev/null || echo '?')," \
	"Zydis $(dpkg-query -W -f '${Version}' libzydis4.0 2>/dev/null ||
	echo '?')"
echo "Trace: $(sed -n 's/^binary //p' "$base.info"), $insns instructions," \
	"seed $seed, PSB every $psb_period bytes"
echo
"$bench/bench-history" "$@" "$base.info"

if [ "$keep" = no ]; then
	rm -f "$base.pt" "$base.info"
fi
