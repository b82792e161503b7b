# replay/: the reverse-execution engine over history/ (replay.h), and
# its tests.
