/* sinew_number_parse: strtod under the C locale, switched for the calling thread only
 * (POSIX 2008 uselocale), after a check of the grammar that strtod alone would widen (spaces,
 * hexadecimal, inf, nan). SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "sinew_number.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

/* The C locale object, created once and kept for the process (two threads racing to create it
 * keep one and free the other). */
static _Atomic(locale_t) g_c_locale = (locale_t)0;

static locale_t c_locale(void)
{
    locale_t c = atomic_load(&g_c_locale);
    if (c != (locale_t)0) return c;
    locale_t fresh = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (fresh == (locale_t)0) return (locale_t)0;
    locale_t expected = (locale_t)0;
    if (atomic_compare_exchange_strong(&g_c_locale, &expected, fresh)) return fresh;
    freelocale(fresh);
    return expected;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The grammar of sinew_number.h, nothing else. */
static bool well_formed(const char* s)
{
    if (*s == '+' || *s == '-') ++s;
    unsigned digits = 0;
    while (is_digit(*s)) ++s, ++digits;
    if (*s == '.') {
        ++s;
        while (is_digit(*s)) ++s, ++digits;
    }
    if (digits == 0) return false;
    if (*s == 'e' || *s == 'E') {
        ++s;
        if (*s == '+' || *s == '-') ++s;
        if (!is_digit(*s)) return false;
        while (is_digit(*s)) ++s;
    }
    return *s == '\0';
}

bool sinew_number_parse(const char* text, double* out)
{
    if (!text || !out || !well_formed(text)) return false;
    locale_t c = c_locale();
    if (c == (locale_t)0) return false;
    locale_t previous = uselocale(c);
    errno = 0;
    char* end = NULL;
    double v = strtod(text, &end);
    int error = errno;
    uselocale(previous);
    if (error != 0 || !end || *end != '\0' || !isfinite(v)) return false;
    *out = v;
    return true;
}
