/* Shared pieces of the libFuzzer harnesses: a silent logger, a scratch folder per process, and
 * the world every harness drives. SPDX-License-Identifier: MIT */
#ifndef SINEW_FUZZ_COMMON_H
#define SINEW_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <sinew/sinew.h>

/* Drops every message: the harnesses feed bad input on purpose. */
const sinew_logger* fuzz_logger(void);

/* A folder of this process under $TMPDIR (created once), and `name` inside it. */
const char* fuzz_path(const char* name);

/* Writes `size` bytes to `path`; 0 on failure. */
int fuzz_write(const char* path, const void* data, size_t size);

/* CRC-32C (Castagnoli, reflected 0x82F63B78, initial value and final xor 0xFFFFFFFF), the
 * checksum of baked files, bit by bit. */
uint32_t fuzz_crc32c(const void* data, size_t size);

/* A world with one thread and the silent logger; NULL on failure. */
sinew_world* fuzz_world(void);

/* Sets `pose` (joint_count model-space matrices) on a new skin of `backend`, steps twice and
 * reads the output back; failures are fine, crashes and leaks are not. */
void fuzz_skin_steps(sinew_world* world, sinew_rig rig, const char* backend, uint32_t joints,
                     const float* pose, uint32_t vertices);

#endif
