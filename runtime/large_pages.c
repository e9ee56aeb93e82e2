/* Fresh memory for the runtime's and its backends' larger blocks, populated at once: a baked
 * male restores tens of MiB of arrays, and faulting them in one 4 KiB page at a time costs more
 * than reading and checking the file. SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE, MADV_POPULATE_WRITE */
#include "internal.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#define HUGE_PAGE ((uintptr_t)2u << 20)

#if defined(__linux__) && defined(MADV_HUGEPAGE)
/* madvise over the whole pages of `page` bytes inside [p, p + size): the advice never reaches
 * memory outside the block. Failure (older kernels, memory that is not anonymous) is ignored:
 * the block then faults in as it would have. */
static void advise_inside(void* p, size_t size, uintptr_t page, int advice)
{
    uintptr_t begin = ((uintptr_t)p + page - 1u) & ~(page - 1u);
    uintptr_t end = ((uintptr_t)p + size) & ~(page - 1u);
    if (end > begin) (void)madvise((void*)begin, end - begin, advice);
}
#endif

void sinew_advise_large_block(void* p, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!p || size < SINEW_POPULATED_BLOCK) return;
    if (size >= SINEW_LARGE_BLOCK) advise_inside(p, size, HUGE_PAGE, MADV_HUGEPAGE);
#if defined(MADV_POPULATE_WRITE)
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0) advise_inside(p, size, (uintptr_t)page, MADV_POPULATE_WRITE);
#endif
#else
    (void)p;
    (void)size;
#endif
}

/* The world's allocator over the host's (or the default one), advising its larger blocks. */
static void* advising_alloc(size_t size, size_t alignment, void* user)
{
    const sinew_allocator* inner = (const sinew_allocator*)user;
    void* p = inner->alloc(size, alignment, inner->user);
    sinew_advise_large_block(p, size);
    return p;
}

static void advising_free(void* ptr, void* user)
{
    const sinew_allocator inner = *(const sinew_allocator*)user;
    inner.free(ptr, inner.user);
}

sinew_allocator sinew_advising_allocator(const sinew_allocator* inner)
{
    sinew_allocator a = { advising_alloc, advising_free, (void*)inner };
    return a;
}
