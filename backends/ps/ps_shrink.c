/* Skin shrinking (projective skinning Sec. 3.2): a foot point on the skeleton lines for every
 * skin vertex, smoothed over the skin, then the vertex moved toward it until it meets the
 * volumetric skeleton; that meeting point is the base vertex.
 *
 * Where this departs from the paper, and why (README.md, "The tissue mesh", has the figures):
 * - A vertex's foot point lies on the bones of the joints that carry a good share of its skin
 *   weight (ps_skin_joints.c; the bones each moves and those ending at it), not anywhere on
 *   the skeleton: real rigs hold helper bones through flesh they do not move. Without
 *   weights, the whole skeleton, as in the paper.
 * - The smoothing of eq. (2) is screened: each step also pulls a foot point toward its first,
 *   closest one (weight PS_SHRINK_DATA_WEIGHT against the neighbours' mean). Iterated to
 *   convergence, the plain diffusion lets foot points drift along the bones and across joints
 *   (the skin below an elbow gets its base up the upper arm), and the prisms it gives are
 *   slanted, inverted or crushed when the joint bends.
 * - The base vertex stays on its own bones: the ray meets only their capsules and the spheres
 *   at their ends, and the anchor follows the foot point's bone. SPDX-License-Identifier: MIT */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps_internal.h"

#if defined(SINEW_SKIN_X86) && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define PS_SHRINK_AVX2 1
#include <immintrin.h>
#endif

/* Smoothing of the foot points (Sec. 3.2): lambda of eq. (2), the paper's 1/2. */
#define PS_SHRINK_LAMBDA 0.5
/* The pull toward the first foot point, relative to the neighbours' mean. */
#define PS_SHRINK_DATA_WEIGHT 0.005
/* Converged when no foot point moved more than this fraction of the bounding-box diagonal in
 * one iteration, or after the cap. */
#define PS_SHRINK_TOLERANCE 1e-6
#define PS_SHRINK_MAX_ITERATIONS 2000u
/* Vertices per smoothing job at least: an iteration over fewer costs less than handing a part
 * to another thread and waiting for it, so smaller skins (the male's 4.6k vertices) smooth on
 * the calling thread (docs/decisions/2026-11-28-shrink-smoothing-jobs.md). At most
 * PS_SHRINK_MAX_PARTS jobs per iteration. */
#define PS_SHRINK_PART_VERTICES 16384u
#define PS_SHRINK_MAX_PARTS 64u

/* Four vertices smoothed together in the lanes of AVX2 vectors (smooth_groups_avx2): their
 * ring and bone lists padded to the longest of the four, 4 entries per slot (a lane past its
 * ring repeats its own vertex, masked out; past its bones it repeats its first bone, which
 * cannot change the lowest (distance, bone) pair). */
typedef struct shrink_group {
    uint32_t vertex[4];
    uint32_t ring_slots, bone_slots;
    uint32_t ring_first, bone_first; /* into group_ring and group_bones */
    uint32_t same_degree;            /* 1: the four rings have the same size: no padding */
    double degree[4];
} shrink_group;

/* A bone's segment as ps_closest_on_segment sees it: its first end, the vector to the other
 * and that vector's squared length (the same operations, done once). */
typedef struct shrink_segment {
    double a[3], ab[3], len2, pad;
} shrink_segment;

typedef struct shrink {
    ps_model* m;
    uint32_t n, bc, jn;
    double* ends;           /* 6 per bone: both end positions */
    uint32_t* degree;       /* per joint: bone ends there */
    uint32_t* ring_offsets; /* one-ring neighbours of each skin vertex */
    uint32_t* ring;
    uint32_t* set_offsets;  /* per joint, and one more for all bones: the bones foot points may
                               lie on (compressed rows) */
    uint32_t* set;
    uint32_t* vertex_set;   /* per skin vertex PS_SKIN_JOINTS sets (joints, PS_NONE after the
                               last; jn for all bones) */
    uint32_t* bone_offsets; /* per skin vertex the bones of its sets, each once (compressed
                               rows): what the closest-point searches walk */
    uint32_t* bones;
    shrink_segment* segments; /* per bone */
    uint8_t* fixed;
    double* closest;        /* the first foot points */
    double* s[2];
    uint32_t* bone[2];
    uint32_t cur;
    /* one iteration's direction */
    const double* s_in;
    const uint32_t* bone_in;
    double* s_out;
    uint32_t* bone_out;
    /* The smoothing's parts: contiguous vertex ranges, one job each, and each part's largest
     * squared move of the iteration. */
    uint32_t parts;
    double* part_move2;
    /* With AVX2: per part its groups and the vertices smoothed one at a time (those left over
     * from the groups, or without bones); vertices that never move (fixed, or without a ring)
     * are in neither and are not visited. NULL groups: every vertex one at a time. */
    shrink_group* groups;
    uint32_t* group_ring;
    uint32_t* group_bones;
    uint32_t* part_groups; /* parts + 1 */
    uint32_t* singles;
    uint32_t* part_singles; /* parts + 1 */
} shrink;

static inline double dist2(const double a[3], const double b[3])
{
    double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* One-ring neighbours: both directions of every edge, sorted and deduplicated. */
static sinew_result build_rings(const sinew_host_api* host, shrink* st)
{
    const ps_model* m = st->m;
    uint32_t n = st->n, tc = m->triangle_count;
    st->ring_offsets = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    st->ring = (uint32_t*)sinew_host_calloc(host, tc ? 6u * (size_t)tc : 1u, sizeof(uint32_t));
    uint32_t* cursor = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    if (!st->ring_offsets || !st->ring || !cursor) {
        sinew_host_free(host, cursor);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory shrinking "
                               "%u vertices", n);
    }
    for (uint32_t t = 0; t < tc; ++t)
        for (int k = 0; k < 3; ++k) st->ring_offsets[m->triangles[3u * t + k] + 1] += 2u;
    for (uint32_t i = 0; i < n; ++i) st->ring_offsets[i + 1] += st->ring_offsets[i];
    memcpy(cursor, st->ring_offsets, (n + 1u) * sizeof(uint32_t));
    for (uint32_t t = 0; t < tc; ++t) {
        const uint32_t* tri = m->triangles + 3u * t;
        for (int k = 0; k < 3; ++k) {
            st->ring[cursor[tri[k]]++] = tri[(k + 1) % 3];
            st->ring[cursor[tri[k]]++] = tri[(k + 2) % 3];
        }
    }
    sinew_host_free(host, cursor);
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t b0 = st->ring_offsets[i], b1 = st->ring_offsets[i + 1];
        for (uint32_t a = b0 + 1; a < b1; ++a) { /* insertion sort: rings are short */
            uint32_t v = st->ring[a], q = a;
            for (; q > b0 && st->ring[q - 1] > v; --q) st->ring[q] = st->ring[q - 1];
            st->ring[q] = v;
        }
        st->ring_offsets[i] = w;
        for (uint32_t a = b0; a < b1; ++a)
            if (a == b0 || st->ring[a] != st->ring[a - 1]) st->ring[w++] = st->ring[a];
    }
    st->ring_offsets[n] = w;
    return SINEW_OK;
}

/* Appends to the set of joint j the bones it moves and the bones that end at it (the skin
 * around a joint lies on either side); without any, its parent's set. Returns the number
 * appended. */
static uint32_t joint_set(const sinew_rig_view* rig, const shrink* st, uint32_t j, uint32_t* out)
{
    const ps_model* m = st->m;
    for (int32_t k = (int32_t)j; k >= 0; k = rig->parents[k]) {
        uint32_t count = 0;
        for (uint32_t b = 0; b < st->bc; ++b)
            if (m->bones[b].joint == (uint32_t)k || m->bones[b].child == (uint32_t)k) out[count++] = b;
        if (count) return count;
    }
    for (uint32_t b = 0; b < st->bc; ++b) out[b] = b;
    return st->bc;
}

/* The bone sets of every joint (and of all bones) and each skin vertex's set. */
static sinew_result build_sets(const sinew_host_api* host, const sinew_rig_view* rig, shrink* st)
{
    uint32_t jn = st->jn, bc = st->bc;
    st->set_offsets = (uint32_t*)sinew_host_calloc(host, jn + 2u, sizeof(uint32_t));
    st->set = (uint32_t*)sinew_host_calloc(host, ((size_t)jn + 1u) * (bc ? bc : 1u), sizeof(uint32_t));
    st->vertex_set = (uint32_t*)sinew_host_calloc(host, st->n ? st->n : 1u,
                                                  PS_SKIN_JOINTS * sizeof(uint32_t));
    if (!st->set_offsets || !st->set || !st->vertex_set)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for the bone "
                               "sets of %u joints", jn);
    for (uint32_t j = 0; j <= jn; ++j) {
        uint32_t* out = st->set + st->set_offsets[j];
        uint32_t count = j < jn ? joint_set(rig, st, j, out) : bc;
        for (uint32_t b = 0; j == jn && b < bc; ++b) out[b] = b;
        st->set_offsets[j + 1] = st->set_offsets[j] + count;
    }
    sinew_result r = ps_skin_joints(host, rig, st->m, st->vertex_set);
    for (uint32_t i = 0; r == SINEW_OK && i < st->n; ++i)
        if (st->vertex_set[PS_SKIN_JOINTS * i] == PS_NONE) st->vertex_set[PS_SKIN_JOINTS * i] = jn;
    return r;
}

/* Each skin vertex's bones: those of its sets in set order, a bone that two sets share listed
 * once. The closest-point search takes the lowest (distance, bone) pair, so the order and the
 * repeats it drops change nothing. */
static sinew_result build_vertex_bones(const sinew_host_api* host, shrink* st)
{
    uint32_t n = st->n;
    st->bone_offsets = (uint32_t*)sinew_host_calloc(host, n + 1u, sizeof(uint32_t));
    for (int pass = 0; pass < 2; ++pass) {
        if (!st->bone_offsets || (pass == 1 && !st->bones))
            return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory for "
                                   "the bones of %u skin vertices", n);
        uint32_t count = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t* sets = st->vertex_set + PS_SKIN_JOINTS * i;
            uint32_t first = count;
            for (uint32_t k = 0; k < PS_SKIN_JOINTS && sets[k] != PS_NONE; ++k)
                for (uint32_t e = st->set_offsets[sets[k]]; e < st->set_offsets[sets[k] + 1]; ++e) {
                    uint32_t b = st->set[e], seen = 0;
                    /* The first pass counts with repeats; the second stores each bone once. */
                    for (uint32_t c = first; pass == 1 && c < count && !seen; ++c)
                        seen = st->bones[c] == b;
                    if (seen) continue;
                    if (pass == 1) st->bones[count] = b;
                    ++count;
                }
            if (pass == 1) st->bone_offsets[i + 1] = count;
        }
        if (pass == 0)
            st->bones = (uint32_t*)sinew_host_alloc(host, (count ? count : 1u) * sizeof(uint32_t));
    }
    return SINEW_OK;
}

/* The closest point to p on vertex i's bones (ties: the lower bone index); its bone and
 * segment parameter. The arithmetic of ps_closest_on_segment, with each segment's constant
 * part from st->segments. */
static inline void closest_on_bones(const shrink* st, uint32_t i, const double p[3],
                                    double out[3], uint32_t* bone, double* param)
{
    double best = DBL_MAX, bq0 = p[0], bq1 = p[1], bq2 = p[2], bt = *param;
    uint32_t bb = *bone;
    for (uint32_t e = st->bone_offsets[i]; e < st->bone_offsets[i + 1]; ++e) {
        uint32_t b = st->bones[e];
        const shrink_segment* sg = &st->segments[b];
        double ap0 = p[0] - sg->a[0], ap1 = p[1] - sg->a[1], ap2 = p[2] - sg->a[2];
        double t = sg->len2 > 0.0 ? (ap0 * sg->ab[0] + ap1 * sg->ab[1] + ap2 * sg->ab[2]) / sg->len2
                                  : 0.0;
        /* The clamp of ps_closest_on_segment as two selections (NaN passes through both). */
        t = 0.0 > t ? 0.0 : t;
        t = t > 1.0 ? 1.0 : t;
        double q0 = sg->a[0] + t * sg->ab[0], q1 = sg->a[1] + t * sg->ab[1],
               q2 = sg->a[2] + t * sg->ab[2];
        double d0 = p[0] - q0, d1 = p[1] - q1, d2 = p[2] - q2;
        double d = d0 * d0 + d1 * d1 + d2 * d2;
        if (d < best || (d == best && b < bb)) {
            best = d;
            bb = b;
            bt = t;
            bq0 = q0, bq1 = q1, bq2 = q2;
        }
    }
    if (best == DBL_MAX) bq0 = p[0], bq1 = p[1], bq2 = p[2];
    out[0] = bq0, out[1] = bq1, out[2] = bq2;
    *bone = bb;
    *param = bt;
}

/* Foot points start at the closest point of the vertex's bones (Fig. 2c). One clamped to an
 * end joint that has only this bone (hands, feet, head) stays fixed. */
static void initial_foot_points(shrink* st)
{
    const ps_model* m = st->m;
    for (uint32_t i = 0; i < st->n; ++i) {
        uint32_t b = PS_NONE;
        double t = 0.5;
        closest_on_bones(st, i, m->rest + 3u * i, st->s[0] + 3u * i, &b, &t);
        if (b == PS_NONE) b = 0;
        memcpy(st->closest + 3u * i, st->s[0] + 3u * i, 3u * sizeof(double));
        st->bone[0][i] = b;
        const ps_bone* bone = &m->bones[b];
        st->fixed[i] = bone->end[0] != bone->end[1] &&
                       ((t <= 0.0 && st->degree[bone->end[0]] == 1) ||
                        (t >= 1.0 && st->degree[bone->end[1]] == 1));
    }
}

/* The vertex range of smoothing part k: n split evenly, at multiples of 16 vertices so that
 * no cache line of the per-vertex arrays is written by two parts. */
static uint32_t part_start(const shrink* st, uint32_t k)
{
    if (k >= st->parts) return st->n;
    uint32_t at = (uint32_t)((uint64_t)st->n * k / st->parts) & ~15u;
    return at < st->n ? at : st->n;
}

/* Eq. (2), screened, for vertex i: a Jacobi step (reads s_in only), then the projection back
 * onto the vertex's bones. Returns the squared move. */
static inline double smooth_vertex(const shrink* st, uint32_t i)
{
    const double* si = st->s_in + 3u * i;
    uint32_t r0 = st->ring_offsets[i], r1 = st->ring_offsets[i + 1];
    st->bone_out[i] = st->bone_in[i];
    if (st->fixed[i] || r0 == r1) {
        memcpy(st->s_out + 3u * i, si, 3u * sizeof(double));
        return 0.0;
    }
    double sum[3] = {0.0, 0.0, 0.0}, p[3], q[3], t;
    for (uint32_t r = r0; r < r1; ++r)
        for (int k = 0; k < 3; ++k) sum[k] += st->s_in[3u * st->ring[r] + k] - si[k];
    double deg = (double)(r1 - r0), w = PS_SHRINK_DATA_WEIGHT;
    for (int k = 0; k < 3; ++k)
        p[k] = si[k] + PS_SHRINK_LAMBDA *
                           (sum[k] + w * deg * (st->closest[3u * i + k] - si[k])) /
                           (deg * (1.0 + w));
    st->bone_out[i] = PS_NONE;
    closest_on_bones(st, i, p, q, &st->bone_out[i], &t);
    if (st->bone_out[i] == PS_NONE) st->bone_out[i] = st->bone_in[i];
    memcpy(st->s_out + 3u * i, q, sizeof q);
    return dist2(q, si);
}

#if defined(PS_SHRINK_AVX2)
/* x, y, z of the 3-double records at base + 3 idx[l] in the lanes l (each load reads one
 * double past its record: the arrays hold one more). */
__attribute__((target("avx2"))) static inline void gather_xyz(const double* base,
                                                              const uint32_t idx[4], __m256d* x,
                                                              __m256d* y, __m256d* z)
{
    __m256d r0 = _mm256_loadu_pd(base + 3u * idx[0]), r1 = _mm256_loadu_pd(base + 3u * idx[1]);
    __m256d r2 = _mm256_loadu_pd(base + 3u * idx[2]), r3 = _mm256_loadu_pd(base + 3u * idx[3]);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    *x = _mm256_permute2f128_pd(t0, t2, 0x20);
    *y = _mm256_permute2f128_pd(t1, t3, 0x20);
    *z = _mm256_permute2f128_pd(t0, t2, 0x31);
}

/* The four doubles at rows[l] as four vectors: out[k] lane l = rows[l][k]. */
__attribute__((target("avx2"))) static inline void transpose4(const double* rows[4],
                                                              __m256d out[4])
{
    __m256d r0 = _mm256_loadu_pd(rows[0]), r1 = _mm256_loadu_pd(rows[1]);
    __m256d r2 = _mm256_loadu_pd(rows[2]), r3 = _mm256_loadu_pd(rows[3]);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    out[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    out[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    out[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* smooth_vertex for the four vertices of each group [g0, g1), one per lane: every lane runs
 * smooth_vertex's operations in its order (no FMA: the target leaves it out, and the file is
 * built without contraction), and where it branches the lanes select by mask, so each vertex
 * gets the bits smooth_vertex gives it. Returns the largest squared move. */
__attribute__((target("avx2"))) static double smooth_groups_avx2(const shrink* st, uint32_t g0,
                                                                 uint32_t g1)
{
    const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
    const __m256d lambda = _mm256_set1_pd(PS_SHRINK_LAMBDA);
    const double w = PS_SHRINK_DATA_WEIGHT;
    const __m256d wv = _mm256_set1_pd(w), one_w = _mm256_set1_pd(1.0 + w);
    const __m256d far = _mm256_set1_pd(DBL_MAX), none = _mm256_set1_pd((double)PS_NONE);
    __m256d largest = zero;
    for (uint32_t g = g0; g < g1; ++g) {
        const shrink_group* grp = &st->groups[g];
        __m256d six, siy, siz;
        gather_xyz(st->s_in, grp->vertex, &six, &siy, &siz);
        __m256d sx = zero, sy = zero, sz = zero;
        const __m256d deg = _mm256_loadu_pd(grp->degree);
        const uint32_t* ring = st->group_ring + grp->ring_first;
        if (grp->same_degree) {
            for (uint32_t slot = 0; slot < grp->ring_slots; ++slot, ring += 4) {
                __m256d nx, ny, nz;
                gather_xyz(st->s_in, ring, &nx, &ny, &nz);
                sx = _mm256_add_pd(sx, _mm256_sub_pd(nx, six));
                sy = _mm256_add_pd(sy, _mm256_sub_pd(ny, siy));
                sz = _mm256_add_pd(sz, _mm256_sub_pd(nz, siz));
            }
        } else {
            for (uint32_t slot = 0; slot < grp->ring_slots; ++slot, ring += 4) {
                __m256d nx, ny, nz;
                gather_xyz(st->s_in, ring, &nx, &ny, &nz);
                /* Past a lane's ring the term is +0, which leaves its sum as it is (a sum that
                 * starts at +0 is never -0). */
                __m256d in = _mm256_cmp_pd(_mm256_set1_pd((double)slot), deg, _CMP_LT_OQ);
                sx = _mm256_add_pd(sx, _mm256_and_pd(in, _mm256_sub_pd(nx, six)));
                sy = _mm256_add_pd(sy, _mm256_and_pd(in, _mm256_sub_pd(ny, siy)));
                sz = _mm256_add_pd(sz, _mm256_and_pd(in, _mm256_sub_pd(nz, siz)));
            }
        }
        __m256d cx, cy, cz;
        gather_xyz(st->closest, grp->vertex, &cx, &cy, &cz);
        const __m256d wdeg = _mm256_mul_pd(wv, deg), den = _mm256_mul_pd(deg, one_w);
        __m256d px = _mm256_add_pd(six, _mm256_div_pd(_mm256_mul_pd(lambda, _mm256_add_pd(sx,
                                      _mm256_mul_pd(wdeg, _mm256_sub_pd(cx, six)))), den));
        __m256d py = _mm256_add_pd(siy, _mm256_div_pd(_mm256_mul_pd(lambda, _mm256_add_pd(sy,
                                      _mm256_mul_pd(wdeg, _mm256_sub_pd(cy, siy)))), den));
        __m256d pz = _mm256_add_pd(siz, _mm256_div_pd(_mm256_mul_pd(lambda, _mm256_add_pd(sz,
                                      _mm256_mul_pd(wdeg, _mm256_sub_pd(cz, siz)))), den));
        /* closest_on_bones, lane by lane. */
        __m256d best = far, bb = none, qx = px, qy = py, qz = pz;
        const uint32_t* bones = st->group_bones + grp->bone_first;
        for (uint32_t slot = 0; slot < grp->bone_slots; ++slot, bones += 4) {
            const double* lo[4];
            const double* hi[4];
            for (int l = 0; l < 4; ++l) {
                lo[l] = st->segments[bones[l]].a;     /* a0 a1 a2 ab0 */
                hi[l] = st->segments[bones[l]].ab + 1; /* ab1 ab2 len2 pad */
            }
            __m256d sa[4], sb[4];
            transpose4(lo, sa);
            transpose4(hi, sb);
            __m256d ax = _mm256_sub_pd(px, sa[0]), ay = _mm256_sub_pd(py, sa[1]);
            __m256d az = _mm256_sub_pd(pz, sa[2]);
            __m256d dot = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(ax, sa[3]),
                                                      _mm256_mul_pd(ay, sb[0])),
                                        _mm256_mul_pd(az, sb[1]));
            __m256d t = _mm256_blendv_pd(zero, _mm256_div_pd(dot, sb[2]),
                                         _mm256_cmp_pd(sb[2], zero, _CMP_GT_OQ));
            t = _mm256_max_pd(zero, t); /* 0 > t ? 0 : t */
            t = _mm256_min_pd(one, t);  /* 1 < t ? 1 : t */
            __m256d ex = _mm256_add_pd(sa[0], _mm256_mul_pd(t, sa[3]));
            __m256d ey = _mm256_add_pd(sa[1], _mm256_mul_pd(t, sb[0]));
            __m256d ez = _mm256_add_pd(sa[2], _mm256_mul_pd(t, sb[1]));
            __m256d dx = _mm256_sub_pd(px, ex), dy = _mm256_sub_pd(py, ey);
            __m256d dz = _mm256_sub_pd(pz, ez);
            __m256d d = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)),
                                      _mm256_mul_pd(dz, dz));
            __m256d b = _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i*)bones));
            __m256d better = _mm256_or_pd(_mm256_cmp_pd(d, best, _CMP_LT_OQ),
                                          _mm256_and_pd(_mm256_cmp_pd(d, best, _CMP_EQ_OQ),
                                                        _mm256_cmp_pd(b, bb, _CMP_LT_OQ)));
            best = _mm256_blendv_pd(best, d, better);
            bb = _mm256_blendv_pd(bb, b, better);
            qx = _mm256_blendv_pd(qx, ex, better);
            qy = _mm256_blendv_pd(qy, ey, better);
            qz = _mm256_blendv_pd(qz, ez, better);
        }
        __m256d unmet = _mm256_cmp_pd(best, far, _CMP_EQ_OQ);
        qx = _mm256_blendv_pd(qx, px, unmet);
        qy = _mm256_blendv_pd(qy, py, unmet);
        qz = _mm256_blendv_pd(qz, pz, unmet);
        __m256d mx = _mm256_sub_pd(qx, six), my = _mm256_sub_pd(qy, siy);
        __m256d mz = _mm256_sub_pd(qz, siz);
        __m256d move2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(mx, mx), _mm256_mul_pd(my, my)),
                                      _mm256_mul_pd(mz, mz));
        largest = _mm256_max_pd(move2, largest); /* move2 > largest ? move2 : largest */
        double ox[4], oy[4], oz[4], ob[4];
        _mm256_storeu_pd(ox, qx);
        _mm256_storeu_pd(oy, qy);
        _mm256_storeu_pd(oz, qz);
        _mm256_storeu_pd(ob, bb);
        for (int l = 0; l < 4; ++l) {
            uint32_t v = grp->vertex[l];
            double* out = st->s_out + 3u * v;
            out[0] = ox[l], out[1] = oy[l], out[2] = oz[l];
            st->bone_out[v] = ob[l] == (double)PS_NONE ? st->bone_in[v] : (uint32_t)ob[l];
        }
    }
    double lanes[4], mx = 0.0;
    _mm256_storeu_pd(lanes, largest);
    for (int l = 0; l < 4; ++l)
        if (lanes[l] > mx) mx = lanes[l];
    return mx;
}
#endif

/* Smooths the vertices of parts [begin, end), each part's largest squared move into
 * part_move2. The parts are fixed vertex ranges, so a thread mostly reads foot points that it
 * wrote itself in the previous iteration. */
static void smooth_parts(void* data, uint32_t begin, uint32_t end)
{
    shrink* st = (shrink*)data;
    for (uint32_t part = begin; part < end; ++part) {
        double mx = 0.0, move2;
#if defined(PS_SHRINK_AVX2)
        if (st->groups) {
            mx = smooth_groups_avx2(st, st->part_groups[part], st->part_groups[part + 1u]);
            for (uint32_t k = st->part_singles[part]; k < st->part_singles[part + 1u]; ++k)
                if ((move2 = smooth_vertex(st, st->singles[k])) > mx) mx = move2;
            st->part_move2[part] = mx;
            continue;
        }
#endif
        for (uint32_t i = part_start(st, part), stop = part_start(st, part + 1u); i < stop; ++i)
            if ((move2 = smooth_vertex(st, i)) > mx) mx = move2;
        st->part_move2[part] = mx;
    }
}

#if defined(PS_SHRINK_AVX2)
/* Lane l of group `grp`'s slot lists: its ring (then its own vertex) and its bones (then its
 * first bone again). */
static void fill_group(shrink* st, shrink_group* grp, uint32_t* ring_used, uint32_t* bones_used)
{
    uint32_t ring_slots = 0, bone_slots = 0;
    for (int l = 0; l < 4; ++l) {
        uint32_t v = grp->vertex[l];
        uint32_t deg = st->ring_offsets[v + 1] - st->ring_offsets[v];
        uint32_t nb = st->bone_offsets[v + 1] - st->bone_offsets[v];
        grp->degree[l] = (double)deg;
        if (deg > ring_slots) ring_slots = deg;
        if (nb > bone_slots) bone_slots = nb;
    }
    grp->ring_slots = ring_slots;
    grp->bone_slots = bone_slots;
    grp->same_degree = grp->degree[0] == grp->degree[1] && grp->degree[0] == grp->degree[2] &&
                       grp->degree[0] == grp->degree[3];
    grp->ring_first = *ring_used;
    grp->bone_first = *bones_used;
    for (uint32_t slot = 0; slot < ring_slots; ++slot)
        for (int l = 0; l < 4; ++l) {
            uint32_t v = grp->vertex[l], r0 = st->ring_offsets[v];
            st->group_ring[(*ring_used)++] =
                slot < st->ring_offsets[v + 1] - r0 ? st->ring[r0 + slot] : v;
        }
    for (uint32_t slot = 0; slot < bone_slots; ++slot)
        for (int l = 0; l < 4; ++l) {
            uint32_t v = grp->vertex[l], b0 = st->bone_offsets[v];
            st->group_bones[(*bones_used)++] =
                st->bones[slot < st->bone_offsets[v + 1] - b0 ? b0 + slot : b0];
        }
}

/* A moving vertex as build_groups orders them: vertices with the same bones and ring size
 * side by side, so that a group's lanes need few padded slots. */
typedef struct group_key {
    const uint32_t* bones;
    uint32_t bone_count, degree, vertex;
} group_key;

static int compare_group_keys(const void* a, const void* b)
{
    const group_key* x = (const group_key*)a;
    const group_key* y = (const group_key*)b;
    if (x->bone_count != y->bone_count) return x->bone_count < y->bone_count ? -1 : 1;
    for (uint32_t k = 0; k < x->bone_count; ++k)
        if (x->bones[k] != y->bones[k]) return x->bones[k] < y->bones[k] ? -1 : 1;
    if (x->degree != y->degree) return x->degree < y->degree ? -1 : 1;
    return x->vertex < y->vertex ? -1 : (x->vertex > y->vertex);
}

/* Each part's groups of four moving vertices and its single vertices: those left over, and any
 * without bones. */
static sinew_result build_groups(const sinew_host_api* host, shrink* st)
{
    uint32_t n = st->n, parts = st->parts;
    st->groups = (shrink_group*)sinew_host_alloc(host, (n / 4u + 1u) * sizeof(shrink_group));
    st->group_ring = (uint32_t*)sinew_host_alloc(
        host, (4u * (size_t)st->ring_offsets[n] + 1u) * sizeof(uint32_t));
    st->group_bones = (uint32_t*)sinew_host_alloc(
        host, (4u * (size_t)st->bone_offsets[n] + 1u) * sizeof(uint32_t));
    st->singles = (uint32_t*)sinew_host_alloc(host, (n + 1u) * sizeof(uint32_t));
    st->part_groups = (uint32_t*)sinew_host_calloc(host, parts + 1u, sizeof(uint32_t));
    st->part_singles = (uint32_t*)sinew_host_calloc(host, parts + 1u, sizeof(uint32_t));
    group_key* keys = (group_key*)sinew_host_alloc(host, (n + 1u) * sizeof(group_key));
    if (!st->groups || !st->group_ring || !st->group_bones || !st->singles || !st->part_groups ||
        !st->part_singles || !keys) {
        sinew_host_free(host, keys);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory shrinking "
                               "%u vertices", n);
    }
    uint32_t groups = 0, singles = 0, ring_used = 0, bones_used = 0;
    for (uint32_t part = 0; part < parts; ++part) {
        uint32_t moving = 0;
        for (uint32_t i = part_start(st, part), stop = part_start(st, part + 1u); i < stop; ++i) {
            if (st->fixed[i] || st->ring_offsets[i] == st->ring_offsets[i + 1]) continue;
            if (st->bone_offsets[i] == st->bone_offsets[i + 1]) {
                st->singles[singles++] = i;
                continue;
            }
            group_key* k = &keys[moving++];
            k->bones = st->bones + st->bone_offsets[i];
            k->bone_count = st->bone_offsets[i + 1] - st->bone_offsets[i];
            k->degree = st->ring_offsets[i + 1] - st->ring_offsets[i];
            k->vertex = i;
        }
        qsort(keys, moving, sizeof *keys, compare_group_keys);
        uint32_t whole = moving / 4u * 4u;
        for (uint32_t k = 0; k < whole; k += 4u) {
            shrink_group* grp = &st->groups[groups++];
            for (uint32_t l = 0; l < 4u; ++l) grp->vertex[l] = keys[k + l].vertex;
            fill_group(st, grp, &ring_used, &bones_used);
        }
        for (uint32_t k = whole; k < moving; ++k) st->singles[singles++] = keys[k].vertex;
        st->part_groups[part + 1u] = groups;
        st->part_singles[part + 1u] = singles;
    }
    sinew_host_free(host, keys);
    return SINEW_OK;
}
#endif

static void smooth_foot_points(const sinew_host_api* host, shrink* st)
{
    ps_model* m = st->m;
    double tol2 = (PS_SHRINK_TOLERANCE * m->diagonal) * (PS_SHRINK_TOLERANCE * m->diagonal);
    double residual = 0.0;
    uint32_t it = 0;
    /* Vertices that never move hold their foot point in both buffers (the groups' iterations
     * do not visit them). */
    for (uint32_t i = 0; i < st->n; ++i)
        if (st->fixed[i] || st->ring_offsets[i] == st->ring_offsets[i + 1]) {
            memcpy(st->s[1] + 3u * i, st->s[0] + 3u * i, 3u * sizeof(double));
            st->bone[1][i] = st->bone[0][i];
        }
    for (; it < PS_SHRINK_MAX_ITERATIONS && st->bc > 0; ++it) {
        st->s_in = st->s[st->cur];
        st->bone_in = st->bone[st->cur];
        st->s_out = st->s[st->cur ^ 1u];
        st->bone_out = st->bone[st->cur ^ 1u];
        sinew_host_parallel_for(host, smooth_parts, st, st->parts, 1u);
        st->cur ^= 1u;
        double mx = 0.0;
        for (uint32_t k = 0; k < st->parts; ++k)
            if (st->part_move2[k] > mx) mx = st->part_move2[k];
        residual = sqrt(mx) / m->diagonal;
        if (mx <= tol2) {
            ++it;
            break;
        }
    }
    m->shrink_iterations = it;
    m->shrink_residual = residual;
    sinew_host_log(host, SINEW_LOG_INFO,
                   "ps: skin shrinking: %u smoothing iterations, last foot point move %.3g of "
                   "the bounding-box diagonal (%s)", it, residual,
                   residual <= PS_SHRINK_TOLERANCE ? "converged" : "iteration cap reached");
}

/* First parameter t in [0, 1] where x + t d enters the sphere (center, r); DBL_MAX if never. */
static double ray_sphere(const double x[3], const double d[3], const double center[3], double r)
{
    double m[3] = {x[0] - center[0], x[1] - center[1], x[2] - center[2]};
    double a = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    double b = m[0] * d[0] + m[1] * d[1] + m[2] * d[2];
    double cc = m[0] * m[0] + m[1] * m[1] + m[2] * m[2] - r * r;
    if (cc <= 0.0) return 0.0;
    if (!(a > 0.0) || b >= 0.0) return DBL_MAX;
    double disc = b * b - a * cc;
    if (disc < 0.0) return DBL_MAX;
    double t = (-b - sqrt(disc)) / a;
    return t >= 0.0 && t <= 1.0 ? t : DBL_MAX;
}

/* First t in [0, 1] where x + t d enters the capsule around [p0, p1] with radius r. */
static double ray_capsule(const double x[3], const double d[3], const double p0[3],
                          const double p1[3], double r)
{
    double best = fmin(ray_sphere(x, d, p0, r), ray_sphere(x, d, p1, r));
    double axis[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (!(len > 0.0)) return best;
    for (int k = 0; k < 3; ++k) axis[k] /= len;
    double m[3] = {x[0] - p0[0], x[1] - p0[1], x[2] - p0[2]};
    double md = m[0] * axis[0] + m[1] * axis[1] + m[2] * axis[2];
    double dd = d[0] * axis[0] + d[1] * axis[1] + d[2] * axis[2];
    double mp[3], dp[3];
    for (int k = 0; k < 3; ++k) {
        mp[k] = m[k] - md * axis[k];
        dp[k] = d[k] - dd * axis[k];
    }
    double a = dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2];
    double b = mp[0] * dp[0] + mp[1] * dp[1] + mp[2] * dp[2];
    double cc = mp[0] * mp[0] + mp[1] * mp[1] + mp[2] * mp[2] - r * r;
    if (a > 0.0) {
        double disc = b * b - a * cc;
        if (disc >= 0.0) {
            double t = (-b - sqrt(disc)) / a;
            double h = md + t * dd;
            if (t >= 0.0 && t <= 1.0 && h >= 0.0 && h <= len && t < best) best = t;
        }
    }
    return best;
}

/* The first t in [0, 1] where x + t d enters the volumetric bones of vertex i's set (their
 * capsules and the spheres at their ends); 0 when x is inside already, DBL_MAX if never. */
static double ray_own_bones(const shrink* st, uint32_t i, const double x[3], const double d[3])
{
    const ps_model* m = st->m;
    double best = DBL_MAX;
    const uint32_t* sets = st->vertex_set + PS_SKIN_JOINTS * i;
    for (uint32_t s = 0; s < PS_SKIN_JOINTS && sets[s] != PS_NONE; ++s)
        for (uint32_t e = st->set_offsets[sets[s]]; e < st->set_offsets[sets[s] + 1]; ++e) {
            uint32_t b = st->set[e];
            const double* p0 = st->ends + 6u * b;
            const double* p1 = p0 + 3;
            best = fmin(best, ray_capsule(x, d, p0, p1, m->bones[b].radius));
            for (int k = 0; k < 2; ++k) {
                double r = m->joint_radius[m->bones[b].end[k]];
                if (r > 0.0) best = fmin(best, ray_sphere(x, d, k ? p1 : p0, r));
            }
        }
    return best;
}

/* Moves each skin vertex toward its foot point until it meets its volumetric bones; a vertex
 * inside them already (a joint sphere wider than the skin there) goes halfway to its foot
 * point, which keeps the prism's height. */
static void place_bases(shrink* st)
{
    ps_model* m = st->m;
    uint32_t n = st->n, inside = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const double* x = m->rest + 3u * i;
        const double* sp = st->s[st->cur] + 3u * i;
        double* q = m->rest + 3u * ((size_t)n + i);
        double d[3] = {sp[0] - x[0], sp[1] - x[1], sp[2] - x[2]};
        double t = st->bc ? ray_own_bones(st, i, x, d) : 0.0;
        if (st->bc && t == 0.0) {
            ++inside;
            t = 0.5;
        }
        if (t > 1.0) t = 1.0;
        for (int k = 0; k < 3; ++k) q[k] = x[k] + t * d[k];
        m->vertex_bone[i] = m->vertex_bone[n + i] = st->bone[st->cur][i];
    }
    m->inside_count = inside;
}

/* The mean tissue thickness: the distance from skin to base, over the vertices that have a
 * tissue layer (a part pinned to its bone has none). */
static void measure_thickness(ps_model* m)
{
    uint32_t n = m->n, count = 0;
    double thickness = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        double d = sqrt(dist2(m->rest + 3u * i, m->rest + 3u * ((size_t)n + i)));
        if (d > 0.0) thickness += d, ++count;
    }
    m->thickness = count ? thickness / count : 0.0;
    if (!(m->thickness > 0.0)) m->thickness = 1e-3 * m->diagonal;
}

static sinew_result shrink_alloc(const sinew_host_api* host, shrink* st)
{
    uint32_t n = st->n ? st->n : 1u;
    st->ends = (double*)sinew_host_calloc(host, st->bc ? st->bc : 1u, 6u * sizeof(double));
    st->degree = (uint32_t*)sinew_host_calloc(host, st->jn ? st->jn : 1u, sizeof(uint32_t));
    st->fixed = (uint8_t*)sinew_host_calloc(host, n, 1u);
    /* Foot point arrays hold one double more: the AVX2 loads of a record read 4. */
    st->closest = (double*)sinew_host_calloc(host, 3u * (size_t)n + 1u, sizeof(double));
    st->segments = (shrink_segment*)sinew_host_calloc(host, st->bc ? st->bc : 1u,
                                                      sizeof(shrink_segment));
    st->part_move2 = (double*)sinew_host_calloc(host, st->parts, sizeof(double));
    for (int k = 0; k < 2; ++k) {
        st->s[k] = (double*)sinew_host_calloc(host, 3u * (size_t)n + 1u, sizeof(double));
        st->bone[k] = (uint32_t*)sinew_host_calloc(host, n, sizeof(uint32_t));
    }
    st->m->vertex_bone = (uint32_t*)sinew_host_calloc(host, 2u * (size_t)n, sizeof(uint32_t));
    if (!st->ends || !st->degree || !st->fixed || !st->closest || !st->segments ||
        !st->part_move2 || !st->s[0] ||
        !st->s[1] || !st->bone[0] || !st->bone[1] || !st->m->vertex_bone)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "ps: out of memory shrinking "
                               "%u vertices", st->n);
    for (uint32_t b = 0; b < st->bc; ++b) {
        ps_joint_position(st->m, st->m->bones[b].end[0], st->ends + 6u * b);
        ps_joint_position(st->m, st->m->bones[b].end[1], st->ends + 6u * b + 3u);
        st->degree[st->m->bones[b].end[0]]++;
        st->degree[st->m->bones[b].end[1]]++;
        shrink_segment* sg = &st->segments[b];
        for (int k = 0; k < 3; ++k) {
            sg->a[k] = st->ends[6u * b + k];
            sg->ab[k] = st->ends[6u * b + 3u + k] - sg->a[k];
        }
        sg->len2 = sg->ab[0] * sg->ab[0] + sg->ab[1] * sg->ab[1] + sg->ab[2] * sg->ab[2];
    }
    return SINEW_OK;
}

static void shrink_free(const sinew_host_api* host, shrink* st)
{
    void* arrays[] = {st->ends, st->degree, st->ring_offsets, st->ring, st->set_offsets,
                      st->set, st->vertex_set, st->fixed, st->closest, st->s[0], st->s[1],
                      st->bone[0], st->bone[1], st->bone_offsets, st->bones, st->segments,
                      st->part_move2, st->groups, st->group_ring, st->group_bones,
                      st->part_groups, st->singles, st->part_singles};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k) sinew_host_free(host, arrays[k]);
}

/* ps_shrink on the instruction set `simd` (SCALAR smooths one vertex at a time, anything else
 * four at a time with AVX2 where the CPU runs it) with smoothing jobs of at least
 * `part_vertices` vertices. Every choice gives the same bits; tests compare them (they
 * declare this function: only they choose). */
sinew_result ps_shrink_with(const sinew_host_api* host, const sinew_rig_view* rig, ps_model* m,
                            sinew_simd simd, uint32_t part_vertices);

sinew_result ps_shrink(const sinew_host_api* host, const sinew_rig_view* rig, ps_model* m)
{
    return ps_shrink_with(host, rig, m, SINEW_SIMD_AUTO, PS_SHRINK_PART_VERTICES);
}

sinew_result ps_shrink_with(const sinew_host_api* host, const sinew_rig_view* rig, ps_model* m,
                            sinew_simd simd, uint32_t part_vertices)
{
    shrink st;
    memset(&st, 0, sizeof st);
    st.m = m;
    st.n = m->n;
    st.bc = m->bone_count;
    st.jn = m->joint_count;
    /* One smoothing part per thread of the job system, each of part_vertices or more. */
    st.parts = host->jobs.thread_count ? host->jobs.thread_count : 1u;
    if (part_vertices && st.parts > st.n / part_vertices) st.parts = st.n / part_vertices;
    if (st.parts > PS_SHRINK_MAX_PARTS) st.parts = PS_SHRINK_MAX_PARTS;
    if (st.parts == 0) st.parts = 1;
    sinew_result r = shrink_alloc(host, &st);
    if (r == SINEW_OK) r = build_rings(host, &st);
    if (r == SINEW_OK) r = build_sets(host, rig, &st);
    if (r == SINEW_OK) r = build_vertex_bones(host, &st);
    if (r == SINEW_OK) {
        initial_foot_points(&st);
#if defined(PS_SHRINK_AVX2)
        if (simd != SINEW_SIMD_SCALAR && sinew_simd_supported(SINEW_SIMD_AVX2))
            r = build_groups(host, &st);
#else
        (void)simd;
#endif
    }
    if (r == SINEW_OK) {
        smooth_foot_points(host, &st);
        place_bases(&st);
        r = ps_pin_unreached_parts(host, m, st.s[st.cur]);
        measure_thickness(m);
    }
    if (r == SINEW_OK) {
        if (m->inside_count)
            sinew_host_log(host, SINEW_LOG_INFO,
                           "ps: %u skin vertices lie inside the volumetric skeleton; their base "
                           "points are halfway to the skeleton line", m->inside_count);
    }
    shrink_free(host, &st);
    return r;
}
