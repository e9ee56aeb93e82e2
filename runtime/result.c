/* Result names. SPDX-License-Identifier: MIT */
#include <sinew/sinew.h>

#include <sinew/sinew_result_names.h>

const char* sinew_result_string(sinew_result result)
{
    return sinew_result_name(result);
}
