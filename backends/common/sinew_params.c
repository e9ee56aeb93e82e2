/* The parser of described backend parameters (sinew_params.h). SPDX-License-Identifier: MIT */
#include "sinew_params.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <sinew/sinew_host.h>

#include "sinew_number.h"

/* The most keys one description may have (the seen flags live on the stack). */
#define SINEW_PARAMS_MAX 128u

int sinew_param_choice(const char* choices, const char* text, uint32_t* index)
{
    size_t len = strlen(text);
    uint32_t i = 0;
    for (const char* w = choices; w && *w; ++i) {
        const char* bar = strchr(w, '|');
        size_t wl = bar ? (size_t)(bar - w) : strlen(w);
        if (wl == len && strncmp(w, text, len) == 0) {
            *index = i;
            return 1;
        }
        if (!bar) break;
        w = bar + 1;
    }
    return 0;
}

/* The accepted range of a number as the log line states it: "1..1000", "(0, 1]". */
static void range_text(const sinew_param_info* p, char* buf, size_t size)
{
    if (p->type == SINEW_PARAM_INTEGER)
        snprintf(buf, size, "a whole number in %.17g..%.17g", p->min, p->max);
    else
        snprintf(buf, size, "a number in %c%.17g, %.17g%c",
                 (p->flags & SINEW_PARAM_MIN_OPEN) ? '(' : '[', p->min, p->max,
                 (p->flags & SINEW_PARAM_MAX_OPEN) ? ')' : ']');
}

static bool in_range(const sinew_param_info* p, double v)
{
    bool lo = (p->flags & SINEW_PARAM_MIN_OPEN) ? v > p->min : v >= p->min;
    bool hi = (p->flags & SINEW_PARAM_MAX_OPEN) ? v < p->max : v <= p->max;
    return lo && hi && (p->type != SINEW_PARAM_INTEGER || v == floor(v));
}

/* The value of one described key into its field; one log line when it is bad. */
static sinew_result store_value(const sinew_host_api* host, const char* backend,
                                const sinew_param_info* p, const sinew_param_slot* s,
                                const char* value, void* out)
{
    void* field = (char*)out + s->offset;
    double v = 0.0;
    uint32_t index = 0;
    char range[96];
    switch (p->type) {
    case SINEW_PARAM_FLAG:
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "%s: %s=\"%.64s\" is neither 0 nor 1",
                                   backend, p->key, value);
        *(int*)field = value[0] == '1';
        return SINEW_OK;
    case SINEW_PARAM_INTEGER:
    case SINEW_PARAM_REAL:
        if (!sinew_number_parse(value, &v) || !in_range(p, v)) {
            range_text(p, range, sizeof range);
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "%s: %s=\"%.64s\" is not %s",
                                   backend, p->key, value, range);
        }
        if (s->store == SINEW_STORE_U32) *(uint32_t*)field = (uint32_t)v;
        else *(double*)field = v;
        return SINEW_OK;
    case SINEW_PARAM_CHOICE:
        if (!sinew_param_choice(p->choices, value, &index))
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "%s: %s=\"%.64s\" is not one of %s", backend, p->key, value,
                                   p->choices);
        *(int*)field = s->values ? s->values[index] : (int)index;
        return SINEW_OK;
    default: {
        size_t len = strlen(value);
        size_t most = s->size ? s->size - 1u : 0u;
        if (p->max > 0.0 && (double)most > p->max) most = (size_t)p->max;
        if (len == 0 || len > most)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "%s: %s=\"%.64s\" is empty or longer than %zu characters",
                                   backend, p->key, value, most);
        memcpy(field, value, len + 1u);
        return SINEW_OK;
    }
    }
}

/* A typed value of one described key into its field (text keys through store_value). */
static sinew_result store_typed(const sinew_host_api* host, const char* backend,
                                const sinew_param_info* p, const sinew_param_slot* s,
                                const sinew_param_value* value, void* out)
{
    if (p->type == SINEW_PARAM_CHOICE || p->type == SINEW_PARAM_TEXT) {
        if (!value->text)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                   "%s: typed parameter %s has a NULL text", backend, p->key);
        return store_value(host, backend, p, s, value->text, out);
    }
    double v = value->number;
    char range[96] = "0 or 1";
    bool ok = isfinite(v) && (p->type == SINEW_PARAM_FLAG ? (v == 0.0 || v == 1.0)
                                                          : in_range(p, v));
    if (!ok) {
        if (p->type != SINEW_PARAM_FLAG) range_text(p, range, sizeof range);
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "%s: %s=%.17g is not %s", backend,
                               p->key, v, range);
    }
    void* field = (char*)out + s->offset;
    if (p->type == SINEW_PARAM_FLAG) *(int*)field = v != 0.0;
    else if (s->store == SINEW_STORE_U32) *(uint32_t*)field = (uint32_t)v;
    else *(double*)field = v;
    return SINEW_OK;
}

/* The keys as one comma-separated list, for the unknown-key line. */
static void key_list(const sinew_param_info* info, uint32_t count, char* buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < count && used + 1 < size; ++i) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", info[i].key);
        if (n < 0) break;
        used += (size_t)n;
    }
}

/* Which described key `key` is (count: none; one line then) and whether it was given before
 * (one line then too). */
static sinew_result find_key(const sinew_host_api* host, const char* backend,
                             const sinew_param_info* info, uint32_t count, bool* seen,
                             const char* key, uint32_t* k)
{
    *k = 0;
    while (*k < count && strcmp(key, info[*k].key) != 0) ++*k;
    if (*k == count) {
        char known[2048];
        key_list(info, count, known, sizeof known);
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                               "%s: unknown parameter \"%.64s\" (known: %s)", backend, key,
                               known);
    }
    if (seen[*k])
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                               "%s: parameter \"%s\" is given twice", backend, key);
    seen[*k] = true;
    return SINEW_OK;
}

/* The typed values of the chain's sinew_backend_params_ext structs. */
static sinew_result parse_chain(const sinew_host_api* host, const char* backend,
                                const sinew_param_info* info, const sinew_param_slot* slots,
                                uint32_t count, bool* seen, const void* next, void* out)
{
    for (const sinew_ext_header* h = (const sinew_ext_header*)next; h;
         h = (const sinew_ext_header*)h->next) {
        if (h->type != SINEW_EXT_BACKEND_PARAMS)
            return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                                   "%s: takes no extension of type 0x%x in the next chain",
                                   backend, (unsigned)h->type);
        const sinew_backend_params_ext* ext = (const sinew_backend_params_ext*)h;
        if (h->struct_size < sizeof *ext || (ext->count > 0 && !ext->values))
            return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                                   "%s: typed parameters with struct_size %u, %u values at %p",
                                   backend, h->struct_size, ext->count, (const void*)ext->values);
        for (uint32_t i = 0; i < ext->count; ++i) {
            const sinew_param_value* v = &ext->values[i];
            if (!v->key)
                return sinew_host_fail(host, SINEW_ERROR_PARAMETER,
                                       "%s: typed parameter %u has a NULL key", backend, i);
            uint32_t k;
            sinew_result r = find_key(host, backend, info, count, seen, v->key, &k);
            if (r == SINEW_OK) r = store_typed(host, backend, &info[k], &slots[k], v, out);
            if (r != SINEW_OK) return r;
        }
    }
    return SINEW_OK;
}

sinew_result sinew_params_parse(const sinew_host_api* host, const char* backend,
                                const sinew_param_info* info, const sinew_param_slot* slots,
                                uint32_t count, const sinew_param* params, uint32_t param_count,
                                const void* next, void* out)
{
    if (param_count > 0 && !params)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: param_count is %u but params is NULL", backend, param_count);
    if (count > SINEW_PARAMS_MAX)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: %u parameters described, at most %u", backend, count,
                               SINEW_PARAMS_MAX);
    bool seen[SINEW_PARAMS_MAX] = {false};
    for (uint32_t i = 0; i < param_count; ++i) {
        const char* key = params[i].key;
        const char* value = params[i].value;
        if (!key || !value)
            return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "%s: parameter %u has a NULL %s",
                                   backend, i, key ? "value" : "key");
        uint32_t k;
        sinew_result r = find_key(host, backend, info, count, seen, key, &k);
        if (r == SINEW_OK) r = store_value(host, backend, &info[k], &slots[k], value, out);
        if (r != SINEW_OK) return r;
    }
    return parse_chain(host, backend, info, slots, count, seen, next, out);
}
