/* The ptrr subcommands.  Each takes the arguments after its name
 * (argv[0] is the subcommand) and returns the process exit status:
 * 0 success, 1 usage error, 2 runtime failure (a one-line message naming
 * the cause and the fix has been printed to stderr). */
#ifndef PTRR_COMMANDS_H
#define PTRR_COMMANDS_H

int ptrr_cmd_record(int argc, char **argv);
int ptrr_cmd_info(int argc, char **argv);
int ptrr_cmd_index(int argc, char **argv);
int ptrr_cmd_insn_history(int argc, char **argv);
int ptrr_cmd_call_history(int argc, char **argv);
int ptrr_cmd_shell(int argc, char **argv);
int ptrr_cmd_replay(int argc, char **argv);
int ptrr_cmd_gdb(int argc, char **argv);
int ptrr_cmd_lldb(int argc, char **argv);
int ptrr_cmd_serve(int argc, char **argv);
int ptrr_cmd_gdbserver(int argc, char **argv);
int ptrr_cmd_export(int argc, char **argv);
int ptrr_cmd_import(int argc, char **argv);

#endif
