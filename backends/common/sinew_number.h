/* Decimal numbers in text (parameters, text-format characters) read the same in every locale.
 * SPDX-License-Identifier: MIT */
#ifndef SINEW_NUMBER_H
#define SINEW_NUMBER_H

#include <stdbool.h>

/* The whole of `text` as a finite double: an optional sign, digits with at most one '.'
 * (at least one digit), an optional exponent (e or E, an optional sign, digits); nothing
 * before or after. Read as the C locale reads it, whatever locale the process or the calling
 * thread has set (strtod takes the decimal point of LC_NUMERIC, so under de_DE "0.5" would
 * stop at the '.'). False for NULL, any other text, and values that overflow or underflow
 * the double range. Thread-safe. */
bool sinew_number_parse(const char* text, double* out);

#endif
