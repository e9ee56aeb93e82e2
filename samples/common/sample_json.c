/* A small JSON writer for the samples' reports. SPDX-License-Identifier: MIT */
#include "sample_json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void sample_json_init(sample_json* json, FILE* out)
{
    if (!json) return;
    memset(json, 0, sizeof *json);
    json->out = out;
}

static void write_string(FILE* out, const char* s)
{
    fputc('"', out);
    for (const unsigned char* p = (const unsigned char*)s; *p; ++p) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20) fprintf(out, "\\u%04x", *p);
            else fputc(*p, out);   /* UTF-8 passes through unchanged */
        }
    }
    fputc('"', out);
}

static void indent(sample_json* json, int levels)
{
    for (int i = 0; i < levels; ++i) fputs("  ", json->out);
}

/* Separator, indentation and key before a value at the current level; an object inside an
 * array starts a line of its own. */
static void begin_value(sample_json* json, const char* key, int is_object)
{
    if (json->depth == 0) return;   /* a top-level value needs no separator */
    int level = json->depth - 1;
    if (json->is_array[level]) {
        if (json->count[level] > 0) fputc(',', json->out);
        if (is_object) {
            fputc('\n', json->out);
            indent(json, json->depth);
            json->has_objects[level] = 1;
        } else if (json->count[level] > 0) {
            fputc(' ', json->out);
        }
    } else if (json->one_line[level]) {
        if (json->count[level] > 0) fputs(", ", json->out);
        write_string(json->out, key ? key : "");
        fputs(": ", json->out);
    } else {
        fputs(json->count[level] > 0 ? ",\n" : "\n", json->out);
        indent(json, json->depth);
        write_string(json->out, key ? key : "");
        fputs(": ", json->out);
    }
    ++json->count[level];
}

static void open_container(sample_json* json, const char* key, char bracket, char is_array)
{
    if (!json || !json->out) return;
    int in_array = json->depth > 0 && json->is_array[json->depth - 1];
    begin_value(json, key, !is_array);
    fputc(bracket, json->out);
    if (json->depth < SAMPLE_JSON_MAX_DEPTH) {
        json->count[json->depth] = 0;
        json->is_array[json->depth] = is_array;
        json->one_line[json->depth] = (char)(!is_array && in_array);
        json->has_objects[json->depth] = 0;
        ++json->depth;
    }
}

static void close_container(sample_json* json, char bracket)
{
    if (!json || !json->out || json->depth == 0) return;
    --json->depth;
    int level = json->depth;
    int block = json->is_array[level] ? json->has_objects[level] : !json->one_line[level];
    if (block && json->count[level] > 0) {
        fputc('\n', json->out);
        indent(json, json->depth);
    }
    fputc(bracket, json->out);
    if (json->depth == 0) fputc('\n', json->out);
}

void sample_json_begin_object(sample_json* json, const char* key) { open_container(json, key, '{', 0); }
void sample_json_end_object(sample_json* json) { close_container(json, '}'); }
void sample_json_begin_array(sample_json* json, const char* key) { open_container(json, key, '[', 1); }
void sample_json_end_array(sample_json* json) { close_container(json, ']'); }

void sample_json_string(sample_json* json, const char* key, const char* value)
{
    if (!json || !json->out) return;
    begin_value(json, key, 0);
    if (value) write_string(json->out, value);
    else fputs("null", json->out);
}

void sample_json_number(sample_json* json, const char* key, double value)
{
    if (!json || !json->out) return;
    begin_value(json, key, 0);
    if (isfinite(value)) fprintf(json->out, "%.9g", value);
    else fputs("null", json->out);
}

void sample_json_uint(sample_json* json, const char* key, uint64_t value)
{
    if (!json || !json->out) return;
    begin_value(json, key, 0);
    fprintf(json->out, "%" PRIu64, value);
}

void sample_json_int(sample_json* json, const char* key, int64_t value)
{
    if (!json || !json->out) return;
    begin_value(json, key, 0);
    fprintf(json->out, "%" PRId64, value);
}

void sample_json_bool(sample_json* json, const char* key, int value)
{
    if (!json || !json->out) return;
    begin_value(json, key, 0);
    fputs(value ? "true" : "false", json->out);
}

void sample_json_null(sample_json* json, const char* key)
{
    if (!json || !json->out) return;
    begin_value(json, key, 0);
    fputs("null", json->out);
}
