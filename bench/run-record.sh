#!/bin/sh
# Runs the recording benchmark (docs/performance.md, "Recording with the
# software backend (issue 3)").  On each workload, in each of --runs
# rounds, one after the other on the same program and arguments:
#   (1) ptrr record --backend=soft --start=main, to the program's exit:
#       its instructions/s (its own summary line), trace bytes per
#       instruction, and peak RSS (GNU time) less that of recording the
#       same program with almost no instructions (the baseline run);
#   (2) GDB's `record full` from a breakpoint on main to the exit, in
#       batch mode: instructions from `info record`, the time and GDB's
#       VmRSS around `continue` (shell commands inside GDB), so startup
#       and symbol loading are not counted;
#   (3) bench/bare-step: PTRACE_SINGLESTEP + waitpid from main to the exit
#       and nothing else, the machine's bare single-step rate;
# then prints the machine and a Markdown table per workload: the median of
# the rounds with the range in brackets, and the ratios ptrr/GDB (target
# >= 3) and ptrr/bare (target >= 1/1.5) computed within each round.
#
# usage: run-record.sh [--builddir DIR] [--dir SCRATCH] [--runs N]
#                      [--only fnptr|mixed] [--pin CPU] [--breakdown]
#                      [--gdb GDB] [--wait SECONDS] [--max-busy CPUS]
#                      [--retries N] [--soft-step block|insn]
#
#   --pin CPU     run all three under `taskset -c CPU` (tracer and
#                 tracee on one CPU)
#   --breakdown   also run bare-step --work=regs and --work=code (the
#                 system calls ptrr's stepper makes per step)
#   --wait S      before each timed run, wait up to S seconds (default
#                 600) for a quiet machine: under 0.15 CPUs busy for 2 s
#   --max-busy B  measure a run again (up to --retries times, default 3)
#                 when more than B CPUs (default 1.3) were busy during it
#   --soft-step M ptrr's --soft-step (default block: native runs to each
#                 branch; insn: single-step every instruction)
#
# Run it from a build directory after 'make bench', e.g.
#   cd build-rec && make bench && ../bench/run-record.sh
set -eu

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench-record
runs=3
only=
pin=
breakdown=no
gdb=${GDB:-gdb}
wait_max=600
max_busy=1.3
retries=3
soft_step=block
ncpu=$(nproc)

usage() {
	sed -n '/^# usage:/,/single-step every instruction/s/^# \{0,1\}//p' "$0" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--pin) pin=$2; shift 2 ;;
	--breakdown) breakdown=yes; shift ;;
	--gdb) gdb=$2; shift 2 ;;
	--wait) wait_max=$2; shift 2 ;;
	--max-busy) max_busy=$2; shift 2 ;;
	--retries) retries=$2; shift 2 ;;
	--soft-step)
		case $2 in block|insn) ;; *) usage ;; esac
		soft_step=$2; shift 2 ;;
	*) usage ;;
	esac
done

die() {
	echo "run-record.sh: $*" >&2
	exit 2
}

ptrr=$builddir/ptrr
bare=$builddir/bench/bare-step
for f in "$ptrr" "$bare" "$builddir/bench/progs/mixed" \
	 "$builddir/tests/progs/fnptr"; do
	[ -x "$f" ] || die "$f not found: run 'make bench' in the build" \
			   "directory (or pass --builddir)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed for ptrr's" \
			    "peak RSS"
command -v "$gdb" >/dev/null 2>&1 || die "$gdb not found (pass --gdb)"
mkdir -p "$scratch"
results=$scratch/results
: >"$results"
pending=$scratch/pending

# The workloads: NAME PROGRAM ARGS BASELINE-ARGS (the baseline run
# records the same program with almost no instructions after main).
workloads() {
	if [ -z "$only" ] || [ "$only" = fnptr ]; then
		echo "fnptr $builddir/tests/progs/fnptr long -"
	fi
	if [ -z "$only" ] || [ "$only" = mixed ]; then
		echo "mixed $builddir/bench/progs/mixed 100 0"
	fi
}

# run COMMAND...: pinned if asked, never reading the workload list.
run() {
	if [ -n "$pin" ]; then
		taskset -c "$pin" "$@" </dev/null
	else
		"$@" </dev/null
	fi
}

# put WORKLOAD KEY VALUE: one measurement of this round.
put() {
	echo "$1 $round $2 $3" >>"$pending"
}

# ptrr_run WORKLOAD PROG ARGS...: (1).
ptrr_run() {
	w=$1; shift
	rm -rf "$scratch/rec.ptrr"
	run /usr/bin/time -f '%M' -o "$scratch/ptrr.rss" \
	    "$ptrr" record --backend=soft --soft-step="$soft_step" --start=main \
	    -o "$scratch/rec.ptrr" -- "$@" 2>"$scratch/ptrr.err" ||
		{ cat "$scratch/ptrr.err" >&2; die "ptrr record failed"; }
	line=$(grep '^ptrr record: [0-9]* instructions' "$scratch/ptrr.err") ||
		{ cat "$scratch/ptrr.err" >&2; die "no summary from ptrr"; }
	set -- $(echo "$line" | sed -n 's/^ptrr record: \([0-9]*\) instructions[^,]*, \([0-9]*\) bytes of trace ([0-9]* overwritten) in \([0-9.]*\) s (\([0-9]*\) instructions\/s.*/\1 \2 \3 \4/p')
	[ $# -eq 4 ] || die "cannot parse: $line"
	put "$w" ptrr_insns "$1"
	put "$w" ptrr_trace "$2"
	put "$w" ptrr_secs "$3"
	put "$w" ptrr_rate "$4"
	put "$w" ptrr_rss "$(tail -n 1 "$scratch/ptrr.rss")"
	echo "  ptrr: $1 insns, $2 trace bytes, $3 s, $4 insns/s," \
	     "peak RSS $(tail -n 1 "$scratch/ptrr.rss") KiB" >&2
}

# ptrr_base WORKLOAD PROG ARGS...: ptrr's peak RSS with ~no instructions.
ptrr_base() {
	w=$1; shift
	rm -rf "$scratch/base.ptrr"
	run /usr/bin/time -f '%M' -o "$scratch/base.rss" \
	    "$ptrr" record --backend=soft --soft-step="$soft_step" --start=main \
	    -o "$scratch/base.ptrr" -- "$@" 2>"$scratch/base.err" ||
		{ cat "$scratch/base.err" >&2; die "ptrr record failed"; }
	put "$w" ptrr_base_rss "$(tail -n 1 "$scratch/base.rss")"
}

# gdb_run WORKLOAD PROG ARGS...: (2).  The shell commands run inside GDB,
# whose pid is their $PPID.
gdb_run() {
	w=$1; shift
	run "$gdb" -nx -batch -iex 'set debuginfod enabled off' \
	    -ex 'break main' -ex run \
	    -ex 'shell echo "bench-before $(date +%s.%N) $(awk "/^VmRSS/ {print \$2}" /proc/$PPID/status)"' \
	    -ex 'record full' \
	    -ex 'set record full insn-number-max unlimited' \
	    -ex continue \
	    -ex 'shell echo "bench-after $(date +%s.%N) $(awk "/^VmHWM/ {print \$2}" /proc/$PPID/status)"' \
	    -ex 'info record' --args "$@" >"$scratch/gdb.out" 2>&1 ||
		{ cat "$scratch/gdb.out" >&2; die "gdb failed"; }
	b=$(sed -n 's/^bench-before //p' "$scratch/gdb.out")
	a=$(sed -n 's/^bench-after //p' "$scratch/gdb.out")
	n=$(sed -n 's/^Log contains \([0-9]*\) instructions\.$/\1/p' \
		"$scratch/gdb.out")
	if [ -z "$b" ] || [ -z "$a" ] || [ -z "$n" ] ||
	   grep -q 'Process record does not support' "$scratch/gdb.out"; then
		cat "$scratch/gdb.out" >&2
		die "GDB did not record the whole run"
	fi
	set -- $b $a
	secs=$(echo "$1 $3" | awk '{printf "%.3f", $2 - $1}')
	put "$w" gdb_insns "$n"
	put "$w" gdb_secs "$secs"
	put "$w" gdb_rate "$(echo "$n $secs" | awk '{printf "%.0f", $1 / $2}')"
	put "$w" gdb_rss0 "$2"
	put "$w" gdb_rss "$4"
	echo "  gdb:  $n insns, $secs s, VmRSS $2 KiB before, VmHWM $4 KiB" \
	     "after" >&2
}

# bare_run WORKLOAD WORK PROG ARGS...: (3), or its --work variants.
bare_run() {
	w=$1; work=$2; shift 2
	line=$(run "$bare" --work="$work" -- "$@") || die "bare-step failed"
	set -- $(echo "$line" | sed -n 's/^bare-step: \([0-9]*\) steps in \([0-9.]*\) s (\([0-9]*\) steps\/s).*/\1 \2 \3/p')
	[ $# -eq 3 ] || die "cannot parse: $line"
	if [ "$work" = none ]; then
		put "$w" bare_steps "$1"
		put "$w" bare_rate "$3"
	else
		put "$w" "bare_${work}_rate" "$3"
	fi
	echo "  bare-step --work=$work: $1 steps, $2 s, $3 steps/s" >&2
}

# cpu_sample: "BUSY IDLE" jiffies of all CPUs so far (/proc/stat).
cpu_sample() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat
}

# busy_cpus "BUSY0 IDLE0" "BUSY1 IDLE1": CPUs busy on average between.
busy_cpus() {
	echo "$1 $2" | awk -v n="$ncpu" '{ b = $3 - $1; t = b + $4 - $2
		printf "%.2f", (t > 0 ? n * b / t : 0) }'
}

# quiet: waits (up to --wait seconds) until the machine is idle for 2 s
# (other engineers' test runs share these CPUs), so that each timed run
# starts on a quiet machine.
quiet() {
	waited=0
	while [ "$waited" -lt "$wait_max" ]; do
		s0=$(cpu_sample); sleep 2; s1=$(cpu_sample)
		b=$(busy_cpus "$s0" "$s1")
		awk -v b="$b" 'BEGIN { exit !(b < 0.15) }' && return 0
		waited=$((waited + 2))
	done
	echo "  (the machine did not go quiet in ${wait_max} s: measuring" \
	     "anyway)" >&2
}

# measure KIND WORKLOAD FUNCTION ARGS...: runs a measurement on a quiet
# machine and records how many CPUs were busy on average during it: about
# one for a tracer and its tracee taking turns (GDB: up to 1.15), more
# when another job ran.  Such a run is measured again, up to --retries
# times; then the last one is kept.
measure() {
	kind=$1; mw=$2; shift 2
	try=0
	while :; do
		: >"$pending"
		quiet
		s0=$(cpu_sample)
		"$@"
		s1=$(cpu_sample)
		b=$(busy_cpus "$s0" "$s1")
		echo "    (machine: $b CPUs busy during it)" >&2
		try=$((try + 1))
		if awk -v b="$b" -v m="$max_busy" 'BEGIN { exit !(b <= m) }'
		then
			break
		fi
		if [ "$try" -gt "$retries" ]; then
			echo "    (disturbed $try times: kept)" >&2
			break
		fi
		echo "    (disturbed: measuring again)" >&2
	done
	cat "$pending" >>"$results"
	echo "$mw $round ${kind}_busy $b" >>"$results"
}

# Machine.
machine="$(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' \
	/proc/cpuinfo | head -n 1), Linux $(uname -r), $("$gdb" --version |
	head -n 1), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "run-record.sh: $machine" >&2

round=1
while [ "$round" -le "$runs" ]; do
	workloads | while read -r w prog args base; do
		echo "round $round, $w:" >&2
		measure ptrr "$w" ptrr_run "$w" "$prog" $args
		measure gdb "$w" gdb_run "$w" "$prog" $args
		measure bare "$w" bare_run "$w" none "$prog" $args
		if [ "$breakdown" = yes ]; then
			measure bare_regs "$w" bare_run "$w" regs "$prog" $args
			measure bare_code "$w" bare_run "$w" code "$prog" $args
		fi
		: >"$pending"
		if [ "$base" = - ]; then
			ptrr_base "$w" "$prog"
		else
			ptrr_base "$w" "$prog" "$base"
		fi
		cat "$pending" >>"$results"
	done
	round=$((round + 1))
done

# The per-round derived values.
awk '
	{ v[$1 " " $2 " " $3] = $4; w[$1] = 1; r[$2] = 1 }
	END {
		for (x in w) for (y in r) {
			k = x " " y " "
			if (!((k "ptrr_rate") in v)) continue
			print x, y, "ratio_gdb", v[k "ptrr_rate"] / v[k "gdb_rate"]
			print x, y, "ratio_bare", v[k "ptrr_rate"] / v[k "bare_rate"]
			print x, y, "ptrr_bpi", v[k "ptrr_trace"] / v[k "ptrr_insns"]
			print x, y, "ptrr_rss_bpi", (v[k "ptrr_rss"] - \
				v[k "ptrr_base_rss"]) * 1024 / v[k "ptrr_insns"]
			print x, y, "gdb_bpi", (v[k "gdb_rss"] - v[k "gdb_rss0"]) \
				* 1024 / v[k "gdb_insns"]
		}
	}' "$results" >"$results.derived"
cat "$results.derived" >>"$results"

# stat WORKLOAD KEY [FORMAT]: "median [min–max]" over the rounds.
stat() {
	awk -v w="$1" -v k="$2" -v f="${3:-%.0f}" '
		$1 == w && $3 == k { a[n++] = $4 }
		END {
			if (!n) { print "?"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			m = n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2
			s = sprintf(f, m)
			if (n > 1)
				s = s " [" sprintf(f, a[0]) "–" sprintf(f, a[n - 1]) "]"
			print s
		}' "$results"
}

# median WORKLOAD KEY: the bare median, for the verdicts.
median() {
	stat "$1" "$2" '%.6f' | cut -d' ' -f1
}

yesno() {
	echo "$1" | awk -v t="$2" '{ print ($1 >= t) ? "**yes**" : "**no**" }'
}

echo "Machine: $machine, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
[ -z "$pin" ] || echo "All three pinned to CPU $pin (taskset -c $pin)."
echo
workloads | while read -r w prog args base; do
	rg=$(median "$w" ratio_gdb)
	rb=$(median "$w" ratio_bare)
	echo "Workload $w: \`$(basename "$prog") $args\` from main to exit," \
	     "$runs rounds; median [range]:"
	echo
	echo "| Measurement | Result | Target | Met |"
	echo "|---|---|---|---|"
	echo "| instructions: ptrr / GDB \`info record\` / bare-step steps |" \
	     "$(stat "$w" ptrr_insns) / $(stat "$w" gdb_insns) /" \
	     "$(stat "$w" bare_steps) | | |"
	echo "| (1) ptrr record --backend=soft --soft-step=$soft_step |" \
	     "$(stat "$w" ptrr_rate) insn/s" \
	     "($(stat "$w" ptrr_secs %.2f) s) | | |"
	echo "| (2) GDB record full | $(stat "$w" gdb_rate) insn/s" \
	     "($(stat "$w" gdb_secs %.2f) s) | | |"
	echo "| (3) bare PTRACE_SINGLESTEP | $(stat "$w" bare_rate) steps/s | | |"
	if [ "$breakdown" = yes ]; then
		echo "| (3) + PTRACE_GETREGS per step |" \
		     "$(stat "$w" bare_regs_rate) steps/s | | |"
		echo "| (3) + GETREGS + process_vm_readv of the code |" \
		     "$(stat "$w" bare_code_rate) steps/s | | |"
	fi
	echo "| ptrr / GDB | $(stat "$w" ratio_gdb %.2f)x | >= 3x |" \
	     "$(yesno "$rg" 3) |"
	echo "| ptrr / bare | $(stat "$w" ratio_bare %.2f)x | >= 0.67x" \
	     "(within 1.5x) | $(yesno "$rb" 0.6667) |"
	echo "| ptrr trace | $(stat "$w" ptrr_bpi %.3f) bytes/insn | | |"
	echo "| ptrr peak RSS (GNU time) | $(stat "$w" ptrr_rss) KiB;" \
	     "$(stat "$w" ptrr_base_rss) KiB recording \`$(basename "$prog")$(
	     [ "$base" = - ] || echo " $base")\`: growth" \
		 "$(stat "$w" ptrr_rss_bpi %.2f) bytes/insn | | |"
	echo "| CPUs busy during ptrr / GDB / bare-step (1 = the run alone) |" \
	     "$(stat "$w" ptrr_busy %.2f) / $(stat "$w" gdb_busy %.2f) /" \
	     "$(stat "$w" bare_busy %.2f) | | |"
	echo "| GDB VmRSS before \`record full\` -> VmHWM after |" \
	     "$(stat "$w" gdb_rss0) -> $(stat "$w" gdb_rss) KiB:" \
	     "$(stat "$w" gdb_bpi) bytes/insn | | |"
	echo
done
