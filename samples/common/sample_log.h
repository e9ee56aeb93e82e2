/* One-line error reports of the sample library. SPDX-License-Identifier: MIT */
#ifndef SINEW_SAMPLE_LOG_H
#define SINEW_SAMPLE_LOG_H

#include <sinew/sinew.h>

#if defined(__GNUC__)
#  define SAMPLE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define SAMPLE_PRINTF(a, b)
#endif

/* Prints "sinew-sample: <message>" as one line on stderr and returns `result`, so a failure
 * path reads `return sample_fail(SINEW_ERROR_X, "what was wrong with which input");`. */
SAMPLE_PRINTF(2, 3) sinew_result sample_fail(sinew_result result, const char* fmt, ...);

/* A sinew_logger that prints "sinew: <message>" lines on stderr, for worlds and the
 * importer: the samples want the runtime's messages on the same stream as their own. */
const sinew_logger* sample_stderr_logger(void);

#endif
