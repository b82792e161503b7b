# Shell helpers for judging the values gdb prints through ptrr against
# gdb's own `record full` of the same run: sourced by tests/gdb-values.sh
# and bench/run-values-real.sh after tests/lib.sh.  The sourcing script
# defines class LABEL EXPR (the expression class of EXPR printed at stop
# LABEL) and $always (expressions that cannot change: compared as at the
# end everywhere).

# show LABEL EXPRS ADDRS: gdb commands that print each of EXPRS and,
# for ADDRS, the address and size of the object, under "@@ LABEL ...".
show() {
	for e in $2; do
		printf 'echo @@ %s %s\\n\noutput %s\necho \\n\n' "$1" "$e" "$e"
	done
	for e in $3; do
		printf 'echo @@ %s &%s\\n\n' "$1" "$e"
		printf 'output/x (unsigned long) &(%s)\necho \\040\n' "$e"
		printf 'output sizeof(%s)\necho \\n\n' "$e"
	done
}

# stops_and_walk FUNC IN ADDRS UP_IN UP_ADDRS: gdb commands that break in
# FUNC and reverse-continue to it $stops times, showing IN (ADDRS) at
# each stop as "pK" and UP_IN (UP_ADDRS) in its caller as "pKup", then
# reverse-step $steps times from the last stop, showing $in_step
# ($addrs_step) at each line as "sK".
stops_and_walk() {
	echo "break $1"
	k=1
	while [ "$k" -le "$stops" ]; do
		echo 'reverse-continue'
		show "p$k" "$2" "$3"
		echo 'up'
		show "p${k}up" "$4" "$5"
		echo 'down'
		k=$((k + 1))
	done
	echo 'delete'
	k=1
	while [ "$k" -le "$steps" ]; do
		echo 'reverse-step'
		show "s$k" "$in_step" "$addrs_step"
		k=$((k + 1))
	done
}

# records FILE: "LABEL EXPR<TAB>VALUE" for each printed value of FILE.
records() {
	awk '/^@@ / { key = $2 " " $3; next }
	     key != "" && NF { print key "\t" $0; key = "" }' "$1"
}

# in_objects FULL LABEL ADDR: true if hex ADDR lies in an object whose
# address record full printed at stop LABEL ($work/FULL.rec).
in_objects() {
	grep "^$2 &" "$work/$1.rec" | cut -f 2 |
	while read -r base size; do
		case $base in 0x*) ;; *) continue ;; esac
		if [ $(($3 >= base && $3 < base + size)) -eq 1 ]; then
			echo yes
			break
		fi
	done | grep -q yes
}

# judge NAME FULL: each value of $work/NAME.rec against record full's in
# $work/FULL.rec.  Prints the counts, and per expression class the values
# equal to record full's of those compared.
judge() {
	equal=0 unknown=0 honest=0 wrong=0 classes=
	while IFS='	' read -r key pv; do
		case $key in *" &"*) continue ;; esac
		fv=$(grep -F -- "$key	" "$work/$2.rec" | head -n 1 | cut -f 2-)
		label=${key%% *} expr=${key#* }
		case $fv in 'No symbol "'*'" in current context.')
			[ "$pv" = "$fv" ] ||
				fail "$1: $key is '$pv', record full: '$fv'"
			continue ;;
		esac
		c=$(class "$label" "$expr")
		case " $classes " in *" $c "*) ;; *) classes="$classes $c"
			eval "n_$c=0 e_$c=0" ;; esac
		eval "n_$c=\$((n_$c + 1))"
		if [ "$pv" = "$fv" ]; then
			equal=$((equal + 1))
			eval "e_$c=\$((e_$c + 1))"
			continue
		fi
		case " $always " in
		*" $expr "*) label=end ;;
		esac
		if [ "$label" = end ]; then
			wrong=$((wrong + 1))
			fail "$1: $key is '$pv', record full: '$fv' (known)"
			continue
		fi
		case $pv in
		*'<unavailable>'*)
			pat=$(printf '%s' "$pv" |
			      sed -e 's/[][*?\\]/\\&/g' -e 's/<unavailable>/*/g')
			# shellcheck disable=SC2254
			case $fv in
			$pat) unknown=$((unknown + 1)) ;;
			*) wrong=$((wrong + 1))
			   fail "$1: $key is '$pv', record full: '$fv'" ;;
			esac ;;
		'<optimized out>'|*'value is not available'*|\
		*'value has been optimized out'*)
			unknown=$((unknown + 1)) ;;
		'Cannot access memory at address 0x'*)
			a=${pv#Cannot access memory at address }
			if in_objects "$2" "$label" "$a"; then
				honest=$((honest + 1))
			else
				wrong=$((wrong + 1))
				fail "$1: $key: '$pv' names no object it reads"
			fi ;;
		*)
			wrong=$((wrong + 1))
			fail "$1: $key is '$pv', record full: '$fv'" ;;
		esac
	done <"$work/$1.rec"
	echo "$1: $equal values equal record full's, $unknown unavailable," \
	     "$honest unreadable at their real address, $wrong wrong"
	line=
	for c in $classes; do
		eval "line=\"\$line \$c \$e_$c/\$n_$c\""
	done
	echo "$1: equal by class:$line"
	[ $((equal + unknown + honest)) -gt 0 ] || fail "$1: nothing compared"
}

# available NAME: after judge NAME, at least 90% of the values equal
# record full's (issue 19: the values recovery must give in the
# hardware case, the recording's end state and nothing else), in all and
# in each expression class.  The reverse-step walk's classes (step_*)
# are held to 0 wrong by judge and reported, not to this bar: the lines
# between the breakpoint stops include prologues and stores whose values
# the walk back loses (docs/replay.md).
available() {
	all=0 eq=0
	for c in $classes; do
		case $c in step_*) continue ;; esac
		eval "n=\$n_$c e=\$e_$c"
		all=$((all + n)) eq=$((eq + e))
		[ $((e * 10)) -ge $((n * 9)) ] ||
			fail "$1: $c: $e of $n values available (< 90%)"
	done
	[ $((eq * 10)) -ge $((all * 9)) ] ||
		fail "$1: $eq of $all values available (< 90%)"
}

