/* AVX kernel of MLS upsampling (sinew_mls.h; fast-projective-skinning-2019 Sec. 5, eq. 8 and the
 * normal formula after it), built with -mavx2 and run only after a run-time CPU check.
 * SPDX-License-Identifier: MIT
 *
 * The scalar reference (sinew_mls_eval.h) keeps three running sums per vector, x, y and z, each
 * a chain of separate multiplies and adds in entry order. Here one 128-bit register holds the
 * x, y and z sums (the fourth lane is zero and ignored): lane c gets exactly the scalar
 * operations of component c, so the bits are the scalar ones; no instruction fuses a multiply
 * into an add (the file is built with -ffp-contract=off and uses no FMA intrinsic).
 *
 * Why this shape: per entry the work is a handful of loads (index, weights, a simulation
 * position and normal) and the multiplies and adds; the scalar code is bound by the 20-add
 * latency chain of each vertex and by six scalar gathers per entry. One masked 128-bit load
 * fetches a whole position (the mask keeps it inside the array at the last simulation vertex,
 * and masked-out lanes never fault), and four render vertices run interleaved so that their
 * independent chains hide the add latency. With normals, when the caller's inputs have been
 * interleaved into per-frame records and the weights carry packed entries (sinew_mls.h), one
 * 256-bit register holds a vertex's position and normal sums side by side: per entry one
 * offset, one 8-byte weight-pair broadcast, one record load, one multiply and one add. Lanes
 * across render vertices (one gather per component) would need six gathers per entry, slower
 * than these loads on current x86 cores; that is also why 512-bit registers would not help.
 * Its measured gain and the variants that gained nothing:
 * docs/decisions/2026-11-26-mls-avx2-kernel.md. */
#include <immintrin.h>

#include "sinew_mls.h"

/* Render vertices evaluated together. */
#define MLS_GROUP 4

static inline __m128 load3(const float* p, __m128i mask)
{
    return _mm_maskload_ps(p, mask);
}

/* Stores lanes 0..2 only: a strided output may hold the caller's other data after them (a
 * masked store would do, but is slow on AMD cores). */
static inline void store3(float* p, __m128 v)
{
    _mm_storel_pi((__m64*)p, v);
    _mm_store_ss(p + 2, _mm_movehl_ps(v, v));
}

static inline __attribute__((always_inline)) void normalise_group(const sinew_mls_frame* f,
                                                                 uint32_t j, const int n,
                                                                 const __m128* q);

/* Positions (and normals when f->sim_normals) of render vertices j .. j + n - 1, n <= 4: the
 * same operations, in the same order per component, as sinew_mls_eval_vertex and
 * sinew_mls_eval_position. always_inline so that n is a constant and the loops over it unroll. */
static inline __attribute__((always_inline)) void eval_group(const sinew_mls_frame* f, uint32_t j,
                                                            const int n, const int normals)
{
    const __m128i mask = _mm_setr_epi32(-1, -1, -1, 0);
    const size_t e0 = (size_t)j * SINEW_MLS_K;
    const uint32_t* idx = f->indices + e0;
    const float* wp = f->weights + e0;
    const float* wn = f->normal_weights + e0;
    __m128 p[MLS_GROUP], q[MLS_GROUP];
    for (int v = 0; v < n; ++v) p[v] = q[v] = _mm_setzero_ps();
    for (uint32_t k = 0; k < SINEW_MLS_K; ++k) {
        for (int v = 0; v < n; ++v) {
            const size_t e = (size_t)v * SINEW_MLS_K + k;
            const size_t i = 3u * (size_t)idx[e];
            p[v] = _mm_add_ps(p[v], _mm_mul_ps(_mm_broadcast_ss(wp + e),
                                               load3(f->sim_positions + i, mask)));
            if (normals)
                q[v] = _mm_add_ps(q[v], _mm_mul_ps(_mm_broadcast_ss(wn + e),
                                                   load3(f->sim_normals + i, mask)));
        }
    }
    for (int v = 0; v < n; ++v)
        store3((float*)((char*)f->out_positions + f->position_stride * (j + (uint32_t)v)), p[v]);
    if (normals) normalise_group(f, j, n, q);
}

/* sinew_mls_normalise of the normal sums q of render vertices j .. j + n - 1, stored. */
static inline __attribute__((always_inline)) void normalise_group(const sinew_mls_frame* f,
                                                                 uint32_t j, const int n,
                                                                 const __m128* q)
{
    const __m128i mask = _mm_setr_epi32(-1, -1, -1, 0);
    const uint32_t* idx = f->indices + (size_t)j * SINEW_MLS_K;
    /* All at once: transposed, lane v is render vertex j + v. */
    __m128 x = q[0], y = n > 1 ? q[1] : _mm_setzero_ps(), z = n > 2 ? q[2] : _mm_setzero_ps();
    __m128 w = n > 3 ? q[3] : _mm_setzero_ps();
    _MM_TRANSPOSE4_PS(x, y, z, w);
    /* ((x*x + y*y) + z*z), the scalar order. */
    const __m128 len2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z));
    const __m128 tiny = _mm_set1_ps(1e-30f);
    const int ok = _mm_movemask_ps(_mm_cmpgt_ps(len2, tiny));
    /* max() changes no lane that passes the test; it keeps the others (vanishing or NaN sums,
     * which take the fallback) away from a division by zero. */
    const __m128 inv = _mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(_mm_max_ps(len2, tiny)));
    __m128 s[MLS_GROUP];
    s[0] = _mm_shuffle_ps(inv, inv, _MM_SHUFFLE(0, 0, 0, 0));
    s[1] = _mm_shuffle_ps(inv, inv, _MM_SHUFFLE(1, 1, 1, 1));
    s[2] = _mm_shuffle_ps(inv, inv, _MM_SHUFFLE(2, 2, 2, 2));
    s[3] = _mm_shuffle_ps(inv, inv, _MM_SHUFFLE(3, 3, 3, 3));
    for (int v = 0; v < n; ++v) {
        float* out = (float*)((char*)f->out_normals + f->normal_stride * (j + (uint32_t)v));
        if (ok & (1 << v))
            store3(out, _mm_mul_ps(q[v], s[v]));
        else /* the first neighbour's normal, as sinew_mls_eval_normal */
            store3(out, load3(f->sim_normals + 3u * (size_t)idx[(size_t)v * SINEW_MLS_K], mask));
    }
}

/* Positions and normals of render vertices j .. j + n - 1 from the packed entries and records:
 * one 256-bit register per vertex holds the interleaved sums px nx py ny pz nz (two lanes
 * idle), and per entry one 8-byte broadcast of (N_ij, Ñ_ij), one record load, one multiply and
 * one add serve both. Lane for lane these are still the scalar operations. */
static inline __attribute__((always_inline)) void eval_group_packed(const sinew_mls_frame* f,
                                                                   uint32_t j, const int n)
{
    const sinew_mls_packed_vertex* pv = f->packed + j;
    const char* rec = (const char*)f->records;
    __m256 acc[MLS_GROUP];
    for (int v = 0; v < n; ++v) acc[v] = _mm256_setzero_ps();
    for (uint32_t k = 0; k < SINEW_MLS_K; ++k)
        for (int v = 0; v < n; ++v) {
            const __m256 w = _mm256_castpd_ps(_mm256_broadcast_sd((const double*)(pv[v].pairs + 2u * k)));
            const __m256 r = _mm256_loadu_ps((const float*)(rec + pv[v].offsets[k]));
            acc[v] = _mm256_add_ps(acc[v], _mm256_mul_ps(w, r));
        }
    __m128 q[MLS_GROUP];
    for (int v = 0; v < n; ++v) {
        const __m128 lo = _mm256_castps256_ps128(acc[v]), hi = _mm256_extractf128_ps(acc[v], 1);
        store3((float*)((char*)f->out_positions + f->position_stride * (j + (uint32_t)v)),
               _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(1, 0, 2, 0))); /* px py pz - */
        q[v] = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));  /* nx ny nz 0 */
    }
    normalise_group(f, j, n, q);
}

void sinew_mls_pack_avx2(const float* positions, const float* normals, uint32_t count,
                         float* records)
{
    const __m128i mask = _mm_setr_epi32(-1, -1, -1, 0);
    for (uint32_t i = 0; i < count; ++i) {
        const __m128 p = load3(positions + 3u * (size_t)i, mask);
        const __m128 nrm = load3(normals + 3u * (size_t)i, mask);
        /* px nx py ny | pz nz 0 0 */
        _mm256_storeu_ps(records + 8u * (size_t)i,
                         _mm256_set_m128(_mm_unpackhi_ps(p, nrm), _mm_unpacklo_ps(p, nrm)));
    }
}

void sinew_mls_kernel_avx2(const sinew_mls_frame* f, uint32_t begin, uint32_t end)
{
    uint32_t j = begin;
    if (f->sim_normals && f->records && f->packed) {
        for (; end - j >= MLS_GROUP; j += MLS_GROUP) eval_group_packed(f, j, MLS_GROUP);
        for (; j < end; ++j) eval_group_packed(f, j, 1);
    } else if (f->sim_normals) {
        for (; end - j >= MLS_GROUP; j += MLS_GROUP) eval_group(f, j, MLS_GROUP, 1);
        for (; j < end; ++j) eval_group(f, j, 1, 1);
    } else {
        for (; end - j >= MLS_GROUP; j += MLS_GROUP) eval_group(f, j, MLS_GROUP, 0);
        for (; j < end; ++j) eval_group(f, j, 1, 0);
    }
}
