#!/bin/sh
# 1,000 threads made and ended at a high rate while tracing (issue 6,
# faults): `ptrr record --backend=soft` of tests/progs/churn, eight
# threads alive at a time, ends cleanly; the bundle holds every thread
# (1,001, each exited, each with a history of its own and no gap), the
# instructions of their histories add up to what the recorder counted,
# sampled workers ran work(); gdb opens the replay with 1,001 threads
# and steps back in one of them.  A short run with ground truth checks
# each thread's history instruction for instruction.  A reused task id
# (pid_max wrapping while the threads come and go) once lost the whole
# bundle; tests/unit/test-bundle saves and loads one.  gdb once saw the
# threads that share a task id as one: a recording of threads given one
# task id for three of its four threads lists four threads in gdb, the
# later two as TID + 2^22 and TID + 2 * 2^22, each with its own history.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir record-churn
cd "$top_builddir" || exit 99
progs=tests/progs

# ---- 1,000 threads ----
if record churn -- $progs/churn; then
	grep -q '^1000 threads, total 5503500$' "$work/churn.log" ||
		fail "churn: the program's output: $(head -n 3 "$work/churn.log")"
	set -- $(sed -n 's/^ptrr record: \([0-9]*\) instructions in \([0-9]*\) threads.*/\1 \2/p' \
		"$work/churn.log")
	[ "${2:-}" = 1001 ] ||
		fail "churn: the summary: $(tail -n 1 "$work/churn.log")"
	total=${1:-0}
	thread_ends "$work/churn.ptrr" >"$work/threads"
	[ "$(wc -l <"$work/threads")" -eq 1001 ] ||
		fail "churn: $(wc -l <"$work/threads") threads in the bundle, not 1001"
	[ "$(grep -c ' exited ' "$work/threads")" -eq 1001 ] ||
		fail "churn: not every thread exited: $(grep -v ' exited ' \
"$work/threads" | head -n 3)"
	"$ptrr" info "$work/churn.ptrr" >"$work/info.out" 2>"$work/info.err" ||
		fail "churn: ptrr info: $(cat "$work/info.err")"
	set -- $(awk '/^  Recorded [0-9]+ instructions .*\(0 gaps\)/ && $2 > 0 {
			s += $2; n++ } END { print s + 0, n + 0 }' "$work/info.out")
	[ "$2" = 1001 ] ||
		fail "churn: $2 threads with a history and no gap, not 1001"
	[ "$1" = "$total" ] ||
		fail "churn: the histories hold $1 instructions, the recorder counted $total"
	for k in 2 500 1001; do
		tid=$(sed -n "${k}p" "$work/threads" | awk '{ print $1 }')
		"$ptrr" call-history --thread="$tid" "$work/churn.ptrr" |
			cut -f2 | grep -q '^work$' ||
			fail "churn: thread $k (LWP $tid) did not run work()"
	done

	# The replay: gdb lists every thread and steps back in one.
	timeout 300 "$ptrr" replay --batch -ex 'set remotetimeout 60' \
		-ex 'info threads' -ex 'thread 500' -ex 'reverse-stepi' \
		-ex 'p $pc' "$work/churn.ptrr" >"$work/replay.out" 2>&1 ||
		fail "churn: ptrr replay: $(tail -n 3 "$work/replay.out")"
	[ "$(grep -c '^[* ] *[0-9][0-9]* *Thread [0-9]' "$work/replay.out")" \
	  -eq 1001 ] ||
		fail "churn: gdb lists $(grep -c '^[* ] *[0-9][0-9]* *Thread [0-9]' \
"$work/replay.out") threads, not 1001"
	grep -q '^\$1 = ' "$work/replay.out" ||
		fail "churn: no PC after reverse-stepi in thread 500: \
$(tail -n 3 "$work/replay.out")"
fi

# ---- Each thread against the ground truth, on a shorter run ----
record churn24 --ground-truth="$work/churn24.gt" -- $progs/churn 24 &&
	check_threads "$work/churn24.ptrr" "$work/churn24.gt"
[ "$(wc -l <"$work/threads")" -eq 25 ] ||
	fail "churn24: $(wc -l <"$work/threads") threads, not 25"

# ---- A task id reused: one id per thread for gdb ----
if record threads -- $progs/threads; then
	tids=$(sed -n 's/.*"tid": *\([0-9]*\).*/\1/p' \
		"$work/threads.ptrr/manifest.json")
	set -- $tids
	if [ $# -eq 4 ]; then
		t2=$2
		sed -i -e "s/\"tid\": *$3\\b/\"tid\": $t2/" \
			-e "s/\"tid\": *$4\\b/\"tid\": $t2/" \
			"$work/threads.ptrr/manifest.json"
		timeout 300 "$ptrr" replay --batch -ex 'info threads' \
			-ex 'thread 3' -ex 'reverse-stepi' -ex 'p $pc' \
			-ex 'pt info' "$work/threads.ptrr" \
			>"$work/reused.out" 2>&1 ||
			fail "reused: ptrr replay: $(tail -n 3 "$work/reused.out")"
		# (gdb writes PID.TID: the multiprocess extensions.)
		pid_dot="([0-9]+\\.)?"
		in_order reused "^\\* 1 +Thread $pid_dot$1 " \
			"^  2 +Thread $pid_dot$t2 " \
			"^  3 +Thread $pid_dot$((t2 + 4194304)) " \
			"^  4 +Thread $pid_dot$((t2 + 8388608)) " \
			"^\\[Switching to thread 3 \\(Thread $pid_dot$((t2 + 4194304))\\)\\]" \
			'^\$1 = ' "^Thread 3 \\(LWP $t2\\) \\[selected\\]"
	else
		fail "reused: $# threads in the threads recording, not 4"
	fi
fi

finish
