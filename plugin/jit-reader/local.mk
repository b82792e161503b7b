# plugin/jit-reader/: the gdb JIT-reader unwinder (a loadable module), and
# its tests.
