/* Runs a fuzz harness's LLVMFuzzerTestOneInput once on every file of the folders (or files)
 * named on the command line, without libFuzzer: the seeds and the inputs that once failed
 * become a regression test of every build. Exit 0 when all ran (a crash or a sanitizer report
 * ends the process). SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int run_file(const char* path)
{
    FILE* f = fopen(path, "rb");
    if (!f) return 0;
    size_t cap = 1u << 16, size = 0;
    uint8_t* data = (uint8_t*)malloc(cap);
    size_t got;
    while (data && (got = fread(data + size, 1, cap - size, f)) > 0) {
        size += got;
        if (size == cap) {
            uint8_t* bigger = (uint8_t*)realloc(data, cap *= 2u);
            if (!bigger) free(data);
            data = bigger;
        }
    }
    fclose(f);
    if (!data) return 0;
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 1;
}

static int run_path(const char* path)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0; /* a folder not there (no regressions yet) */
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    DIR* d = opendir(path);
    if (!d) return 0;
    int count = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        count += run_file(child);
    }
    closedir(d);
    return count;
}

int main(int argc, char** argv)
{
    int count = 0;
    for (int i = 1; i < argc; ++i) count += run_path(argv[i]);
    printf("%d inputs ran\n", count);
    return count > 0 ? 0 : 1;
}
