/* The projections of pbd_kernels.h with AVX-512F (built with -mavx512f, run after a CPU check):
 * 8 constraints of one colour per vector, their particles gathered from the position columns
 * and scattered back (no two share a particle), every operation that of the scalar kernel in
 * the same order, so the bits are the scalar ones; a constraint the scalar kernel skips is
 * masked out of the stores. The remainder of a range goes through the scalar kernel.
 * SPDX-License-Identifier: MIT */
#include <immintrin.h>

#include "pbd_kernels.h"

static inline __m512d gather(const double* base, __m256i index)
{
    return _mm512_i32gather_pd(index, base, 8);
}

static inline void scatter(double* base, __mmask8 mask, __m256i index, __m512d v)
{
    _mm512_mask_i32scatter_pd(base, mask, index, v, 8);
}

static inline __m512d negate(__m512d v)
{
    return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(v),
                                                _mm512_set1_epi64((long long)0x8000000000000000ull)));
}

/* f of pbd_project_stretch for 8 edges (lanes where ok is clear are not used). */
static inline __m512d stretch_factor(const pbd_solve* s, uint32_t i, __m512d C, __m512d wa,
                                     __m512d wb, __m512d len, __mmask8 ok)
{
    if (!s->xpbd)
        return _mm512_div_pd(_mm512_mul_pd(_mm512_set1_pd(-s->stretch_k), C),
                             _mm512_mul_pd(_mm512_add_pd(wa, wb), len));
    __m512d at = _mm512_loadu_pd(s->c->stretch_alpha + i);
    __m512d lambda = _mm512_loadu_pd(s->stretch_lambda + i);
    __m512d f = _mm512_div_pd(_mm512_sub_pd(negate(C), _mm512_mul_pd(at, lambda)),
                              _mm512_mul_pd(_mm512_add_pd(_mm512_add_pd(wa, wb), at), len));
    _mm512_mask_storeu_pd(s->stretch_lambda + i, ok,
                          _mm512_add_pd(lambda, _mm512_mul_pd(f, len)));
    return f;
}

void pbd_stretch_avx512(const pbd_solve* s, uint32_t first, uint32_t last)
{
    const pbd_constraints* c = s->c;
    double* col[3] = {s->x, s->x + s->N, s->x + 2u * (size_t)s->N};
    uint32_t i = first;
    for (; i + 8u <= last; i += 8u) {
        __m256i a = _mm256_loadu_si256((const __m256i*)(c->stretch_a + i));
        __m256i b = _mm256_loadu_si256((const __m256i*)(c->stretch_b + i));
        __m512d wa = gather(c->inv_mass, a), wb = gather(c->inv_mass, b);
        __m512d xa[3], xb[3], d[3];
        for (int q = 0; q < 3; ++q) {
            xa[q] = gather(col[q], a);
            xb[q] = gather(col[q], b);
            d[q] = _mm512_sub_pd(xa[q], xb[q]);
        }
        __m512d len = _mm512_sqrt_pd(_mm512_add_pd(
            _mm512_add_pd(_mm512_mul_pd(d[0], d[0]), _mm512_mul_pd(d[1], d[1])),
            _mm512_mul_pd(d[2], d[2])));
        __mmask8 ok = _mm512_cmp_pd_mask(len, _mm512_setzero_pd(), _CMP_GT_OQ);
        if (!ok) continue;
        __m512d C = _mm512_sub_pd(len, _mm512_loadu_pd(c->stretch_rest + i));
        __m512d f = stretch_factor(s, i, C, wa, wb, len, ok);
        __m512d fa = _mm512_mul_pd(wa, f), fb = _mm512_mul_pd(wb, f);
        for (int q = 0; q < 3; ++q) {
            scatter(col[q], ok, a, _mm512_add_pd(xa[q], _mm512_mul_pd(fa, d[q])));
            scatter(col[q], ok, b, _mm512_sub_pd(xb[q], _mm512_mul_pd(fb, d[q])));
        }
    }
    pbd_stretch_scalar(s, i, last);
}

static inline void cross(const __m512d a[3], const __m512d b[3], __m512d out[3])
{
    out[0] = _mm512_sub_pd(_mm512_mul_pd(a[1], b[2]), _mm512_mul_pd(a[2], b[1]));
    out[1] = _mm512_sub_pd(_mm512_mul_pd(a[2], b[0]), _mm512_mul_pd(a[0], b[2]));
    out[2] = _mm512_sub_pd(_mm512_mul_pd(a[0], b[1]), _mm512_mul_pd(a[1], b[0]));
}

/* 6 V and its gradients (pbd_tet_volume6) for 8 tets of corners x. */
static inline __m512d volume6(__m512d x[4][3], __m512d g[4][3])
{
    __m512d e[3][3];
    for (int k = 0; k < 3; ++k)
        for (int q = 0; q < 3; ++q) e[k][q] = _mm512_sub_pd(x[k + 1][q], x[0][q]);
    cross(e[0], e[1], g[3]);
    __m512d v = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(g[3][0], e[2][0]),
                                            _mm512_mul_pd(g[3][1], e[2][1])),
                              _mm512_mul_pd(g[3][2], e[2][2]));
    cross(e[1], e[2], g[1]);
    cross(e[2], e[0], g[2]);
    for (int q = 0; q < 3; ++q)
        g[0][q] = negate(_mm512_add_pd(_mm512_add_pd(g[1][q], g[2][q]), g[3][q]));
    return v;
}

/* dl of pbd_project_volume for 8 tets (lanes where ok is clear are not used). */
static inline __m512d volume_step(const pbd_solve* s, uint32_t i, __m512d C, __m512d denom,
                                  __mmask8 ok)
{
    if (!s->xpbd)
        return _mm512_div_pd(_mm512_mul_pd(_mm512_set1_pd(-s->volume_k), C), denom);
    __m512d at = _mm512_loadu_pd(s->c->volume_alpha + i);
    __m512d lambda = _mm512_loadu_pd(s->volume_lambda + i);
    __m512d dl = _mm512_div_pd(_mm512_sub_pd(negate(C), _mm512_mul_pd(at, lambda)),
                               _mm512_add_pd(denom, at));
    _mm512_mask_storeu_pd(s->volume_lambda + i, ok, _mm512_add_pd(lambda, dl));
    return dl;
}

void pbd_volume_avx512(const pbd_solve* s, uint32_t first, uint32_t last)
{
    const pbd_constraints* c = s->c;
    double* col[3] = {s->x, s->x + s->N, s->x + 2u * (size_t)s->N};
    uint32_t i = first;
    for (; i + 8u <= last; i += 8u) {
        __m256i p[4];
        __m512d w[4], x[4][3], g[4][3];
        for (int k = 0; k < 4; ++k) {
            p[k] = _mm256_loadu_si256((const __m256i*)(c->volume_p[k] + i));
            w[k] = gather(c->inv_mass, p[k]);
            for (int q = 0; q < 3; ++q) x[k][q] = gather(col[q], p[k]);
        }
        __m512d C = _mm512_sub_pd(volume6(x, g), _mm512_loadu_pd(c->volume_rest + i));
        __m512d denom = _mm512_setzero_pd();
        for (int k = 0; k < 4; ++k) {
            __m512d g2 = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(g[k][0], g[k][0]),
                                                     _mm512_mul_pd(g[k][1], g[k][1])),
                                       _mm512_mul_pd(g[k][2], g[k][2]));
            denom = _mm512_add_pd(denom, _mm512_mul_pd(w[k], g2));
        }
        __mmask8 ok = _mm512_cmp_pd_mask(denom, _mm512_setzero_pd(), _CMP_GT_OQ);
        if (!ok) continue;
        __m512d dl = volume_step(s, i, C, denom, ok);
        for (int k = 0; k < 4; ++k) {
            __m512d f = _mm512_mul_pd(w[k], dl);
            for (int q = 0; q < 3; ++q)
                scatter(col[q], ok, p[k], _mm512_add_pd(x[k][q], _mm512_mul_pd(f, g[k][q])));
        }
    }
    pbd_volume_scalar(s, i, last);
}
