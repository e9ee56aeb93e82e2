/* The projections of pbd_kernels.h with AVX-512F (built with -mavx512f, run after a CPU check):
 * 16 constraints of one colour per vector, their particles gathered from the position columns
 * and scattered back (no two share a particle), every operation that of the scalar kernel in
 * the same order, so the bits are the scalar ones; a constraint the scalar kernel skips is
 * masked out of the stores. The remainder of a range goes through the scalar kernel.
 * SPDX-License-Identifier: MIT */
#include <immintrin.h>

#include "pbd_kernels.h"

static inline __m512 gather(const float* base, __m512i index)
{
    return _mm512_i32gather_ps(index, base, 4);
}

static inline void scatter(float* base, __mmask16 mask, __m512i index, __m512 v)
{
    _mm512_mask_i32scatter_ps(base, mask, index, v, 4);
}

static inline __m512 negate(__m512 v)
{
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v),
                                                _mm512_set1_epi32((int)0x80000000u)));
}

static inline __m512 load(const float* p)
{
    return _mm512_loadu_ps(p);
}

static inline __m512i load_index(const uint32_t* p)
{
    return _mm512_loadu_si512((const void*)p);
}

/* f of pbd_project_stretch for 16 edges (lanes where ok is clear are not used). */
static inline __m512 stretch_factor(const pbd_solve* s, uint32_t i, __m512 C, __m512 wa,
                                    __m512 wb, __m512 len, __mmask16 ok)
{
    if (!s->xpbd)
        return _mm512_div_ps(_mm512_mul_ps(_mm512_set1_ps(-s->stretch_k), C),
                             _mm512_mul_ps(_mm512_add_ps(wa, wb), len));
    __m512 at = load(s->c->stretch_alpha + i);
    __m512 lambda = load(s->stretch_lambda + i);
    __m512 f = _mm512_div_ps(_mm512_sub_ps(negate(C), _mm512_mul_ps(at, lambda)),
                             _mm512_mul_ps(_mm512_add_ps(_mm512_add_ps(wa, wb), at), len));
    _mm512_mask_storeu_ps(s->stretch_lambda + i, ok, _mm512_add_ps(lambda, _mm512_mul_ps(f, len)));
    return f;
}

void pbd_stretch_avx512(const pbd_solve* s, uint32_t first, uint32_t last)
{
    const pbd_constraints* c = s->c;
    float* col[3] = {s->x, s->x + s->N, s->x + 2u * (size_t)s->N};
    uint32_t i = first;
    for (; i + 16u <= last; i += 16u) {
        __m512i a = load_index(c->stretch_a + i), b = load_index(c->stretch_b + i);
        __m512 wa = load(c->stretch_w[0] + i), wb = load(c->stretch_w[1] + i);
        __m512 xa[3], xb[3], d[3];
        for (int q = 0; q < 3; ++q) {
            xa[q] = gather(col[q], a);
            xb[q] = gather(col[q], b);
            d[q] = _mm512_sub_ps(xa[q], xb[q]);
        }
        __m512 len = _mm512_sqrt_ps(_mm512_add_ps(
            _mm512_add_ps(_mm512_mul_ps(d[0], d[0]), _mm512_mul_ps(d[1], d[1])),
            _mm512_mul_ps(d[2], d[2])));
        __mmask16 ok = _mm512_cmp_ps_mask(len, _mm512_setzero_ps(), _CMP_GT_OQ);
        if (!ok) continue;
        __m512 C = _mm512_sub_ps(len, load(c->stretch_rest + i));
        __m512 f = stretch_factor(s, i, C, wa, wb, len, ok);
        __m512 fa = _mm512_mul_ps(wa, f), fb = _mm512_mul_ps(wb, f);
        for (int q = 0; q < 3; ++q) {
            scatter(col[q], ok, a, _mm512_add_ps(xa[q], _mm512_mul_ps(fa, d[q])));
            scatter(col[q], ok, b, _mm512_sub_ps(xb[q], _mm512_mul_ps(fb, d[q])));
        }
    }
    pbd_stretch_scalar(s, i, last);
}

static inline void cross(const __m512 a[3], const __m512 b[3], __m512 out[3])
{
    out[0] = _mm512_sub_ps(_mm512_mul_ps(a[1], b[2]), _mm512_mul_ps(a[2], b[1]));
    out[1] = _mm512_sub_ps(_mm512_mul_ps(a[2], b[0]), _mm512_mul_ps(a[0], b[2]));
    out[2] = _mm512_sub_ps(_mm512_mul_ps(a[0], b[1]), _mm512_mul_ps(a[1], b[0]));
}

/* 6 V and its gradients (pbd_tet_volume6) for 16 tets of corners x. */
static inline __m512 volume6(__m512 x[4][3], __m512 g[4][3])
{
    __m512 e[3][3];
    for (int k = 0; k < 3; ++k)
        for (int q = 0; q < 3; ++q) e[k][q] = _mm512_sub_ps(x[k + 1][q], x[0][q]);
    cross(e[0], e[1], g[3]);
    __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(g[3][0], e[2][0]),
                                           _mm512_mul_ps(g[3][1], e[2][1])),
                             _mm512_mul_ps(g[3][2], e[2][2]));
    cross(e[1], e[2], g[1]);
    cross(e[2], e[0], g[2]);
    for (int q = 0; q < 3; ++q)
        g[0][q] = negate(_mm512_add_ps(_mm512_add_ps(g[1][q], g[2][q]), g[3][q]));
    return v;
}

/* dl of pbd_project_volume for 16 tets (lanes where ok is clear are not used). */
static inline __m512 volume_step(const pbd_solve* s, uint32_t i, __m512 C, __m512 denom,
                                 __mmask16 ok)
{
    if (!s->xpbd)
        return _mm512_div_ps(_mm512_mul_ps(_mm512_set1_ps(-s->volume_k), C), denom);
    __m512 at = load(s->c->volume_alpha + i);
    __m512 lambda = load(s->volume_lambda + i);
    __m512 dl = _mm512_div_ps(_mm512_sub_ps(negate(C), _mm512_mul_ps(at, lambda)),
                              _mm512_add_ps(denom, at));
    _mm512_mask_storeu_ps(s->volume_lambda + i, ok, _mm512_add_ps(lambda, dl));
    return dl;
}

void pbd_volume_avx512(const pbd_solve* s, uint32_t first, uint32_t last)
{
    const pbd_constraints* c = s->c;
    float* col[3] = {s->x, s->x + s->N, s->x + 2u * (size_t)s->N};
    uint32_t i = first;
    for (; i + 16u <= last; i += 16u) {
        __m512i p[4];
        __m512 w[4], x[4][3], g[4][3];
        for (int k = 0; k < 4; ++k) {
            p[k] = load_index(c->volume_p[k] + i);
            w[k] = load(c->volume_w[k] + i);
            for (int q = 0; q < 3; ++q) x[k][q] = gather(col[q], p[k]);
        }
        __m512 C = _mm512_sub_ps(volume6(x, g), load(c->volume_rest + i));
        __m512 denom = _mm512_setzero_ps();
        for (int k = 0; k < 4; ++k) {
            __m512 g2 = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(g[k][0], g[k][0]),
                                                    _mm512_mul_ps(g[k][1], g[k][1])),
                                      _mm512_mul_ps(g[k][2], g[k][2]));
            denom = _mm512_add_ps(denom, _mm512_mul_ps(w[k], g2));
        }
        __mmask16 ok = _mm512_cmp_ps_mask(denom, _mm512_setzero_ps(), _CMP_GT_OQ);
        if (!ok) continue;
        __m512 dl = volume_step(s, i, C, denom, ok);
        for (int k = 0; k < 4; ++k) {
            __m512 f = _mm512_mul_ps(w[k], dl);
            for (int q = 0; q < 3; ++q)
                scatter(col[q], ok, p[k], _mm512_add_ps(x[k][q], _mm512_mul_ps(f, g[k][q])));
        }
    }
    pbd_volume_scalar(s, i, last);
}
