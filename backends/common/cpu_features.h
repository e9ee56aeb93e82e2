/* Run-time choice of the SIMD instruction set for the CPU backends.
 * SPDX-License-Identifier: MIT
 *
 * The x86 kernels are built only when CMake defines SINEW_SKIN_X86 (GCC or Clang on x86-64),
 * each in its own file with its own -m flags; everything else sees the scalar path only. */
#ifndef SINEW_COMMON_CPU_FEATURES_H
#define SINEW_COMMON_CPU_FEATURES_H

#include <stdbool.h>
#include <string.h>

typedef enum sinew_simd {
    SINEW_SIMD_SCALAR = 0,
    SINEW_SIMD_SSE41 = 1,
    SINEW_SIMD_AVX2 = 2,   /* AVX2 together with FMA */
    SINEW_SIMD_AVX512 = 3, /* AVX-512F (with AVX2 and FMA, which -mavx512f also enables) */
    SINEW_SIMD_COUNT = 4,
    SINEW_SIMD_AUTO = 5 /* only as a request: the best the CPU has */
} sinew_simd;

/* The parameter spelling of each instruction set ("scalar", "sse", "avx2", "avx512"). */
static inline const char* sinew_simd_name(sinew_simd simd)
{
    switch (simd) {
    case SINEW_SIMD_SCALAR:
        return "scalar";
    case SINEW_SIMD_SSE41:
        return "sse";
    case SINEW_SIMD_AVX2:
        return "avx2";
    case SINEW_SIMD_AVX512:
        return "avx512";
    case SINEW_SIMD_AUTO:
        return "auto";
    default:
        return "?";
    }
}

/* Parses a `simd` parameter value; false when the text names no instruction set. */
static inline bool sinew_simd_parse(const char* text, sinew_simd* out)
{
    static const sinew_simd all[] = {SINEW_SIMD_AUTO, SINEW_SIMD_SCALAR, SINEW_SIMD_SSE41,
                                     SINEW_SIMD_AVX2, SINEW_SIMD_AVX512};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        if (strcmp(text, sinew_simd_name(all[i])) == 0) {
            *out = all[i];
            return true;
        }
    }
    return false;
}

/* Does this CPU (and OS: the builtin checks XCR0 for the AVX register state) run `simd`? */
static inline bool sinew_simd_supported(sinew_simd simd)
{
    if (simd == SINEW_SIMD_SCALAR) return true;
#if defined(SINEW_SKIN_X86) && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    switch (simd) {
    case SINEW_SIMD_SSE41:
        return __builtin_cpu_supports("sse4.1") != 0;
    case SINEW_SIMD_AVX2:
        return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
    case SINEW_SIMD_AVX512:
        return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx2") != 0 &&
               __builtin_cpu_supports("fma") != 0;
    default:
        return false;
    }
#else
    return false;
#endif
}

/* The widest instruction set this CPU runs. */
static inline sinew_simd sinew_simd_best(void)
{
    for (int s = SINEW_SIMD_AVX512; s > SINEW_SIMD_SCALAR; --s) {
        if (sinew_simd_supported((sinew_simd)s)) return (sinew_simd)s;
    }
    return SINEW_SIMD_SCALAR;
}

/* `simd` (AUTO: the best this CPU runs) for kernels that have none for SSE (SSE4.1 runs the
 * scalar one) and none wider than `widest` (AVX2 or AVX512, which a wider request gets);
 * SINEW_SIMD_COUNT when the CPU or the build lacks the set asked for. */
static inline sinew_simd sinew_simd_resolve_up_to(sinew_simd simd, sinew_simd widest)
{
    if (simd == SINEW_SIMD_AUTO) simd = sinew_simd_best();
    switch (simd) {
    case SINEW_SIMD_SCALAR:
        return SINEW_SIMD_SCALAR;
    case SINEW_SIMD_SSE41:
        return sinew_simd_supported(SINEW_SIMD_SSE41) ? SINEW_SIMD_SCALAR : SINEW_SIMD_COUNT;
#if defined(SINEW_SKIN_X86)
    case SINEW_SIMD_AVX2:
    case SINEW_SIMD_AVX512:
        if (!sinew_simd_supported(simd)) return SINEW_SIMD_COUNT;
        return simd > widest ? widest : simd;
#endif
    default:
        return SINEW_SIMD_COUNT;
    }
}

#endif
