# Shell functions for tests/gdb-values-far.sh and gdb-values-put.sh
# (sourced after tests/lib.sh and gdb_work_dir): a recording of a test
# program by the software backend without registers on the way (the
# hardware case), and gdb's answers labelled.

# record_bare NAME: $progs/NAME recorded into $work/NAME.ptrr ($bundle);
# fails the test and exits if there is none.
record_bare() {
	bundle=$work/$1.ptrr
	env -i PATH="$PATH" HOME="$work" "$ptrr" record --backend=soft \
		--regs-every=0 -o "$bundle" -- "$progs/$1" >"$work/rec" 2>&1
	[ -d "$bundle" ] || { fail "no recording ($(tail -n 1 "$work/rec"))"
			      finish; exit; }
}

# show LABEL EXPR: gdb commands printing the value of EXPR on the line
# after "@@ LABEL".
show() {
	printf 'echo @@ %s\\n\noutput %s\necho \\n\n' "$1" "$2"
}

# printed LABEL: what gdb printed for LABEL (in $work/replay).
printed() {
	awk -v l="@@ $1" '$0 == l { getline; print; exit }' "$work/replay"
}

# expect LABEL VALUE: what gdb printed for LABEL is VALUE.
expect() {
	got=$(printed "$1")
	[ "$got" = "$2" ] || fail "$1: '$got', not '$2'"
}
