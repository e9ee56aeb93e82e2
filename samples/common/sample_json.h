/* A small JSON writer for the samples' reports. SPDX-License-Identifier: MIT
 *
 * Objects print one member per line (so a test can match `"key": value` with a regular
 * expression), arrays of scalars print on one line. An object inside an array prints on one
 * line of its own (a sweep's frames: one line per frame, which line tools can read). Numbers
 * that are NaN or infinite print as null: JSON has no spelling for them, and "not measurable"
 * is what they mean here. */
#ifndef SINEW_SAMPLE_JSON_H
#define SINEW_SAMPLE_JSON_H

#include <stdint.h>
#include <stdio.h>

enum { SAMPLE_JSON_MAX_DEPTH = 16 };

typedef struct sample_json {
    FILE* out;
    int depth;
    int count[SAMPLE_JSON_MAX_DEPTH];      /* members written at each level */
    char is_array[SAMPLE_JSON_MAX_DEPTH];
    char one_line[SAMPLE_JSON_MAX_DEPTH];  /* an object inside an array */
    char has_objects[SAMPLE_JSON_MAX_DEPTH]; /* an array that holds objects */
} sample_json;

/* Starts a writer on `out`; nothing is printed until the first value. */
void sample_json_init(sample_json* json, FILE* out);

/* `key` names the member inside an object and must be NULL inside an array or at the top.
 * An object inside an array holds scalars only (it prints on one line); nesting deeper than
 * SAMPLE_JSON_MAX_DEPTH is ignored. end_* closes the innermost container and prints a
 * newline after the outermost one. A NULL writer (or one without a stream) writes nothing. */
void sample_json_begin_object(sample_json* json, const char* key);
void sample_json_end_object(sample_json* json);
void sample_json_begin_array(sample_json* json, const char* key);
void sample_json_end_array(sample_json* json);

void sample_json_string(sample_json* json, const char* key, const char* value); /* NULL: null */
void sample_json_number(sample_json* json, const char* key, double value);
void sample_json_uint(sample_json* json, const char* key, uint64_t value);
void sample_json_int(sample_json* json, const char* key, int64_t value);
void sample_json_bool(sample_json* json, const char* key, int value);
void sample_json_null(sample_json* json, const char* key);

#endif
