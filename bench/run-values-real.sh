#!/bin/sh
# Values in the past of a real program not written for ptrr (issue 19):
# bzip2 1.0.8 from Debian's source package (apt-get source), built -O2
# -g with frame pointers with its library in one executable, compressing
# 300 bytes of text.
# A live `ptrr gdb --backend=soft --record-from-start` session runs it to
# the first BZ2_compressBlock (everything known there: the live
# process), then reverse-continues to add_pair_to_block six times,
# printing its argument's fields, globals and registers, and its
# caller's after `up`, then reverse-steps 20 lines printing at each;
# gdb's own `record full` of the same run, from main, with the same
# environment, runs the same commands.  Every value is judged as
# tests/gdb-values.sh judges (tests/values-lib.sh): equal, unavailable,
# or wrong, and equal by expression class.
# Then the same stops (not the first BZ2_compressBlock: it is not the
# end there) in two replays of `ptrr record --backend=soft` recordings
# of the run (the program's environment as in the live session): with
# no registers recorded on the way (--regs-every=0, the hardware case,
# but without the memory at the end: the program exits) and with them
# every K instructions.  Exit status 1 on any wrong value, 2 when the
# program cannot be had.
#
# usage: bench/run-values-real.sh [--builddir DIR] [--dir SCRATCH]
#                                 [--regs-every K]
# K: default 4096 (ptrr record's).  The source (apt-get source bzip2: a
# deb-src line for Debian's main archive) and the build are kept in
# SCRATCH.
set -u

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-values-real
every=4096
while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--regs-every) every=$2; shift 2 ;;
	*) sed -n '/^# usage:/,/^# SCRATCH/s/^# \{0,1\}//p' "$0" >&2
	   exit 1 ;;
	esac
done
top_builddir=$(cd "$builddir" && pwd) || exit 1
top_srcdir=$(cd "$(dirname "$0")/.." && pwd) || exit 1
GDB=${GDB:-$(command -v gdb)}
mkdir -p "$scratch" && cd "$scratch" || exit 1
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/values-lib.sh"
[ -x "$ptrr" ] || { echo "$ptrr not built" >&2; exit 1; }

src=$scratch/bzip2-1.0.8
p=$src/bzip2-ptrr
if [ ! -x "$p" ]; then
	[ -d "$src" ] || apt-get source bzip2 >"$scratch/source.log" 2>&1 ||
		{ echo "apt-get source bzip2 failed (a deb-src line for" \
		       "Debian's main archive?): $(tail -n 1 \
		       "$scratch/source.log")" >&2; exit 2; }
	# The program and its library in one executable (Debian's Makefile
	# links the system's libbz2.so, which has no debug info).
	(cd "$src" && ${CC:-cc} -O2 -g -fno-omit-frame-pointer \
		-D_FILE_OFFSET_BITS=64 -o bzip2-ptrr bzip2.c blocksort.c \
		huffman.c crctable.c randtable.c compress.c decompress.c \
		bzlib.c) >"$scratch/build.log" 2>&1 ||
		{ echo "bzip2 did not build: $scratch/build.log" >&2; exit 2; }
fi
# record full cannot record AVX instructions: libc's string functions
# without them, in both runs.
run_env=GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX2,-AVX,-BMI2,-AVX_Fast_Unaligned_Load
head -c 300 /usr/share/common-licenses/GPL-3 >"$scratch/in.txt"
prog_args="-c $scratch/in.txt"
work_dir values-real

stops=6 steps=20
at_end='s s->nblock s->state_in_ch s->blockCRC verbosity blockSize100k $pc $sp $rbp'
addrs_end='s s->strm s->nblock s->state_in_ch s->blockCRC verbosity blockSize100k'
in_add='s s->nblock s->state_in_ch s->state_in_len s->blockCRC *s->strm verbosity blockSize100k workFactor $pc $sp $rbp'
addrs_add='s s->strm s->nblock s->state_in_ch s->state_in_len s->blockCRC *s->strm verbosity blockSize100k workFactor'
in_caller='s progress_in s->strm->avail_in s->strm->total_in_lo32 s->avail_in_expect $pc $sp'
addrs_caller='s progress_in s->strm s->strm->avail_in s->strm->total_in_lo32 s->avail_in_expect'
in_step='s s->nblock s->state_in_ch s->blockCRC verbosity $pc $sp $rbp'
addrs_step='s s->nblock s->state_in_ch s->blockCRC verbosity'
always=

# class LABEL EXPR: registers, args (the function's own), heap (through
# the EState and bz_stream the library allocated), globals.
class() {
	case $2 in
	'$'*) c=registers ;;
	s|progress_in) c=args ;;
	verbosity|blockSize100k|workFactor) c=globals ;;
	*) c=heap ;;
	esac
	case $1 in *up) c=up_$c ;; s[0-9]*) c=step_$c ;; esac
	echo "$c"
}

commands() {
	echo 'set pagination off'
	echo 'break BZ2_compressBlock'
	echo 'continue'
	show end "$at_end" "$addrs_end"
	echo 'delete'
	stops_and_walk add_pair_to_block "$in_add" "$addrs_add" \
		"$in_caller" "$addrs_caller"
}

# The live session, with the program's environment printed first (gdb,
# which starts ptrr's server, adds to it), then record full with it.
{ echo 'set print elements unlimited'
  echo 'set print repeats unlimited'
  echo 'break main'
  echo 'continue'
  k=0
  while [ "$k" -lt 32 ]; do
	printf 'echo @@env \\n\noutput environ[%d]\necho \\n\n' "$k"
	k=$((k + 1))
  done
  echo 'delete'
  commands; } >"$work/cmds"
run_gdb live 4 "$ptrr" gdb --backend=soft --record-from-start --batch \
	-- "$p" $prog_args
awk '/^@@env / && !done { getline
     if (sub(/^0x[0-9a-f]+ "/, "") && sub(/"$/, "")) print
     else done = 1 }' "$work/live" >"$work/env"
{ echo 'set startup-with-shell off'
  echo 'unset environment'
  while IFS= read -r v; do
	echo "set environment ${v%%=*} ${v#*=}"
  done <"$work/env"
  echo 'break main'; echo "run $prog_args"
  echo 'set record full insn-number-max unlimited'; echo 'record full'
  echo 'delete'
  commands; } >"$work/cmds"
run_gdb full 1 "$GDB" -nx -batch "$p"
records "$work/live" >"$work/live.rec"
records "$work/full" >"$work/full.rec"
grep -q '^p6 s->nblock	' "$work/full.rec" ||
	fail "record full did not reach the 6th stop: $(tail -n 3 "$work/full")"
judge live full

# The recordings, replayed from their end (the exit).
# (not n nor k: run_gdb and stops_and_walk set them)
for rk in 0 "$every"; do
	bundle=$work/r$rk.ptrr
	rm -rf "$bundle"
	set --
	while IFS= read -r v; do
		set -- "$@" "$v"
	done <"$work/env"
	# shellcheck disable=SC2086
	env -i "$@" "$ptrr" record --backend=soft --regs-every="$rk" \
		-o "$bundle" -- "$p" $prog_args >"$work/rec$rk" 2>&1
	[ -d "$bundle" ] || { fail "no recording (--regs-every=$rk):" \
			       "$(tail -n 1 "$work/rec$rk")"; continue; }
	{ echo 'set pagination off'
	  echo 'break BZ2_compressBlock'
	  echo 'reverse-continue'
	  echo 'delete'
	  stops_and_walk add_pair_to_block "$in_add" "$addrs_add" \
		"$in_caller" "$addrs_caller"; } >"$work/cmds"
	run_gdb "r$rk" 1 "$ptrr" replay --batch "$bundle"
	records "$work/r$rk" >"$work/r$rk.rec"
	grep -q '^p6 s->nblock	' "$work/r$rk.rec" ||
		fail "r$rk did not reach the 6th stop: $(tail -n 3 "$work/r$rk")"
	judge "r$rk" full
done
for f in live full "r0" "r$every"; do
	cp "$work/$f" "$scratch/$f.out"
done
echo "outputs: $scratch/{live,full,r0,r$every}.out (r: replays of" \
     "recordings with registers every N instructions, 0: none)"
[ "$failures" -eq 0 ] || exit 1
