#!/bin/sh
# The live-session benchmark (docs/performance.md, "Reverse execution in
# a live session"): bench/progs/mixed ROUNDS under `ptrr gdb`, traced from
# main to exit, then the first reverse-stepi after that stop and a
# reverse-continue across the whole trace (to where tracing began),
# side by side with gdb's own `record pt` on the same program through the
# same server (gdb reads the raw trace and decodes it itself).  Times are
# from gdb's `shell` marks between the commands; peak memory is VmHWM of
# gdb and of `ptrr serve`.
#
# usage: run-live.sh [--builddir DIR] [--rounds "20 200"] [--gdb GDB]
#
# ROUNDS 20 is about 100,000 instructions from main to exit, 200 about
# a million.  The software backend traces about 15,000 instructions a
# second, so the traced run dominates the wall time.
set -eu

builddir=.
rounds="20 200"
gdb=gdb

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--gdb) gdb=$2; shift 2 ;;
	*) sed -n '/^# usage:/s/^# //p' "$0" >&2; exit 1 ;;
	esac
done
ptrr=$(realpath "$builddir/ptrr")
prog=$(realpath "$builddir/bench/progs/mixed")
for f in "$ptrr" "$prog"; do
	[ -x "$f" ] || { echo "run-live.sh: $f not found: run 'make &&" \
		"make bench' (or pass --builddir)" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# A mark: the time in seconds, and gdb's and the server's peak memory.
mark='shell printf "MARK %s gdb=%s serve=%s\n" "$(date +%s.%N)" "$(sed -n "s/^VmHWM:[[:space:]]*//p" /proc/$PPID/status)" "$(sed -n "s/^VmHWM:[[:space:]]*//p" /proc/$(pgrep -n -f "^[^ ]*ptrr serve")/status)"'

# session NAME ROUNDS CMD...: ptrr gdb on mixed ROUNDS with -ex CMD each.
session() {
	name=$1 n=$2
	shift 2
	for c in "$@"; do
		set -- "$@" -ex "$c"
		shift
	done
	PTRR_GDB=$gdb "$ptrr" gdb --batch -ex 'set pagination off' "$@" \
		-- "$prog" "$n" >"$out/$name" 2>&1
}

# secs NAME K: seconds between the K-th and the K+1-th mark of NAME.
secs() {
	awk -v k="$2" '/^MARK / { t[++n] = $2 }
		END { printf "%.3f", t[k + 1] - t[k] }' "$out/$1"
}

# server NAME: seconds the server took to answer the packets of the
# first reverse-stepi (from each packet sent to its reply, in gdb's
# timestamped remote log).
server() {
	awk '$1 !~ /^[0-9]+\.[0-9]+$/ || $2 != "[remote]" { next }
		/Sending packet:/ { t = $1 }
		/Packet received:/ && t { s += $1 - t; t = 0 }
		END { printf "%.3f", s }' "$out/$1"
}

# mem NAME WHO: the last mark's peak memory of WHO (gdb or serve) in MB.
mem() {
	sed -n "s/^MARK .*$2=\([0-9]*\) kB.*/\1/p" "$out/$1" | tail -n 1 |
		awk '{ printf "%.0f", $1 / 1024 }'
}

echo "| instructions traced | ptrr: first reverse-stepi (server's share) | gdb record pt: first reverse-stepi | ratio | ptrr: reverse-continue over all | gdb record pt: reverse-continue over all | ratio | ptrr serve peak | gdb peak (ptrr / record pt) |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in $rounds; do
	session ptrr "$n" 'break main' continue 'pt start' 'break exit' \
		continue 'set debug timestamp on' 'set debug remote 1' \
		"$mark" reverse-stepi "$mark" 'set debug remote 0' 'delete 1' \
		reverse-continue "$mark" 'pt info'
	session btrace "$n" 'break main' continue \
		'set record btrace pt buffer-size unlimited' 'record pt' 'break exit' \
		continue "$mark" reverse-stepi "$mark" 'delete 1' \
		reverse-continue "$mark" 'info record'
	insns=$(sed -n 's/.*Recorded \([0-9]*\) instructions.*/\1/p' \
		"$out/ptrr" | head -n 1)
	ginsns=$(sed -n 's/^Recorded \([0-9]*\) instructions.*/\1/p' \
		"$out/btrace" | head -n 1)
	[ -n "$insns" ] && [ -n "$ginsns" ] || {
		echo "run-live.sh: a session failed:" >&2
		tail -n 5 "$out/ptrr" "$out/btrace" >&2
		exit 1
	}
	p1=$(secs ptrr 1) g1=$(secs btrace 1)
	p2=$(secs ptrr 2) g2=$(secs btrace 2)
	echo "| $insns (gdb: $ginsns) | ${p1} s ($(server ptrr) s) | ${g1} s |" \
	     "$(awk -v a="$g1" -v b="$p1" 'BEGIN { printf "%.0f×", a / b }')" \
	     "| ${p2} s | ${g2} s |" \
	     "$(awk -v a="$g2" -v b="$p2" 'BEGIN { printf "%.0f×", a / b }')" \
	     "| $(mem ptrr serve) MB | $(mem ptrr gdb) MB / $(mem btrace gdb) MB |"
done
