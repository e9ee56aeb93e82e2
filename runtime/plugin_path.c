/* The plugin search path: where sinew_world_load_plugin finds a plugin named by its file name
 * alone (sinew.h documents the order). SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* dladdr */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The folder under the runtime's own library folder where an install puts plugins. */
#define PLUGIN_DIR_BESIDE_RUNTIME "sinew"

/* An object of libsinew whose address dladdr maps back to the library's file. */
static const char g_runtime_anchor;

/* Writes dir/name to out when that is a regular file; returns whether it is. */
static bool try_folder(const char* dir, size_t dir_length, const char* name, char* out,
                       size_t size)
{
    if (dir_length == 0) return false;
    int n = snprintf(out, size, "%.*s/%s", (int)dir_length, dir, name);
    if (n < 0 || (size_t)n >= size) return false;
    struct stat st;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

/* Each ':'-separated folder of $SINEW_PLUGIN_PATH in turn. */
static bool try_environment(const char* name, char* out, size_t size)
{
    const char* list = getenv("SINEW_PLUGIN_PATH");
    while (list && *list) {
        const char* end = strchr(list, ':');
        size_t length = end ? (size_t)(end - list) : strlen(list);
        if (try_folder(list, length, name, out, size)) return true;
        list = end ? end + 1 : NULL;
    }
    return false;
}

/* <folder of the libsinew file>/sinew; a static runtime maps to the executable instead. */
static bool try_runtime_folder(const char* name, char* out, size_t size)
{
    Dl_info info;
    if (!dladdr(&g_runtime_anchor, &info) || !info.dli_fname) return false;
    const char* slash = strrchr(info.dli_fname, '/');
    if (!slash) return false;
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%.*s/%s", (int)(slash - info.dli_fname),
                     info.dli_fname, PLUGIN_DIR_BESIDE_RUNTIME);
    if (n < 0 || (size_t)n >= sizeof dir) return false;
    return try_folder(dir, (size_t)n, name, out, size);
}

/* The folder of the running executable (/proc/self/exe, Linux). */
static bool try_executable_folder(const char* name, char* out, size_t size)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = '\0';
    const char* slash = strrchr(exe, '/');
    return slash && try_folder(exe, (size_t)(slash - exe), name, out, size);
}

const char* sinew_plugin_find(const char* path, char* buffer, size_t size)
{
    if (strchr(path, '/')) return path;
    if (try_environment(path, buffer, size) || try_runtime_folder(path, buffer, size) ||
        try_executable_folder(path, buffer, size))
        return buffer;
    return path;
}
