#!/bin/sh
# ptrr replay of recordings that moved or were damaged.
#
# A bundle recorded with --pack replays after the program it recorded is
# gone (as on another machine): gdb reads the packed copy, the crash and
# the way back to its cause are there.  Damaged copies of it: a missing
# trace file and a newer format version are refused with one line that
# says why; a truncated memory snapshot and a module of another build-id
# open with what is intact and a warning naming the part left out, and
# the server does not fail (it once freed an uninitialized pointer when
# the program's module was unusable).
. "${top_srcdir:-..}/tests/lib.sh"
gdb_work_dir replay-damaged

cp "$top_builddir/tests/progs/crash" "$work/crashcopy" || exit 99
record packed --pack -- "$work/crashcopy" || { finish; exit; }
rm "$work/crashcopy"

# replay NAME BUNDLE CMD...: ptrr replay --batch with -ex CMD each; the
# output (gdb's and the server's) in $work/NAME.out.  It must succeed,
# or with refused=yes fail.
refused=no
replay() {
	name=$1 bundle=$2
	shift 2
	for c in "$@"; do
		set -- "$@" -ex "$c"
		shift
	done
	if PTRR_GDB=$GDB timeout 120 "$ptrr" replay --batch "$@" "$bundle" \
		>"$work/$name.out" 2>&1; then
		[ "$refused" = no ] || fail "$name: ptrr replay did not fail"
	else
		[ "$refused" = yes ] || fail "$name: ptrr replay failed:" \
			"$(tail -n 3 "$work/$name.out")"
	fi
}

# damaged NAME: a copy of the packed bundle to damage, in $work/NAME.ptrr.
damaged() {
	cp -r "$work/packed.ptrr" "$work/$1.ptrr"
}

# The packed recording, its program gone.
replay packed "$work/packed.ptrr" 'info files' bt reverse-step reverse-step \
	reverse-step
has packed "^Symbols from \"$work/packed\.ptrr/modules/"
# It starts at the crash as gdb shows a live one.
has packed '^Program received signal SIGSEGV, Segmentation fault\.'
has packed '^#0 +lookup \(r=0x[0-9a-f]+\) at .*crash\.c:29'
has packed '^#1 .* in main \(\) at .*crash\.c:38'
has packed '^24[[:space:]]+r->value = \(int \*\) 0x10;'
lacks packed 'warning: module'

# A trace file missing: nothing left to serve.
damaged notrace
rm "$work"/notrace.ptrr/threads/*.pt
refused=yes
replay notrace "$work/notrace.ptrr" bt
refused=no
has notrace "^ptrr serve: bundle .*notrace\.ptrr: no thread's trace is usable \(threads/[0-9]+\.pt is missing\)"
[ "$(grep -c '^ptrr serve:' "$work/notrace.out")" = 1 ] ||
	fail "notrace: not one line from ptrr serve"

# A newer format.
damaged newer
sed -i 's/"version": 1,/"version": 99,/' "$work/newer.ptrr/manifest.json"
refused=yes
replay newer "$work/newer.ptrr" bt
refused=no
has newer '^ptrr serve: bundle .*newer\.ptrr was written by a newer ptrr \(format version 99'

# A truncated memory snapshot: that memory is left out, with a warning;
# the history and the rest are there.
damaged snap
for f in "$work"/snap.ptrr/snapshot/*.bin; do
	truncate -s 100 "$f"
	break
done
replay snap "$work/snap.ptrr" bt reverse-step
has snap '^ptrr serve: warning: snapshot .* is 100 bytes long, not [0-9]+ as recorded'
has snap '^#0 +lookup \(r=0x[0-9a-f]+\) at .*crash\.c:29'
has snap '^38[[:space:]]+v \+= lookup\(r\);'

# The program's module of another build-id: its code is left out (gaps),
# with a warning; the server stays up.
damaged buildid
sed -i '0,/"build_id": "/s//"build_id": "ff/' "$work/buildid.ptrr/manifest.json"
replay buildid "$work/buildid.ptrr" bt 'pt info'
has buildid '^ptrr serve: warning: module .*crashcopy: build-id differs from the recording'
has buildid '^Recording: .*buildid\.ptrr'
lacks buildid 'Remote connection closed|Remote communication error|free\(\)'
finish
