/* Memory figures for the benchmark. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "sample_memory.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* A "Key:   123 kB" line of /proc/self/status, in bytes; -1 when absent. */
static int64_t status_bytes(const char* key)
{
    FILE* f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    int64_t bytes = -1;
    const size_t length = strlen(key);
    while (fgets(line, sizeof line, f)) {
        long long kb;
        if (strncmp(line, key, length) == 0 && line[length] == ':' &&
            sscanf(line + length + 1, "%lld", &kb) == 1) {
            bytes = (int64_t)kb * 1024;
            break;
        }
    }
    fclose(f);
    return bytes;
}

int64_t sample_resident_bytes(void)
{
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    return status_bytes("RssAnon");
}

int64_t sample_peak_resident_bytes(void)
{
    return status_bytes("VmHWM");
}

/* Each block carries its size and its offset from the start of the underlying allocation in
 * the two words before the pointer handed out; the alignment (at least 16) leaves room. */
static void* counting_alloc(size_t size, size_t alignment, void* user)
{
    sample_counting_allocator* counter = user;
    if (alignment < 2 * sizeof(size_t)) alignment = 2 * sizeof(size_t);
    if (size > SIZE_MAX - alignment) return NULL;
    void* base = NULL;
    if (posix_memalign(&base, alignment, size + alignment) != 0) return NULL;
    size_t* header = (size_t*)((char*)base + alignment) - 2;
    header[0] = size;
    header[1] = alignment;
    atomic_fetch_add(&counter->live_bytes, (int64_t)size);
    return header + 2;
}

static void counting_free(void* ptr, void* user)
{
    sample_counting_allocator* counter = user;
    if (!ptr) return;
    const size_t* header = (const size_t*)ptr - 2;
    atomic_fetch_sub(&counter->live_bytes, (int64_t)header[0]);
    free((char*)ptr - header[1]);
}

void sample_counting_allocator_init(sample_counting_allocator* counter)
{
    counter->allocator.alloc = counting_alloc;
    counter->allocator.free = counting_free;
    counter->allocator.user = counter;
    atomic_init(&counter->live_bytes, 0);
}

int64_t sample_counting_allocator_live(sample_counting_allocator* counter)
{
    return atomic_load(&counter->live_bytes);
}
