# tests/: unit tests per module, test programs, end-to-end tests.
TESTS += $(check_PROGRAMS) $(check_SCRIPTS)
