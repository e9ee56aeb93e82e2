/* Command-line parsing shared by the samples. SPDX-License-Identifier: MIT */
#include "sample_options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sample_option_value(int argc, char** argv, int* index, const char* name, const char** value)
{
    if (!argv || !index || !name || !value || *index < 0 || *index >= argc || !argv[*index]) return 0;
    const char* arg = argv[*index];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0') return 0;   /* a longer option that starts with the same letters */
    if (*index + 1 >= argc) {
        fprintf(stderr, "option %s needs a value\n", name);
        return -1;
    }
    *index += 1;
    *value = argv[*index];
    return 1;
}

int sample_option_flag(char** argv, int index, const char* name)
{
    return argv && name && index >= 0 && argv[index] && strcmp(argv[index], name) == 0;
}

int sample_parse_u32(const char* option, const char* text, uint32_t min, uint32_t max,
                     uint32_t* out)
{
    if (!text || !out) return 0;
    char* end = NULL;
    errno = 0;
    /* strtoul accepts a sign and wraps negatives around; insist on digits only. */
    unsigned long long v = (text[0] >= '0' && text[0] <= '9') ? strtoull(text, &end, 10) : 0;
    if (!end || *end != '\0' || errno != 0 || v < min || v > max) {
        fprintf(stderr, "option %s: \"%s\" is not a whole number in [%u, %u]\n", option, text,
                min, max);
        return 0;
    }
    *out = (uint32_t)v;
    return 1;
}

int sample_parse_float(const char* option, const char* text, float* out)
{
    if (!text || !out) return 0;
    char* end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !isfinite(v) || fabs(v) > 3.0e38) {
        fprintf(stderr, "option %s: \"%s\" is not a finite number\n", option, text);
        return 0;
    }
    *out = (float)v;
    return 1;
}

int sample_parse_seconds(const char* option, const char* text, double* out)
{
    if (!text || !out) return 0;
    char* end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !(v > 0.0) || v > SAMPLE_MAX_DT) {
        fprintf(stderr, "option %s: \"%s\" is not a number of seconds in (0, %g]\n", option,
                text, SAMPLE_MAX_DT);
        return 0;
    }
    *out = v;
    return 1;
}

int sample_params_add(sample_params* params, const char* text)
{
    if (!params || !text) {
        fprintf(stderr, "option --set: no parameter given\n");
        return 0;
    }
    const char* eq = strchr(text, '=');
    if (!eq || eq == text) {
        fprintf(stderr, "option --set: \"%s\" is not key=value\n", text);
        return 0;
    }
    if (params->count >= SAMPLE_MAX_PARAMS) {
        fprintf(stderr, "option --set: more than %d parameters\n", SAMPLE_MAX_PARAMS);
        return 0;
    }
    size_t length = strlen(text);
    char* copy = malloc(length + 1);
    if (!copy) {
        fprintf(stderr, "option --set: out of memory\n");
        return 0;
    }
    memcpy(copy, text, length + 1);
    copy[eq - text] = '\0';
    params->text[params->count] = copy;
    params->params[params->count].key = copy;
    params->params[params->count].value = copy + (eq - text) + 1;
    ++params->count;
    return 1;
}

void sample_params_free(sample_params* params)
{
    if (!params) return;
    for (uint32_t i = 0; i < params->count; ++i) free(params->text[i]);
    memset(params, 0, sizeof *params);
}

int sample_require_data(void)
{
    const char* v = getenv("SINEW_REQUIRE_DATA");
    return v && strcmp(v, "1") == 0;
}

int sample_shared_option(int argc, char** argv, int* index, const char** character,
                         const char** backend, uint32_t* threads, sample_params* params)
{
    const char* value = NULL;
    int m;
    if ((m = sample_option_value(argc, argv, index, "--character", &value)) != 0) {
        if (m > 0) *character = value;
        return m;
    }
    if ((m = sample_option_value(argc, argv, index, "--backend", &value)) != 0) {
        if (m > 0) *backend = value;
        return m;
    }
    if ((m = sample_option_value(argc, argv, index, "--threads", &value)) != 0) {
        return m < 0 || !sample_parse_u32("--threads", value, 1, 1024, threads) ? -1 : 1;
    }
    if ((m = sample_option_value(argc, argv, index, "--set", &value)) != 0) {
        return m < 0 || !sample_params_add(params, value) ? -1 : 1;
    }
    return 0;
}
