/* Command-line parsing shared by the samples. SPDX-License-Identifier: MIT
 *
 * Options are `--name value` or `--name=value`. The helpers report problems as one line on
 * stderr naming the option; the caller then prints its usage and exits with
 * SAMPLE_EXIT_USAGE. */
#ifndef SINEW_SAMPLE_OPTIONS_H
#define SINEW_SAMPLE_OPTIONS_H

#include <stdint.h>

#include <sinew/sinew.h>

/* Exit codes of every sample. */
enum {
    SAMPLE_EXIT_OK = 0,
    SAMPLE_EXIT_FAILURE = 1,     /* a runtime error, reported with sinew_result_string */
    SAMPLE_EXIT_USAGE = 2,       /* bad command line */
    SAMPLE_EXIT_SKIP = 77        /* the character file is absent and SINEW_REQUIRE_DATA != 1 */
};

/* Does argv[*index] name option `name` (e.g. "--frames")? Returns 1 and sets *value (and
 * advances *index past a separate value) when it does, 0 when it is another option, -1 (after
 * printing a line) when the value is missing. */
int sample_option_value(int argc, char** argv, int* index, const char* name, const char** value);

/* Is argv[index] exactly the flag `name` (e.g. "--json")? */
int sample_option_flag(char** argv, int index, const char* name);

/* Whole-string number parsing within [min, max]; 0 (after printing a line naming `option`)
 * when the text is not such a number. */
int sample_parse_u32(const char* option, const char* text, uint32_t min, uint32_t max,
                     uint32_t* out);
int sample_parse_float(const char* option, const char* text, float* out);

/* The tools' update interval (--dt): the default, 1/60 s (one update per animation frame, the
 * timestep of the physics backends), and the largest accepted. */
#define SAMPLE_DEFAULT_DT (1.0 / 60.0)
#define SAMPLE_MAX_DT 1.0
/* A whole-string number of seconds in (0, SAMPLE_MAX_DT]; 0 (after printing a line naming
 * `option`) otherwise. */
int sample_parse_seconds(const char* option, const char* text, double* out);

/* Backend parameters collected from repeated `--set key=value`. */
enum { SAMPLE_MAX_PARAMS = 64 };
typedef struct sample_params {
    sinew_param params[SAMPLE_MAX_PARAMS];   /* key/value point into `text` */
    uint32_t count;
    char* text[SAMPLE_MAX_PARAMS];           /* owned copies of "key\0value" */
} sample_params;

/* Adds "key=value" (key non-empty; the value may be empty). 0 after printing a line when it
 * is malformed or there are too many. */
int sample_params_add(sample_params* params, const char* text);
void sample_params_free(sample_params* params);

/* The options every tool takes: --character PATH, --backend NAME, --threads T (1..1024) and
 * repeatable --set KEY=VALUE. Returns 1 when argv[*index] is one of them (stored, *index
 * advanced past a separate value), 0 when it is another option, -1 after printing a line when
 * its value is missing or malformed. */
int sample_shared_option(int argc, char** argv, int* index, const char** character,
                         const char** backend, uint32_t* threads, sample_params* params);

/* Is SINEW_REQUIRE_DATA set to 1 (missing data is then a failure, not a skip)? */
int sample_require_data(void);

#endif
