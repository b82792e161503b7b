#!/bin/sh
# `ptrr record --psb-period=SIZE --noretcomp`: the trace configuration a
# CPU's IA32_RTIT_CTL.PSBFreq and DisRETC set, emitted by the software
# backend.  For each configuration, on programs rich in returns and
# indirect calls:
#  - the decoded history is the single-stepped ground truth (and the
#    block-stepped recording's history is too);
#  - libipt's own packet decoder (tests/pt-packets) finds the PSBs where
#    the SDM puts them: one every PERIOD bytes, at the first instruction
#    boundary after PERIOD bytes of packets;
#  - without return compression every return is a TIP: the TIPs are the
#    returns plus the indirect calls and jumps of the history; with it,
#    each TIP a compressed return saves is one more TNT bit;
#  - the bundle says what was used;
# and the usage errors of both options.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir record-ptconf
cd "$top_builddir" || exit 99
progs=tests/progs
packets=tests/pt-packets

# counts NAME: the packet counts of recording NAME's (only) thread, as
# shell assignments tip=, tnt_bits=, psbs=, errors=; the PSB offsets in
# $work/NAME.psb.
counts() {
	"$packets" "$work/$1.ptrr"/threads/*.pt >"$work/$1.pkt" ||
		{ fail "$1: pt-packets: $(tail -n 1 "$work/$1.pkt")"; return 1; }
	grep '^psb ' "$work/$1.pkt" | awk '{ print $2 }' >"$work/$1.psb"
	eval "$(awk '!/^psb / { print $1 "=" $2 }' "$work/$1.pkt")"
}

# check_psbs NAME PERIOD: the PSBs of NAME start at 0 and follow each
# other every PERIOD bytes, give or take one instruction's packets and
# the PSB+ itself (under 64 bytes), up to the end of the trace.
check_psbs() {
	size=$(cat "$work/$1.ptrr"/threads/*.pt | wc -c)
	awk -v period="$2" -v name="$1" -v size="$size" '
		NR == 1 && $1 != 0 { print name ": first PSB at " $1; bad = 1 }
		NR > 1 && ($1 - last < period || $1 - last >= period + 64) {
			print name ": PSB at " $1 " is " $1 - last \
			      " bytes after the one before"; bad = 1 }
		{ last = $1 }
		END {
			if (size - last >= period + 64) {
				print name ": no PSB in the last " size - last \
				      " bytes"; bad = 1 }
			exit bad
		}' "$work/$1.psb" >"$work/$1.psbcheck" ||
		fail "$(head -n 3 "$work/$1.psbcheck")"
}

# branches NAME: the returns and the indirect calls and jumps in NAME's
# history (decoded, and checked equal to the ground truth before).
branches() {
	"$ptrr" insn-history "$work/$1.ptrr" | awk -F '\t' '
		{ split($3, w, " "); m = w[1] }
		m ~ /^ret/ { n++ }
		(m ~ /^call/ || m ~ /^jmp/) && $3 ~ /\*/ { n++ }
		END { print n + 0 }'
}

# config NAME: what `ptrr info` says of the trace configuration.
config() {
	"$ptrr" info "$work/$1.ptrr" | sed -n 's/^Recording format: //p'
}

for prog in recursion fnptr; do
	for period in 2K 64K; do
		bytes=$(( ${period%K} * 1024 ))
		for rc in on off; do
			opt=""
			[ $rc = off ] && opt=--noretcomp
			run=$prog-$period-$rc
			record_truth $run --psb-period=$period $opt \
				-- $progs/$prog || continue
			check_threads "$work/$run.ptrr" "$work/$run.gt"
			# Block stepping emits through the same emitter.
			[ $period = 2K ] &&
			record $run.blk --psb-period=$period $opt \
				-- $progs/$prog &&
			check_threads "$work/$run.blk.ptrr" "$work/$run.gt"
			case $(config $run) in
			*"PSB every $bytes bytes, return compression $rc"*) ;;
			*) fail "$run: info says: $(config $run)" ;;
			esac
			counts $run || continue
			[ "$errors" -eq 0 ] ||
				fail "$run: libipt resynchronized $errors times"
			check_psbs $run $bytes
			eval "tip_$rc=$tip tnt_$rc=$tnt_bits"
		done
		# One program, one run: the two traces differ only in how
		# returns are told.
		want=$(branches $prog-$period-off)
		[ "$tip_off" -eq "$want" ] ||
			fail "$prog $period: $tip_off TIPs without return" \
			     "compression, $want returns and indirect branches"
		saved=$((tip_off - tip_on)) bits=$((tnt_on - tnt_off))
		[ $saved -gt 0 ] && [ $saved -eq $bits ] ||
			fail "$prog $period: return compression saved $saved" \
			     "TIPs for $bits more TNT bits"
	done
done

# A long trace at the largest period.
record loops64 --psb-period=64M -- $progs/loops && counts loops64 &&
	check_psbs loops64 67108864

# Usage errors: exit 1, the cause named, nothing recorded.
for bad in 3K 1K 128M 0 x; do
	expect_exit 1 "^ptrr record: --psb-period: expected a power of two from 2K to 64M: $bad\$" \
		"$ptrr" record --psb-period=$bad -o "$work/bad.ptrr" -- $progs/loops
done
expect_exit 1 "two PSB periods" "$ptrr" record --psb-period=64K \
	--buffer-size=64K -o "$work/bad.ptrr" -- $progs/loops
[ ! -e "$work/bad.ptrr" ] || fail "a usage error wrote a bundle"

finish
