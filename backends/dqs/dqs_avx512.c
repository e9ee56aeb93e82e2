/* Dual quaternion skinning with AVX-512F on batches of sixteen vertices in
 * structure-of-arrays form, one zmm per component (see dqs_x86.h). A zmm row holds the
 * 8-float records of two vertices, and one 8x8 transpose of eight rows turns sixteen records
 * into eight components. Rows i = 0-3 hold vertices 4i and 4i+1, rows 4+i vertices 4i+2 and
 * 4i+3, which puts vertex 4e + g in lane 4g + e of every component register: the order in
 * which a 4x4 transpose within 128-bit lanes leaves four loaded rows of four weights. A full
 * batch thus reads its rest records and (at width 4) its weights with plain contiguous loads.
 * Built with -mavx512f, called only when the CPU has it. SPDX-License-Identifier: MIT */
#include "dqs_kernels.h"

#if defined(SINEW_SKIN_X86)
#include <immintrin.h>

#include "dqs_x86.h"

/* Vertex of row i's half h (0: low 256 bits, 1: high) within the batch. */
#define DQS_AVX512_ROW_VERTEX(i, h) ((i) < 4u ? 4u * (i) + (h) : 4u * ((i) - 4u) + 2u + (h))

/* Rows r[i] = [record of vertex A | record of vertex B] (8 floats each) become components
 * r[c] = element c of all sixteen records; applied to components, it gives records back,
 * with row i = [x y z w of A | of B | element 4-7 of A | of B] (see dqs_avx512_batch). */
SINEW_FORCE_INLINE void dqs_avx512_transpose(__m512 r[8])
{
    __m512 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h + 0] = _mm512_shuffle_ps(t[h + 0], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[h + 1] = _mm512_shuffle_ps(t[h + 0], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[h + 2] = _mm512_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[h + 3] = _mm512_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int e = 0; e < 4; ++e) {
        r[e] = _mm512_shuffle_f32x4(u[e], u[4 + e], _MM_SHUFFLE(2, 0, 2, 0));
        r[4 + e] = _mm512_shuffle_f32x4(u[e], u[4 + e], _MM_SHUFFLE(3, 1, 3, 1));
    }
}

/* Two 8-float records as one zmm row. */
SINEW_FORCE_INLINE __m512 dqs_avx512_row(const float* a, const float* b)
{
    return _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm256_load_ps(a))),
                           _mm256_castps_pd(_mm256_load_ps(b)), 1));
}

/* The weights of influences k..k+3 of the batch's sixteen vertices (rows of `width` weights
 * from w, vertex i at row dqs_x86_index(0, i, count)), one zmm per influence in the batch's
 * vertex order, zero past the width. Register a[i] holds the rows of vertices 4i .. 4i+3, one
 * per 128-bit lane: at width 4 in a full batch, the 64 floats at w as they are. */
SINEW_FORCE_INLINE void dqs_avx512_weights4(const float* w, uint32_t count, uint32_t k,
                                            uint32_t width, __m512 out[4])
{
    __m512 a[4];
    if (width == 4u && count == 16u) {
        for (int i = 0; i < 4; ++i) a[i] = _mm512_loadu_ps(w + 16 * i);
    } else {
        for (uint32_t i = 0; i < 4u; ++i) {
            __m128 l[4];
            for (uint32_t g = 0; g < 4u; ++g) {
                const float* row = w + (size_t)dqs_x86_index(0u, 4u * i + g, count) * width;
                if (k + 4u <= width) {
                    l[g] = _mm_loadu_ps(row + k);
                } else {
                    float t[4];
                    for (uint32_t j = 0; j < 4u; ++j) t[j] = k + j < width ? row[k + j] : 0.0f;
                    l[g] = _mm_loadu_ps(t);
                }
            }
            a[i] = _mm512_insertf32x4(_mm512_castps128_ps512(l[0]), l[1], 1);
            a[i] = _mm512_insertf32x4(a[i], l[2], 2);
            a[i] = _mm512_insertf32x4(a[i], l[3], 3);
        }
    }
    __m512 t0 = _mm512_unpacklo_ps(a[0], a[1]), t1 = _mm512_unpacklo_ps(a[2], a[3]);
    __m512 t2 = _mm512_unpackhi_ps(a[0], a[1]), t3 = _mm512_unpackhi_ps(a[2], a[3]);
    out[0] = _mm512_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0));
    out[1] = _mm512_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
    out[2] = _mm512_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0));
    out[3] = _mm512_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

/* The dual quaternions of influence k of the batch's sixteen vertices (rows of `width`
 * offsets from o), one zmm per component. For a full batch (count a constant 16) every row is
 * a constant displacement from o. */
SINEW_FORCE_INLINE void dqs_avx512_load16(const float* transforms, const uint32_t* o,
                                          uint32_t count, uint32_t k, uint32_t width, __m512 q[8])
{
#define DQS_AT(i) (transforms + o[(size_t)dqs_x86_index(0u, (i), count) * width + k])
    for (uint32_t i = 0; i < 8u; ++i)
        q[i] = dqs_avx512_row(DQS_AT(DQS_AVX512_ROW_VERTEX(i, 0u)),
                              DQS_AT(DQS_AVX512_ROW_VERTEX(i, 1u)));
#undef DQS_AT
    dqs_avx512_transpose(q);
}

/* Blends the dual quaternions of the batch's sixteen vertices (rows of `width` offsets from o
 * and weights from w) into b[0..7], one zmm per component. */
SINEW_FORCE_INLINE void dqs_avx512_blend16(const float* transforms, const uint32_t* o,
                                           const float* w, uint32_t count, uint32_t width,
                                           __m512 b[8])
{
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    __m512 wk[4], q[8], r0[4];
    dqs_avx512_weights4(w, count, 0u, width, wk);
    dqs_avx512_load16(transforms, o, count, 0u, width, q);
    for (int c = 0; c < 4; ++c) r0[c] = q[c];
    for (int c = 0; c < 8; ++c) b[c] = _mm512_mul_ps(wk[0], q[c]);
    for (uint32_t k = 1; k < width; ++k) {
        if ((k & 3u) == 0) dqs_avx512_weights4(w, count, k, width, wk);
        /* An influence no vertex of the batch has (padding, mostly) is skipped, and lanes of
         * zero weight keep their blend as it is (see dqs_kernels.h). */
        __mmask16 live = _mm512_cmp_ps_mask(wk[k & 3u], _mm512_setzero_ps(), _CMP_NEQ_UQ);
        if (!live) continue;
        dqs_avx512_load16(transforms, o, count, k, width, q);
        /* The scalar kernel's dot product, unfused and in its order. Adding +0 turns a -0
         * into +0, so that its sign bit is set exactly where d < 0; one bitwise operation
         * then moves it into the weight (w ^ (d & sign)). */
        __m512 d =
            _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(q[0], r0[0]), _mm512_mul_ps(q[1], r0[1])),
                          _mm512_add_ps(_mm512_mul_ps(q[2], r0[2]), _mm512_mul_ps(q[3], r0[3])));
        d = _mm512_add_ps(d, _mm512_setzero_ps());
        __m512 sw = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
            _mm512_castps_si512(wk[k & 3u]), _mm512_castps_si512(d), sign, 0x78));
        for (int c = 0; c < 8; ++c) b[c] = _mm512_mask3_fmadd_ps(sw, q[c], b[c], live);
    }
}

/* Index vectors that interleave three component registers (x, y, z of the sixteen vertices in
 * the batch's order) into the 48 floats x y z x y z ... of a packed array:
 * out_r = permutex2var(permutex2var(x, a[r], y), b[r], z) for r = 0, 1, 2. */
typedef struct dqs_avx512_packing {
    __m512i a[3], b[3];
} dqs_avx512_packing;

static inline dqs_avx512_packing dqs_avx512_packing_make(void)
{
    dqs_avx512_packing k;
    for (int r = 0; r < 3; ++r) {
        int32_t a[16], b[16];
        for (int i = 0; i < 16; ++i) {
            int f = 16 * r + i, c = f % 3, v = f / 3, lane = 4 * (v % 4) + v / 4;
            a[i] = c == 0 ? lane : c == 1 ? 16 + lane : 0; /* x or y; z comes next */
            b[i] = c == 2 ? 16 + lane : i;
        }
        k.a[r] = _mm512_loadu_si512((const void*)a);
        k.b[r] = _mm512_loadu_si512((const void*)b);
    }
    return k;
}

/* Writes x y z of the sixteen vertices as 48 packed floats at dst. */
SINEW_FORCE_INLINE void dqs_avx512_store_packed(float* dst, const dqs_avx512_packing* k,
                                                const __m512 c[3])
{
    for (int r = 0; r < 3; ++r)
        _mm512_storeu_ps(
            dst + 16 * r,
            _mm512_permutex2var_ps(_mm512_permutex2var_ps(c[0], k->a[r], c[1]), k->b[r], c[2]));
}

/* 1/s from the 14-bit estimate and one Newton step. */
SINEW_FORCE_INLINE __m512 dqs_avx512_rcp(__m512 s)
{
    __m512 y = _mm512_rcp14_ps(s);
    return _mm512_fmadd_ps(y, _mm512_fnmadd_ps(s, y, _mm512_set1_ps(1.0f)), y);
}

/* 1/sqrt(s) from the 14-bit estimate and one Newton step. */
SINEW_FORCE_INLINE __m512 dqs_avx512_rsqrt(__m512 s)
{
    __m512 y = _mm512_rsqrt14_ps(s);
    __m512 u = _mm512_fnmadd_ps(_mm512_mul_ps(s, y), y, _mm512_set1_ps(1.0f));
    return _mm512_fmadd_ps(_mm512_mul_ps(y, _mm512_set1_ps(0.5f)), u, y);
}

/* Skins the batch of sixteen vertices starting at v, of which `count` are stored. */
SINEW_FORCE_INLINE void dqs_avx512_batch(const sinew_skin_job* job, const dqs_avx512_packing* pk,
                                         uint32_t v, uint32_t count, uint32_t end, uint32_t width,
                                         bool write_positions, bool write_normals)
{
    __m512 q[8], x[8];
    const float* rest = job->rest + 8u * (size_t)v;
    if (count == 16u) {
        for (uint32_t i = 0; i < 8u; ++i)
            x[i] = _mm512_loadu_ps(rest + 8u * DQS_AVX512_ROW_VERTEX(i, 0u));
    } else {
        for (uint32_t i = 0; i < 8u; ++i) {
            uint32_t a = dqs_x86_index(0u, DQS_AVX512_ROW_VERTEX(i, 0u), count);
            uint32_t b = dqs_x86_index(0u, DQS_AVX512_ROW_VERTEX(i, 1u), count);
            x[i] = dqs_avx512_row(rest + 8u * a, rest + 8u * b);
        }
    }
    /* q: b_r = x y z w, b_e = e.x e.y e.z e.w; x: p.x p.y p.z 1 n.x n.y n.z 0. */
    dqs_avx512_blend16(job->transforms, job->offsets + (size_t)v * width,
                       job->weights + (size_t)v * width, count, width, q);
    dqs_avx512_transpose(x);
    /* Elements 3 and 7 are not needed: zero, their part of the transpose is dead code. */
    x[3] = x[7] = _mm512_setzero_ps();
    /* s = 2 / |b_r|^2, and R = I + s (w [v]x + [v]x^2) from the scaled x2 y2 z2 = s v. */
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 n2 = _mm512_fmadd_ps(
        q[0], q[0],
        _mm512_fmadd_ps(q[1], q[1], _mm512_fmadd_ps(q[2], q[2], _mm512_mul_ps(q[3], q[3]))));
    __m512 s = dqs_avx512_rcp(n2);
    s = _mm512_add_ps(s, s);
    __m512 x2 = _mm512_mul_ps(q[0], s), y2 = _mm512_mul_ps(q[1], s), z2 = _mm512_mul_ps(q[2], s);
    __m512 wx = _mm512_mul_ps(q[3], x2), wy = _mm512_mul_ps(q[3], y2), wz = _mm512_mul_ps(q[3], z2);
    __m512 m00 = _mm512_fnmadd_ps(q[1], y2, _mm512_fnmadd_ps(q[2], z2, one));
    __m512 m11 = _mm512_fnmadd_ps(q[0], x2, _mm512_fnmadd_ps(q[2], z2, one));
    __m512 m22 = _mm512_fnmadd_ps(q[0], x2, _mm512_fnmadd_ps(q[1], y2, one));
    __m512 m01 = _mm512_fmsub_ps(q[0], y2, wz), m10 = _mm512_fmadd_ps(q[0], y2, wz);
    __m512 m02 = _mm512_fmadd_ps(q[0], z2, wy), m20 = _mm512_fmsub_ps(q[0], z2, wy);
    __m512 m12 = _mm512_fmsub_ps(q[1], z2, wx), m21 = _mm512_fmadd_ps(q[1], z2, wx);
    if (write_positions) {
        /* t = s (w e_v - e_w v + v x e_v) = w2 e_v - e_w (x2 y2 z2) + (x2 y2 z2) x e_v. */
        __m512 w2 = _mm512_mul_ps(q[3], s);
        __m512 tx = _mm512_fmsub_ps(y2, q[6], _mm512_mul_ps(z2, q[5]));
        __m512 ty = _mm512_fmsub_ps(z2, q[4], _mm512_mul_ps(x2, q[6]));
        __m512 tz = _mm512_fmsub_ps(x2, q[5], _mm512_mul_ps(y2, q[4]));
        tx = _mm512_fnmadd_ps(q[7], x2, _mm512_fmadd_ps(w2, q[4], tx));
        ty = _mm512_fnmadd_ps(q[7], y2, _mm512_fmadd_ps(w2, q[5], ty));
        tz = _mm512_fnmadd_ps(q[7], z2, _mm512_fmadd_ps(w2, q[6], tz));
        __m512 px = x[0], py = x[1], pz = x[2];
        x[0] = _mm512_fmadd_ps(m00, px, _mm512_fmadd_ps(m01, py, _mm512_fmadd_ps(m02, pz, tx)));
        x[1] = _mm512_fmadd_ps(m10, px, _mm512_fmadd_ps(m11, py, _mm512_fmadd_ps(m12, pz, ty)));
        x[2] = _mm512_fmadd_ps(m20, px, _mm512_fmadd_ps(m21, py, _mm512_fmadd_ps(m22, pz, tz)));
    }
    if (write_normals) {
        __m512 ux = x[4], uy = x[5], uz = x[6];
        __m512 nx = _mm512_fmadd_ps(m00, ux, _mm512_fmadd_ps(m01, uy, _mm512_mul_ps(m02, uz)));
        __m512 ny = _mm512_fmadd_ps(m10, ux, _mm512_fmadd_ps(m11, uy, _mm512_mul_ps(m12, uz)));
        __m512 nz = _mm512_fmadd_ps(m20, ux, _mm512_fmadd_ps(m21, uy, _mm512_mul_ps(m22, uz)));
        __m512 l2 = _mm512_fmadd_ps(nx, nx, _mm512_fmadd_ps(ny, ny, _mm512_mul_ps(nz, nz)));
        __mmask16 ok = _mm512_cmp_ps_mask(l2, _mm512_set1_ps(SINEW_SKIN_MIN_NORMAL_SQ), _CMP_GT_OQ);
        __m512 inv = dqs_avx512_rsqrt(l2);
        x[4] = _mm512_maskz_mul_ps(ok, nx, inv);
        x[5] = _mm512_maskz_mul_ps(ok, ny, inv);
        x[6] = _mm512_maskz_mul_ps(ok, nz, inv);
    }
    /* A full batch into a packed array: three permuted stores per array. Otherwise back to
     * records, stored one by one in vertex order (a 16-byte store may run into the next
     * vertex, which must come later). */
    bool strided_positions = write_positions, strided_normals = write_normals;
    if (write_positions && count == 16u && job->position_stride == 12u) {
        dqs_avx512_store_packed(job->positions + 3u * (size_t)v, pk, x);
        strided_positions = false;
    }
    if (write_normals && count == 16u && job->normal_stride == 12u) {
        dqs_avx512_store_packed(job->normals + 3u * (size_t)v, pk, x + 4);
        strided_normals = false;
    }
    if (!strided_positions && !strided_normals) return;
    dqs_avx512_transpose(x);
    /* Row i holds vertices A = DQS_AVX512_ROW_VERTEX(i, 0) and B = A + 2 in its 128-bit
     * lanes as [p(A) | p(B) | n(A) | n(B)]. */
    _Alignas(64) float rec[8][16];
    for (int i = 0; i < 8; ++i) _mm512_store_ps(rec[i], x[i]);
    for (uint32_t j = 0; j < count; ++j) {
        const float* r = rec[(j & 1u) ? 4u + j / 4u : j / 4u] + ((j & 2u) ? 4u : 0u);
        if (strided_positions)
            sinew_sse_store_at(job->positions, job->position_stride, v + j, end, _mm_load_ps(r));
        if (strided_normals)
            sinew_sse_store_at(job->normals, job->normal_stride, v + j, end, _mm_load_ps(r + 8));
    }
}

SINEW_FORCE_INLINE void dqs_avx512_range(const sinew_skin_job* job_in, uint32_t begin, uint32_t end,
                                         uint32_t width, bool write_positions, bool write_normals)
{
    const sinew_skin_job job = *job_in; /* cannot alias the outputs: stays in registers */
    const dqs_avx512_packing pk = dqs_avx512_packing_make();
    uint32_t v = begin;
    /* Full batches with a constant count (constant row displacements), then the rest. */
    for (; end - v >= 16u; v += 16u)
        dqs_avx512_batch(&job, &pk, v, 16u, end, width, write_positions, write_normals);
    if (v < end)
        dqs_avx512_batch(&job, &pk, v, end - v, end, width, write_positions, write_normals);
}

void sinew_dqs_kernel_avx512(const sinew_skin_job* job, uint32_t begin, uint32_t end)
{
    SINEW_SKIN_DISPATCH(dqs_avx512_range, job, begin, end);
}
#endif
