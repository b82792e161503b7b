# Shell helpers for ptrr's end-to-end tests; sourced by tests/*.sh, which
# run under automake's harness with top_srcdir and top_builddir set.

ptrr="$top_builddir/ptrr"
failures=0

# fail MESSAGE...: records a failed check and says which.
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it
# succeeds, SECONDS at most; false if it never did.  For a check of
# something that happens in its own time (a process ending): one check
# after a fixed sleep fails whenever the machine is slower than that.
wait_until() {
	wait_until_left=$(($1 * 10))
	shift
	until "$@"; do
		[ "$wait_until_left" -gt 0 ] || return 1
		wait_until_left=$((wait_until_left - 1))
		sleep 0.1
	done
}

# pid_gone PID: true if there is no process PID (any more).
pid_gone() {
	! kill -0 "$1" 2>/dev/null
}

# work_dir NAME: makes a fresh scratch directory $work, removed on exit
# (NAME-BACKEND.dir when a wrapper runs the test with $PTRR_TEST_BACKEND).
work_dir() {
	work="$PWD/$1${PTRR_TEST_BACKEND:+-$PTRR_TEST_BACKEND}.dir"
	rm -rf "$work" && mkdir -p "$work" || exit 99
	trap 'rm -rf "$work"' EXIT
}

# fake_pmu ROOT: a fake sysfs tree under ROOT (for PTRR_SYSFS_ROOT) with
# the intel_pt PMU of a Skylake-like CPU, as fake_pmu_make() makes it,
# for the perf backend against the fake kernel (tests/unit/fake_perf.c).
fake_pmu() {
	sys="$1/bus/event_source/devices/intel_pt"
	mkdir -p "$sys/format" "$sys/caps" || exit 99
	echo 8 >"$sys/type"
	for f in pt:config:0 cyc:config:1 mtc:config:9 tsc:config:10 \
		 noretcomp:config:11 branch:config:13 psb_period:config:24-27; do
		echo "${f#*:}" >"$sys/format/${f%%:*}"
	done
	for c in psb_cyc:1 psb_periods:3f ip_filtering:1 \
		 num_address_ranges:2 topa_multiple_entries:1; do
		echo "${c#*:}" >"$sys/caps/${c%%:*}"
	done
}

# gdb_work_dir NAME: work_dir NAME for a test that drives gdb: $progs the
# test programs; skipped (exit 77) without gdb; HOME in the scratch
# directory, so that no user gdbinit joins the session.
gdb_work_dir() {
	work_dir "$1"
	progs="$top_builddir/tests/progs"
	[ -x "$GDB" ] || { echo "gdb not found: skipped"; exit 77; }
	HOME=$work
	export HOME
}

# run_gdb OUT N CMD...: CMD with each line of $work/cmds as an -ex
# option before its last N arguments (the program or the bundle; an
# error in one -ex does not end the others), the program's environment
# PATH and HOME only (and $run_env's NAME=VALUE words, if set); output
# in $work/OUT (tests/gdb-values.sh, gdb-watch.sh).
run_gdb() {
	out=$1 n=$2
	shift 2
	k=$(($# - n))
	while [ "$k" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		k=$((k - 1))
	done
	while IFS= read -r line; do
		set -- "$@" -ex "$line"
	done <"$work/cmds"
	while [ "$n" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		n=$((n - 1))
	done
	# shellcheck disable=SC2086
	timeout 300 env -i PATH="$PATH" HOME="$work" PTRR_GDB="$GDB" \
		${run_env:-} "$@" >"$work/$out" 2>&1 ||
		fail "$out: exit status $?: $(tail -n 3 "$work/$out")"
}

# finish: says how many checks failed; the test's exit status from that.
finish() {
	[ "$failures" -eq 0 ] || { echo "$failures failures"; return 1; }
	echo "all checks passed"
}

# expect_exit STATUS PATTERN CMD...: runs CMD, checks its exit status
# and, if PATTERN is not empty, that its stderr matches the extended
# regular expression PATTERN; stdout in $work/out, stderr in $work/err.
expect_exit() {
	want=$1 pattern=$2
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	got=$?
	if [ "$got" != "$want" ]; then
		fail "$*: exit $got, wanted $want"; cat "$work/err"
	elif [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$work/err"; then
		fail "$*: stderr does not match '$pattern':"; cat "$work/err"
	fi
}

# ptrr_listening NAME PTRR-ARGS...: `ptrr PTRR-ARGS` (a server on port
# 0) in the background, pid $server, its output in $work/NAME.prog and
# $work/NAME.serve; its port in $port once it says gdbserver's
# "Listening on port N" (a failure after 10 s).
ptrr_listening() {
	name=$1
	shift
	timeout 200 "$ptrr" "$@" </dev/null >"$work/$name.prog" \
		2>"$work/$name.serve" &
	server=$!
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/^Listening on port \([0-9]*\)$/\1/p' \
			"$work/$name.serve" | head -n 1)
		[ -n "$port" ] && return
		sleep 0.1
	done
	fail "$name: ptrr $1 does not listen: $(cat "$work/$name.serve")"
}

# has NAME REGEX / lacks NAME REGEX: a line of $work/NAME.out matches
# the extended regular expression REGEX / none does.
has() {
	grep -Eq -- "$2" "$work/$1.out" ||
		fail "$1: no line matching '$2' in: $(head -n 30 "$work/$1.out")"
}
lacks() {
	! grep -Eq -- "$2" "$work/$1.out" ||
		fail "$1: a line matches '$2': $(grep -E -- "$2" "$work/$1.out")"
}

# final_pc BUNDLE: the final PC of a thread that did not exit (a crash,
# an interrupt), which the history lists last; nothing otherwise.  Its
# status is 0 either way, so that callers can tell failures by it.
final_pc() {
	if grep -q '"fault"\|"interrupted"' "$1/manifest.json"; then
		sed -n 's/.*"rip": "\(0x[0-9a-f]*\)".*/\1/p' \
			"$1/manifest.json" | head -n 1
	fi
}

# record NAME [RECORD-OPTIONS] -- PROG [ARGS]: records with the software
# backend (or $PTRR_TEST_BACKEND: tests/qemu-*.sh run tests with qemu)
# into $work/NAME.ptrr, the recorder's output in $work/NAME.log; a
# failure is counted and returned.
record() {
	name=$1
	shift
	"$ptrr" record --backend="${PTRR_TEST_BACKEND:-soft}" \
		-o "$work/$name.ptrr" "$@" \
		>"$work/$name.log" 2>&1 ||
		{ fail "$name: ptrr record: $(tail -n 2 "$work/$name.log")"
		  return 1; }
}

# record_truth NAME [RECORD-OPTIONS] -- PROG [ARGS]: records as record
# does, with the single-stepped ground truth in $work/NAME.gt, and writes
# what decoding must list to $work/NAME.want.
record_truth() {
	name=$1
	shift
	record "$name" --ground-truth="$work/$name.gt" "$@" || return
	{ cat "$work/$name.gt"; final_pc "$work/$name.ptrr"; } \
		>"$work/$name.want"
}

# raw_addrs BUNDLE: the decoded history, one address (or "[gap]") a line.
raw_addrs() {
	"$ptrr" insn-history --raw "$1" | awk '{ print $2 }'
}

# in_ranges RANGE...: the addresses of stdin (one a line, 0x...) inside
# any RANGE (START/SIZE, hexadecimal), in order.
in_ranges() {
	awk -v ranges="$*" "$awk_hex"'
		BEGIN {
			n = split(ranges, r, " ")
			for (i = 1; i <= n; i++) {
				split(r[i], p, "/"); s[i] = hex(p[1]); z[i] = hex(p[2])
			}
		}
		{ a = hex($1)
		  for (i = 1; i <= n; i++)
			if (a >= s[i] && a < s[i] + z[i]) { print; next } }'
}

# filter_ranges BUNDLE: the IP filter ranges of BUNDLE as `ptrr info`
# says them (START/SIZE, hexadecimal), on one line.
filter_ranges() {
	"$ptrr" info "$1" | sed -n 's/^IP filter: //p' | tr '\n' ' '
}

# thread_ends BUNDLE: one line per thread of BUNDLE, in order: its task
# id, how it stopped (the stop kind of the manifest) and its final PC.
thread_ends() {
	awk '
		/^  "threads": \[/ { in_threads = 1; next }
		in_threads && /^  \]/ { in_threads = 0 }
		in_threads && /"tid":/ { tid = $2; sub(/,/, "", tid); rip = "-" }
		in_threads && /"start_regs":/ { start = 1 }
		in_threads && /"regs":/ && !/"start_regs":/ { start = 0 }
		in_threads && /"rip":/ && !start { rip = $2; gsub(/[",]/, "", rip) }
		in_threads && /"kind":/ {
			kind = $2; gsub(/[",]/, "", kind); print tid, kind, rip
		}' "$1/manifest.json"
}

# stop_of BUNDLE: the process's stop kind and signal, "fault SIGSEGV".
stop_of() {
	awk '/^  "stop": {/ { s = 1 } s && /"kind":/ { k = $2 }
	     s && /"signal_name":/ { n = $2 } s && /^  }/ { s = 0 }
	     END { gsub(/[",]/, "", k); gsub(/[",]/, "", n); print k, n }' \
		"$1/manifest.json"
}

# blob_at BUNDLE SECTION ADDR COUNT: COUNT bytes at address ADDR of the
# blobs listed under SECTION ("snapshot" or "code") of BUNDLE's manifest,
# as text; nothing if no blob holds them.
blob_at() {
	awk -v section="$2" '
		$0 ~ "^  \"" section "\": \\[" { in_s = 1; next }
		in_s && /^  \]/ { in_s = 0 }
		in_s && /"start":/ { start = $2; gsub(/[",]/, "", start) }
		in_s && /"size":/ { size = $2; gsub(/[",]/, "", size) }
		in_s && /"file":/ {
			file = $2; gsub(/[",]/, "", file); print start, size, file
		}' "$1/manifest.json" |
	while read -r start size file; do
		if [ $(($3 - start)) -ge 0 ] &&
		   [ $(($3 + $4 - start)) -le $((size)) ]; then
			dd if="$1/$file" bs=1 skip=$(($3 - start)) count="$4" \
				2>/dev/null
			break
		fi
	done
}

# check_threads BUNDLE TRUTH: the decoded history of every thread of
# BUNDLE is its ground truth, instruction for instruction: TRUTH for the
# process's main thread, TRUTH.TID for thread TID (the recorder's
# scheme), followed by the final PC for a thread that was still there at
# the end (stopped by a fault, interrupted, or running).  Each thread
# has a ground truth file and each file a thread.  If $check_filter is
# set, both sides go through that command before they are compared.
check_threads() {
	thread_ends "$1" >"$work/threads" ||
		{ fail "$1: no manifest to check"; return; }
	[ -s "$work/threads" ] || { fail "$1: no threads"; return; }
	while read -r tid kind rip; do
		gt="$2.$tid"
		[ -f "$gt" ] || gt="$2"
		{ cat "$gt"
		  case $kind in fault|interrupted|none) echo "$rip" ;; esac
		} | ${check_filter:-cat} >"$work/want.$tid"
		"$ptrr" insn-history --raw --thread="$tid" "$1" |
			awk '{ print $2 }' | ${check_filter:-cat} >"$work/got.$tid"
		cmp -s "$work/want.$tid" "$work/got.$tid" ||
			fail "$1: thread $tid ($kind) differs from $gt:" \
				"$(diff "$work/want.$tid" "$work/got.$tid" |
				   head -n 4)"
	done <"$work/threads"
	[ "$(ls "$2" "$2".[0-9]* 2>/dev/null | wc -l)" -eq \
	  "$(wc -l <"$work/threads")" ] ||
		fail "$1: $(wc -l <"$work/threads") threads, ground truth" \
			"files: $(ls "$2"*)"
}

# check_let_go NAME PID: after a recording attached to process PID ended,
# the process runs on and is no longer traced; then it is killed.
check_let_go() {
	sleep 0.2
	kill -0 $2 2>/dev/null || fail "$1: the process did not survive"
	grep -q '^TracerPid:[[:space:]]*0$' /proc/$2/status ||
		fail "$1: the process is still traced"
	kill $2
	wait $2 2>/dev/null
}

# session NAME PTRR-GDB-OPTION... -- PROG: runs `ptrr gdb --batch` (gdb
# is $GDB) with the commands on standard input, one per line, each as an
# -ex (so that one failing does not end the session), with the live
# backend $PTRR_TEST_BACKEND if set (tests/qemu-*.sh); the output in
# $work/NAME.out.
session() {
	name=$1
	shift
	[ -n "$PTRR_TEST_BACKEND" ] && set -- --backend="$PTRR_TEST_BACKEND" "$@"
	n=$#
	while IFS= read -r line; do
		set -- "$@" -ex "$line"
	done
	# The PTRR-GDB-OPTIONs and the program go last.
	while [ "$n" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		n=$((n - 1))
	done
	PTRR_GDB=$GDB timeout 300 "$ptrr" gdb --batch "$@" \
		>"$work/$name.out" 2>&1 ||
		fail "$name: ptrr gdb failed: $(tail -n 3 "$work/$name.out")"
}

# in_order NAME REGEX...: the output of NAME has lines matching each
# REGEX, in this order (each after the line the one before matched).
in_order() {
	name=$1
	shift
	from=0
	for re in "$@"; do
		at=$(from=$from re=$re awk 'NR > ENVIRON["from"] &&
			$0 ~ ENVIRON["re"] { print NR; exit }' \
			"$work/$name.out")
		if [ -z "$at" ]; then
			fail "$name: no line matching '$re' after line $from" \
			     "of $work/$name.out"
			sed -n "$((from + 1)),\$p" "$work/$name.out" | head -n 20
			return
		fi
		from=$at
	done
}

# count NAME REGEX N: the output of NAME has N lines matching REGEX.
count() {
	got=$(grep -Ec "$2" "$work/$1.out")
	[ "$got" = "$3" ] ||
		fail "$1: $got lines match '$2', wanted $3 ($work/$1.out)"
}

# fix_checksums: standard input, packets written '$DATA' one after the
# other, as packets with correct checksums, '$DATA#xx'.
fix_checksums() {
	awk 'BEGIN { RS = "\\$"; ORS = "" }
	     NR > 1 { split($0, p, "#"); s = 0
		      for (i = 1; i <= length(p[1]); i++)
			      s += ord[substr(p[1], i, 1)]
		      printf "$%s#%02x", p[1], s % 256 }
	     BEGIN { for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i }'
}

# awk_hex: an awk function, hex(S), the value of hexadecimal S ("0x1f"),
# for awk programs written as awk "$awk_hex"'...'.
awk_hex='
function hex(s,   v, i) {
	v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}'
