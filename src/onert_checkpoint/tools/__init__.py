"""The command line and the library functions it is thin over: describe (JSON), diff, dump,
the annotated layout map and terminal-safe rendering."""
