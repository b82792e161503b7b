# plugin/live/: a live, traced process under ptrr's control, for the
# server: run, stop, step, breakpoints, tracing on and off, the trace of
# each stop; and its tests.
