# plugin/gdbremote/: `ptrr serve` and `ptrr gdb`: the gdb remote serial
# protocol server over replay/ (and, live, plugin/live/), and its tests.
