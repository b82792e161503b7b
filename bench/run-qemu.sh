#!/bin/sh
# The QEMU backend benchmark (docs/performance.md, "Recording under QEMU
# (issue 18)"), side by side in one run:
#  1. python3 -c 'print(1)' recorded end to end (bundle saved, index
#     written) with --backend=soft and --backend=qemu;
#  2. python3 -c 'sum(range(10**7))' (over a billion instructions):
#     native, under plain qemu-x86_64 (no plugin), recorded under QEMU in
#     snapshot and in full mode, the index saved lazily (snapshot mode's
#     default; full mode with --index=lazy), and `ptrr index` of a copy of
#     the full recording (its complete index, the call segments: full
#     mode's default costs about the two together): wall time, ratio to native,
#     trace bytes per instruction; the native instruction count per
#     iteration, single-stepped (bench/sigstep), beside the recording's;
#  2b. the same for a compiled program, where QEMU's own overhead is
#     typical (plain QEMU is about 2x native for it, against 11.7x for
#     CPython's loop): gzip -6 -c of a text file of 9.4 MB generated
#     the same way on every machine (over a billion instructions);
#  3. the full recordings of 2 and 2b replayed, each with its lazy
#     index (as recorded) and with the complete one (after ptrr index):
#     `ptrr replay` to gdb's first reply, a reverse-continue across all of
#     it, the peak memory of `ptrr serve`; in another session, the wait
#     of the first bt and reverse-step at the end; `ptrr call-history`
#     (all of it) and `ptrr insn-history` (the last 100,000 instructions);
#  4. the recording rate with 1, 4 and 16 threads (bench/progs/threads).
# Wall times are medians of --runs runs (default 3; 1 for the soft
# backend, which takes minutes); CPU time (user+sys of ptrr and QEMU) is
# given too, as the machine may be shared, and the load average (uptime)
# at the start and end of each section.
#
# usage: run-qemu.sh [--builddir DIR] [--dir SCRATCH] [--runs N]
#                    [--python PYTHON] [--skip-soft]
# Run after 'make && make bench'.
set -eu

builddir=.
scratch=${TMPDIR:-/tmp}/ptrr-bench-qemu
runs=3
soft=yes
py=/usr/bin/python3	# an ELF program (not a pyenv shim, a script)
gzip_lines=150000	# lines of gzip's input (9.4 MB: 1.3 G instructions)
while [ $# -gt 0 ]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--dir) scratch=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--python) py=$2; shift 2 ;;
	--skip-soft) soft=no; shift ;;
	*) sed -n '/^# usage:/,/--skip-soft/s/^# \{0,1\}//p' "$0" >&2; exit 1 ;;
	esac
done
ptrr=$(realpath "$builddir/ptrr")
threads=$(realpath "$builddir/bench/progs/threads" 2>/dev/null || true)
sigstep=$(realpath "$builddir/bench/sigstep" 2>/dev/null || true)
for f in "$ptrr" "$threads" "$sigstep"; do
	[ -x "$f" ] || { echo "run-qemu.sh: $f not found: run 'make &&" \
		"make bench' (or pass --builddir)" >&2; exit 2; }
done
command -v qemu-x86_64 >/dev/null ||
	{ echo "run-qemu.sh: qemu-x86_64 not found (apt-get install" \
		"qemu-user)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "run-qemu.sh: /usr/bin/time (GNU time)" \
	"is needed" >&2; exit 2; }
mkdir -p "$scratch"
cd "$scratch"
export HOME="$scratch"	# no user gdbinit

# timed NAME CMD...: runs CMD, appends "wall cpu" (seconds) to NAME.times.
timed() {
	name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$name.t" "$@" >"$name.out" 2>"$name.err"
	awk 'END { printf "%s %.2f\n", $1, $2 + $3 }' "$name.t" >>"$name.times"
}

# median NAME: the median wall time and its CPU time of NAME.times.
median() {
	sort -n "$1.times" | awk '{ w[NR] = $1; c[NR] = $2 }
		END { m = int((NR + 1) / 2); printf "%.2f %.2f\n", w[m], c[m] }'
}

# insns BUNDLE: the instructions recorded, over all threads.
insns() {
	"$ptrr" info "$1" | awk '/^  Recorded [0-9]+ instructions/ { n += $2 }
		END { print n }'
}

# trace_bytes BUNDLE: the bytes of trace the bundle holds.
trace_bytes() {
	cat "$1"/threads/*.pt | wc -c
}

rm -f ./*.times
echo "== 1. python3 -c 'print(1)', end to end"
uptime
i=0
while [ $i -lt "$runs" ]; do
	rm -rf p1q.ptrr
	timed p1q "$ptrr" record --backend=qemu -o p1q.ptrr -- \
		"$py" -c 'print(1)'
	i=$((i + 1))
done
if [ $soft = yes ]; then
	rm -rf p1s.ptrr
	timed p1s "$ptrr" record --backend=soft -o p1s.ptrr -- \
		"$py" -c 'print(1)'
fi
set -- $(median p1q)
q_wall=$1 q_cpu=$2
echo "qemu: $q_wall s wall ($q_cpu s CPU), $(insns p1q.ptrr) instructions"
if [ $soft = yes ]; then
	set -- $(median p1s)
	echo "soft: $1 s wall ($2 s CPU), $(insns p1s.ptrr) instructions"
	awk -v s="$1" -v q="$q_wall" -v sc="$2" -v qc="$q_cpu" \
		'BEGIN { printf "speed-up: %.0fx by wall, %.0fx by CPU\n",
			 s / q, sc / (qc > 0 ? qc : 0.01) }'
fi

# cpu_bound TAG CMD...: CMD natively, under plain qemu-x86_64 (no
# plugin), recorded under QEMU in snapshot and in full mode, --runs times
# each, interleaved, and then `ptrr index` of a copy of the last full
# recording, once: wall and CPU time (medians), ratio to native, what
# each recording adds over plain QEMU, and bytes of trace per
# instruction (CMD is a path: QEMU does not search PATH).  The
# recordings are TAG.snap.ptrr, TAG.full.ptrr and the indexed copy
# TAG.fullidx.ptrr; the instructions full mode recorded in $n, the
# native CPU time in $native_cpu.
cpu_bound() {
	tag=$1
	shift
	rm -f "$tag".*.times
	i=0
	while [ $i -lt "$runs" ]; do
		timed "$tag.native" "$@"
		timed "$tag.plain" qemu-x86_64 "$@"
		rm -rf "$tag.snap.ptrr" "$tag.full.ptrr"
		timed "$tag.snap" "$ptrr" record --backend=qemu \
			-o "$tag.snap.ptrr" -- "$@"
		timed "$tag.full" "$ptrr" record --backend=qemu --mode=full \
			--index=lazy -o "$tag.full.ptrr" -- "$@"
		i=$((i + 1))
	done
	rm -rf "$tag.fullidx.ptrr" "$tag.index.times"
	cp -r "$tag.full.ptrr" "$tag.fullidx.ptrr"
	timed "$tag.index" "$ptrr" index "$tag.fullidx.ptrr"
	n=$(insns "$tag.fullidx.ptrr")
	native=$(median "$tag.native" | cut -d' ' -f1)
	native_cpu=$(median "$tag.native" | cut -d' ' -f2)
	plain=$(median "$tag.plain" | cut -d' ' -f1)
	plain_cpu=$(median "$tag.plain" | cut -d' ' -f2)
	# Each beside the native run and, for the recordings, what ptrr
	# adds over plain QEMU (the part of the ratio that is ptrr's).
	for m in native plain snap full index; do
		set -- $(median "$tag.$m")
		awk -v m=$m -v w="$1" -v c="$2" -v nat="$native" \
			-v natc="$native_cpu" -v pl="$plain" -v plc="$plain_cpu" \
			'BEGIN { printf "%-6s %7.2f s wall (%6.2f s CPU), %5.1fx native by wall, %5.1fx by CPU",
				 m, w, c, w / nat, c / (natc > 0 ? natc : 0.01)
				 if (m == "snap" || m == "full")
					printf "; over plain QEMU +%.2f s wall (+%.2f s CPU)", w - pl, c - plc
				 printf "\n" }'
	done
	echo "full mode: $n instructions, $(trace_bytes "$tag.full.ptrr")" \
		"bytes of trace, $(awk -v b="$(trace_bytes "$tag.full.ptrr")" \
		-v n="$n" 'BEGIN { printf "%.3f", b / n }') bytes per" \
		"instruction; snapshot mode kept $(insns "$tag.snap.ptrr")" \
		"instructions in $(trace_bytes "$tag.snap.ptrr") bytes"
}

echo "== 2. python3 -c 'sum(range(10**7))'"
uptime
cpu_bound py "$py" -c 'sum(range(10**7))'
py_n=$n py_native_cpu=$native_cpu

echo "== 2b. gzip -6 -c of a generated text file (${gzip_lines} lines)"
uptime
# The same bytes on every machine: lines of numbers and words from seq
# and integer arithmetic (exact in any awk), compressible as text is.
seq 1 "$gzip_lines" | awk '{
	printf "%d %d %x record %d of the benchmark input, field %d\n",
		$1, ($1 * 7919) % 100003, $1 * 31, $1 % 97, ($1 * 13) % 1009 }' \
	>gzip.in
echo "input: $(wc -c <gzip.in) bytes, cksum $(cksum <gzip.in | cut -d' ' -f1)"
cpu_bound gzip "$(command -v gzip)" -6 -c gzip.in
gzip_n=$n
uptime

# steps N: instructions of sum(range(N)) natively, single-stepped.
steps() {
	"$sigstep" "$py" -c "import os, signal; r = range($1); \
os.kill(os.getpid(), signal.SIGUSR1); sum(r); \
os.kill(os.getpid(), signal.SIGUSR2)" | awk '{ print $2 }'
}
a=$(steps 1000)
b=$(steps 2000)
awk -v a="$a" -v b="$b" -v n="$py_n" -v c="$py_native_cpu" \
	'BEGIN { printf "natively single-stepped: %.1f instructions per iteration of sum(); the recording counted %.1f per iteration (start-up included): the native run does about %.1f G instructions per CPU second\n",
		 (b - a) / 1000, n / 1e7, n / (c > 0 ? c : 0.01) / 1e9 }'

echo "== 3. the full recordings in gdb and the CLI, lazy and complete index"
hwm='sed -n "s/^VmHWM:[[:space:]]*//p"'
# The mark: the time, and the peak memory of this gdb's own ptrr serve
# (gdb's child, as the shell gdb runs for it: not the newest ptrr serve
# on a shared machine).
mark="shell echo \"@@ \$(date +%s.%N) \$($hwm /proc/\$(pgrep -n -P \$PPID -f '^[^ ]*ptrr serve')/status)\""

# replayed BUNDLE N: BUNDLE (of N instructions) in gdb:
# first reply, reverse-continue over all, peak memory; the first bt and
# reverse-step at the end in a new session; ptrr serve's start alone;
# the CLI's call-history (all) and insn-history (the last 100,000).
replayed() {
	echo "-- $1 ($(ls "$1"/threads/*.idx | head -n 1 | xargs wc -c |
		cut -d' ' -f1) bytes of index; $(uptime | sed 's/.*load/load/'))"
	t0=$(date +%s.%N)
	timeout 3600 "$ptrr" replay --batch -ex "$mark" \
		-ex 'reverse-continue' -ex "$mark" -ex 'info record' "$1" \
		>replay.out 2>&1 || true
	awk -v t0="$t0" '/^@@ / { t[++k] = $2; m = $3 }
		END { printf "first reply %.2f s after ptrr replay; reverse-continue over all %.2f s; ptrr serve peak %s\n",
			t[1] - t0, t[2] - t[1], m }' replay.out
	grep -m1 'No more reverse-execution history' replay.out ||
		tail -n 3 replay.out
	timeout 3600 "$ptrr" replay --batch -ex "$mark" -ex 'bt 3' \
		-ex "$mark" -ex 'reverse-step' -ex "$mark" "$1" \
		>replay2.out 2>&1 || true
	awk '/^@@ / { t[++k] = $2; m = $3 }
		END { printf "at the end: the first bt %.2f s, then reverse-step %.2f s; ptrr serve peak %s\n",
			t[2] - t[1], t[3] - t[2], m }' replay2.out
	rm -f serve.times ch.times ih.times
	timed serve "$ptrr" serve --stdio "$1" </dev/null || true
	timed ch sh -c '"$0" call-history "$1" | wc -l' "$ptrr" "$1"
	timed ih "$ptrr" insn-history --from=$(($2 - 99999)) "$1"
	echo "ptrr serve's start $(median serve | awk '{ printf "%s s wall (%s s CPU)", $1, $2 }'), peak" \
		"$(awk 'END { print $4 }' serve.t) KB; call-history" \
		"$(median ch | awk '{ printf "%s s wall (%s s CPU)", $1, $2 }')" \
		"($(cat ch.out) lines); insn-history of the last 100,000" \
		"$(median ih | awk '{ printf "%s s wall (%s s CPU)", $1, $2 }')"
}
replayed py.full.ptrr "$py_n"
replayed py.fullidx.ptrr "$py_n"
replayed gzip.full.ptrr "$gzip_n"
replayed gzip.fullidx.ptrr "$gzip_n"
rm -f gdbsym.times
timed gdbsym gdb -nx -batch "$py"
echo "gdb reading $py's symbols alone:" \
	"$(median gdbsym | awk '{ printf "%s s wall (%s s CPU)", $1, $2 }')"

echo "== 4. recording rate with 1, 4 and 16 threads (bench/progs/threads)"
uptime
for t in 1 4 16; do
	rm -f thr$t.times
	rm -rf thr$t.ptrr
	timed thr$t "$ptrr" record --backend=qemu -o thr$t.ptrr -- \
		"$threads" "$t" 2000000
	timed thrn$t "$threads" "$t" 2000000
	set -- $(median thr$t)
	n=$(insns thr$t.ptrr)
	awk -v t=$t -v w="$1" -v c="$2" -v n="$n" -v nat="$(median thrn$t |
		cut -d' ' -f1)" 'BEGIN { printf "%2d threads: %d instructions in %.2f s wall (%.2f s CPU): %.1f M instructions/s (native %.2f s)\n",
			t, n, w, c, n / w / 1e6, nat }'
done
uptime
