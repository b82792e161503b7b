#!/bin/sh
# `ptrr record --soft-step=block` (the default): straight-line code runs
# natively, the branch ending it is emulated.  Each deterministic test
# program (ASLR is off) is recorded twice, single-stepped with
# --ground-truth and in block mode, and the block-mode bundle must decode
# to the ground truth instruction for instruction, with the same stop,
# registers and crash snapshot.  Then what block mode must not change:
# forked and vforked children run without our int3s, a process attached
# and detached keeps running, threads decode without gaps.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir record-block
cd "$top_builddir" || exit 99
progs=tests/progs

# same NAME [RECORD-OPTIONS] -- PROG [ARGS]: records NAME single-stepped
# (the ground truth) and NAME.blk in block mode; every thread of the
# block-mode bundle must decode to the ground truth.
same() {
	what=$1
	shift
	record "$what" --ground-truth="$work/$what.gt" "$@" &&
		record "$what.blk" "$@" || return
	check_threads "$work/$what.blk.ptrr" "$work/$what.gt"
	[ "$(stop_json "$work/$what.ptrr")" = \
	  "$(stop_json "$work/$what.blk.ptrr")" ] ||
		fail "$what: the stop differs:" \
			"$(stop_json "$work/$what.blk.ptrr")"
}

# stop_json BUNDLE: the process's stop and the registers of the threads
# in the manifest (task ids left out: they differ between runs).
stop_json() {
	sed -n '/^  "stop": {/,/^  }/p; /"regs": {/,/}/p' "$1/manifest.json" |
		grep -v '"tid"'
}

# (Not vdso: its clocks retry a read the kernel updated meanwhile, more
# often when single-stepped.)
for p in loops recursion fnptr jumptable tailcall plt longjmp exceptions \
	 syscalls; do
	same "$p" --start=main -- "$progs/$p"
done
# signals waits for a child that sends SIGCONT and exits: whether those
# signals interrupt its wait4 (which the kernel then restarts, running
# the syscall instruction again) depends on timing, in either mode.  A
# restart is the syscall's address twice in a row; compare without them.
check_filter=uniq
same signals --start=main -- "$progs/signals"
check_filter=
# Whole runs, from the dynamic loader's first instruction.
same whole -- "$progs/loops"
same whole-plt -- "$progs/plt"

# A crash: the same fault and registers, and the same memory where the
# program is deterministic: its data and its heap (the stack and libc's
# data hold random bytes, AT_RANDOM and the pointer guard).
same crash --start=main -- "$progs/crash"
# snap_file BUNDLE REGEX: the snapshot file of the mapping whose name
# matches REGEX (from the environment: awk -v would take its backslashes
# as escapes, and gawk and mawk differ on \[).
snap_file() {
	want="$2" awk '/^  "snapshot": \[/ { s = 1 } s && /"name":/ {
		n = $2; gsub(/[",]/, "", n) }
		s && /"file":/ && n ~ ENVIRON["want"] {
		f = $2; gsub(/[",]/, "", f); print f; exit }' "$1/manifest.json"
}
for m in '/crash$' '^\[heap\]$'; do
	a=$(snap_file "$work/crash.ptrr" "$m")
	b=$(snap_file "$work/crash.blk.ptrr" "$m")
	[ -n "$a" ] && [ -n "$b" ] &&
		cmp -s "$work/crash.ptrr/$a" "$work/crash.blk.ptrr/$b" ||
		fail "crash: the snapshots of $m differ ($a, $b)"
done

# execve: the image before it (a bundle inside) and after it.
same exec --start=main -- "$progs/exec" "$PWD/$progs/loops"
check_threads "$work/exec.blk.ptrr/before-exec.ptrr" \
	"$work/exec.gt.before-exec"

# Threads: the interleaving differs from run to run, so each thread's
# history must decode without a gap, end where the thread ended, and the
# program's own functions be called in the same order per thread.
# threads_ok BUNDLE: the first two checks.
threads_ok() {
	thread_ends "$1" >"$work/ends"
	[ -s "$work/ends" ] || fail "$1: no threads"
	while read -r tid kind rip; do
		"$ptrr" insn-history --thread="$tid" "$1" >"$work/t.lst" &&
		"$ptrr" insn-history --raw --thread="$tid" "$1" >"$work/t.raw" ||
			{ fail "$1: thread $tid does not decode"; continue; }
		grep -q '\[gap\]' "$work/t.raw" && fail "$1: thread $tid: a gap"
		case $kind in
		fault|interrupted|none)
			[ "$(tail -n 1 "$work/t.raw" | awk '{ print $2 }')" = \
			  "$rip" ] ||
				fail "$1: thread $tid ($kind) does not end at $rip" ;;
		*)	tail -n 1 "$work/t.lst" | grep -q 'syscall *$' ||
				fail "$1: thread $tid ($kind) does not end in" \
					"a system call" ;;
		esac
	done <"$work/ends"
}
# own_calls BUNDLE: per thread, which of the program's functions it ran
# (how often it returned into them depends on the interleaving) and how
# many times it called the leaf workers; one line per thread, sorted.
own_calls() {
	for tid in $(thread_ends "$1" | awk '{ print $1 }'); do
		"$ptrr" call-history --thread="$tid" "$1" | cut -f2 >"$work/c"
		grep -E '^(main|producer|waiter|caller|sleeper)$' "$work/c" |
			sort -u | tr '\n' ' '
		grep -E '^(fib|square_sum.*|crash.*)$' "$work/c" | sort |
			uniq -c | tr -s ' \n' ' '
		echo
	done | sort
}
for p in threads segv; do
	record "$p" --ground-truth="$work/$p.gt" --start=main -- "$progs/$p" &&
		record "$p.blk" --start=main -- "$progs/$p" || continue
	threads_ok "$work/$p.blk.ptrr"
	[ "$(own_calls "$work/$p.ptrr")" = "$(own_calls "$work/$p.blk.ptrr")" ] ||
		fail "$p: the threads' calls differ:" \
			"$(own_calls "$work/$p.ptrr")" "/" \
			"$(own_calls "$work/$p.blk.ptrr")"
	[ "$(stop_of "$work/$p.ptrr")" = "$(stop_of "$work/$p.blk.ptrr")" ] ||
		fail "$p: stop $(stop_of "$work/$p.blk.ptrr")"
done

# Children running the recorded code untraced: forked, vforked while a
# second thread runs blocks, cloned with CLONE_VM.  Each exits 0 (not
# killed by an int3 of ours), and so does the program.
record forks -- "$progs/forks" &&
	[ "$(stop_of "$work/forks.ptrr")" = "exited " ] &&
	grep -q '"code": 0' "$work/forks.ptrr/manifest.json" ||
	fail "forks: a child did not run normally: $(stop_of "$work/forks.ptrr")" \
		"$(cat "$work/forks.log")"
threads_ok "$work/forks.ptrr"
grep -q '"block stepping turned off when a CLONE_VM child' \
	"$work/forks.ptrr/manifest.json" ||
	fail "forks: no note that the CLONE_VM child turned block stepping off"

# Attached, then detached: the process runs on without our int3s (it
# would die of SIGTRAP at the next branch that had one).
# (A copy: record-fidelity.sh, maybe running now, finds its own spin by
# name and kills it.)
cp "$progs/spin" "$work/blkspin" || exit 99
"$work/blkspin" &
spin=$!
sleep 0.2
"$ptrr" record --backend=soft --pid=$spin -o "$work/att.ptrr" \
	>"$work/att.log" 2>&1 &
rec=$!
sleep 1
kill -INT $rec
wait $rec || fail "attach: ptrr record: $(cat "$work/att.log")"
threads_ok "$work/att.ptrr"
sleep 0.5
kill -0 $spin 2>/dev/null || fail "attach: the process did not survive"
kill $spin
wait $spin 2>/dev/null
[ $? -eq $((128 + 15)) ] || fail "attach: the process did not run on"

finish
