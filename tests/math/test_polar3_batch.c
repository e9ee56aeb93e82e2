/* The batched polar decomposition (polar3_batch.h): every kernel this CPU runs returns, for
 * 10^4 matrices of every kind (stretched, flat, inverted, rank 0-2, extreme scales), the bits
 * of the scalar kernel and within 1e-5 of the inline sinew_polar3; ranges, tails, strides and
 * in-place batches touch exactly [begin, end); bad arguments get their error code and one log
 * line. SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math_test_util.h"
#include "polar3.h"
#include "polar3_batch.h"

#define MATRICES 10000
#define SENTINEL 12345.0f

static const sinew_simd all_isas[] = {SINEW_SIMD_SCALAR, SINEW_SIMD_SSE41, SINEW_SIMD_AVX2,
                                      SINEW_SIMD_AVX512, SINEW_SIMD_AUTO};

/* Matrix n of a mix in which about a third needs the SVD path, in runs and scattered, so that
 * SIMD blocks see every combination of Newton and SVD lanes. */
static void mixed_matrix(math_rng* rng, uint32_t n, float F[9])
{
    static const float odd[] = {0.0f, 1e-40f, -1e-42f, FLT_MIN, 1.0f, -1e-20f, 1e30f, -3.0f};
    uint32_t kind = (n / 37) % 2 ? (uint32_t)(math_rng_next(rng) % 12) : n % 12;
    double s[3];
    switch (kind) {
    case 0: /* projective-dynamics-like stretch */
    case 1:
    case 2:
        for (int k = 0; k < 3; ++k) s[k] = math_rng_range(rng, 0.8, 1.2);
        math_matrix_from_svd(rng, s, F, NULL);
        break;
    case 3: /* strong stretch */
        for (int k = 0; k < 3; ++k) s[k] = math_rng_range(rng, 0.05, 3.0);
        math_matrix_from_svd(rng, s, F, NULL);
        break;
    case 4: /* flat: det below 1e-5 */
        s[0] = math_rng_range(rng, 0.5, 1.5);
        s[1] = math_rng_range(rng, 0.5, 1.5);
        s[2] = math_rng_range(rng, 0.0, 5e-6);
        math_matrix_from_svd(rng, s, F, NULL);
        break;
    case 5: /* inverted */
        s[0] = math_rng_range(rng, 0.5, 1.5);
        s[1] = math_rng_range(rng, 0.5, 1.5);
        s[2] = -math_rng_range(rng, 0.0, 1.0);
        math_matrix_from_svd(rng, s, F, NULL);
        break;
    case 6: /* rank 1 */
        s[0] = math_rng_range(rng, 0.1, 2.0);
        s[1] = s[2] = 0.0;
        math_matrix_from_svd(rng, s, F, NULL);
        break;
    case 7: /* zero */
        memset(F, 0, 9 * sizeof(float));
        break;
    case 8: /* uniform entries */
        for (int k = 0; k < 9; ++k) F[k] = (float)math_rng_range(rng, -1.0, 1.0);
        break;
    case 9: /* extreme scales */
        for (int k = 0; k < 3; ++k) s[k] = math_rng_range(rng, 0.3, 2.0);
        math_matrix_from_svd(rng, s, F, NULL);
        for (int k = 0; k < 9; ++k) F[k] *= (n % 2) ? 1e-25f : 1e25f;
        break;
    case 10: /* mixed magnitudes and denormals */
        for (int k = 0; k < 9; ++k) F[k] = odd[math_rng_next(rng) % 8];
        break;
    default: /* positive det but very badly conditioned */
        s[0] = 1e3;
        s[1] = math_rng_range(rng, 1e-3, 1.0);
        s[2] = math_rng_range(rng, 1e-6, 1e-3);
        math_matrix_from_svd(rng, s, F, NULL);
        break;
    }
}

/* F as structure of arrays with `stride`, sentinels past `count`. */
static float* make_soa(uint32_t count, size_t stride, uint64_t seed)
{
    float* F = malloc(9 * stride * sizeof(float));
    assert_non_null(F);
    for (size_t e = 0; e < 9 * stride; ++e) F[e] = SENTINEL;
    math_rng rng = {seed};
    for (uint32_t i = 0; i < count; ++i) {
        float m[9];
        mixed_matrix(&rng, i, m);
        for (int k = 0; k < 9; ++k) F[(size_t)k * stride + i] = m[k];
    }
    return F;
}

static void get_matrix(const float* soa, size_t stride, uint32_t i, float m[9])
{
    for (int k = 0; k < 9; ++k) m[k] = soa[(size_t)k * stride + i];
}

/* Every kernel this CPU runs, on the full mix: the scalar kernel's bits, the inline
 * sinew_polar3 within 1e-5, and a finite rotation everywhere. */
static void test_kernels_match_scalar(void** state)
{
    (void)state;
    const size_t stride = MATRICES + 5;
    float* F = make_soa(MATRICES, stride, 21);
    float* Rref = malloc(9 * stride * sizeof(float));
    float* R = malloc(9 * stride * sizeof(float));
    assert_non_null(Rref);
    assert_non_null(R);
    sinew_polar3_batch_scalar(F, Rref, stride, 0, MATRICES);
    uint32_t svd = 0;
    for (uint32_t i = 0; i < MATRICES; ++i) {
        float m[9], r[9], inl[9];
        get_matrix(F, stride, i, m);
        get_matrix(Rref, stride, i, r);
        svd += (uint32_t)sinew_polar3(m, inl);
        math_assert_le(math_max_diff(r, inl, 9), 1e-5, "scalar kernel vs sinew_polar3", i);
        if (!math_all_finite(r, 9)) fail_msg("non-finite R for matrix %u", i);
        math_assert_le(math_rotation_error(r), 1e-5, "scalar kernel rotation", i);
    }
    /* The mix must exercise both paths substantially. */
    assert_true(svd > MATRICES / 5 && svd < MATRICES * 4 / 5);
    int ran = 0;
    for (size_t s = 0; s < sizeof all_isas / sizeof all_isas[0]; ++s) {
        sinew_polar3_batch_fn fn = sinew_polar3_batch_kernel(all_isas[s]);
        if (!fn) {
            print_message("kernel %s: not run by this CPU or build\n",
                          sinew_simd_name(all_isas[s]));
            continue;
        }
        ++ran;
        memset(R, 0, 9 * stride * sizeof(float));
        fn(F, R, stride, 0, MATRICES);
        for (uint32_t i = 0; i < MATRICES; ++i) {
            float a[9], b[9];
            get_matrix(R, stride, i, a);
            get_matrix(Rref, stride, i, b);
            if (memcmp(a, b, sizeof a) != 0)
                fail_msg("kernel %s: matrix %u differs from the scalar kernel by %g",
                         sinew_simd_name(all_isas[s]), i, math_max_diff(a, b, 9));
        }
    }
    assert_true(ran >= 2); /* scalar and SSE41 (scalar) at least */
    free(F);
    free(Rref);
    free(R);
}

/* Ranges of every length around the vector widths, at every offset modulo 32, with strides
 * larger than the data: exactly [begin, end) is written. Also in place. */
static void test_ranges_and_in_place(void** state)
{
    (void)state;
    const uint32_t count = 200;
    const size_t stride = 211;
    float* F = make_soa(count, stride, 22);
    float* Rref = malloc(9 * stride * sizeof(float));
    float* R = malloc(9 * stride * sizeof(float));
    float* inplace = malloc(9 * stride * sizeof(float));
    assert_non_null(Rref);
    assert_non_null(R);
    assert_non_null(inplace);
    sinew_polar3_batch_scalar(F, Rref, stride, 0, count);
    for (size_t s = 0; s < sizeof all_isas / sizeof all_isas[0]; ++s) {
        sinew_polar3_batch_fn fn = sinew_polar3_batch_kernel(all_isas[s]);
        if (!fn) continue;
        for (uint32_t begin = 0; begin < 33; begin += 3) {
            for (uint32_t len = 0; len <= 70 && begin + len <= count; len += (len < 40 ? 1 : 7)) {
                uint32_t end = begin + len;
                for (size_t e = 0; e < 9 * stride; ++e) R[e] = SENTINEL;
                memcpy(inplace, F, 9 * stride * sizeof(float));
                fn(F, R, stride, begin, end);
                fn(inplace, inplace, stride, begin, end);
                for (int k = 0; k < 9; ++k) {
                    for (size_t i = 0; i < stride; ++i) {
                        size_t e = (size_t)k * stride + i;
                        int inside = i >= begin && i < end;
                        float want = inside ? Rref[e] : SENTINEL;
                        float want_inplace = inside ? Rref[e] : F[e];
                        if (memcmp(&R[e], &want, sizeof want) != 0 ||
                            memcmp(&inplace[e], &want_inplace, sizeof want) != 0)
                            fail_msg("kernel %s, range [%u, %u): component %d of entry %zu is "
                                     "%g / %g in place, expected %g / %g",
                                     sinew_simd_name(all_isas[s]), begin, end, k, i, R[e],
                                     inplace[e], want, want_inplace);
                    }
                }
            }
        }
    }
    free(F);
    free(Rref);
    free(R);
    free(inplace);
}

/* Long runs of SVD lanes, SVD-only blocks and single SVD lanes between Newton blocks: the
 * kernels queue SVD lanes across blocks, which this drives through every fill level. */
static void test_svd_patterns(void** state)
{
    (void)state;
    const uint32_t count = 1000;
    const size_t stride = count;
    float* F = malloc(9 * stride * sizeof(float));
    float* Rref = malloc(9 * stride * sizeof(float));
    float* R = malloc(9 * stride * sizeof(float));
    assert_non_null(F);
    assert_non_null(Rref);
    assert_non_null(R);
    math_rng rng = {23};
    for (int pattern = 0; pattern < 4; ++pattern) {
        for (uint32_t i = 0; i < count; ++i) {
            int svd;
            switch (pattern) {
            case 0: svd = (i / 100) % 2; break;           /* runs of 100 */
            case 1: svd = i % 33 == 0; break;             /* sparse */
            case 2: svd = (math_rng_next(&rng) % 3) != 0; break; /* dense, random */
            default: svd = i >= 500 && i < 564; break;    /* exactly two 32-blocks */
            }
            double s[3] = {math_rng_range(&rng, 0.7, 1.3), math_rng_range(&rng, 0.7, 1.3),
                           svd ? -math_rng_range(&rng, 0.1, 1.0) : math_rng_range(&rng, 0.7, 1.3)};
            float m[9];
            math_matrix_from_svd(&rng, s, m, NULL);
            for (int k = 0; k < 9; ++k) F[(size_t)k * stride + i] = m[k];
        }
        sinew_polar3_batch_scalar(F, Rref, stride, 0, count);
        for (size_t s = 0; s < sizeof all_isas / sizeof all_isas[0]; ++s) {
            sinew_polar3_batch_fn fn = sinew_polar3_batch_kernel(all_isas[s]);
            if (!fn) continue;
            fn(F, R, stride, 0, count);
            if (memcmp(R, Rref, 9 * stride * sizeof(float)) != 0)
                fail_msg("kernel %s differs from scalar on SVD pattern %d",
                         sinew_simd_name(all_isas[s]), pattern);
            memcpy(R, F, 9 * stride * sizeof(float));
            fn(R, R, stride, 0, count);
            if (memcmp(R, Rref, 9 * stride * sizeof(float)) != 0)
                fail_msg("kernel %s in place differs from scalar on SVD pattern %d",
                         sinew_simd_name(all_isas[s]), pattern);
        }
    }
    free(F);
    free(Rref);
    free(R);
}

/* The validating entry: results through it, and each refusal with its code and one line. */
static void test_validation(void** state)
{
    (void)state;
    sinew_test_log log;
    sinew_test_log_init(&log);
    sinew_host_api host;
    memset(&host, 0, sizeof host);
    host.struct_size = (uint32_t)sizeof host;
    host.logger = log.logger;
    host.log_level = SINEW_LOG_DEBUG;

    const uint32_t count = 40;
    float* F = make_soa(count, count, 24);
    float* R = malloc(2 * 9 * count * sizeof(float));
    float* Rref = malloc(9 * count * sizeof(float));
    assert_non_null(R);
    assert_non_null(Rref);
    sinew_polar3_batch_scalar(F, Rref, count, 0, count);

    assert_int_equal(sinew_polar3_batch(&host, SINEW_SIMD_AUTO, F, R, count, 0, count), SINEW_OK);
    assert_memory_equal(R, Rref, 9 * count * sizeof(float));
    assert_int_equal(sinew_polar3_batch(&host, SINEW_SIMD_SCALAR, F, R, count, 7, 7), SINEW_OK);
    assert_int_equal(log.total, 0);

    struct {
        sinew_simd simd;
        const float* F;
        float* R;
        size_t stride;
        uint32_t begin, end;
        sinew_result want;
    } bad[] = {
        {SINEW_SIMD_AUTO, NULL, R, count, 0, count, SINEW_ERROR_INVALID_ARGUMENT},
        {SINEW_SIMD_AUTO, F, NULL, count, 0, count, SINEW_ERROR_INVALID_ARGUMENT},
        {SINEW_SIMD_COUNT, F, R, count, 0, count, SINEW_ERROR_INVALID_ARGUMENT},
        {(sinew_simd)77, F, R, count, 0, count, SINEW_ERROR_INVALID_ARGUMENT},
        {SINEW_SIMD_AUTO, F, R, count, 5, 4, SINEW_ERROR_INVALID_ARGUMENT},
        {SINEW_SIMD_AUTO, F, R, count, 0, count + 1, SINEW_ERROR_OUTPUT_BINDING},
        {SINEW_SIMD_AUTO, F, R, (size_t)-1 / 8, 0, count, SINEW_ERROR_OUTPUT_BINDING},
        /* R overlapping F, shifted by one matrix. */
        {SINEW_SIMD_AUTO, F, F + 1, count, 0, count, SINEW_ERROR_INVALID_ARGUMENT},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
        sinew_test_log_reset(&log);
        sinew_result res = sinew_polar3_batch(&host, bad[b].simd, bad[b].F, bad[b].R,
                                              bad[b].stride, bad[b].begin, bad[b].end);
        if (res != bad[b].want)
            fail_msg("case %zu: %s, expected %s", b, sinew_result_string(res),
                     sinew_result_string(bad[b].want));
        assert_int_equal(log.total, 1);
        assert_int_equal(log.count[SINEW_LOG_ERROR], 1);
        assert_non_null(strstr(log.last, "sinew_polar3_batch"));
    }
    /* An instruction set this CPU lacks, if any, is refused as unsupported. */
    for (size_t s = 0; s < sizeof all_isas / sizeof all_isas[0]; ++s) {
        if (sinew_polar3_batch_kernel(all_isas[s])) continue;
        sinew_test_log_reset(&log);
        assert_int_equal(sinew_polar3_batch(&host, all_isas[s], F, R, count, 0, count),
                         SINEW_ERROR_UNSUPPORTED);
        assert_int_equal(log.total, 1);
    }
    /* No host: the same refusal, silently. */
    assert_int_equal(sinew_polar3_batch(NULL, SINEW_SIMD_AUTO, NULL, R, count, 0, count),
                     SINEW_ERROR_INVALID_ARGUMENT);
    /* In place through the entry. */
    memcpy(R, F, 9 * count * sizeof(float));
    assert_int_equal(sinew_polar3_batch(&host, SINEW_SIMD_AUTO, R, R, count, 0, count), SINEW_OK);
    assert_memory_equal(R, Rref, 9 * count * sizeof(float));
    /* AUTO resolves to the widest kernel the CPU runs. */
    sinew_simd best = sinew_polar3_batch_resolve(SINEW_SIMD_AUTO);
    assert_true(best == SINEW_SIMD_SCALAR || best == SINEW_SIMD_AVX2 || best == SINEW_SIMD_AVX512);
    assert_ptr_equal(sinew_polar3_batch_kernel(SINEW_SIMD_AUTO), sinew_polar3_batch_kernel(best));
    free(F);
    free(R);
    free(Rref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_match_scalar),
        cmocka_unit_test(test_ranges_and_in_place),
        cmocka_unit_test(test_svd_patterns),
        cmocka_unit_test(test_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
