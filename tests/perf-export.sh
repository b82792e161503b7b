#!/bin/sh
# `ptrr export --perf` (docs/manual.md): Linux perf's own Intel PT
# decoder — written independently of libipt, which ptrr, gdb's btrace and
# LLDB all decode with — reads the exported perf.data and lists exactly
# the instructions `ptrr insn-history --raw` lists, thread by thread, for
# every program of tests/progs (the final PC of a thread that did not
# exit, which ptrr lists last, aside), and its
# branches are ptrr's: every transfer in ptrr's history that is not a
# step to a following instruction is a branch of perf's, and perf's
# branches come in ptrr's order.  A corrupted trace makes both stop at
# the same instruction.  Bad input gets one-line errors and no file.
#
# Skipped (77) where perf is missing (./quickstart test installs
# linux-perf).  $PTRR_TEST_BACKEND records with another backend
# (tests/qemu-perf-export.sh).
set -u
. "$top_srcdir/tests/lib.sh"
work_dir perf-export
command -v perf >/dev/null 2>&1 ||
	{ echo "perf not found (apt-get install linux-perf): skipped"; exit 77; }
# perf looks for build-ids in its cache under $HOME: keep it in $work.
HOME=$work
export HOME
cd "$top_builddir" || exit 99

# perf_insns DATA TID: perf's instruction list of thread TID, one 0xADDR
# a line, a decoding error as "[error] MESSAGE".  perf decodes DATA once
# (into DATA.insns), however many threads are asked for.
perf_insns() {
	[ -f "$1.insns" ] ||
		perf script -i "$1" --itrace=i1ie -F tid,ip >"$1.insns" \
			2>"$1.err"
	awk -v t="$2" '
		$1 == t && NF == 2 { print "0x" $2; next }
		/instruction trace error/ && $0 ~ " tid " t " " {
			sub(/.*code [0-9]*: /, ""); print "[error] " $0 }' \
		"$1.insns"
}

# perf_branches DATA TID: perf's branches of thread TID, "0xFROM 0xTO" a
# line; where tracing stops and starts again (the kernel, a signal) FROM
# or TO is 0x0.  perf decodes DATA once (into DATA.branches).
perf_branches() {
	[ -f "$1.branches" ] ||
		perf script -i "$1" --itrace=be -F tid,ip,addr \
			>"$1.branches" 2>/dev/null
	awk -v t="$2" '$1 == t { print "0x" $2, "0x" $4 }' "$1.branches"
}

# check_branches WANT BRANCHES: perf's branches (BRANCHES) are, in order,
# the transfers of ptrr's history WANT (one 0xADDR a line) — a branch,
# or tracing stopping after one instruction (or, at an interrupt or a
# fault, before the next) and starting again —
# and every transfer of WANT that goes backwards or more than 15 bytes
# (the longest instruction) forward is one of them.
check_branches() {
	awk 'function num(a,   v, i) {
		v = 0
		for (i = 3; i <= length(a); i++)
			v = v * 16 + index("0123456789abcdef", substr(a, i, 1)) - 1
		return v
	     }
	     # Consumes the branches from a to b: true if they are next.
	     function take(a, b,   d) {
		if (from[k + 1] == a && to[k + 1] == b) {
			k++
			return 1
		}
		if (from[k + 1] == a && to[k + 1] == "0x0" &&
		    from[k + 2] == "0x0" && to[k + 2] == b) {
			k += 2
			return 1
		}
		# An interrupt or fault stops tracing before the next
		# instruction, the one its FUP names: the one after a, or
		# the target of a branch taken at a.
		if (a != "0x0" && from[k + 1] == a && to[k + 1] != "0x0" &&
		    from[k + 2] == to[k + 1] && to[k + 2] == "0x0" &&
		    from[k + 3] == "0x0" && to[k + 3] == b) {
			k += 3
			return 1
		}
		d = num(from[k + 1]) - num(a)
		if (a != "0x0" && to[k + 1] == "0x0" && d > 0 && d <= 15 &&
		    from[k + 2] == "0x0" && to[k + 2] == b) {
			k += 2
			return 1
		}
		# The trace ends after a, at the instruction after it (a
		# thread in a system call when the process died: the FUP
		# names where it would go on).
		if (a != "0x0" && b == "0x0" && k + 1 == n &&
		    to[k + 1] == "0x0" && d > 0 && d <= 15) {
			k++
			return 1
		}
		# ... or at the target of a branch taken at a (a thread
		# ended by an execve in another thread right after the branch).
		if (a != "0x0" && b == "0x0" && k + 2 == n &&
		    from[k + 1] == a && to[k + 1] != "0x0" &&
		    from[k + 2] == to[k + 1] && to[k + 2] == "0x0") {
			k += 2
			return 1
		}
		return 0
	     }
	     NR == FNR { from[NR] = $1; to[NR] = $2; n = NR; next }
	     prev == "" { take("0x0", $1) }
	     prev != "" && !take(prev, $1) {
		d = num($1) - num(prev)
		if (d < 0 || d > 15) {
			print "ptrr " prev " -> " $1 ", not a branch of perf (" \
			      k " matched)"
			exit 1
		}
	     }
	     { pprev = prev; prev = $1 }
	     END {
		# The trace ends at a system call from which the thread did
		# not come back (a signal that killed it, taken in the
		# kernel: as hardware shows it), where ptrr lists the PC
		# the registers give after it.
		if (!take(prev, "0x0") && k + 1 == n && pprev != "" &&
		    from[n] == pprev && to[n] == "0x0")
			k++
		if (k < n) {
			print "perf branch " from[k + 1] " -> " to[k + 1] \
			      " not in ptrr (" k " of " n " matched)"
			exit 1
		}
	     }' "$2" "$1"
}

# check_program NAME [RECORD-OPTIONS] -- PROG [ARGS]: records, exports
# and compares perf's view of every thread with ptrr's.
check_program() {
	name=$1
	shift
	record "$name" "$@" && check_bundle "$name"
}

# check_bundle NAME: exports $work/NAME.ptrr to $work/NAME.data and
# compares perf's view of every thread with ptrr's.
check_bundle() {
	name=$1
	b="$work/$name.ptrr" d="$work/$name.data"
	"$ptrr" export --perf="$d" "$b" >"$work/$name.export" 2>&1 ||
		{ fail "$name: export: $(cat "$work/$name.export")"; return; }
	thread_ends "$b" >"$work/$name.ends"
	n=0
	for tid in $(awk '{ print $1 }' "$work/$name.ends"); do
		n=$((n + 1))
		"$ptrr" insn-history --raw --thread="$tid" "$b" |
			awk '{ print $2 }' >"$work/want"
		grep -q '\[gap\]' "$work/want" &&
			fail "$name: thread $tid: ptrr's history has gaps"
		perf_insns "$d" "$tid" >"$work/got"
		[ -s "$work/got" ] || [ ! -s "$work/want" ] ||
			{ fail "$name: thread $tid: perf lists nothing:" \
				"$(head -n 3 "$d.err")"; continue; }
		# ptrr lists the final PC of a thread that did not exit (a
		# crash, an interrupt, a thread in the kernel when the process
		# ended), which no packet reports: perf stops before it.
		final=$(awk -v t="$tid" '$1 == t && $2 ~ /^(fault|interrupted|none)$/ {
			print $3 }' "$work/$name.ends")
		if [ -n "$final" ] && [ "$(tail -n 1 "$work/want")" = "$final" ] &&
		   [ "$(wc -l <"$work/want")" -eq $(($(wc -l <"$work/got") + 1)) ]; then
			sed '$d' "$work/want" >"$work/want.perf"
		else
			cp "$work/want" "$work/want.perf"
		fi
		cmp -s "$work/want.perf" "$work/got" ||
			fail "$name: thread $tid: perf lists other instructions" \
				"(ptrr < > perf): $(diff "$work/want.perf" "$work/got" |
				head -n 6)"
		perf_branches "$d" "$tid" >"$work/branches"
		[ -s "$work/branches" ] ||
			fail "$name: thread $tid: perf lists no branches"
		[ -z "${starts:-}" ] ||
			[ "$(grep -c '^0x0 ' "$work/branches")" -eq \
			  "$(tests/pt-packets "$b/threads/$tid.pt" |
			     awk '$1 == "psbs" { print $2 }')" ] ||
			fail "$name: thread $tid: perf starts tracing" \
				"$(grep -c '^0x0 ' "$work/branches") times, not at" \
				"each PSB+ of the fake CPU"
		if [ -s "$work/want" ]; then
			msg=$(check_branches "$work/want" "$work/branches") ||
				fail "$name: thread $tid: branches differ: $msg"
		elif grep -qv -e '^0x0 ' -e ' 0x0$' "$work/branches"; then
			fail "$name: thread $tid: perf branches where ptrr" \
				"lists no instruction"
		fi
	done
	[ "$n" -gt 0 ] || fail "$name: no threads"
}

p=tests/progs
check_program recursion --start=main -- $p/recursion
check_program plt --start=main -- $p/plt
check_program threads -- $p/threads
check_program threads_static -- $p/threads_static
check_program crash -- $p/crash
check_program signals -- $p/signals
check_program vdso -- $p/vdso
check_program jit --start=main -- $p/jit
check_program longjmp -- $p/longjmp
check_program loops -- $p/loops
check_program fnptr --start=main -- $p/fnptr many
check_program jumptable --start=main -- $p/jumptable
check_program tailcall --start=main -- $p/tailcall
check_program recjump --start=main -- $p/recjump
check_program exceptions -- $p/exceptions
check_program syscalls -- $p/syscalls
check_program libc_crash -- $p/libc_crash
check_program faults -- $p/faults
check_program gpfault --start=main -- $p/gpfault
check_program segv -- $p/segv
check_program values -- $p/values
check_program timeline --start=main -- $p/timeline
check_program exec -- $p/exec $p/loops
check_program exec_thread -- $p/exec --from-thread $p/loops
check_program forks -- $p/forks
check_program spin -- $p/spin 3
check_program threads16 -- $p/threads16
check_program churn -- $p/churn 20
check_program watch -- $p/watch
check_program watchrep -- $p/watchrep
check_program watchloop -- $p/watchloop
check_program watchfog -- $p/watchfog
check_program valuesfar -- $p/valuesfar
check_program valuesput -- $p/valuesput
check_program greet -- $p/greet hello
check_program nap -- $p/nap 0
check_program handler -- $p/handler
check_program loadrace -- $p/loadrace
# nonstop runs until gdb lets its napping thread go: its recording is
# interrupted (SIGINT to ptrr, as ^C), its threads in the kernel, once
# the program has its threads.  (Not with QEMU, whose recording a SIGINT
# to ptrr alone does not end: a terminal's ^C reaches QEMU too.)
if [ -n "${PTRR_TEST_BACKEND:-}" ]; then
	echo "nonstop: not recorded with $PTRR_TEST_BACKEND (it runs until interrupted)"
	mkdir "$work/nonstop.ptrr" || exit 99
else
	"$ptrr" record --backend=soft \
		-o "$work/nonstop.ptrr" -- $p/nonstop >"$work/nonstop.log" 2>&1 &
	rec=$!
	# threads_up: the recorded program (ptrr's child) has 2 threads or more.
	threads_up() {
		kid=$(pgrep -P "$rec" | head -n 1)
		[ -n "$kid" ] && [ "$(ls "/proc/$kid/task" 2>/dev/null | wc -l)" -ge 2 ]
	}
	wait_until 30 threads_up || fail "nonstop: the program's threads did not start"
	sleep 1
	kill -INT "$rec"
	if wait "$rec"; then
		check_bundle nonstop
	else
		fail "nonstop: ptrr record: $(tail -n 2 "$work/nonstop.log")"
	fi
fi
# Every test program is checked above (each source's name is a NAME).
for s in "$top_srcdir"/tests/progs/*.c "$top_srcdir"/tests/progs/*.cc; do
	s=$(basename "$s"); s=${s%.c*}
	[ "$s" = plt_lib ] || [ "$s" = nolines ] || [ -d "$work/$s.ptrr" ] ||
		fail "tests/progs/$s is not checked"
done

# The vDSO, if the recording has a copy (QEMU's guest has none), is
# written next to FILE, and perf reads the code there.
if grep -q '"name": "\[vdso\]"' "$work/vdso.ptrr/manifest.json"; then
	[ -s "$work/vdso.data.vdso" ] || fail "vdso: no vdso.data.vdso"
	perf script -i "$work/vdso.data" --show-mmap-events 2>/dev/null |
		grep -q "PERF_RECORD_MMAP.*$work/vdso.data.vdso" ||
		fail "vdso: no MMAP of vdso.data.vdso"
fi

# The perf backend against the fake kernel (tests/perf-record.sh), whose
# "CPU" writes a PSB+ with TIP.PGE and FUP at the thread's IP, and
# TIP.PGD, at every read: no instruction runs in its trace, and perf
# starts tracing once per PSB+, as libipt's packet decoder counts them
# (tests/pt-packets).
preload=tests/unit/libfakeperf.so
if [ -z "${PTRR_TEST_BACKEND:-}" ] && [ -f "$preload" ]; then
	fake_pmu "$work/sys"
	for m in snapshot full; do
		mkdir "$work/fake-$m" || exit 99
		env PTRR_SYSFS_ROOT="$work/sys" \
		    PTRR_FAKE_PERF_DIR="$work/fake-$m" PTRR_FAKE_PERF_REPEAT=2 \
		    LD_PRELOAD="$preload" \
		    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		    "$ptrr" record --backend=perf --mode=$m \
		    -o "$work/fake-$m.ptrr" -- $p/threads \
		    >"$work/fake-$m.log" 2>&1 ||
			fail "fake-$m: ptrr record: $(cat "$work/fake-$m.log")"
		starts=1
		check_bundle fake-$m
		starts=
	done
fi

# Build-ids from the bundle; packed modules are read from the bundle.
perf buildid-list -i "$work/plt.data" 2>/dev/null >"$work/plt.ids"
grep -q "^$(sed -n 's/.*"build_id": "\([0-9a-f]*\)".*/\1/p' \
	"$work/plt.ptrr/manifest.json" | head -n 1) " "$work/plt.ids" ||
	fail "plt: perf buildid-list lacks the program's build-id:" \
		"$(cat "$work/plt.ids")"
check_program packed --pack --start=main -- $p/plt
perf script -i "$work/packed.data" --show-mmap-events 2>/dev/null |
	grep -q "PERF_RECORD_MMAP.*$work/packed.ptrr/modules/" ||
	fail "packed: the modules are not read from the bundle"

# perf report reads it too: one sample per instruction of ptrr's
# history (recursion exits: no final PC), fact() among the functions.
perf report -i "$work/recursion.data" --itrace=i1i --stdio --sort=sym \
	>"$work/report.out" 2>/dev/null
has report "^# Event count \\(approx.\\): $("$ptrr" insn-history --raw \
	"$work/recursion.ptrr" | wc -l)\$"
has report '^ +[0-9.]+%  \[\.\] fact$'

# The CPU and the configuration in the header.
perf script -i "$work/plt.data" --header-only >"$work/header.out" 2>&1
has header '^# cpuid : GenuineIntel,6,'
has header 'name = intel_pt//u.*exclude_kernel = 1'
has header '^# pmu mappings: intel_pt = 8'

# A corrupted trace: both decoders stop at the same instruction.
c="$work/corrupt.ptrr"
if [ -d "$work/exceptions.ptrr" ]; then
	cp -r "$work/exceptions.ptrr" "$c"
	rm -f "$c"/threads/*.idx
	t=$(ls "$c"/threads/*.pt | head -n 1)
	size=$(wc -c <"$t")
	printf '\231\231\231\231' |
		dd of="$t" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	"$ptrr" export --perf="$work/corrupt.data" "$c" >/dev/null 2>&1 ||
		fail "corrupt: export failed"
	tid=$(basename "$t" .pt)
	"$ptrr" insn-history --raw --thread="$tid" "$c" |
		awk '{ print $2 } $2 == "[gap]" { exit }' >"$work/want"
	perf_insns "$work/corrupt.data" "$tid" |
		awk '{ print $1 } $1 == "[error]" { exit }' |
		sed 's/^\[error\]$/[gap]/' >"$work/got"
	tail -n 1 "$work/want" | grep -q '^\[gap\]$' ||
		fail "corrupt: ptrr reports no gap"
	cmp -s "$work/want" "$work/got" ||
		fail "corrupt: perf and ptrr stop at different places:" \
			"ptrr $(wc -l <"$work/want"), perf $(wc -l <"$work/got")"
fi

# What is written: FILE (and its side files) only, all or nothing.
expect_exit 2 "no-such.ptrr" \
	"$ptrr" export --perf="$work/x.data" "$work/no-such.ptrr"
[ ! -e "$work/x.data" ] || fail "a failed export left $work/x.data"
expect_exit 2 "cannot write $work/no-dir/x.data" \
	"$ptrr" export --perf="$work/no-dir/x.data" "$work/vdso.ptrr"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "no-dir: not one line: $(cat "$work/err")"
ls "$work" | grep -q 'tmp-' && fail "a temporary file was left: $(ls "$work")"
expect_exit 1 "missing --lldb=DIR, --perf=FILE" "$ptrr" export "$work/plt.ptrr"
expect_exit 1 "empty --perf" "$ptrr" export --perf= "$work/plt.ptrr"
"$ptrr" --help | grep -q '^  ptrr export  *.*\[--perf=FILE\] .*BUNDLE$' ||
	fail "ptrr --help does not list export --perf"

finish
