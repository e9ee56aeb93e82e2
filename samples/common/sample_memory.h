/* Memory figures for the benchmark: the process's resident memory, and an allocator that counts
 * the bytes a world holds through it. SPDX-License-Identifier: MIT */
#ifndef SINEW_SAMPLE_MEMORY_H
#define SINEW_SAMPLE_MEMORY_H

#include <stdint.h>

#include <sinew/sinew.h>

/* The process's anonymous resident memory in bytes (RssAnon of /proc/self/status: heap and
 * anonymous mappings, not the pages of code and files), after returning the allocator's free
 * pages to the system (glibc's malloc_trim), so that memory freed earlier does not count;
 * -1 where it cannot be read. */
int64_t sample_resident_bytes(void);

/* The process's peak resident memory in bytes (VmHWM: every kind of page, the largest it has
 * been); -1 where it cannot be read. */
int64_t sample_peak_resident_bytes(void);

/* An allocator for sinew_world_desc that keeps the count of the bytes it holds: the sizes the
 * world asked for, live now. Thread-safe. */
typedef struct sample_counting_allocator {
    sinew_allocator allocator;          /* hand &allocator to the world */
    _Atomic int64_t live_bytes;
} sample_counting_allocator;

void sample_counting_allocator_init(sample_counting_allocator* counter);
int64_t sample_counting_allocator_live(sample_counting_allocator* counter);

#endif
