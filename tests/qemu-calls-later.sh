#!/bin/sh
# A live session on QEMU stopped far into a run answers its first reverse
# steps before the call segments are computed (replay.c: decide_calls):
# the values are those the walk back from the end proves, and gdb
# unwinds by itself, as at the present.  Here the pass is held back
# (PTRR_TEST_CALLS_HOLD) and no wait is allowed (PTRR_TEST_CALLS_SLACK=0),
# so that a small program's session answers as a long one's would; the
# same commands run again with the call segments (the pass as usual).
#
# Both sessions must stop at the same places (the stop and line lines,
# the frames of each bt); a value the first prints must be the value the
# second prints, or unavailable; and `pt info` in the first must say the
# call segments are still not up to date after all of it (before
# decide_calls, the first reverse step waited for them).
# Skipped (77) where qemu-x86_64 is absent.
. "${top_srcdir:-..}/tests/lib.sh"
command -v qemu-x86_64 >/dev/null 2>&1 ||
	{ echo "qemu-x86_64 not found: skipped"; exit 77; }
gdb_work_dir qemu-calls-later
PTRR_TEST_BACKEND=qemu

# both NAME PROG: the commands on stdin in a session on PROG, held back
# (NAME-held) and as usual (NAME-usual).
both() {
	cat >"$work/$1.cmds"
	PTRR_TEST_CALLS_HOLD=1 PTRR_TEST_CALLS_SLACK=0 \
		session "$1-held" --record-from-start -- "$2" <"$work/$1.cmds"
	# The same environment's size: the stack is where it was.
	PTRR_TEST_CALLS_HOLD=0 PTRR_TEST_CALLS_SLACX=0 \
		session "$1-usual" --record-from-start -- "$2" <"$work/$1.cmds"
}

# places NAME: where the session stopped: stop, line and frame lines,
# without the arguments (whose values may be unavailable) and task ids.
places() {
	sed -n -e 's/(.*) at /() at /' -e 's/(.*)$/()/' \
		-e '/^Program received/p' -e '/^Breakpoint [0-9]/p' \
		-e '/^#[0-9]/p' -e '/^[0-9][0-9]*[[:space:]]/p' \
		-e '/^0x[0-9a-f]* in /p' -e '/^Run till exit/p' "$work/$1.out"
}

# values NAME: the values printed ($N = ...), one a line.
values() {
	sed -n 's/^\$[0-9][0-9]* = //p' "$work/$1.out"
}

# compare NAME: the held session against the usual one.
compare() {
	places "$1-held" >"$work/$1-held.places"
	places "$1-usual" >"$work/$1-usual.places"
	[ -s "$work/$1-usual.places" ] ||
		fail "$1: the usual session stopped nowhere: $work/$1-usual.out"
	cmp -s "$work/$1-held.places" "$work/$1-usual.places" ||
		fail "$1: without the call segments the session stopped" \
		     "elsewhere: $(diff "$work/$1-usual.places" \
				    "$work/$1-held.places" | head -n 6)"
	values "$1-held" >"$work/$1-held.values"
	values "$1-usual" >"$work/$1-usual.values"
	[ "$(wc -l <"$work/$1-held.values")" -eq \
	  "$(wc -l <"$work/$1-usual.values")" ] ||
		fail "$1: not as many values printed in the two sessions"
	paste -d '\n' "$work/$1-held.values" "$work/$1-usual.values" |
	awk -v name="$1" 'NR % 2 { held = $0; next }
		held != $0 && held !~ /<unavailable>|<optimized out>|<error: Cannot access memory/ {
			printf "%s: value %d is %s without the call " \
			       "segments, %s with them\n", name, NR / 2, held, $0
			bad = 1
		}
		END { exit bad }' ||
		fail "$1: a value differs (above)"
	grep -q '^Call segments of thread .*: not yet up to date' \
		"$work/$1-held.out" ||
		fail "$1: the call segments were computed for the reverse" \
		     "steps: $(grep '^Call segments' "$work/$1-held.out")"
	grep -q '^Call segments of thread .*: up to date' \
		"$work/$1-usual.out" ||
		fail "$1: the usual session's call segments are not ready:" \
		     "$(grep '^Call segments' "$work/$1-usual.out")"
}

# crash: from the SIGSEGV back to its cause, frames and values on the way.
both crash "$progs/crash" <<'EOF'
continue
reverse-stepi
bt
p r
p *r
p $rsp
p $rip
reverse-finish
bt
p r
p *r
p v
reverse-next
reverse-next
p r
p *r
reverse-step
bt
p id
p $rsp
reverse-stepi
reverse-stepi
bt
info frame
up
p r
p v
pt info
continue
EOF
compare crash

# recursion: fact(1) at the present; back up the recursion, stepping and
# finishing, with a frame for each fact() on the way.
both recursion "$progs/recursion" <<'EOF'
break fact if n == 1
continue
reverse-stepi
bt
p n
p unwound
reverse-finish
bt
p n
p r
reverse-next
bt
reverse-step
bt
p n
up
p n
up
p n
pt info
delete
continue
EOF
compare recursion

# The held session's places are real ones: the crash and its cause.
in_order crash-held '^Program received signal SIGSEGV' \
	'^29[[:space:]]+return \*r->value;' '^38[[:space:]]+v \+= lookup\(r\);' \
	'37[[:space:]]+clobber\(r\);' '^35[[:space:]]+int v = lookup\(r\);' \
	'in make_record \(' '^#1 .* in main \(\) at .*crash\.c:34'
in_order recursion-held '^Breakpoint 1, fact \(n=(n@entry=)?1\)' \
	'^#3 .* fact \(' '^#4 .* main \('
finish
