# ptrr's commands for gdb: the `pt` prefix (`help pt` lists them).
#
# `ptrr gdb` and `ptrr replay` load this file for you.  In a plain gdb
# connected to `ptrr serve`, source it by hand:
#     (gdb) target remote | ptrr serve --stdio crash.ptrr
#     (gdb) source /usr/local/share/ptrr/ptrr.gdb
# Each command is a monitor command of ptrr's server (`monitor pt help`);
# the listings are formatted like gdb's own `record` commands.

define-prefix pt
document pt
ptrr: Intel PT recording and reverse execution (docs/manual.md).
end

# pt-forward: sends `monitor pt WORDS ARGS` with up to 6 arguments of a
# user command ($arg0..$arg5 are only substituted when given).
define pt-forward
  if $argc == 1
    monitor pt $arg0
  end
  if $argc == 2
    monitor pt $arg0 $arg1
  end
  if $argc == 3
    monitor pt $arg0 $arg1 $arg2
  end
  if $argc == 4
    monitor pt $arg0 $arg1 $arg2 $arg3
  end
  if $argc == 5
    monitor pt $arg0 $arg1 $arg2 $arg3 $arg4
  end
  if $argc == 6
    monitor pt $arg0 $arg1 $arg2 $arg3 $arg4 $arg5
  end
  if $argc == 7
    monitor pt $arg0 $arg1 $arg2 $arg3 $arg4 $arg5 $arg6
  end
end
document pt-forward
Internal to the pt commands: sends "monitor pt ARGS..." to ptrr's server.
end

define pt info
  pt-forward info
end
document pt info
Show what is recorded: threads, instructions, segments, gaps, the position.
end

define pt call-history
  if $argc == 0
    pt-forward call-history
  end
  if $argc == 1
    pt-forward call-history $arg0
  end
  if $argc == 2
    pt-forward call-history $arg0 $arg1
  end
  if $argc == 3
    pt-forward call-history $arg0 $arg1 $arg2
  end
end
document pt call-history
Show the function-call history, like "record function-call-history".
Usage: pt call-history [/l] [/i] [/c]
  /l  source lines of each call segment; /i  its instruction numbers;
  /c  indent by call depth.
end

define pt insn-history
  if $argc == 0
    pt-forward insn-history
  end
  if $argc == 1
    pt-forward insn-history $arg0
  end
  if $argc == 2
    pt-forward insn-history $arg0 $arg1
  end
end
document pt insn-history
Show instructions of the history, like "record instruction-history".
Usage: pt insn-history [/r] [N | N,M | N,+K | -]
  With no argument, the instructions around the current position.
end

define pt goto
  if $argc != 1
    echo Usage: pt goto N|begin|end\n
  else
    pt-forward goto $arg0
    maintenance flush register-cache
    frame
  end
end
document pt goto
Move to instruction N of the history, or to its beginning or end.
Like "record goto": N is a number "pt insn-history" shows; the selected
thread moves there and gdb shows the frame.
end

define pt start
  pt-forward start
end
document pt start
Start recording the program's control flow (a live session).
From here on reverse-step, reverse-continue and the histories cover what
the program runs.
end

define pt stop
  pt-forward stop
end
document pt stop
Stop recording; the history recorded so far stays.
end

define pt save
  if $argc != 1
    echo Usage: pt save FILE\n
  else
    pt-forward save $arg0
  end
end
document pt save
Save the recording as bundle FILE (open it later with "ptrr replay FILE").
end
