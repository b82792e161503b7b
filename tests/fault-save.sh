#!/bin/sh
# Faults while a bundle is saved (history/bundle_save.c), made by
# tests/unit/libfaultio.so (LD_PRELOAD, tests only) in the ptrr process
# that saves.
#
# ptrr killed (SIGKILL) before each step of a save in turn — every
# mkdir, write, fsync and rename of `ptrr record -o B` over an older
# bundle B: B is then the old bundle, untouched, or the new one,
# complete (its whole history lists), never anything else; and the next
# save to B removes the B.tmp.PID the killed writer left.  The same
# without RENAME_EXCHANGE, where one kill leaves no B but the old bundle
# at B.old.PID, which the next save puts back.
#
# A full disk (ENOSPC) after N bytes, N from nothing to the middle of
# the manifest: `ptrr record -o B` fails with one line that says to free
# space or choose another directory, exit status 2, the previous bundle
# at B untouched and loadable, no B.tmp.* left.  `pt save` in a live
# session (ptrr gdb) to a full directory: the same line, the bundle
# there untouched, and the trace still in memory: a pt save to another
# directory then works, and replays.
. "${top_srcdir:-..}/tests/lib.sh"
work_dir fault-save
progs="$top_builddir/tests/progs"
HOME=$work
export HOME
shim="$top_builddir/tests/unit/libfaultio.so"
[ -f "$shim" ] || { echo "$shim not built: skipped"; exit 77; }
# The shim comes before the ASan runtime of an --enable-asan ptrr.
asan_options="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# faulty CMD VAR=VALUE... COMMAND...: runs COMMAND with the shim acting
# in ptrr CMD as the PTRR_FAULT_ variables say.
faulty() {
	cmd=$1
	shift
	env PTRR_FAULT_CMD="$cmd" LD_PRELOAD="$shim" \
		ASAN_OPTIONS="$asan_options" "$@"
}

# no_tmp NAME BUNDLE: no BUNDLE.tmp.* is left.
no_tmp() {
	ls -d "$2".tmp.* >/dev/null 2>&1 &&
		fail "$1: left $(ls -d "$2".tmp.*)"
}

# listed BUNDLE: the number of instructions BUNDLE's history lists
# (empty if it does not load).
listed() {
	"$ptrr" insn-history "$1" 2>/dev/null | wc -l
}

# ---- ptrr killed at each step of a save ----
# The new recording, whole: what a complete bundle lists.
record ref --start=main -- "$progs/fnptr" || { finish; exit; }
ref=$(listed "$work/ref.ptrr")

# no_aside NAME BUNDLE: no BUNDLE.old.* is left.
no_aside() {
	ls -d "$2".old.* >/dev/null 2>&1 &&
		fail "$1: left $(ls -d "$2".old.*)"
}

# kill_each_step MODE [VAR=VALUE]: ptrr record -o B over an older bundle,
# killed before step 1, 2, ... of its save until one runs to its end.
kill_each_step() {
	mode=$1
	shift
	B=$work/kill-$mode.ptrr
	n=1 old_seen=0 new_seen=0 aside_seen=0
	while [ $n -lt 100 ]; do
		record "kill-$mode" --start=main -- "$progs/loops" || break
		no_tmp "$mode: kill at step $((n - 1)), the next save" "$B"
		no_aside "$mode: kill at step $((n - 1)), the next save" "$B"
		cp "$B/manifest.json" "$work/kill.before"
		rm -f "$work/steps"
		faulty record PTRR_FAULT_KILL=$n PTRR_FAULT_LOG="$work/steps" \
			"$@" "$ptrr" record --backend=soft --start=main \
			-o "$B" -- "$progs/fnptr" >"$work/out" 2>&1
		rc=$?
		[ $rc -eq 0 ] && break
		[ $rc -eq 137 ] || {
			fail "$mode: kill at step $n: exit $rc: $(cat "$work/out")"
			break
		}
		if [ ! -e "$B" ]; then
			# Between moving the old bundle aside and the new one in.
			aside_seen=$((aside_seen + 1))
			cmp -s "$work/kill.before" "$B".old.*/manifest.json ||
				fail "$mode: kill at step $n: no $B, and no old" \
					"bundle aside: $(ls -d "$B"*)"
		elif cmp -s "$work/kill.before" "$B/manifest.json"; then
			old_seen=$((old_seen + 1))
			"$ptrr" info "$B" >/dev/null 2>&1 ||
				fail "$mode: kill at step $n: the old bundle does not load"
		else
			new_seen=$((new_seen + 1))
			[ "$(listed "$B")" = "$ref" ] ||
				fail "$mode: kill at step $n: $B is neither the old" \
					"bundle nor the whole new one:" \
					"$("$ptrr" info "$B" 2>&1 | head -n 2)"
		fi
		n=$((n + 1))
	done
	steps=$(wc -l <"$work/steps")
	# The run that was not killed took every step: n - 1 of them.
	[ "$steps" -eq $((n - 1)) ] && [ "$steps" -ge 10 ] ||
		fail "$mode: killed at $((n - 1)) steps of $steps"
	[ $old_seen -gt 0 ] && [ $new_seen -gt 0 ] ||
		fail "$mode: $old_seen kills left the old bundle, $new_seen the new one"
	[ "$(listed "$B")" = "$ref" ] || fail "$mode: the last save is not whole"
	no_tmp "$mode: the save not killed" "$B"
}
kill_each_step exchange
# Without RENAME_EXCHANGE (NFS) the old bundle is moved aside first: a
# kill then leaves it at B.old.PID and no B, until the next save puts it
# back (and replaces it).
kill_each_step rename PTRR_FAULT_NO_EXCHANGE=1
[ $aside_seen -eq 1 ] ||
	fail "rename: $aside_seen kills left the old bundle aside, not 1"

# ---- ENOSPC: ptrr record -o B over an older bundle ----
# The sizes of the new bundle's files, the manifest last.
total=$(find "$work/ref.ptrr" -type f -printf '%s\n' | awk '{ t += $1 } END { print t }')
manifest=$(stat -c %s "$work/ref.ptrr/manifest.json")
B=$work/full.ptrr
record full --start=main -- "$progs/loops"
cp "$B/manifest.json" "$work/full.before"
for n in 0 1 4096 $((total - manifest - 1)) $((total - manifest / 2)); do
	expect_exit 2 "^ptrr record: cannot write bundle $B: [^ ]+: No space left on device: free space there or choose another directory \(the previous recording is untouched\)$" \
		faulty record PTRR_FAULT_ENOSPC=$n "$ptrr" record \
		--backend=soft --start=main -o "$B" -- "$progs/fnptr"
	[ "$(wc -l <"$work/err")" -eq 1 ] ||
		fail "full at $n: not one line: $(cat "$work/err")"
	cmp -s "$work/full.before" "$B/manifest.json" ||
		fail "full at $n: the previous bundle changed"
	[ "$(listed "$B")" -gt 0 ] ||
		fail "full at $n: the previous bundle does not load"
	no_tmp "full at $n" "$B"
done
# Room for it all: the same save goes through.
faulty record PTRR_FAULT_ENOSPC=$((total * 2)) "$ptrr" record \
	--backend=soft --start=main -o "$B" -- "$progs/fnptr" \
	>"$work/out" 2>&1 || fail "full: with room: $(cat "$work/out")"
[ "$(listed "$B")" = "$ref" ] || fail "full: with room: not the new bundle"

# ---- ENOSPC: pt save in a live session ----
[ -x "${GDB:-}" ] || { echo "gdb not found: pt save skipped"; finish; exit; }
mkdir "$work/disk"
for n in 0 1000; do
	rm -rf "$work/disk/live.ptrr" "$work/other.ptrr"
	cp -r "$work/ref.ptrr" "$work/disk/live.ptrr"
	faulty serve PTRR_FAULT_ENOSPC=$n PTRR_FAULT_DIR="$work/disk/" \
		PTRR_GDB="$GDB" timeout 120 "$ptrr" gdb --batch \
		-ex 'set remotetimeout 60' -ex 'break main' -ex 'run' \
		-ex 'pt start' -ex 'next' -ex 'next' \
		-ex "pt save $work/disk/live.ptrr" \
		-ex "pt save $work/other.ptrr" -- "$progs/loops" \
		>"$work/live.out" 2>&1 ||
		fail "live, full at $n: ptrr gdb: $(tail -n 3 "$work/live.out")"
	has live "^ptrr: cannot write bundle $work/disk/live.ptrr: [^ ]+: No space left on device: free space there or choose another directory \(the previous recording is untouched\); the trace is kept: pt save can try again$"
	[ "$(grep -c 'No space' "$work/live.out")" -eq 1 ] ||
		fail "live, full at $n: $(grep 'No space' "$work/live.out")"
	[ "$(listed "$work/disk/live.ptrr")" = "$ref" ] ||
		fail "live, full at $n: the bundle there changed"
	no_tmp "live, full at $n" "$work/disk/live.ptrr"
	has live "^Saved 1 thread, [0-9]+ instructions, to $work/other.ptrr"
	[ "$(listed "$work/other.ptrr")" -gt 10 ] ||
		fail "live, full at $n: the second save does not list"
	PTRR_GDB=$GDB timeout 120 "$ptrr" replay --batch \
		-ex 'set remotetimeout 60' -ex 'reverse-stepi' -ex 'bt' \
		"$work/other.ptrr" >"$work/replay.out" 2>&1 ||
		fail "live, full at $n: replay: $(tail -n 3 "$work/replay.out")"
	has replay '^#0 .* main \(\)'
done

finish
