/* One-line error reports of the sample library. SPDX-License-Identifier: MIT */
#include "sample_log.h"

#include <stdarg.h>
#include <stdio.h>

sinew_result sample_fail(sinew_result result, const char* fmt, ...)
{
    char line[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    fprintf(stderr, "sinew-sample: %s\n", line);
    return result;
}

static void print_line(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    static const char* const names[] = { "error", "warning", "info", "debug" };
    const char* name = ((int)level >= 0 && (int)level < 4) ? names[level] : "log";
    fprintf(stderr, "sinew %s: %s\n", name, message);
}

const sinew_logger* sample_stderr_logger(void)
{
    static const sinew_logger logger = { print_line, NULL };
    return &logger;
}
