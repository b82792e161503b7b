#!/bin/sh
# `ptrr record --backend=qemu` (plugin/qemu, plugin/record_qemu.c) against
# independent ground truths:
#  - QEMU's own execution log (`qemu-x86_64 -singlestep -d exec,nochain`:
#    one line per executed instruction, with its vCPU, which in user mode
#    is the thread) of a separate run made the same way (ASLR off, the
#    same environment, arguments and kinds of stdout): the decoded history
#    equals it instruction for instruction, for the single-threaded
#    programs, whose runs repeat exactly (code a JIT generates included);
#  - the same log written by the recording's own QEMU (-singlestep through
#    $PTRR_QEMU): each thread's history equals its vCPU's log, for every
#    program, threads and signals included, faults a handler catches
#    and a timer signal between two blocks too (one block per
#    instruction there, so this checks the thread, signal and
#    system-call handling, and the first check the blocks);
#  - native single-stepping (the software backend's ground truth), both
#    from main (--start): the instructions inside the program's own
#    executable, as offsets in its file, are the same, for programs whose
#    control flow does not depend on the CPU model;
#  - a crash replays in gdb with the same stops as the software backend's
#    recording of it (bt, reverse-step to the bad line, reverse-finish);
#  - 16 threads at once: each thread's history is its vCPU's log, and,
#    recorded in blocks, has no gap and runs in the executable what one
#    thread of the logged run did;
#  - a wrapped snapshot ring keeps the log's last instructions; --start;
#  - a crash leaves no core file (the guest's or QEMU's own) behind;
#  - fork (the child untraced) and execve (the program after it runs
#    natively) are noted;
#  - bad input (no qemu-x86_64, one without plugin support, QEMU dying
#    at start, a script, ELF programs for other machines): one line
#    from ptrr, exit status 2, no bundle or shared directory left.
# Logs repeat a REP string instruction once per iteration; the history
# lists it once: runs of one address are compared as one.
# Skipped (77) only where qemu-x86_64 is absent.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir qemu-record
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
# The plt program finds its library relative to the build directory.
cd "$top_builddir" || exit 99

# clean_env CMD...: CMD with the same small environment every run gets.
clean_env() {
	env -i PATH=/usr/bin:/bin LC_ALL=C "$@"
}

# qrecord NAME [OPTIONS] -- PROG [ARGS]: records under QEMU into
# $work/NAME.ptrr; the program's output in $work/NAME.stdout.
qrecord() {
	name=$1
	shift
	clean_env "$ptrr" record --backend=qemu -o "$work/$name.ptrr" "$@" \
		>"$work/$name.stdout" 2>"$work/$name.log" ||
		{ fail "$name: ptrr record: $(tail -n 2 "$work/$name.log")"
		  return 1; }
}

# log_pcs LOG PREFIX: splits QEMU's execution log LOG into PREFIX.cpuN,
# the guest PCs each vCPU executed, runs of one address made one.
log_pcs() {
	rm -f "$2".cpu*
	awk -v out="$2" '/^Trace [0-9]+:/ {
		cpu = $2; sub(/:/, "", cpu)
		split($0, f, "/"); pc = f[2]; sub(/^0+/, "", pc)
		file = out ".cpu" cpu
		if (pc != last[cpu]) print "0x" pc > file
		last[cpu] = pc
	}' "$1"
}

# hist_pcs BUNDLE TID: the decoded history of thread TID, runs made one.
hist_pcs() {
	"$ptrr" insn-history --raw --thread="$2" "$1" | awk '{ print $2 }' |
		uniq
}

tids() {
	thread_ends "$1" | awk '{ print $1 }'
}

# ---- separate runs: QEMU's log of the same program run the same way ----
for p in loops recursion fnptr jumptable tailcall plt longjmp exceptions \
	 crash jit recjump vdso libc_crash; do
	prog=$(realpath "tests/progs/$p")
	qrecord "$p" -- "$prog" || continue
	(ulimit -c 0; cd "$work" && clean_env setarch -R qemu-x86_64 \
		-singlestep -d exec,nochain -D "$work/$p.qlog" -0 "$prog" \
		"$prog" >"$work/$p.qstdout" 2>/dev/null)
	log_pcs "$work/$p.qlog" "$work/$p"
	tid=$(tids "$work/$p.ptrr")
	hist_pcs "$work/$p.ptrr" "$tid" >"$work/$p.hist"
	[ "$(wc -l <"$work/$p.hist")" -gt 1000 ] ||
		fail "$p: only $(wc -l <"$work/$p.hist") instructions"
	cmp -s "$work/$p.cpu0" "$work/$p.hist" ||
		fail "$p: history differs from QEMU's log: $(diff \
			"$work/$p.cpu0" "$work/$p.hist" | head -n 4)"
	grep -q '\[gap\]' "$work/$p.hist" && fail "$p: gaps in the history"
done
# Full mode's cap reached: the trace ends where the ring filled, cleanly.
# fnptr's 4 KiB fill at an indirect call, whose TIP did not fit: its
# target is the TIP.PGD that ends the trace (an FUP there did not
# decode: "[decode error (-8) ...]" as the history's last entry).  The
# history is the start of QEMU's log.
qrecord capped --mode=full --buffer-size=4K -- "$(realpath tests/progs/fnptr)" &&
if [ -s "$work/fnptr.cpu0" ]; then
	tid=$(tids "$work/capped.ptrr")
	"$ptrr" insn-history --raw --thread="$tid" "$work/capped.ptrr" \
		>"$work/capped.raw"
	grep -q '\[' "$work/capped.raw" &&
		fail "capped: the history has a gap or error: $(grep '\[' \
			"$work/capped.raw" | head -n 2)"
	awk '{ print $2 }' "$work/capped.raw" | uniq >"$work/capped.hist"
	n=$(wc -l <"$work/capped.hist")
	[ "$n" -gt 1000 ] || fail "capped: only $n instructions"
	head -n "$n" "$work/fnptr.cpu0" | cmp -s - "$work/capped.hist" ||
		fail "capped: not the start of QEMU's log"
fi
grep -q '"fault"' "$work/crash.ptrr/manifest.json" ||
	fail "crash: the bundle does not record a fault"
# The core has no siginfo: the fault address comes from the faulting
# instruction's operand (the pointer clobber() made).
"$ptrr" info "$work/crash.ptrr" | grep -q '^Stop reason: stopped by SIGSEGV at 0x[0-9a-f]* (fault address 0x10)$' ||
	fail "crash: not stopped by SIGSEGV at fault address 0x10: $("$ptrr" \
		info "$work/crash.ptrr" | grep '^Stop')"
grep -q '"exited"' "$work/loops.ptrr/manifest.json" ||
	fail "loops: the bundle does not record the exit"
# ptrr info says what a QEMU recording means (the issue's words: QEMU's
# CPU model, CPUID-dependent paths).
"$ptrr" info "$work/loops.ptrr" | grep -q "^Note: QEMU backend (qemu-x86_64 user mode, TCG plugin API [0-9]*): the program ran on QEMU's CPU model, so code that depends on CPUID" ||
	fail "loops: ptrr info does not say the program ran on QEMU's CPU model"
ls "$work"/qemu_* ./qemu_* >/dev/null 2>&1 &&
	fail "a QEMU core file was left behind"
# Nor a core of QEMU itself (it kills itself with the guest's signal
# once it has written the guest's core), where cores are allowed.
mkdir "$work/cwd"
set -- "$(realpath "$ptrr")" "$(realpath tests/progs/crash)"
(ulimit -c unlimited 2>/dev/null; cd "$work/cwd" &&
 clean_env "$1" record --backend=qemu -o "$work/cwd.ptrr" -- "$2" \
	>/dev/null 2>&1) ||
	fail "crash (in $work/cwd): ptrr record failed"
[ -z "$(ls -A "$work/cwd")" ] ||
	fail "crash: files left in the working directory: $(ls "$work/cwd")"

# ---- the recording's own QEMU writes the log: per thread ----
cat >"$work/qemu-log" <<EOF
#!/bin/sh
exec qemu-x86_64 -singlestep -d exec,nochain -D "\$QEMU_TEST_LOG" "\$@"
EOF
chmod +x "$work/qemu-log"
for p in threads signals segv loops crash faults threads16; do
	prog=$(realpath "tests/progs/$p")
	clean_env PTRR_QEMU="$work/qemu-log" QEMU_TEST_LOG="$work/$p.slog" \
		"$ptrr" record --backend=qemu -o "$work/$p.s.ptrr" -- "$prog" \
		>"$work/$p.s.stdout" 2>"$work/$p.s.log" ||
		{ fail "$p (one run): $(tail -n 2 "$work/$p.s.log")"; continue; }
	log_pcs "$work/$p.slog" "$work/$p.s"
	n=0
	for tid in $(tids "$work/$p.s.ptrr"); do
		n=$((n + 1))
		hist_pcs "$work/$p.s.ptrr" "$tid" >"$work/$p.s.$tid"
		match=
		end=$(thread_ends "$work/$p.s.ptrr" |
		      awk -v t="$tid" '$1 == t { print $2, $3 }')
		for log in "$work/$p.s".cpu*; do
			cmp -s "$log" "$work/$p.s.$tid" && match=$log
			# Killed between two blocks (another thread crashed):
			# the log names the block the thread was entering,
			# where the core puts it; the history ends before.
			[ "$end" = "signaled $(tail -n 1 "$log")" ] &&
				sed '$d' "$log" | cmp -s - "$work/$p.s.$tid" &&
				match=$log
		done
		if [ -n "$match" ]; then
			continue
		elif [ "$p" = signals ]; then
			# It forks: the child's instructions (untraced, the
			# history says so) are in the log too, interleaved
			# with the parent's: the history must be the log
			# with them taken out.
			awk 'NR == FNR { h[++n] = $0; next }
			     k < n && $0 == h[k + 1] { k++ }
			     END { exit k != n }' "$work/$p.s.$tid" \
				"$work/$p.s.cpu0" ||
				fail "signals: history is not the log less the" \
					"forked child's instructions"
		elif [ "$p" = faults ]; then
			# QEMU logs the block a signal interrupts (the
			# faulting instruction, or the block it was about to
			# run) before the handler's: the history, where that
			# did not run, goes to the handler.  Every handler ran.
			awk -v h="$(sed -n 's/^handlers //p' \
				"$work/$p.s.stdout")" '
			     BEGIN { split(h, a, " ")
				     for (i in a) entry[a[i]] = 1 }
			     NR == FNR { want[++n] = $0; next }
			     { lg[++m] = $0 }
			     END {
				for (i = j = 1; i <= m && j <= n; ) {
					if (lg[i] == want[j]) {
						i++; j++
					} else if (i < m && (lg[i + 1] in entry) &&
						   lg[i + 1] == want[j]) {
						i++; skipped++
					} else
						exit 1
				}
				exit !(i > m && j > n && skipped >= 2)
			     }' "$work/$p.s.$tid" "$work/$p.s.cpu0" ||
				fail "faults: history is not the log less the" \
					"interrupted blocks: $(diff \
					"$work/$p.s.cpu0" "$work/$p.s.$tid" |
					head -n 6)"
			grep -q '\[gap\]' "$work/$p.s.$tid" &&
				fail "faults: gaps in the history"
			for h in $(sed -n 's/^handlers //p' \
				   "$work/$p.s.stdout"); do
				grep -qx "$h" "$work/$p.s.$tid" ||
					fail "faults: handler $h not in the history"
			done
		else
			fail "$p: thread $tid's history is no vCPU's log:" \
				"$(for log in "$work/$p.s".cpu*; do
					echo "$log: $(wc -l <"$log") lines"
					diff "$log" "$work/$p.s.$tid" |
						head -n 3; done)"
		fi
	done
	# Every vCPU that ran is a thread (one killed as it entered its
	# first block, one line in the log, ran nothing).
	logs=$(wc -l "$work/$p.s".cpu* | awk '$2 != "total" && $1 > 1' |
	       wc -l)
	[ "$n" -ge "$logs" ] ||
		fail "$p: $n threads recorded, $logs vCPUs in the log"
done
[ "$(tids "$work/threads.s.ptrr" | wc -l)" -ge 3 ] ||
	fail "threads: fewer than 3 threads recorded"
"$ptrr" info "$work/signals.s.ptrr" | grep -q 'fork: the child ran untraced' ||
	fail "signals: the fork is not noted"

# posix_spawn's vfork (clone with CLONE_VM | CLONE_VFORK), which QEMU
# runs as a fork: the child is untraced and noted as a fork, and its
# blocks and its execve are not the parent's (they were: gaps in the
# parent's history, and "execve (thread N)" said of the parent).
qrecord spawn -- "$(realpath tests/progs/syscalls)" </dev/null &&
"$ptrr" info "$work/spawn.ptrr" >"$work/spawn.info" 2>&1
grep -q 'fork: the child ran untraced' "$work/spawn.info" ||
	fail "spawn: the vfork is not noted as a fork: $(grep Note "$work/spawn.info")"
! grep -q 'execve' "$work/spawn.info" ||
	fail "spawn: the child's execve is said of the parent"
grep -q '(0 gaps)' "$work/spawn.info" ||
	fail "spawn: the parent's history has gaps: $(grep Recorded "$work/spawn.info")"

# ---- native single-stepping: offsets inside the executable ----
# exe_offsets BUNDLE PCS: PCS (one a line) that fall in the program's own
# executable mapping, as decimal offsets in its file (awk compares them
# in doubles: exact below 2^53; any awk).
exe_offsets() {
	exe=$("$ptrr" info "$1" | sed -n 's/^Program: //p')
	range=$(awk -v exe="\"$exe\"," '
		$1 == "\"path\":" { mine = $2 == exe }
		mine && $1 == "\"start\":" { start = $2 }
		mine && $1 == "\"size\":" { size = $2 }
		mine && $1 == "\"offset\":" { print start, size, $2; exit }
		' "$1/manifest.json" | tr -d '",')
	set -- $range "$2"
	grep '^0x' "$4" | xargs printf '%d\n' |
		awk -v lo=$(($1)) -v hi=$(($1 + $2)) -v off=$(($3)) \
			'$1 >= lo && $1 < hi { print $1 - lo + off }'
}
for p in loops recursion fnptr jumptable tailcall longjmp crash; do
	qrecord "$p.main" --start=main -- "tests/progs/$p" || continue
	record_truth "$p.soft" --start=main -- "tests/progs/$p" || continue
	"$ptrr" insn-history --raw "$work/$p.main.ptrr" | awk '{ print $2 }' \
		>"$work/$p.qall"
	exe_offsets "$work/$p.soft.ptrr" "$work/$p.soft.want" \
		>"$work/$p.noff"
	exe_offsets "$work/$p.main.ptrr" "$work/$p.qall" >"$work/$p.qoff"
	[ -s "$work/$p.noff" ] && cmp -s "$work/$p.noff" "$work/$p.qoff" ||
		fail "$p: the executable's instructions differ from native" \
			"single-stepping: $(diff "$work/$p.noff" \
			"$work/$p.qoff" | head -n 4)"
done

# ---- --filter: the history is QEMU's log cut to the bundle's ranges
# (where a range is entered and left only by taken branches, as the
# software backend and the hardware trace them), and in the program's
# own code it is the software backend's filtered history, as offsets in
# the file ----
# qfiltered NAME LOG PROG FILTER...: records PROG (the run LOG logged)
# under QEMU with the FILTERs; its history must be LOG cut to the
# bundle's ranges, with at least one instruction, and no gap.
qfiltered() {
	name=$1 log=$2 prog=$3
	shift 3
	qrecord "$name" "$@" -- "$(realpath "$prog")" || return
	in_ranges $(filter_ranges "$work/$name.ptrr") <"$log" | uniq \
		>"$work/$name.want"
	hist_pcs "$work/$name.ptrr" "$(tids "$work/$name.ptrr")" \
		>"$work/$name.hist"
	[ -s "$work/$name.want" ] || fail "$name: nothing ran in the ranges"
	cmp -s "$work/$name.want" "$work/$name.hist" ||
		fail "$name: history is not QEMU's log in" \
			"$(filter_ranges "$work/$name.ptrr"): $(diff \
			"$work/$name.want" "$work/$name.hist" | head -n 4)"
}
# soft_same NAME FILTER... -- PROG: the software backend's recording of
# PROG with the FILTERs runs in the program's file what NAME's did.
soft_same() {
	same=$1
	shift
	record "$same.soft" "$@" || return
	raw_addrs "$work/$same.soft.ptrr" >"$work/$same.soft.pcs"
	exe_offsets "$work/$same.soft.ptrr" "$work/$same.soft.pcs" \
		>"$work/$same.noff"
	exe_offsets "$work/$same.ptrr" "$work/$same.hist" >"$work/$same.qoff"
	[ -s "$work/$same.noff" ] && cmp -s "$work/$same.noff" \
		"$work/$same.qoff" ||
		fail "$same: the program's instructions differ from the" \
			"software backend's: $(diff "$work/$same.noff" \
			"$work/$same.qoff" | head -n 4)"
}
# nm_range PROG SYMBOL BASE: SYMBOL's range at load base BASE, START/SIZE.
nm_range() {
	nm -S "$1" | while read -r a z t n; do
		[ "$n" = "$2" ] && printf '0x%x/0x%x\n' $((0x$a + $3)) $((0x$z))
	done
}
# The guest's load base of the program of BUNDLE (its module's start less
# its offset): a PIE at 0x4000000000.
qbase=$(awk '$1 == "\"path\":" { mine = $2 ~ /\/recursion",$/ }
	     mine && $1 == "\"start\":" { start = $2 }
	     mine && $1 == "\"offset\":" { print start, $2; exit }' \
	"$work/recursion.ptrr/manifest.json" | tr -d '",' |
	{ read -r start off; printf '0x%x\n' $((start - off)); })
fact=$(nm_range tests/progs/recursion fact "$qbase")
[ -n "$fact" ] || fail "no fact in tests/progs/recursion at $qbase"
qfiltered fact "$work/recursion.cpu0" tests/progs/recursion --filter=fact
[ "$(filter_ranges "$work/fact.ptrr")" = "$fact " ] ||
	fail "--filter=fact: ranges '$(filter_ranges "$work/fact.ptrr")'," \
		"wanted '$fact' (the guest's load base $qbase)"
"$ptrr" info "$work/fact.ptrr" |
	grep -q "^Note: IP filter --filter=fact: ${fact%/*}-" ||
	fail "--filter=fact: no note naming the filter and its range"
soft_same fact --filter=fact -- tests/progs/recursion
# The same range as a guest address, and as an offset in the file; the
# second half of fact (entered by a return), in full mode.
qfiltered fact-addr "$work/recursion.cpu0" tests/progs/recursion \
	--filter="$fact"
cmp -s "$work/fact.hist" "$work/fact-addr.hist" ||
	fail "--filter=$fact: not the history of --filter=fact"
off=$(nm tests/progs/recursion | awk '$3 == "fact" { print "0x" $1 }')
qfiltered fact-file "$work/recursion.cpu0" tests/progs/recursion \
	--filter="$off/${fact#*/}@tests/progs/recursion"
cmp -s "$work/fact.hist" "$work/fact-file.hist" ||
	fail "--filter=$off@FILE: not the history of --filter=fact"
qfiltered fact-slice "$work/recursion.cpu0" tests/progs/recursion \
	--mode=full --filter=fact+0x18/0xf
soft_same fact-slice --filter=fact+0x18/0xf -- tests/progs/recursion
# Two ranges; leaves called through a function pointer.
qfiltered two "$work/fnptr.cpu0" tests/progs/fnptr --filter=add --filter=mul
soft_same two --filter=add --filter=mul -- tests/progs/fnptr
# A range in a library the guest's dynamic linker maps after the
# start, with one in the program calling it through the PLT.
lib=$PWD/tests/progs/libptrrplt.so
qfiltered lib "$work/plt.cpu0" tests/progs/plt --filter="ptrr_lib_sum@$lib" \
	--filter=main
n=$(exe_offsets "$work/lib.ptrr" "$work/lib.hist" | wc -l)
[ "$n" -gt 0 ] && [ "$n" -lt "$(wc -l <"$work/lib.hist")" ] ||
	fail "lib: not both the program and the library traced"
soft_same lib --filter="ptrr_lib_sum@$lib" --filter=main -- tests/progs/plt
# A file never mapped: nothing traced, and a note says so.
qrecord unmapped --filter="ptrr_lib_sum@$lib" -- tests/progs/recursion &&
"$ptrr" info "$work/unmapped.ptrr" >"$work/unmapped.info" &&
grep -q "^Note: IP filter --filter=ptrr_lib_sum@$lib: $lib was never mapped: nothing traced there" \
	"$work/unmapped.info" && ! grep -q '^IP filter:' "$work/unmapped.info" ||
	fail "unmapped: no note that the library was never mapped:" \
		"$(grep 'filter' "$work/unmapped.info")"
[ -z "$(raw_addrs "$work/unmapped.ptrr")" ] ||
	fail "unmapped: instructions traced: $(raw_addrs "$work/unmapped.ptrr" |
		head -n 2)"
# Threads, one run: each thread's history is its vCPU's log cut to the
# ranges: the program's recursion, and libc's system calls (a range left
# for the kernel and resumed in it), placed when the dynamic linker
# maps libc, after the first thread began.
libc=$(ldd tests/progs/threads | awk '$1 ~ /^libc\.so/ { print $3 }')
clean_env PTRR_QEMU="$work/qemu-log" QEMU_TEST_LOG="$work/tf.slog" \
	"$ptrr" record --backend=qemu -o "$work/tf.ptrr" --filter=fib \
	--filter="getpid@$libc" --filter="nanosleep@$libc" -- \
	"$(realpath tests/progs/threads)" >/dev/null 2>"$work/tf.log" ||
	fail "threads filtered: $(tail -n 2 "$work/tf.log")"
log_pcs "$work/tf.slog" "$work/tf.s"
[ "$(filter_ranges "$work/tf.ptrr" | wc -w)" -eq 3 ] ||
	fail "threads filtered: ranges $(filter_ranges "$work/tf.ptrr")"
n=0
for tid in $(tids "$work/tf.ptrr"); do
	hist_pcs "$work/tf.ptrr" "$tid" >"$work/tf.$tid"
	[ -s "$work/tf.$tid" ] || continue
	for log in "$work/tf.s".cpu*; do
		in_ranges $(filter_ranges "$work/tf.ptrr") <"$log" | uniq |
			cmp -s - "$work/tf.$tid" && { n=$((n + 1)); break; }
	done
done
[ "$n" -eq 2 ] ||
	fail "threads filtered: $n threads' histories are their vCPU's log" \
		"in the ranges, not 2 (fib's, getpid's and nanosleep's)"

# ---- 16 threads at once ----
# In the -singlestep run above each of the 17 threads' history is its
# vCPU's log; recorded in blocks, each thread runs in the program's own
# executable what one thread of that run did (each worker its own
# number of rounds), and no thread's trace has a gap.
[ "$(tids "$work/threads16.s.ptrr" | wc -l)" -eq 17 ] ||
	fail "threads16 (one run): $(tids "$work/threads16.s.ptrr" |
		wc -l) threads recorded, not 17"
qrecord threads16 -- "$(realpath tests/progs/threads16)" && {
	for tid in $(tids "$work/threads16.s.ptrr"); do
		exe_offsets "$work/threads16.s.ptrr" "$work/threads16.s.$tid" |
			cksum
	done | sort >"$work/threads16.want"
	for tid in $(tids "$work/threads16.ptrr"); do
		hist_pcs "$work/threads16.ptrr" "$tid" >"$work/threads16.$tid"
		grep -q '\[gap\]' "$work/threads16.$tid" &&
			fail "threads16: gaps in thread $tid's history"
		exe_offsets "$work/threads16.ptrr" "$work/threads16.$tid" |
			cksum
	done | sort >"$work/threads16.got"
	[ "$(sort -u "$work/threads16.want" | wc -l)" -eq 17 ] &&
	cmp -s "$work/threads16.want" "$work/threads16.got" ||
		fail "threads16: the threads' instructions in the program" \
			"differ from the -singlestep run's: $(diff \
			"$work/threads16.want" "$work/threads16.got" |
			head -n 4)"
}

# ---- execve: the thread's end says so, and a note: the program it ran
# went on natively, untraced (also from a second thread) ----
for from in "" --from-thread; do
	qrecord "exec$from" -- "$(realpath tests/progs/exec)" $from \
		"$(realpath tests/progs/loops)" || continue
	"$ptrr" info "$work/exec$from.ptrr" >"$work/exec$from.info"
	grep -q '^Thread .*: called execve: another program followed$' \
		"$work/exec$from.info" &&
	grep -q '^Note: execve (thread [0-9]*): the program it ran went on natively, outside QEMU, untraced' \
		"$work/exec$from.info" ||
		fail "exec $from: the execve is not noted: $(grep \
			'^Note\|^Thread' "$work/exec$from.info")"
done

# ---- a crash replays in gdb as the software backend's recording ----
if [ -x "${GDB:-}" ]; then
	HOME=$work
	export HOME
	record crash.soft2 -- tests/progs/crash
	for b in crash crash.soft2; do
		timeout 300 "$ptrr" replay --batch -ex bt -ex reverse-step \
			-ex reverse-step -ex bt -ex reverse-step \
			-ex reverse-finish "$work/$b.ptrr" 2>&1 |
			sed -e '/^ptrr replay: completing the saved index/d' \
			    -e 's/0x[0-9a-f]*/ADDR/g' \
			    -e 's/(process [0-9]*)/(process PID)/' \
			    >"$work/$b.gdb"
	done
	grep -q 'r->value = (int \*) ADDR;' "$work/crash.soft2.gdb" ||
		fail "crash (soft): gdb did not reach the bad line"
	cmp -s "$work/crash.gdb" "$work/crash.soft2.gdb" ||
		fail "crash: gdb's stops differ from the software backend's:" \
			"$(diff "$work/crash.soft2.gdb" "$work/crash.gdb" |
			   head -n 6)"
else
	echo "gdb not found: replay not checked"
fi

# ---- a wrapped snapshot ring: the last instructions of the log ----
qrecord small --buffer-size=8K -- "$(realpath tests/progs/exceptions)" &&
if "$ptrr" info "$work/small.ptrr" | grep -q 'Trace: 8192 bytes'; then
	hist_pcs "$work/small.ptrr" "$(tids "$work/small.ptrr")" |
		grep -v '\[gap\]' >"$work/small.hist"
	n=$(wc -l <"$work/small.hist")
	[ "$n" -gt 100 ] && [ "$n" -lt "$(wc -l <"$work/exceptions.cpu0")" ] &&
		tail -n "$n" "$work/exceptions.cpu0" |
		cmp -s - "$work/small.hist" ||
		fail "wrapped ring: not the last $n instructions of the log"
else
	fail "wrapped ring: the 8K ring did not wrap"
fi

# ---- --start and full mode ----
qrecord start --start=main --mode=full -- tests/progs/recursion &&
"$ptrr" insn-history --raw "$work/start.ptrr" | head -n 1 |
	grep -q "0x[0-9a-f]*$(nm tests/progs/recursion |
		awk '$3 == "main" { print substr($1, length($1) - 2) }')\$" ||
	fail "--start=main: the history does not begin at main"
# Symbols at QEMU's addresses: the modules are the files' executable
# segments, as the kernel maps them.
"$ptrr" call-history --indent "$work/start.ptrr" | head -n 2 |
	tr -d ' \t0-9' | tr '\n' ' ' | grep -qx 'main fact ' ||
	fail "--start=main: the call history does not begin main, fact"

# ---- full mode's cap, then a forked child: its instructions are not the
# parent's (the child, which has the parent's mappings, counted each of
# its blocks into the parent's thread slot: 15 million "not traced")
qrecord forkcap --mode=full --buffer-size=4K -- /bin/sh -c \
	'(i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done); true' && {
	n=$("$ptrr" info "$work/forkcap.ptrr" |
	    sed -n 's/.*cap: \([0-9]*\) instructions were not traced.*/\1/p')
	[ -n "$n" ] && [ "$n" -lt 1000000 ] ||
		fail "full mode's cap: '$n' instructions not traced, the" \
			"forked child's counted as the parent's"
}

# ---- ptrr interrupted by a kill (not the terminal's Ctrl-C, which
# QEMU gets too): the recording ends at once, as the software backend's
# does: the program is ended, the bundle is saved, stopped "interrupted".
# Before, ptrr waited for the program to end by itself (spin: never).
env -i PATH=/usr/bin:/bin LC_ALL=C "$ptrr" record --backend=qemu \
	--buffer-size=64K -o "$work/int.ptrr" -- \
	"$top_builddir/tests/progs/spin" >"$work/int.log" 2>&1 &
rec=$!
# (The qemu-x86_64 that ptrr started, its child: another test running
# spin under QEMU at the same time, qemu-fault-kill.sh, is not ours.)
spin_up() {
	qemu=$(pgrep -P $rec -f "qemu-x86_64.*/tests/progs/spin\$" |
	       head -n 1)
	[ -n "$qemu" ]
}
wait_until 60 spin_up || fail "interrupted: spin did not start under QEMU"
sleep 1
kill -INT $rec
wait_until 60 pid_gone $rec ||
	{ fail "interrupted: ptrr record still runs 60 s after SIGINT"
	  kill -9 $rec $qemu; }
wait $rec || fail "interrupted: ptrr record: $(tail -n 2 "$work/int.log")"
[ "$(stop_of "$work/int.ptrr")" = "interrupted " ] ||
	fail "interrupted: stop '$(stop_of "$work/int.ptrr")'"
n=$("$ptrr" info "$work/int.ptrr" | grep -c "^Thread [0-9]* (LWP")
[ "$n" -eq 3 ] || fail "interrupted: $n threads, not 3"
pid_gone $qemu || fail "interrupted: the program still runs"

# ---- bad input ----
# bad PATTERN CMD...: CMD fails with exit status 2 and ptrr's one line
# matching PATTERN, leaving no bundle and no shared directory.
bad() {
	pattern=$1
	shift
	expect_exit 2 "$pattern" "$@"
	[ "$(grep -c '^ptrr' "$work/err")" -eq 1 ] ||
		fail "$*: not one line from ptrr: $(cat "$work/err")"
	[ -e "$work/bad.ptrr" ] && fail "$*: a bundle was left"
	ls -d "$work"/.ptrr-qemu-* >/dev/null 2>&1 &&
		fail "$*: the shared directory was left"
	rm -rf "$work/bad.ptrr" "$work"/.ptrr-qemu-*
}
printf '#!/bin/sh\nexit 0\n' >"$work/script"
chmod +x "$work/script"
bad "not an x86-64 Linux ELF program.*--backend=soft" \
	"$ptrr" record --backend=qemu -o "$work/bad.ptrr" -- "$work/script"
# ELF programs for other machines: a copy of loops with another
# e_machine (AArch64), and with another class and machine (i386).
cp tests/progs/loops "$work/aarch64"
printf '\267\000' | dd of="$work/aarch64" bs=1 seek=18 conv=notrunc 2>/dev/null
cp tests/progs/loops "$work/i386"
printf '\001' | dd of="$work/i386" bs=1 seek=4 conv=notrunc 2>/dev/null
printf '\003\000' | dd of="$work/i386" bs=1 seek=18 conv=notrunc 2>/dev/null
bad "64-bit ELF program for AArch64, not x86-64: ptrr records x86-64" \
	"$ptrr" record --backend=qemu -o "$work/bad.ptrr" -- "$work/aarch64"
bad "32-bit ELF program for i386, not x86-64: ptrr records x86-64" \
	"$ptrr" record --backend=qemu -o "$work/bad.ptrr" -- "$work/i386"
bad "qemu-x86_64 not found.*apt-get install qemu-user" \
	env PTRR_QEMU=/nonexistent/qemu-x86_64 \
	"$ptrr" record --backend=qemu -o "$work/bad.ptrr" -- tests/progs/loops
# A QEMU built without TCG plugins rejects -plugin as QEMU does.
printf '#!/bin/sh\necho "qemu-x86_64: -plugin: invalid option" >&2\nexit 1\n' \
	>"$work/qemu-noplugin"
chmod +x "$work/qemu-noplugin"
bad "exited with status 1 before loading ptrr's plugin.*plugin support" \
	env PTRR_QEMU="$work/qemu-noplugin" \
	"$ptrr" record --backend=qemu -o "$work/bad.ptrr" -- tests/progs/loops
# QEMU dying at start, its plugin loaded: a program whose interpreter
# does not exist (QEMU says so, then ptrr).
sed 's|/lib64/ld-linux-x86-64.so.2|/lib64/ld-linux-x86-64.so.X|' \
	tests/progs/loops >"$work/nointerp"
chmod +x "$work/nointerp"
bad "exited with status [0-9]* before running any of .*nointerp" \
	"$ptrr" record --backend=qemu -o "$work/bad.ptrr" -- "$work/nointerp"
grep -q "ld-linux-x86-64.so.X" "$work/err" ||
	fail "QEMU's own message is not shown: $(cat "$work/err")"
bad "no such program" \
	"$ptrr" record --backend=qemu -o "$work/bad.ptrr" -- ./nope

finish
