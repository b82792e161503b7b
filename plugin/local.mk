# plugin/: the ptrr program — its subcommands, the history browser and
# shell, and (as they land) capture, the gdb server and the gdb plugin.
bin_PROGRAMS += ptrr
ptrr_SOURCES = \
	plugin/ptrr.c \
	plugin/commands.h \
	plugin/cli.h \
	plugin/cli_history.c \
	plugin/shell.c
ptrr_LDADD = history/libhistory.a $(DEPS_LIBS) -lreadline
