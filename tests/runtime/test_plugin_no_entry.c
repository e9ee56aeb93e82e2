/* A shared library that is not a sinew plugin: it lacks the entry point. */
int sinew_not_a_plugin(void);
int sinew_not_a_plugin(void) { return 42; }
