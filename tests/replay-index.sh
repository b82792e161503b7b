#!/bin/sh
# The index a bundle keeps of each thread's history (threads/TID.idx:
# the segment index and the call segments, docs/replay.md "The saved
# index").  ptrr record writes it and opening the bundle reads it instead
# of decoding the trace again; what the history says must not change:
# the same call history and instruction history, and in gdb the same
# call stack at positions all along the history.  An index that is
# damaged, of another recording, truncated, or a symbolic link out of
# the bundle is not used (the history is built as without one) and
# changes nothing either.  The index is at most twice the trace
# (tests/unit/test-calls checks one saved without its call segments).
# The index saved lazily (--index=lazy) shows the same as the complete
# one `ptrr index` makes of it, which refuses a damaged bundle; ptrr
# replay completes it once, or says it cannot and replays it lazily.
# gdb's `pt save` of a live session writes one too.
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir replay-index

record crash -- "$top_builddir/tests/progs/libc_crash" || { finish; exit; }
record other -- "$top_builddir/tests/progs/crash" || { finish; exit; }
idx=$(ls "$work/crash.ptrr/threads/"*.idx 2>/dev/null | head -n 1)
[ -n "$idx" ] || { fail "ptrr record wrote no index"; finish; exit; }
tid=$(basename "$idx" .idx)

# index_state BUNDLE: "read" or "built", as ptrr info says.
index_state() {
	"$ptrr" info "$1" >"$work/info.out" 2>&1 ||
		fail "ptrr info $1: $(tail -n 2 "$work/info.out")"
	if grep -q 'read from the bundle' "$work/info.out"; then
		echo read
	elif grep -q 'built on opening' "$work/info.out"; then
		echo built
	fi
}

# histories BUNDLE OUT: ptrr's call and instruction history of BUNDLE.
histories() {
	{
		"$ptrr" call-history --insn-range "$1"
		"$ptrr" insn-history --raw "$1" | md5sum
	} >"$2" 2>&1 || fail "ptrr history of $1 failed: $(tail -n 2 "$2")"
}

# views BUNDLE OUT: what ptrr says of BUNDLE's history, in OUT: call and
# instruction history, and gdb's backtrace at positions along it.
views() {
	histories "$1" "$2"
	b=$1 out=$2
	n=$("$ptrr" info "$b" | sed -n 's/.*Recorded \([0-9]*\) instr.*/\1/p')
	set --
	for k in 1 3 8 21 55 89; do
		set -- "$@" -ex "monitor pt goto $((n * k / 100 + 1))" \
			-ex flushregs -ex 'bt 40'
	done
	PTRR_GDB=$GDB timeout 300 "$ptrr" replay --batch "$@" \
		-ex 'monitor pt goto end' -ex flushregs -ex 'bt 40' "$b" 2>&1 |
		grep -E '^#[0-9]' |
		sed 's/^\(#[0-9]*  *\)0x[0-9a-f]* in /\1/' >>"$out"
}

# No index larger than twice its trace.
for t in "$work"/*.ptrr/threads/*.pt; do
	[ "$(wc -c <"${t%.pt}.idx")" -le $((2 * $(wc -c <"$t"))) ] ||
		fail "$t: the index is more than twice the trace:" \
			"$(wc -c <"${t%.pt}.idx") > 2 x $(wc -c <"$t") bytes"
done

cp -r "$work/crash.ptrr" "$work/plain.ptrr"
rm "$work/plain.ptrr/threads/$tid.idx"
[ "$(index_state "$work/crash.ptrr")" = read ] ||
	fail "the recorded index is not read: $(grep Segments "$work/info.out")"
[ "$(index_state "$work/plain.ptrr")" = built ] ||
	fail "without an index, not built: $(grep Segments "$work/info.out")"
views "$work/crash.ptrr" "$work/want"
histories "$work/crash.ptrr" "$work/want.histories"
views "$work/plain.ptrr" "$work/got"
cmp -s "$work/want" "$work/got" ||
	fail "with and without the index, the history differs:" \
		"$(diff "$work/want" "$work/got" | head -n 20)"
[ "$(grep -c '^#' "$work/want")" -ge 30 ] ||
	fail "too few frames to compare: $(grep -c '^#' "$work/want")"
grep -q 'fflush' "$work/want" ||
	fail "no frame in libc's fflush: $(head -n 20 "$work/want")"

# damage NAME WHAT: a copy of the bundle whose index WHAT (a shell
# command run on FILE) damaged; it must be built anew, the same (the
# call stacks come from the same call segments as without an index).
damage() {
	cp -r "$work/crash.ptrr" "$work/$1.ptrr"
	FILE=$work/$1.ptrr/threads/$tid.idx
	eval "$2" || { fail "$1: could not damage the index"; return; }
	state=$(index_state "$work/$1.ptrr")
	[ "$state" = built ] || fail "$1: the damaged index was $state"
	histories "$work/$1.ptrr" "$work/$1.got"
	cmp -s "$work/want.histories" "$work/$1.got" ||
		fail "$1: the history differs:" \
			"$(diff "$work/want" "$work/$1.got" | head -n 10)"
}

size=$(wc -c <"$idx")
# flip BYTE-OFFSET: changes one byte of FILE (to its complement: a byte
# that already was 0xff stayed the same when it was set to 0xff).
flip='b=$(dd if="$FILE" bs=1 skip=$off count=1 2>/dev/null | od -An -tu1) &&
	printf "\\$(printf %o $((255 - b)))" |
	dd of="$FILE" bs=1 seek=$off conv=notrunc 2>/dev/null'
off=3 damage magic "$flip"
off=14 damage layout "$flip"
off=20 damage key "$flip"
off=$((size / 2)) damage middle "$flip"
off=$((size - 3)) damage end "$flip"
damage truncated 'truncate -s $((size - 100)) "$FILE"'
damage longer 'printf "more" >>"$FILE"'
damage empty ': >"$FILE"'
damage foreign 'cp "$work/other.ptrr/threads/"*.idx "$FILE"'
damage outside 'mv "$FILE" "$work/outside.idx" &&
	ln -s "$work/outside.idx" "$FILE"'

# The index saved without call segments and without decoding the
# segments the table of PSBs numbered (--index=lazy, the QEMU backend's
# default): the same call and instruction history, and in gdb the same
# call stacks along the history and the same reverse-step, reverse-next
# and reverse-finish stops from the end, as the complete index `ptrr
# index` writes into a copy of the bundle.  With the software backend
# and, where qemu-x86_64 is installed, the QEMU backend's default.
# stops BUNDLE OUT: the stops of reverse execution from the end of
# BUNDLE, appended to OUT.
stops() {
	PTRR_GDB=$GDB timeout 300 "$ptrr" replay --batch -ex 'bt 40' \
		-ex reverse-step -ex reverse-step -ex reverse-next \
		-ex reverse-step -ex reverse-finish -ex 'bt 40' \
		-ex reverse-finish -ex 'bt 40' "$1" 2>&1 |
		grep -E '^#[0-9]|^[0-9]+[[:space:]]' >>"$2"
}
# lazily NAME [RECORD-OPTIONS]: records libc_crash lazily into NAME,
# completes a copy with ptrr index and compares them.
lazily() {
	name=$1
	shift
	record "$name" "$@" -- "$top_builddir/tests/progs/libc_crash" ||
		return
	lazy=$work/$name.ptrr done=$work/$name-indexed.ptrr
	cp -r "$lazy" "$done"
	"$ptrr" index "$done" >"$work/index.out" 2>&1 ||
		fail "ptrr index: $(tail -n 2 "$work/index.out")"
	ls "$done"/threads/*.new >/dev/null 2>&1 &&
		fail "ptrr index left temporary files"
	"$ptrr" info "$lazy" >"$work/info.out" 2>&1
	grep -q 'call segments computed on opening' "$work/info.out" ||
		fail "$name: saved the call segments: $(grep Segments \
			"$work/info.out")"
	"$ptrr" info "$done" >"$work/info.out" 2>&1
	grep -q 'read from the bundle)' "$work/info.out" ||
		fail "$name: after ptrr index, not complete:" \
			"$(grep Segments "$work/info.out")"
	# ptrr replay completes a lazy index first (below); where it cannot
	# save it (a directory in the way of its temporary file, which even
	# root cannot write), the server replays the lazy index itself.
	for f in "$lazy"/threads/*.idx; do mkdir "$f.new" || exit 99; done
	views "$lazy" "$lazy.got"
	stops "$lazy" "$lazy.got"
	PTRR_GDB=$GDB timeout 300 "$ptrr" replay --batch -ex 'bt 1' "$lazy" \
		>"$work/replay.out" 2>&1
	grep -q '^ptrr replay: .*replaying without it' "$work/replay.out" ||
		fail "$name: ptrr replay does not say the index stays lazy:" \
			"$(head -n 3 "$work/replay.out")"
	"$ptrr" info "$lazy" 2>&1 | grep -q 'call segments computed on opening' ||
		fail "$name: the index changed though it could not be saved"
	for f in "$lazy"/threads/*.idx; do rmdir "$f.new"; done
	views "$done" "$done.got"
	stops "$done" "$done.got"
	cmp -s "$lazy.got" "$done.got" ||
		fail "$name: with the index saved lazily and completed, the" \
			"history differs: $(diff "$lazy.got" "$done.got" |
			head -n 20)"
	grep -q 'the bad pointer is produced here' "$lazy.got" ||
		fail "$name: reverse-step did not reach log_file:" \
			"$(tail -n 9 "$lazy.got")"
	# ptrr replay completes the index once (a long full recording's
	# first stop would otherwise wait for the whole pass, past gdb's
	# timeout), and then replays as from the complete one.
	PTRR_GDB=$GDB timeout 300 "$ptrr" replay --batch -ex 'bt 1' "$lazy" \
		>"$work/replay.out" 2>&1
	grep -q '^ptrr replay: completing the saved index' \
		"$work/replay.out" ||
		fail "$name: ptrr replay did not complete the index:" \
			"$(head -n 3 "$work/replay.out")"
	"$ptrr" info "$lazy" >"$work/info.out" 2>&1
	grep -q 'read from the bundle)' "$work/info.out" ||
		fail "$name: after ptrr replay, not complete:" \
			"$(grep Segments "$work/info.out")"
	: >"$lazy.again"
	stops "$lazy" "$lazy.again"
	PTRR_GDB=$GDB timeout 300 "$ptrr" replay --batch -ex 'bt 1' "$lazy" \
		>"$work/replay.out" 2>&1
	grep -q 'completing' "$work/replay.out" &&
		fail "$name: ptrr replay completed a complete index again"
	stops "$done" "$done.again"
	cmp -s "$lazy.again" "$done.again" ||
		fail "$name: completed by ptrr replay, the stops differ:" \
			"$(diff "$lazy.again" "$done.again" | head -n 10)"
}
lazily lazy --index=lazy
if command -v qemu-x86_64 >/dev/null 2>&1; then
	PTRR_TEST_BACKEND=qemu lazily qemu
	# Full mode saves the complete index by default.
	PTRR_TEST_BACKEND=qemu record qemu-full --mode=full -- \
		"$top_builddir/tests/progs/libc_crash" &&
	"$ptrr" info "$work/qemu-full.ptrr" >"$work/info.out" 2>&1
	grep -q 'read from the bundle)' "$work/info.out" ||
		fail "QEMU full mode: not complete: $(grep Segments \
			"$work/info.out")"
fi
"$ptrr" record --index=some -- true >"$work/badopt.out" 2>&1
[ $? -eq 1 ] && grep -q 'unknown --index (full or lazy)' "$work/badopt.out" ||
	fail "--index=some: $(head -n 2 "$work/badopt.out")"

# ptrr index refuses a damaged bundle with one line and leaves it as it
# was: a truncated trace, a manifest that is not JSON, a truncated
# snapshot file (a part the loader leaves out with a warning).
# refused NAME WHAT: as damage above, WHAT run on the bundle's directory
# DIR.
refused() {
	cp -r "$work/lazy.ptrr" "$work/$1.ptrr"
	DIR=$work/$1.ptrr
	eval "$2" || { fail "$1: could not damage the bundle"; return; }
	cp -r "$DIR" "$work/$1.before"
	"$ptrr" index "$DIR" >"$work/$1.out" 2>&1
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$work/$1.out")" -eq 1 ] &&
		grep -q '^ptrr: .*re-record' "$work/$1.out" ||
		fail "$1: ptrr index exited $rc: $(head -n 3 "$work/$1.out")"
	diff -r "$work/$1.before" "$DIR" >/dev/null ||
		fail "$1: ptrr index changed the bundle"
}
refused truncated 'truncate -s 100 "$DIR"/threads/*.pt'
refused manifest 'printf "{ not json" >"$DIR/manifest.json"'
refused snapshot 'truncate -s 10 "$DIR"/snapshot/0.bin'

# A live session's pt save writes the index as well.
PTRR_GDB=$GDB timeout 300 "$ptrr" gdb --batch -ex 'set remotetimeout 60' \
	-ex 'break main' -ex run -ex 'pt start' -ex continue \
	-ex "pt save $work/live.ptrr" -- "$top_builddir/tests/progs/crash" \
	>"$work/live.out" 2>&1
[ -d "$work/live.ptrr" ] ||
	fail "pt save wrote nothing: $(tail -n 5 "$work/live.out")"
[ "$(index_state "$work/live.ptrr")" = read ] ||
	fail "pt save's index is not read: $(grep Segments "$work/info.out")"
finish
