#!/bin/sh
# The gdb benchmark (docs/performance.md, "Inside gdb (issue 4)"): on the
# same trace, served by `ptrr serve` from a bundle, gdb's own `record pt`
# path (gdb reads the raw trace with qXfer:btrace:read and decodes all of
# it into its per-instruction vector) against ptrr's (`monitor pt info`
# and `monitor pt call-history`: ptrr's index, decoded lazily), in one
# gdb session each, one after the other, on a bundle without a saved
# index (so ptrr too decodes the trace in the session).  Also the first reverse-stepi
# after the call history and a reverse-continue across the whole history,
# and, in a third session, what a user first waits for: from the start of
# `ptrr serve` to the reply to a reverse-stepi sent as soon as gdb is
# connected: with the index and call segments the bundle keeps
# (threads/1.idx), and without them (a copy made with --no-index: the
# index is built on opening and the call stack it needs computed in the
# background from the start).
#
# usage: run-gdb.sh [--builddir DIR] [--dir SCRATCH] [--sizes "1M 10M"]
#                   [--gdb GDB] [--skip-gdb-path]
#
# Traces come from bench/gen-trace (a walk through libc's real code) and
# become bundles with bench/trace-bundle.  Run after 'make && make bench'.
set -eu

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench-gdb
sizes="1M 10M"
gdb=gdb
gdb_path=yes

while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--gdb) gdb=$2; shift 2 ;;
	--skip-gdb-path) gdb_path=no; shift ;;
	*) sed -n '/^# usage:/,/--skip-gdb/s/^# \{0,1\}//p' "$0" >&2; exit 1 ;;
	esac
done
ptrr=$(realpath "$builddir/ptrr")
for prog in "$ptrr" "$builddir/bench/gen-trace" "$builddir/bench/trace-bundle"; do
	[ -x "$prog" ] || { echo "run-gdb.sh: $prog not found: run 'make &&" \
		"make bench' (or pass --builddir)" >&2; exit 2; }
done
# ptrr's unwinder, as `ptrr gdb` loads it: gdb then asks ptrr for the
# call stack away from the end of history.
unwinder=$(realpath "$builddir/plugin/jit-reader/.libs/ptrr-unwind.so")
mkdir -p "$scratch"
export HOME="$scratch"	# no user gdbinit

# mark: a gdb command printing "@@ LABEL SECONDS VMHWM-GDB VMHWM-SERVER".
mark() {
	hwm="sed -n 's/^VmHWM:[[:space:]]*\\([0-9]*\\).*/\\1/p'"
	printf '%s\n' "shell echo \"@@ $1 \$(date +%s.%N) \$($hwm /proc/\$PPID/status) \$($hwm /proc/\$(pgrep -P \$PPID ptrr | head -n 1)/status)\""
}

# session BUNDLE CMD...: one gdb session on BUNDLE, with a mark before
# and after each command; prints the marks.  The server's messages go to
# descriptor 3 (--stderr-fd), as ptrr replay has them: through the pipe
# gdb gives it for its stderr, gdb would make a read system call for
# every byte of every reply (docs/server.md).
session() {
	b=$1
	shift
	set -- -ex 'set remotetimeout 60' -ex "jit-reader-load $unwinder" \
		-ex "$(mark start)" \
		-ex "target remote | '$ptrr' serve --stdio --stderr-fd=3 '$b'" \
		-ex "$(mark connected)" "$@"
	timeout 3600 "$gdb" -nx -batch "$@" 3>&2 2>&1 | grep '^@@ '
}

# span FILE FROM TO: seconds between marks FROM and TO.
span() {
	awk -v a="$2" -v b="$3" '$2 == a { t0 = $3 } $2 == b { t1 = $3 }
		END { printf "%.3f", t1 - t0 }' "$1"
}

# mem FILE MARK FIELD: the VmHWM (KiB) in column FIELD (4 gdb, 5 server).
mem() {
	awk -v m="$2" -v f="$3" '$2 == m { print $f }' "$1"
}

echo "Machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' \
	/proc/cpuinfo | head -n 1), $("$gdb" --version | head -n 1)"
echo
echo "| Instructions | gdb record pt: info record | gdb: last page of call history | gdb peak RSS | ptrr: pt info | ptrr: last page of pt call-history | ptrr serve peak RSS | time ratio (gdb/ptrr, to the call history) | memory ratio (gdb growth / ptrr) | first reverse-stepi | reverse-continue over all | serve start to first reverse-stepi's reply | ptrr serve peak RSS then |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for size in $sizes; do
	base=$scratch/trace-$size
	[ -f "$base.pt" ] || "$builddir/bench/gen-trace" -o "$base" \
		--insns "$size" --seed 1 --psb-period 4096 >/dev/null 2>&1
	[ -f "$base.ptrr/threads/1.idx" ] || { rm -rf "$base.ptrr" &&
		"$builddir/bench/trace-bundle" "$base.info" "$base.ptrr"; }
	[ -d "$base-noidx.ptrr" ] || "$builddir/bench/trace-bundle" \
		--no-index "$base.info" "$base-noidx.ptrr"
	g=$scratch/gdb-$size.marks
	if [ $gdb_path = yes ]; then
		session "$base-noidx.ptrr" \
			-ex 'set record btrace pt buffer-size unlimited' \
			-ex 'record pt' -ex 'info record' \
			-ex "$(mark info)" -ex 'record function-call-history' \
			-ex "$(mark calls)" >"$g"
	else
		: >"$g"
	fi
	p=$scratch/ptrr-$size.marks
	session "$base-noidx.ptrr" -ex 'monitor pt info' -ex "$(mark info)" \
		-ex 'monitor pt call-history' -ex "$(mark calls)" \
		-ex 'reverse-stepi' -ex "$(mark rstep)" \
		-ex 'break *0x1' -ex 'reverse-continue' -ex "$(mark rcont)" \
		>"$p"
	f=$scratch/first-$size.marks
	session "$base.ptrr" -ex 'reverse-stepi' -ex "$(mark rstep)" \
		-ex 'bt 1' >"$f"
	f0=$scratch/first-noidx-$size.marks
	session "$base-noidx.ptrr" -ex 'reverse-stepi' -ex "$(mark rstep)" \
		-ex 'bt 1' >"$f0"
	gi=$(span "$g" connected info) gc=$(span "$g" connected calls)
	pi=$(span "$p" connected info) pc=$(span "$p" connected calls)
	gm0=$(mem "$g" connected 4) gm=$(mem "$g" calls 4)
	gm0=${gm0:-0} gm=${gm:-0}
	pm=$(mem "$p" calls 5)
	echo "| $size | ${gi} s | ${gc} s | $gm KiB (+$((gm - gm0))) |" \
	     "${pi} s | ${pc} s | $pm KiB |" \
	     "$(awk -v a="$gc" -v b="$pc" 'BEGIN { printf "%.1fx", a / b }') |" \
	     "$(awk -v a=$((gm - gm0)) -v b="$pm" 'BEGIN { printf "%.1fx", a / b }') |" \
	     "$(span "$p" calls rstep) s | $(span "$p" rstep rcont) s |" \
	     "$(span "$f" start rstep) s ($(span "$f0" start rstep) s" \
	     "without the saved index) | $(mem "$f" rstep 5) KiB |"
done
