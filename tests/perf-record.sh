#!/bin/sh
# `ptrr record --backend=perf` end to end, against the fake kernel: the
# real ptrr runs the real programs at native speed, and
# tests/unit/libfakeperf.so (LD_PRELOAD, tests only) answers its perf
# system calls with fake_perf.c's AUX areas, whose "CPU" writes real PT
# (PSB+, TIP.PGE and FUP at the thread's IP when its event was opened,
# TIP.PGD) for each thread whenever ptrr disables its event to read, and
# logs what it produced per thread, what it saw opened and resumed, and
# how many PTRACE_SINGLESTEPs ptrr asked for (docs/perf-backend.md).
set -u
. "$top_srcdir/tests/lib.sh"
work_dir perf-record
progs="$top_builddir/tests/progs"
preload="$top_builddir/tests/unit/libfakeperf.so"
pmu=bus/event_source/devices/intel_pt

# The fake sysfs tree of a Skylake-like PMU.
fake_pmu "$work/sys"

# The preload comes before the ASan runtime of an --enable-asan ptrr.
asan_options="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# perf NAME REPEAT RECORD-ARGS: records with the fake kernel into
# $work/NAME.ptrr; the fake's files in $work/NAME.fake, the recorder's
# output in $work/NAME.log.  REPEAT: stretches the CPU writes per read.
# With $as_ptrr set (in a subshell), the shell becomes ptrr.
perf() {
	name=$1 rep=$2
	shift 2
	rm -rf "$work/$name.fake" && mkdir "$work/$name.fake" || exit 99
	${as_ptrr:+exec} env PTRR_SYSFS_ROOT="$work/sys" \
	    PTRR_FAKE_PERF_DIR="$work/$name.fake" \
	    PTRR_FAKE_PERF_REPEAT="$rep" LD_PRELOAD="$preload" \
	    ASAN_OPTIONS="$asan_options" \
	    "$ptrr" record --backend=perf -o "$work/$name.ptrr" "$@" \
	    >"$work/$name.log" 2>&1
}

# opened NAME: the threads whose event was opened, in order.
opened() {
	awk '$1 == "open" { print $2 }' "$work/$1.fake/log"
}

# interrupt NAME PID: once 3 threads of recording NAME ran, SIGINT to
# ptrr (PID); waits for it.
interrupt() {
	i=0
	while [ "$(cat "$work/$1.fake/log" 2>/dev/null | grep -c '^resume')" \
		-lt 3 ] && [ $i -lt 400 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -INT $2
	wait $2 || fail "$1: ptrr record: $(cat "$work/$1.log")"
}

# check_native NAME NTHREADS [PSB-PERIOD]: NTHREADS events, each opened
# while its thread was in a ptrace stop and enabled before the thread
# first ran; each closed; no single-step; the bundle opens, made by perf
# with PSB-PERIOD (4096 by default).
check_native() {
	log="$work/$1.fake/log"
	n=$(opened "$1" | sort -u | wc -l)
	[ "$n" -eq "$2" ] || fail "$1: $n threads traced, not $2: $(cat "$log")"
	awk '$1 == "open" && $3 != "t"' "$log" | grep -q . &&
		fail "$1: an event opened while its thread ran: $(cat "$log")"
	for tid in $(opened "$1"); do
		grep -q "^resume $tid 1\$" "$log" ||
			fail "$1: thread $tid ran before its event was enabled"
		grep -q "^close $tid\$" "$log" ||
			fail "$1: the event of thread $tid was not closed"
	done
	grep -q '^singlesteps 0$' "$log" ||
		fail "$1: ptrr single-stepped: $(grep singlesteps "$log")"
	grep -q '^conts [1-9]' "$log" || fail "$1: no PTRACE_CONT"
	"$ptrr" info "$work/$1.ptrr" >"$work/$1.info" 2>&1 ||
		fail "$1: ptrr info: $(cat "$work/$1.info")"
	grep -q '"backend": "perf"' "$work/$1.ptrr/manifest.json" ||
		fail "$1: the bundle does not say perf"
	grep -q "\"psb_period\": ${3:-4096}" "$work/$1.ptrr/manifest.json" ||
		fail "$1: the bundle's PSB period is not ${3:-4096}"
}

# same_trace NAME BUNDLE TID EXPECTED: the thread's trace in BUNDLE is
# the file EXPECTED, byte for byte.
same_trace() {
	cmp -s "$2/threads/$3.pt" "$4" ||
		fail "$1: thread $3's trace ($(wc -c <"$2/threads/$3.pt"))" \
		     "is not the $(wc -c <"$4") bytes the fake produced"
}

# ---- Threads, snapshot mode: each thread's trace is what its AUX area
# got, the CPU is this machine's.
perf threads 1 -- "$progs/threads" ||
	fail "threads: ptrr record: $(cat "$work/threads.log")"
check_native threads 4
for tid in $(opened threads); do
	same_trace threads "$work/threads.ptrr" $tid \
		"$work/threads.fake/$tid.pt"
done
grep -q 'Stop reason: exited with status 0' "$work/threads.info" ||
	fail "threads: $(grep 'Stop reason' "$work/threads.info")"
vendor=$(awk -F': ' '/^vendor_id/ { print $2; exit }' /proc/cpuinfo)
family=$(awk -F': ' '/^cpu family/ { print $2; exit }' /proc/cpuinfo)
grep -q "^CPU: $vendor family $family " "$work/threads.info" ||
	fail "threads: $(grep '^CPU' "$work/threads.info"), not $vendor $family"
grep -q "snapshot mode: 4 threads" "$work/threads.log" ||
	fail "threads: summary $(cat "$work/threads.log")"

# ---- --psb-period and --noretcomp reach the event: config bits 24-27
# (psb_period, 16K = 2^(3+11)) and 11 (noretcomp) of the fake PMU's
# format files; the bundle says what the CPU was asked for.
perf conf 1 --psb-period=16K --noretcomp -- "$progs/loops" ||
	fail "conf: ptrr record: $(cat "$work/conf.log")"
check_native conf 1 16384
config=$(awk '$1 == "open" { print $5 }' "$work/conf.fake/log")
[ $((config >> 24 & 15)) -eq 3 ] && [ $((config >> 11 & 1)) -eq 1 ] ||
	fail "conf: attr.config $config"
grep -q '"ret_compression": false' "$work/conf.ptrr/manifest.json" ||
	fail "conf: the bundle does not say return compression is off"

# ---- --filter reaches the kernel as ranges of files, by file offset
# (kernel/events/core.c, perf_event_parse_addr_filter), for every thread:
# a symbol of the program, a symbol of a library mapped later, a file
# offset.  The offsets expected are computed here from readelf: the
# symbol's value moved by its PT_LOAD segment's p_offset - p_vaddr.
file_range() {
	readelf -lsW "$1" | awk -v sym="$2" "$awk_hex"'
		$1 == "LOAD" { n++; off[n] = hex($2); va[n] = hex($3)
			       fs[n] = hex($5) }
		$8 == sym && $4 == "FUNC" && !done {
			v = hex($2); done = 1
			for (i = 1; i <= n; i++)
				if (v >= va[i] && v < va[i] + fs[i])
					printf "0x%x/0x%x\n", v - va[i] + off[i], $3
		}'
}
recursion=$(realpath "$progs/recursion")
lib=$(realpath "$progs/libptrrplt.so")
perf filt 1 --filter=fact -- "$progs/recursion" ||
	fail "filt: ptrr record: $(cat "$work/filt.log")"
check_native filt 1
# filters NAME: the filter strings the kernel got in recording NAME.
filters() {
	sed -n 's/^filter [0-9]* //p' "$work/$1.fake/log"
}
want="filter $(file_range "$recursion" fact)@$recursion"
[ "$(filters filt)" = "$want" ] ||
	fail "filt: the kernel got '$(filters filt)', not '$want'"
perf filt2 1 --filter=ptrr_lib_sum@"$progs/libptrrplt.so" \
	--filter=0x1150/0x36@"$progs/recursion" -- "$progs/plt" ||
	fail "filt2: ptrr record: $(cat "$work/filt2.log")"
check_native filt2 1
want="filter $(file_range "$lib" ptrr_lib_sum)@$lib,filter 0x1150/0x36@$recursion"
[ "$(filters filt2)" = "$want" ] ||
	fail "filt2: the kernel got '$(filters filt2)', not '$want'"

# ---- A wrapped snapshot: the last 8 KiB, in order.
perf wrap 400 --buffer-size=8K -- "$progs/loops" ||
	fail "wrap: ptrr record: $(cat "$work/wrap.log")"
check_native wrap 1
tid=$(opened wrap)
tail -c 8192 "$work/wrap.fake/$tid.pt" >"$work/wrap.last"
[ "$(wc -c <"$work/wrap.fake/$tid.pt")" -gt 8192 ] ||
	fail "wrap: the fake produced too little to wrap"
same_trace wrap "$work/wrap.ptrr" $tid "$work/wrap.last"
grep -q "thread $tid: the AUX area wrapped" "$work/wrap.ptrr/manifest.json" ||
	fail "wrap: no note on the wrapped area"

# ---- Full mode, with signals (a read at each stop), a fork and a
# group-stop: every byte appended in order; the child is not traced.
perf full 2 --mode=full -- "$progs/signals" ||
	fail "full: ptrr record: $(cat "$work/full.log")"
check_native full 1
tid=$(opened full)
same_trace full "$work/full.ptrr" $tid "$work/full.fake/$tid.pt"
[ "$(wc -c <"$work/full.fake/$tid.pt")" -gt 200 ] ||
	fail "full: only one read: $(wc -c <"$work/full.fake/$tid.pt") bytes"
grep -q '"fork: child [0-9]* not traced"' "$work/full.ptrr/manifest.json" ||
	fail "full: no note on the forked child"

# ---- Full mode falling behind: --buffer-size=64K keeps 64 KiB through a
# 16 KiB area, which the CPU overfills (19800 bytes) at every stop: the
# cuts are noted (the history decoder makes each a gap), the reads
# appended as long as the cap allows, the rest dropped and noted.
perf cut 600 --mode=full --buffer-size=64K -- "$progs/signals" ||
	fail "cut: ptrr record: $(cat "$work/cut.log")"
check_native cut 1
tid=$(opened cut)
head -c 65536 "$work/cut.fake/$tid.kept" >"$work/cut.first"
same_trace cut "$work/cut.ptrr" $tid "$work/cut.first"
cmp -s "$work/cut.fake/$tid.kept" "$work/cut.fake/$tid.pt" &&
	fail "cut: the area never filled up"
grep -q "thread $tid: the AUX area filled up [0-9]* times" \
	"$work/cut.ptrr/manifest.json" || fail "cut: no note on the cuts"
grep -q "thread $tid: [0-9]* bytes of trace dropped past the 65536-byte cap" \
	"$work/cut.ptrr/manifest.json" || fail "cut: no note on the cap"

# ---- A crash: the fault stop before delivery, the registers, the memory
# snapshot, as the software backend writes them.
perf crash 1 -- "$progs/crash" ||
	fail "crash: ptrr record: $(cat "$work/crash.log")"
check_native crash 1
tid=$(opened crash)
same_trace crash "$work/crash.ptrr" $tid "$work/crash.fake/$tid.pt"
grep -q 'Stop reason: .*SIGSEGV' "$work/crash.info" ||
	fail "crash: $(grep 'Stop reason' "$work/crash.info")"
grep -q '"rip": "0x' "$work/crash.ptrr/manifest.json" ||
	fail "crash: no registers"
ls "$work"/crash.ptrr/snapshot/*.bin >/dev/null 2>&1 ||
	fail "crash: no memory snapshot"

# ---- execve: the old image's trace is kept in the bundle before it.
perf exec 1 -- "$progs/exec" "$progs/loops" ||
	fail "exec: ptrr record: $(cat "$work/exec.log")"
tid=$(opened exec | head -n 1)
[ "$(opened exec | wc -l)" -eq 2 ] ||
	fail "exec: $(opened exec | wc -l) events, not one per image"
cat "$work/exec.ptrr/before-exec.ptrr/threads/$tid.pt" \
    "$work/exec.ptrr/threads/$tid.pt" >"$work/exec.both" 2>/dev/null
cmp -s "$work/exec.both" "$work/exec.fake/$tid.pt" ||
	fail "exec: the two images' traces are not what the fake produced"
grep -q 'execve: seen only after it happened' \
	"$work/exec.ptrr/before-exec.ptrr/manifest.json" ||
	fail "exec: no note on the old image's memory map"
"$ptrr" info "$work/exec.ptrr/before-exec.ptrr" >/dev/null 2>&1 ||
	fail "exec: the bundle before the execve does not open"

# ---- SIGINT to ptrr: every thread stopped, the bundle written.
(as_ptrr=1 perf int 1 -- "$progs/spin") &
interrupt int $!
check_native int 3
grep -q 'Stop reason: interrupted' "$work/int.info" ||
	fail "int: $(grep 'Stop reason' "$work/int.info")"
for tid in $(opened int); do
	same_trace int "$work/int.ptrr" $tid "$work/int.fake/$tid.pt"
done

# ---- --pid: every thread of a running process, its events opened while
# ptrr holds it; after SIGINT it runs on, untraced.
"$progs/spin" &
spin=$!
sleep 0.2
(as_ptrr=1 perf att 1 --pid=$spin) &
interrupt att $!
check_native att 3
grep -q "attached to running process $spin" "$work/att.ptrr/manifest.json" ||
	fail "att: no note on attaching"
for tid in $(opened att); do
	same_trace att "$work/att.ptrr" $tid "$work/att.fake/$tid.pt"
done
check_let_go att $spin

finish
