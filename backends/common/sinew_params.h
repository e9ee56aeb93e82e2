/* Backend parameters as data: each backend describes its keys once (sinew_param_info, public
 * through sinew_world_backend_params) with where each value goes in its parameter struct
 * (sinew_param_slot), and one parser reads a sinew_param list against that description.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_PARAMS_H
#define SINEW_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew_plugin.h>

/* How a value is stored in the backend's struct. */
typedef enum sinew_param_store {
    SINEW_STORE_INT = 1, /* FLAG: 0 or 1; CHOICE: the word's value; into an int (or an enum) */
    SINEW_STORE_U32 = 2, /* INTEGER, into a uint32_t */
    SINEW_STORE_DOUBLE = 3, /* REAL, into a double */
    SINEW_STORE_TEXT = 4 /* TEXT, copied with its terminating zero into a char[size] */
} sinew_param_store;

typedef struct sinew_param_slot {
    size_t offset;     /* of the field in the backend's parameter struct */
    uint32_t store;    /* sinew_param_store */
    uint32_t size;     /* TEXT: the field's bytes */
    const int* values; /* CHOICE: the value each word stores, in the order of the words (NULL:
                          the word's index) */
} sinew_param_slot;

/* X-macro helpers for a backend's table: with rows X(T, key, type, flags, min, max, default,
 * choices, doc, store, field, values), T the backend's parameter struct, SINEW_PARAM_INFO_ROW
 * and SINEW_PARAM_SLOT_ROW build the two parallel arrays from one list, so they cannot drift
 * apart. */
#define SINEW_PARAM_INFO_ROW(T, key, type, flags, min, max, def, choices, doc, store, field,     \
                             values)                                                             \
    {#key, SINEW_PARAM_##type, flags, min, max, def, choices, doc},
#define SINEW_PARAM_SLOT_ROW(T, key, type, flags, min, max, def, choices, doc, store, field,     \
                             values)                                                             \
    {offsetof(T, field), SINEW_STORE_##store, (uint32_t)sizeof(((T*)0)->field), values},

/* Reads `params`, then the typed values of every sinew_backend_params_ext in the `next` chain,
 * into `out`, which holds the defaults already: each key must be one of the `count` described
 * ones (info[i], stored as slots[i]) and given once (text or typed), each value what its
 * description accepts (numbers: sinew_number_parse). A NULL key or value, an unknown or
 * repeated key, or a bad value is SINEW_ERROR_PARAMETER with one log line that starts with
 * `backend` and names the key and what it accepts; params NULL with a count is
 * SINEW_ERROR_INVALID_ARGUMENT; another extension in `next`, SINEW_ERROR_UNSUPPORTED. `out`
 * may be partly written on failure. */
sinew_result sinew_params_parse(const sinew_host_api* host, const char* backend,
                                const sinew_param_info* info, const sinew_param_slot* slots,
                                uint32_t count, const sinew_param* params, uint32_t param_count,
                                const void* next, void* out);

/* Whether `text` is one of the '|'-separated words of `choices`; its position in *index. */
int sinew_param_choice(const char* choices, const char* text, uint32_t* index);

#endif
