#!/bin/sh
# `ptrr shell` with commands piped in (no terminal): each command prints
# what the matching subcommand prints, `goto` moves the cursor that a bare
# `insn-history` and `call-history` page from like GDB's `record
# instruction-history` and `record function-call-history`, and
# errors are reported without ending the shell.
set -u
. "$top_srcdir/tests/lib.sh"
work_dir cli-shell
progs="$top_builddir/tests/progs"
tab=$(printf '\t')
b="$work/recursion.ptrr"

# shell_status STATUS COMMANDS...: runs the shell on $b with one command
# per argument; stdout in $work/out, stderr in $work/err.  It must exit
# with STATUS: 0, or 2 when a command failed (like gdb -batch).
shell_status() {
	want=$1
	shift
	printf '%s\n' "$@" | "$ptrr" shell "$b" >"$work/out" 2>"$work/err"
	got=$?
	[ "$got" -eq "$want" ] ||
		fail "shell $*: exit status $got, expected $want"
}

# shell COMMANDS...: shell_status 0 COMMANDS...
shell() {
	shell_status 0 "$@"
}

# same_as WHAT FILE: the shell's output equals FILE.
same_as() {
	cmp -s "$work/out" "$2" || {
		fail "$1:"; diff "$2" "$work/out" | head -5
	}
}

record recursion --start=main -- "$progs/recursion" || exit 1
"$ptrr" insn-history "$b" >"$work/insns" || exit 1
"$ptrr" insn-history --raw "$b" >"$work/raw" || exit 1
size=$(wc -l <"$work/raw")
[ "$size" -gt 30 ] || { fail "only $size instructions recorded"; exit 1; }

# The commands print what the subcommands print.
shell info
"$ptrr" info "$b" >"$work/expected"
same_as "info" "$work/expected"
shell 'call-history /c all'
"$ptrr" call-history --indent "$b" >"$work/expected"
same_as "call-history /c all" "$work/expected"
shell 'call-history /lic all'
"$ptrr" call-history --indent --lines --insn-range "$b" >"$work/expected"
same_as "call-history /lic all" "$work/expected"
shell 'insn-history /r 5 7'
sed -n 5,11p "$work/raw" >"$work/expected"
same_as "insn-history /r 5 7" "$work/expected"

# Paging: from the end of the history the last ten, then "At the end";
# after goto begin, ten by ten forward and back again.
shell insn-history insn-history
{ tail -n 10 "$work/insns"; echo "At the end of the branch trace record."; } \
	>"$work/expected"
same_as "insn-history at the end" "$work/expected"

# marked ADDR: the default listing with "=> " at ADDR instead of at the
# PC where the recording ended.
marked() {
	sed -e "s/^\([0-9]*\)$tab=> /\1$tab   /" \
	    -e "s/^\([0-9]*\)$tab   $1 /\1$tab=> $1 /" "$work/insns"
}
begin=$(sed -n "1s/^1$tab...\(0x[0-9a-f]*\).*/\1/p" "$work/insns")
marked "$begin" >"$work/insns.begin"
shell 'goto begin' insn-history insn-history 'insn-history -' \
	'insn-history -'
{ sed -n 1p "$work/insns.begin"; sed -n 1,20p "$work/insns.begin"
  sed -n 1,10p "$work/insns.begin"
  echo "At the start of the branch trace record."; } >"$work/expected"
same_as "goto begin and paging" "$work/expected"

# call-history pages ten call segments at a time as gdb's record
# function-call-history does (it printed all of them at once): from the
# end the last ten, then "At the end", and with - the ten before; after
# goto, ten from the cursor's segment on, + the next ten, - back; FROM
# COUNT, and on from there.
"$ptrr" call-history --insn-range "$b" >"$work/calls.ir"
sed 's/\tinst .*//' "$work/calls.ir" >"$work/calls"
ncalls=$(wc -l <"$work/calls")
[ "$ncalls" -gt 40 ] || fail "only $ncalls call segments recorded"
shell call-history call-history 'call-history -'
{ tail -n 10 "$work/calls"; echo "At the end of the branch trace record."
  sed -n "$((ncalls - 19)),$((ncalls - 10))p" "$work/calls"; } \
	>"$work/expected"
same_as "call-history at the end" "$work/expected"
shell 'goto begin' call-history 'call-history +' 'call-history -' \
	'call-history -'
{ sed -n 1p "$work/insns.begin"; sed -n 1,20p "$work/calls"
  sed -n 1,10p "$work/calls"
  echo "At the start of the branch trace record."; } >"$work/expected"
same_as "goto begin and call-history paging" "$work/expected"
# The cursor on the first instruction of segment 30: from 30 on.
at=$(sed -n 's/^30\t.*\tinst \([0-9]*\),.*/\1/p' "$work/calls.ir")
shell "goto $at" call-history 'call-history 5 3' call-history
{ sed -n "${at}p" "$work/insns" | sed 's/^\([0-9]*\)\t   /\1\t=> /'
  sed -n 30,39p "$work/calls"; sed -n 5,17p "$work/calls"; } \
	>"$work/expected"
same_as "goto $at, call-history, call-history 5 3, call-history" \
	"$work/expected"

# goto N marks entry N and its address; info then says where replay is.
shell 'goto 7' info
grep -q "^7$tab=> 0x" "$work/out" || fail "goto 7 does not show 7 with =>"
grep -q '^Replay in progress.  At instruction 7\.$' "$work/out" ||
	fail "info after goto 7 does not say where replay is"

# Threads: the current one, a switch to it, and one that does not exist.
tid=$("$ptrr" info "$b" | sed -n 's/^Thread 1 (LWP \([0-9]*\)).*/\1/p')
shell_status 2 thread "thread $tid" 'thread 999999' 'insn-history /r 1 1'
printf '[Current thread is 1 (LWP %s)]\n[Switching to thread 1 (LWP %s)]\n%s\n' \
	"$tid" "$tid" "$(head -1 "$work/raw")" >"$work/expected"
same_as "thread" "$work/expected"
grep -q "^no thread 999999 in $b (threads: $tid)\$" "$work/err" ||
	fail "thread 999999: $(cat "$work/err")"

# Errors go to stderr and the shell goes on; quit ends it; so does EOF.
shell_status 2 frobnicate 'goto 0' "goto $((size + 1))" 'insn-history /x' \
	'call-history /z' 'insn-history /r 1 1' quit 'insn-history /r 2 1'
head -1 "$work/raw" >"$work/expected"
same_as "errors, then quit" "$work/expected"
[ "$(wc -l <"$work/err")" -eq 5 ] || fail "wanted 5 errors: $(cat "$work/err")"
grep -q '^Undefined command: "frobnicate".  Try "help".$' "$work/err" ||
	fail "no message for an unknown command"
shell help
grep -q '^goto N|begin|end ' "$work/out" || fail "help does not list goto"
printf 'insn-history /r 1 1' | "$ptrr" shell "$b" >"$work/out" 2>&1 ||
	fail "shell ending without a newline: exit status $?"
head -1 "$work/raw" | cmp -s - "$work/out" ||
	fail "the last line without a newline was not run"

finish
