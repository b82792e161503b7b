#!/bin/sh
# `ptrr import --perf` (docs/manual.md): a perf.data becomes a bundle
# that every command opens.  Export then import gives the same history
# per thread (a crashed thread's final PC aside: a perf.data has no
# registers); per-CPU recordings built here (tests/perf-percpu: threads
# interleaved on one CPU with PERF_RECORD_SWITCH_CPU_WIDE records and
# TSC, MTC, CYC, CBR, PIP and PAD packets; timed by TSC or by MTC alone)
# split back into the threads' histories; overlapping snapshots join;
# lost or truncated AUX data becomes a gap; the vDSO's code comes from
# perf's build-id cache, laid out as perf lays it out; gdb replays an imported
# bundle; bad input gets one-line errors, exit status 2 and no bundle.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir perf-import
HOME=$work
export HOME
cd "$top_builddir" || exit 99
p=tests/progs

# same_history WANT-BUNDLE GOT-BUNDLE NAME: every thread of WANT-BUNDLE
# has the same history in GOT-BUNDLE — a crashed thread's up to its final
# PC, which the trace's last FUP names — but for the final PC of a thread
# in the kernel when the recording ended (stop kind none), which only
# the recording's registers give.
same_history() {
	thread_ends "$1" >"$work/ends"
	n=0
	for tid in $(awk '{ print $1 }' "$work/ends"); do
		n=$((n + 1))
		"$ptrr" insn-history --raw --thread="$tid" "$1" >"$work/want"
		"$ptrr" insn-history --raw --thread="$tid" "$2" >"$work/got" 2>&1
		final=$(awk -v t="$tid" '$1 == t && $2 == "none" { print $3 }' \
			"$work/ends")
		if [ -n "$final" ] &&
		   [ "$(tail -n 1 "$work/want" | awk '{ print $2 }')" = "$final" ] &&
		   [ "$(wc -l <"$work/want")" -eq $(($(wc -l <"$work/got") + 1)) ]; then
			sed -i '$d' "$work/want"
		fi
		cmp -s "$work/want" "$work/got" ||
			fail "$3: thread $tid: the imported history differs:" \
				"$(diff "$work/want" "$work/got" | head -n 4)"
	done
	[ "$n" -gt 0 ] || fail "$3: no threads"
	[ "$(thread_ends "$2" | wc -l)" -eq "$n" ] ||
		fail "$3: $(thread_ends "$2" | wc -l) threads imported, not $n"
}

# round_trip NAME [RECORD-OPTIONS] -- PROG [ARGS]: records, exports,
# imports and compares.
round_trip() {
	name=$1
	shift
	record "$name" "$@" || return
	"$ptrr" export --perf="$work/$name.data" "$work/$name.ptrr" \
		>"$work/$name.export" 2>&1 ||
		{ fail "$name: export: $(cat "$work/$name.export")"; return; }
	"$ptrr" import --perf="$work/$name.data" -o "$work/$name.back.ptrr" \
		>"$work/$name.import" 2>&1 ||
		{ fail "$name: import: $(cat "$work/$name.import")"; return; }
	same_history "$work/$name.ptrr" "$work/$name.back.ptrr" "$name"
}

round_trip threads -- $p/threads
round_trip signals -- $p/signals
round_trip crash -- $p/crash
round_trip vdso -- $p/vdso
round_trip packed --pack --start=main -- $p/plt
round_trip exceptions -- $p/exceptions
round_trip segv -- $p/segv

# How the threads ended, as far as perf's EXIT records and the trace
# tell: each thread of a process that ended has an EXIT record, which
# says nothing of how; a crashed thread's trace ends with the fault's
# FUP, where it stopped — its final PC, the recording's.  segv's second
# thread was in the kernel when the first crashed: no EXIT (the export
# writes none for a thread still there), no final PC.
crash_pc=$(final_pc "$work/crash.ptrr")
"$ptrr" info "$work/crash.back.ptrr" >"$work/crashinfo.out" 2>&1
has crashinfo "^Stop reason: ended \(how is not recorded: no exit status or signal\) at $crash_pc\$"
has crashinfo "^Thread 1 \(LWP [0-9]+\) \[selected\]: ended \(how is not recorded: no exit status or signal\) at $crash_pc\$"
grep -q "\"end_ip\": \"$crash_pc\"" "$work/crash.back.ptrr/manifest.json" ||
	fail "crash: no end_ip in the manifest"
"$ptrr" info "$work/threads.back.ptrr" >"$work/thrinfo.out" 2>&1
[ "$(grep -c '^Thread [0-9]* (LWP [0-9]*).*: ended (how is not recorded: no exit status or signal)$' \
     "$work/thrinfo.out")" -eq "$(thread_ends "$work/threads.ptrr" | wc -l)" ] ||
	fail "threads: not every thread ended: $(grep '^Thread' "$work/thrinfo.out")"
"$ptrr" info "$work/segv.back.ptrr" >"$work/segvinfo.out" 2>&1
has segvinfo "^Thread 1 \(LWP [0-9]+\) \[selected\]: ended \(how is not recorded: no exit status or signal\) at $(final_pc "$work/segv.ptrr")\$"
# (Where the recorder stopped it: in the kernel, then no PC; else at the
# PC the trace's last FUP names, the recording's.)
segv2=$(thread_ends "$work/segv.ptrr" | awk 'NR == 2 { print $3 }')
has segvinfo "^Thread 2 \\(LWP [0-9]+\\): still running when the recording ended( at $segv2)?\$"

# What the imported bundle says about itself.
"$ptrr" info "$work/threads.back.ptrr" >"$work/info.out" 2>&1
has info '^Program: .*/tests/progs/threads$'
has info '^Recording format: Intel Processor Trace \(perf backend, PSB every 4096 bytes, return compression on\)'
has info '^CPU: GenuineIntel family 6 model 122 stepping 1$'
has info '^Note: imported from the perf.data .*threads.data \(per-thread trace\): it holds no registers or memory, so the replay starts at the end of each thread.s trace with the instruction pointer only$'
has info "libc.so.6 \(build-id [0-9a-f]{40}\)"

# Every browsing command and exporter opens an imported bundle; exported
# to perf again, perf lists its history (but the final PC, as above).
"$ptrr" call-history "$work/crash.back.ptrr" >"$work/calls.out" 2>&1 ||
	fail "call-history: $(tail -n 2 "$work/calls.out")"
has calls '	lookup(\.isra\.0)?$'
printf 'info\nquit\n' | "$ptrr" shell "$work/crash.back.ptrr" \
	>"$work/shell.out" 2>&1 || fail "shell: $(tail -n 2 "$work/shell.out")"
has shell '^Thread 1 \(LWP [0-9]+\) \[selected\]: ended'
"$ptrr" export --lldb="$work/again.lldb" --perfetto="$work/again.json" \
	--svg="$work/again.svg" --perf="$work/again.data" \
	"$work/crash.back.ptrr" >"$work/again.out" 2>&1 ||
	fail "export of an import: $(cat "$work/again.out")"
for f in again.lldb/trace.json again.json again.svg again.data; do
	[ -s "$work/$f" ] || fail "export of an import: no $f"
done
if command -v perf >/dev/null 2>&1; then
	perf script -i "$work/again.data" --itrace=i1ie -F ip 2>/dev/null |
		awk '{ print "0x" $1 }' >"$work/again.perf"
	"$ptrr" insn-history --raw "$work/crash.back.ptrr" |
		awk '{ print $2 }' | sed '$d' | cmp -s - "$work/again.perf" ||
		fail "export of an import: perf lists other instructions"
fi

# gdb on the imported crash: at the end with the instruction pointer
# only, where the recording ends, on the faulting instruction (the
# trace's last FUP); backwards from there: the backtrace (the history's
# frames: a bundle with no registers anywhere keeps them,
# docs/unwinder.md), reverse-finish back into the caller, and
# reverse-step into the function before.
if [ -x "${GDB:-}" ]; then
	"$ptrr" replay --batch -ex 'info registers rip' -ex 'bt' \
		-ex 'reverse-finish' -ex 'bt' -ex 'reverse-step' -ex 'bt' \
		"$work/crash.back.ptrr" >"$work/gdb.out" 2>&1
	has gdb "^rip +$crash_pc +$crash_pc <lookup(\\+[0-9]+)?>\$"
	has gdb '^#0  lookup \(r='
	has gdb '^#1  0x[0-9a-f]+ in main \(\) at .*crash.c:38$'
	has gdb '^#0  main \(\) at .*crash.c:38$'
	has gdb '^#0  (0x[0-9a-f]+ in )?clobber \(r=<unavailable>'
	tail -n 3 "$work/gdb.out" |
		grep -q '^#1  0x[0-9a-f]* in main () at .*crash.c:37$' ||
		fail "gdb: reverse-step did not go into clobber: $(tail -n 3 "$work/gdb.out")"
fi

# MMAP2 records, with build-ids (as perf record writes them since
# Linux 5.12): the same.
tests/perf-percpu --mmap2 "$work/threads.data" "$work/mmap2.data" \
	>"$work/mmap2.gen" 2>&1 || fail "mmap2: $(cat "$work/mmap2.gen")"
"$ptrr" import --perf="$work/mmap2.data" -o "$work/mmap2.ptrr" \
	>"$work/mmap2.import" 2>&1 ||
	fail "mmap2: import: $(cat "$work/mmap2.import")"
same_history "$work/threads.ptrr" "$work/mmap2.ptrr" mmap2
"$ptrr" info "$work/mmap2.ptrr" >"$work/mmap2.out" 2>&1
has mmap2 "libc.so.6 \(build-id [0-9a-f]{40}\)"

# The vDSO as perf record leaves it: an MMAP2 of "[vdso]", its build-id
# in the BUILD_ID feature, and a copy in perf's build-id cache, as perf
# lays it out: ~/.debug/[vdso]/ID/vdso, and the link .build-id/I/D to its
# directory.  Without the copy a warning and gaps where the vDSO ran;
# with it, the recording's history; a copy of another build is not used.
if grep -q '"name": "\[vdso\]"' "$work/vdso.ptrr/manifest.json"; then
	id=$(readelf -n "$work/vdso.data.vdso" | awk '/Build ID/ { print $3 }')
	tests/perf-percpu --vdso="$id" "$work/vdso.data" "$work/vdso2.data" \
		>"$work/vdso2.gen" 2>&1 || fail "vdso2: $(cat "$work/vdso2.gen")"
	cache=$work/.debug
	expect_exit 0 "warning: .*vdso2.data: \[vdso\] at 0x[0-9a-f]+ not imported \(perf's build-id cache $cache has no copy of build-id $id" \
		"$ptrr" import --perf="$work/vdso2.data" -o "$work/nocache.ptrr"
	"$ptrr" insn-history --raw "$work/nocache.ptrr" >"$work/nocache.out" 2>&1
	has nocache '^[0-9]+ \[gap\] '
	idx=${id#??}
	mkdir -p "$cache/[vdso]/$id" "$cache/.build-id/${id%"$idx"}" || exit 99
	cp "$work/vdso.data.vdso" "$cache/[vdso]/$id/vdso" || exit 99
	ln -s "../../[vdso]/$id" "$cache/.build-id/${id%"$idx"}/$idx" || exit 99
	# perf itself reads the vDSO's code from there.
	if command -v perf >/dev/null 2>&1; then
		perf script -i "$work/vdso2.data" --itrace=i1ie -F tid,ip \
			>"$work/perfvdso.out" 2>&1
		lacks perfvdso 'instruction trace error'
	fi
	expect_exit 0 "" \
		"$ptrr" import --perf="$work/vdso2.data" -o "$work/cache.ptrr"
	[ -s "$work/err" ] && fail "cache: warnings: $(cat "$work/err")"
	same_history "$work/vdso.ptrr" "$work/cache.ptrr" vdso-cache
	"$ptrr" info "$work/cache.ptrr" >"$work/cache.out" 2>&1
	has cache '\[vdso\] \[copy\]'
	# The same found from PERF_BUILDID_DIR.
	mv "$cache" "$work/cache2" || exit 99
	PERF_BUILDID_DIR=$work/cache2 "$ptrr" import --perf="$work/vdso2.data" \
		-o "$work/cache2.ptrr" >"$work/cache2.out" 2>&1 ||
		fail "cache2: $(cat "$work/cache2.out")"
	same_history "$work/vdso.ptrr" "$work/cache2.ptrr" vdso-cache-env
	# Another file under the build-id: not the vDSO.
	cp $p/loops "$work/cache2/[vdso]/$id/vdso" || exit 99
	PERF_BUILDID_DIR=$work/cache2 expect_exit 0 \
		"\[vdso\] at 0x[0-9a-f]+ not imported \(perf's build-id cache .*cache2 has no copy" \
		"$ptrr" import --perf="$work/vdso2.data" -o "$work/other.ptrr"
	# Where perf record works here (a software event), it lays its copy
	# of the vDSO out the same way.
	mkdir "$work/perfhome" || exit 99
	if command -v perf >/dev/null 2>&1 &&
	   HOME=$work/perfhome perf record -q -e task-clock -o "$work/rec.data" \
		-- $p/vdso >"$work/rec.out" 2>&1; then
		perf buildid-list -i "$work/rec.data" 2>/dev/null |
			grep -q "^$id \[vdso\]\$" &&
		{ [ -f "$work/perfhome/.debug/[vdso]/$id/vdso" ] ||
		  fail "perf record left no .debug/[vdso]/$id/vdso:" \
			"$(cd "$work/perfhome" && find .debug | head)"; }
	else
		echo "perf record -e task-clock does not work here: perf's own cache layout not checked"
	fi
fi

# Lost AUX data: a piece of trace that does not follow on (an offset
# past the end of the last one) goes on at its next PSB after a gap.
tests/perf-percpu --lose "$work/exceptions.data" "$work/lost.data" \
	>"$work/lost.gen" 2>&1 || fail "lost: $(cat "$work/lost.gen")"
"$ptrr" import --perf="$work/lost.data" -o "$work/lost.ptrr" \
	>"$work/lost.import" 2>&1 ||
	fail "lost: import: $(cat "$work/lost.import")"
"$ptrr" insn-history --raw "$work/lost.ptrr" >"$work/lost.out" 2>&1
has lost '^[0-9]+ \[gap\] trace overflow'
grep -q 'trace was lost (gaps in the history: 1)' "$work/lost.ptrr/manifest.json" ||
	fail "lost: no note on the lost trace"

# A PERF_RECORD_AUX with the truncated flag in the middle of a piece:
# the same.
tests/perf-percpu --truncate "$work/exceptions.data" "$work/trunc-aux.data" \
	>"$work/trunc-aux.gen" 2>&1 || fail "trunc-aux: $(cat "$work/trunc-aux.gen")"
"$ptrr" import --perf="$work/trunc-aux.data" -o "$work/trunc-aux.ptrr" \
	>"$work/trunc-aux.import" 2>&1 ||
	fail "trunc-aux: import: $(cat "$work/trunc-aux.import")"
"$ptrr" insn-history --raw "$work/trunc-aux.ptrr" >"$work/trunc-aux.out" 2>&1
has trunc-aux '^[0-9]+ \[gap\] trace overflow'

# Snapshot mode: two snapshots that overlap by a PSB segment join into
# the trace as recorded.
tests/perf-percpu --snapshot "$work/exceptions.data" "$work/snap.data" \
	>"$work/snap.gen" 2>&1 || fail "snap: $(cat "$work/snap.gen")"
"$ptrr" import --perf="$work/snap.data" -o "$work/snap.ptrr" \
	>"$work/snap.import" 2>&1 ||
	fail "snap: import: $(cat "$work/snap.import")"
same_history "$work/exceptions.ptrr" "$work/snap.ptrr" snapshot

# Per-CPU recordings: the threads of a process interleaved on one CPU,
# and two processes on two CPUs; each thread's history as recorded.
tests/perf-percpu "$work/threads.data" "$work/cpu.data" \
	>"$work/cpu.gen" 2>&1 || fail "cpu: $(cat "$work/cpu.gen")"
"$ptrr" import --perf="$work/cpu.data" -o "$work/cpu.ptrr" \
	>"$work/cpu.import" 2>&1 ||
	fail "cpu: import: $(cat "$work/cpu.import")"
same_history "$work/threads.ptrr" "$work/cpu.ptrr" per-cpu
grep -q 'per-CPU trace, split by the context switches' \
	"$work/cpu.ptrr/manifest.json" || fail "cpu: not imported per CPU"
# The same, timed by MTC packets alone (a TSC and TMA per PSB+ only).
tests/perf-percpu --mtc "$work/threads.data" "$work/mtc.data" \
	>"$work/mtc.gen" 2>&1 || fail "mtc: $(cat "$work/mtc.gen")"
"$ptrr" import --perf="$work/mtc.data" -o "$work/mtc.ptrr" \
	>"$work/mtc.import" 2>&1 ||
	fail "mtc: import: $(cat "$work/mtc.import")"
same_history "$work/threads.ptrr" "$work/mtc.ptrr" per-cpu-mtc

# Bad input: one line naming the cause, exit 2, no bundle.
bad_import() {
	pattern=$1 file=$2
	shift 2
	expect_exit 2 "$pattern" "$ptrr" import --perf="$file" -o "$work/bad.ptrr" "$@"
	[ "$(wc -l <"$work/err")" -eq 1 ] ||
		fail "import $file: not one line: $(cat "$work/err")"
	[ ! -e "$work/bad.ptrr" ] || fail "import $file: a bundle was written"
}
bad_import "cannot read .*missing.data: No such file" "$work/missing.data"
printf 'hello, perf\n' >"$work/text.data"
bad_import "not a perf.data file \(it does not start with PERFILE2\)" "$work/text.data"
head -c 3000 "$work/threads.data" >"$work/trunc.data"
bad_import "trunc.data is damaged or truncated at byte [0-9]+" "$work/trunc.data"
tests/perf-percpu --aux-type=3 "$work/threads.data" "$work/arm.data" ||
	fail "arm: cannot make the file"
bad_import "holds no Intel PT trace \(its AUX trace is of type 3" "$work/arm.data"
tests/perf-percpu --no-aux "$work/threads.data" "$work/noaux.data" ||
	fail "noaux: cannot make the file"
bad_import "holds no Intel PT trace \(no PERF_RECORD_AUXTRACE_INFO\)" "$work/noaux.data"
tests/perf-percpu --untimed "$work/threads.data" "$work/untimed.data" ||
	fail "untimed: cannot make the file"
bad_import "per-CPU recording without timed context switches" "$work/untimed.data"
bad_import "holds no trace of process 1" "$work/threads.data" --pid=1
tests/perf-percpu --pipe "$work/threads.data" "$work/pipe.data" ||
	fail "pipe: cannot make the file"
bad_import "pipe.data was written to a pipe \(perf record -o -\): write it to a file with perf inject" "$work/pipe.data"
tests/perf-percpu --compressed "$work/threads.data" "$work/zstd.data" ||
	fail "zstd: cannot make the file"
bad_import "zstd.data is compressed \(perf record -z\): write an uncompressed copy with perf inject" "$work/zstd.data"

# A missing module: a warning, the rest imported, gaps where its code
# ran.
mkdir "$work/gone" && cp $p/recursion "$work/gone/recursion" || exit 99
record gone --start=main -- "$work/gone/recursion" &&
"$ptrr" export --perf="$work/gone.data" "$work/gone.ptrr" >/dev/null 2>&1 ||
	fail "gone: cannot export"
rm "$work/gone/recursion"
expect_exit 0 "warning: .*gone.data: module .*gone/recursion is missing" \
	"$ptrr" import --perf="$work/gone.data" -o "$work/gone.back.ptrr"
"$ptrr" insn-history --raw "$work/gone.back.ptrr" >"$work/gone.out" 2>&1
has gone '^[0-9]+ \[gap\] '
# One of another build there: the same, and the warning says so.
cp $p/loops "$work/gone/recursion" || exit 99
expect_exit 0 "warning: .*gone.data: module .*gone/recursion is of another build \(build-id [0-9a-f]+, the file's [0-9a-f]+\)" \
	"$ptrr" import --perf="$work/gone.data" -o "$work/other-build.ptrr"
"$ptrr" insn-history --raw "$work/other-build.ptrr" >"$work/other-build.out" 2>&1
has other-build '^[0-9]+ \[gap\] '

expect_exit 1 "missing --lldb=TRACE.json, --perf=FILE or --raw=TRACE" "$ptrr" import -o "$work/x.ptrr"
expect_exit 1 "bad process id" "$ptrr" import --perf="$work/threads.data" --pid=x -o "$work/x.ptrr"
"$ptrr" --help | grep -q '^  ptrr import  *(--lldb=TRACE.json | --perf=FILE \[--pid=PID\] |$' ||
	fail "ptrr --help does not list import --perf"

finish
