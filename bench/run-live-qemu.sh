#!/bin/sh
# A live session at emulator speed (docs/performance.md, "Live sessions
# on QEMU", issue 21): bench/progs/mixed ROUNDS stopped at a breakpoint
# on exit after ROUNDS rounds (100,000: about 580 million instructions),
# side by side, one run each:
#   native  plain gdb: break exit, run
#   qemu    ptrr gdb --backend=qemu --record-from-start: break exit,
#           continue, then the first reverse-stepi and a reverse-step;
#           again with reverse-step first, then reverse-stepi
#   soft    the same with --backend=soft (the ptrace stepper) on a
#           shorter run (SOFT_ROUNDS, default 200), its rate per
#           instruction extrapolated to the qemu run's instructions
# With --pause SECS, each session waits that long at the stop before the
# first reverse-stepi (a person reading the stop: the call segments are
# computed in the background meanwhile); 0 by default.
# Times are from `shell date` marks in the gdb sessions (the continue,
# or native gdb's run, to the stop), the whole command's wall and CPU
# (user + sys of gdb, ptrr and QEMU: GNU time), the server's share of
# the first reverse-stepi from gdb's remote log.
#
# usage: run-live-qemu.sh [--builddir DIR] [--rounds N] [--soft-rounds N] [--pause SECS] [--gdb GDB]
set -eu

builddir=.
rounds=100000
soft_rounds=200
pause=0
gdb=gdb

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--soft-rounds) soft_rounds=$2; shift 2 ;;
	--pause) pause=$2; shift 2 ;;
	--gdb) gdb=$2; shift 2 ;;
	*) sed -n '/^# usage:/s/^# //p' "$0" >&2; exit 1 ;;
	esac
done
ptrr=$(realpath "$builddir/ptrr")
prog=$(realpath "$builddir/bench/progs/mixed")
for f in "$ptrr" "$prog"; do
	[ -x "$f" ] || { echo "run-live-qemu.sh: $f not found: run 'make &&" \
		"make bench' (or pass --builddir)" >&2; exit 2; }
done
command -v qemu-x86_64 >/dev/null ||
	{ echo "run-live-qemu.sh: no qemu-x86_64 (apt-get install" \
	  "qemu-user)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null ||
	{ echo "run-live-qemu.sh: no /usr/bin/time (apt-get install" \
	  "time)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

mark='shell date +MARK%s.%N'
timing='/usr/bin/time -f TIME:%e:%U:%S'

# run NAME CMD...: CMD's output in $out/NAME, with GNU time's line.
run() {
	name=$1
	shift
	$timing "$@" >"$out/$name" 2>&1 </dev/null ||
		{ echo "run-live-qemu.sh: $name failed:" >&2;
		  tail -n 5 "$out/$name" >&2; exit 1; }
}

# live NAME BACKEND ROUNDS [FIRST THEN]: the traced session to exit and
# back: FIRST (reverse-stepi) and THEN (reverse-step) after the stop.
live() {
	run "$1" env PTRR_GDB="$gdb" "$ptrr" gdb --backend="$2" \
		--record-from-start --batch -ex 'set breakpoint pending on' \
		-ex 'break exit' -ex "$mark" -ex continue -ex "$mark" \
		-ex "shell sleep $pause" -ex "$mark" \
		-ex 'set debug timestamp on' -ex 'set debug remote 1' \
		-ex "${4:-reverse-stepi}" -ex "$mark" -ex 'set debug remote 0' \
		-ex "${5:-reverse-step}" -ex "$mark" -ex 'pt info' -- "$prog" "$3"
}

# secs NAME K: seconds between marks K and K + 1.
secs() {
	awk -v k="$2" '/^MARK/ { sub(/^MARK/, ""); t[++n] = $0 }
		END { printf "%.3f", t[k + 1] - t[k] }' "$out/$1"
}

# cpu NAME / wall NAME: GNU time's figures of the whole command.
cpu() {
	awk -F: '/^TIME:/ { printf "%.2f", $3 + $4 }' "$out/$1"
}
wall() {
	awk -F: '/^TIME:/ { printf "%.2f", $2 }' "$out/$1"
}

# server NAME: the server's share of the first reverse-stepi.
server() {
	awk '$1 !~ /^[0-9]+\.[0-9]+$/ || $2 != "[remote]" { next }
		/Sending packet:/ { t = $1 }
		/Packet received:/ && t { s += $1 - t; t = 0 }
		END { printf "%.3f", s }' "$out/$1"
}

insns() {
	sed -n 's/.*Recorded \([0-9]*\) instructions.*/\1/p' "$out/$1" |
		head -n 1
}

run native "$gdb" -nx -q --batch -ex 'set breakpoint pending on' \
	-ex 'break exit' -ex "$mark" -ex run -ex "$mark" --args "$prog" "$rounds"
live qemu qemu "$rounds"
# The same with reverse-step the first command after the stop (then
# reverse-stepi: a reverse-next there would go back over all of main).
live qemu-step qemu "$rounds" reverse-step reverse-stepi
live soft soft "$soft_rounds"

n=$(insns qemu) ns=$(insns soft)
[ -n "$n" ] && [ -n "$ns" ] ||
	{ echo "run-live-qemu.sh: no instruction count" >&2; exit 1; }
tn=$(secs native 1) tq=$(secs qemu 1) ts=$(secs soft 1)
# The soft backend's time for the qemu run's instructions, at its rate.
tse=$(awk -v t="$ts" -v a="$ns" -v b="$n" 'BEGIN { printf "%.0f", t * b / a }')
cse=$(awk -v t="$(cpu soft)" -v a="$ns" -v b="$n" \
	'BEGIN { printf "%.0f", t * b / a }')
echo "| run | instructions | continue to the breakpoint | whole command: wall / CPU | first reverse command after $pause s (server's share) | then |"
echo "|---|---|---|---|---|---|"
echo "| native, plain gdb | (same program) | $tn s | $(wall native) s / $(cpu native) s | | |"
echo "| \`--backend=qemu\` | $n | $tq s | $(wall qemu) s / $(cpu qemu) s | $(secs qemu 3) s ($(server qemu) s) | $(secs qemu 4) s |"
echo "| \`--backend=qemu\`, reverse-step first, then reverse-stepi | $(insns qemu-step) | $(secs qemu-step 1) s | $(wall qemu-step) s / $(cpu qemu-step) s | $(secs qemu-step 3) s ($(server qemu-step) s) | $(secs qemu-step 4) s |"
echo "| \`--backend=soft\`, $soft_rounds rounds | $ns | $ts s | $(wall soft) s / $(cpu soft) s | $(secs soft 3) s ($(server soft) s) | $(secs soft 4) s |"
echo "| \`--backend=soft\`, extrapolated to $n | | ~$tse s | ~$cse s CPU | | |"
echo
echo "qemu / native (continue): $(awk -v a="$tq" -v b="$tn" 'BEGIN { printf "%.1f×", a / b }');" \
     "soft (extrapolated) / qemu: $(awk -v a="$tse" -v b="$tq" 'BEGIN { printf "%.0f×", a / b }')"
