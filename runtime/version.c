/* The library's version at run time, from the same macros the headers give callers.
 * SPDX-License-Identifier: MIT */
#include <sinew/sinew.h>

#define VERSION_STRINGIFY(x) #x
#define VERSION_STRING(major, minor, patch) \
    VERSION_STRINGIFY(major) "." VERSION_STRINGIFY(minor) "." VERSION_STRINGIFY(patch)

uint32_t sinew_version(void)
{
    return SINEW_VERSION;
}

const char* sinew_version_string(void)
{
    return VERSION_STRING(SINEW_VERSION_MAJOR, SINEW_VERSION_MINOR, SINEW_VERSION_PATCH);
}
