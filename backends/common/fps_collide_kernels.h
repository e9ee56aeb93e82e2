/* The per-element arithmetic of fast projective skinning's global collisions (Komaritzan and
 * Botsch 2019, ../shared/papers/fast-projective-skinning-2019.txt, Sec. 6), shared by the CPU
 * backends `fps` and `ps` (backends/ps/fps_collide.c) and the CUDA plugin: one thread per skin vertex
 * (detection), per collision pair (projection) or per free row (right-hand side).
 * SPDX-License-Identifier: MIT
 *
 * Positions are fps_kernels.h's: double, N x 3 column blocks ldx apart, coordinate c of tissue
 * vertex i at x[c * ldx + i]; tissue vertices below n_free are the unknowns (rows of the
 * reduced system), the others are constrained (Sec. 4.3).
 *
 * A collision pair (Sec. 6) is a skin vertex v found inside a tetrahedron whose prism was built
 * from skin triangle (a, b, c) that is not near v on the surface. Its target is v projected
 * onto the triangle's plane ("we project the colliding vertex onto this triangle's plane").
 * The constraint is translation invariant: three edge springs of weight w between v and the
 * triangle's corners k with target edge vectors d_k = p - x_k taken from the projection p:
 *   E = (w / 2) sum_k |(x_v - x_k) - d_k|^2 = (w / 2) |Q_col x - p_col|^2,
 * Q_col's row for spring k being e_v - e_k (one row per coordinate). Hence
 *   Q_col^T Q_col: (v, v) += 3 w, (k, k) += w, (v, k) = (k, v) -= w  for each corner k,
 *   Q_col^T p_col: row v += w sum_k d_k, row k -= w d_k.
 * A constrained vertex's column moves to the right-hand side like K_sb in Sec. 4.3: for a
 * spring between free u and constrained c the matrix keeps (u, u) += w and row u's right-hand
 * side gains + w x_c (the -A_uc x_c term); rows of constrained vertices are dropped.
 *
 * The constraints are unilateral (Sec. 6, first paragraph: "If no collision occurs, the
 * constraint does not do anything"): a pair kept only by the retention rule whose vertex is
 * already outside (above the plane by at least `margin`) targets the vertex where it is. */
#ifndef SINEW_COMMON_FPS_COLLIDE_KERNELS_H
#define SINEW_COMMON_FPS_COLLIDE_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "sinew_hd.h"
#include "sinew_spatial_hash.h"

#define FPS_COLLIDE_NONE 0xffffffffu

static inline SINEW_HD void fps_col_load(const double* x, size_t ldx, uint32_t i, double out[3])
{
    out[0] = x[i];
    out[1] = x[ldx + i];
    out[2] = x[2u * ldx + i];
}

static inline SINEW_HD double fps_col_det3(const double a[3], const double b[3], const double c[3])
{
    return a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
           a[2] * (b[0] * c[1] - b[1] * c[0]);
}

static inline SINEW_HD double fps_col_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline SINEW_HD void fps_col_cross(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Point-in-tetrahedron by barycentric coordinates (ratios of signed volumes, so either
 * orientation works). A tetrahedron whose volume is below 1e-12 of the cube of its longest
 * edge from `a`, or whose input is not finite, contains nothing: no division by zero and no
 * NaN. bary (may be NULL) gets the coordinates of a, b, c, d when p is inside (closed: points
 * on faces count). */
static inline SINEW_HD int fps_point_in_tet(const double p[3], const double a[3], const double b[3],
                                            const double c[3], const double d[3], double bary[4])
{
    double e1[3], e2[3], e3[3], q[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = b[k] - a[k];
        e2[k] = c[k] - a[k];
        e3[k] = d[k] - a[k];
        q[k] = p[k] - a[k];
    }
    double l2 = fps_col_dot(e1, e1);
    double t = fps_col_dot(e2, e2);
    if (t > l2) l2 = t;
    t = fps_col_dot(e3, e3);
    if (t > l2) l2 = t;
    double D = fps_col_det3(e1, e2, e3);
    /* the comparison is false for NaN and infinities alike */
    if (!(fabs(D) > 1e-12 * l2 * sqrt(l2)) || !(fabs(D) < HUGE_VAL)) return 0;
    double inv = 1.0 / D;
    double l1 = fps_col_det3(q, e2, e3) * inv;
    double lb = fps_col_det3(e1, q, e3) * inv;
    double lc = fps_col_det3(e1, e2, q) * inv;
    double l0 = 1.0 - l1 - lb - lc;
    if (!(l0 >= 0.0 && l1 >= 0.0 && lb >= 0.0 && lc >= 0.0)) return 0;
    if (bary) {
        bary[0] = l0;
        bary[1] = l1;
        bary[2] = lb;
        bary[3] = lc;
    }
    return 1;
}

/* The bounding box of prism p, the union of its three tets 3p .. 3p + 2 (tets: 4 tissue
 * indices each), into the spatial hash's layout (6 doubles per box). Hashing prisms rather
 * than tets lists a third as many boxes, and the neighbourhood test is per prism anyway. */
static inline SINEW_HD void fps_collide_prism_box(const double* x, size_t ldx, const uint32_t* tets,
                                                  uint32_t p, double* boxes)
{
    const uint32_t* tv = tets + 12u * (size_t)p;
    double* box = boxes + 6u * (size_t)p;
    for (int c = 0; c < 3; ++c) {
        const double* xc = x + (size_t)c * ldx;
        double lo = xc[tv[0]], hi = lo;
        for (int k = 1; k < 12; ++k) {
            double v = xc[tv[k]];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        /* a NaN corner must not vanish in the comparisons above: it poisons the box */
        for (int k = 0; k < 12; ++k)
            if (xc[tv[k]] != xc[tv[k]]) lo = hi = xc[tv[k]];
        box[c] = lo;
        box[c + 3] = hi;
    }
}

/* The outward unit normal of skin triangle (a, b, c) at positions x: the cross product of its
 * edges times `sign` (+1 or -1, fixed at rest so that the prism's base lies on the negative
 * side). Returns 0 (n = 0) for a triangle whose area is below 1e-12 of its squared edge. */
static inline SINEW_HD int fps_collide_normal(const double xa[3], const double xb[3],
                                              const double xc[3], double sign, double n[3])
{
    double e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = xb[k] - xa[k];
        e2[k] = xc[k] - xa[k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    double l2 = fps_col_dot(n, n);
    double s = fps_col_dot(e1, e1) + fps_col_dot(e2, e2);
    if (!(l2 > 1e-24 * s * s) || !(l2 < HUGE_VAL)) {
        n[0] = n[1] = n[2] = 0.0;
        return 0;
    }
    double f = sign / sqrt(l2);
    n[0] *= f;
    n[1] *= f;
    n[2] *= f;
    return 1;
}

/* Sec. 6: the signed distance of xv above the plane of (xa, xb, xc) (positive outside) and the
 * unilateral target p: xv moved along the normal onto the plane raised by `margin`, when it is
 * below that; xv itself otherwise, and for a degenerate triangle (then the distance is 0). */
static inline SINEW_HD double fps_collide_project(const double xv[3], const double xa[3],
                                                  const double xb[3], const double xc[3],
                                                  double sign, double margin, double p[3])
{
    double n[3], r[3];
    p[0] = xv[0];
    p[1] = xv[1];
    p[2] = xv[2];
    if (!fps_collide_normal(xa, xb, xc, sign, n)) return 0.0;
    for (int k = 0; k < 3; ++k) r[k] = xv[k] - xa[k];
    double dist = fps_col_dot(r, n);
    if (dist < margin) {
        double push = margin - dist;
        for (int k = 0; k < 3; ++k) p[k] = xv[k] + push * n[k];
    }
    return dist;
}

/* An inelastic contact: row `row` of the velocities v (N x 3 columns, ld apart) loses its
 * component along the unit direction n where that component is positive, the speed a contact's
 * push gave it away from the contact. Kept, it carried the vertex out beyond the retention
 * distance at the next prediction, the contact was dropped, the flesh fell back in and was
 * pushed out again: contacts switching on and off every other step. */
static inline SINEW_HD void fps_collide_stop_row(double* v, size_t ld, uint32_t row,
                                                 const double n[3])
{
    double vn = 0.0;
    for (int i = 0; i < 3; ++i) vn += v[(size_t)i * ld + row] * n[i];
    if (vn > 0.0)
        for (int i = 0; i < 3; ++i) v[(size_t)i * ld + row] -= vn * n[i];
}

/* One pair's shares of the right-hand side (Q_col^T p_col plus the moved columns of
 * constrained vertices) for its four slots: 0 = v, 1..3 = tri[0..2]; component i of slot s at
 * contrib[(3 s + i) * stride + pair]. Slots of constrained vertices are written but unused.
 * Returns the signed distance of v above the plane. */
static inline SINEW_HD double fps_collide_pair_rhs(const double* x, size_t ldx, uint32_t v,
                                                   const uint32_t tri[3], double sign, double w,
                                                   double margin, uint32_t n_free, uint32_t pair,
                                                   size_t stride, double* contrib)
{
    double xv[3], xk[3][3], p[3];
    fps_col_load(x, ldx, v, xv);
    for (int k = 0; k < 3; ++k) fps_col_load(x, ldx, tri[k], xk[k]);
    double dist = fps_collide_project(xv, xk[0], xk[1], xk[2], sign, margin, p);
    const int v_free = v < n_free;
    double sv[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < 3; ++k) {
        const int k_free = tri[k] < n_free;
        for (int i = 0; i < 3; ++i) {
            double d = p[i] - xk[k][i]; /* target edge vector d_k */
            sv[i] += w * d;
            /* the constrained end's column moves to the free end's right-hand side */
            if (!k_free) sv[i] += w * xk[k][i];
            double sk = -w * d;
            if (!v_free) sk += w * xv[i];
            contrib[(size_t)(3 * (k + 1) + i) * stride + pair] = sk;
        }
    }
    for (int i = 0; i < 3; ++i) contrib[(size_t)i * stride + pair] = sv[i];
    return dist;
}

/* Free row s of the collision right-hand side: the slots listed for it (gather[e] = 3 slot *
 * stride + pair, in pair order) summed into extra (n_free x 3, ld apart), zero for a row
 * without pairs. */
static inline SINEW_HD void fps_collide_rhs_row(uint32_t s, const uint32_t* gather_ptr,
                                                const uint32_t* gather, const double* contrib,
                                                size_t stride, double* extra, size_t ld)
{
    double acc[3] = {0.0, 0.0, 0.0};
    for (uint32_t e = gather_ptr[s]; e < gather_ptr[s + 1]; ++e) {
        const double* c = contrib + gather[e];
        acc[0] += c[0];
        acc[1] += c[stride];
        acc[2] += c[2u * stride];
    }
    extra[s] = acc[0];
    extra[ld + s] = acc[1];
    extra[2u * ld + s] = acc[2];
}

/* One pair's entries of Q_col^T Q_col restricted to free rows and columns (at most 10:
 * (v, v), then per corner k: (k, k), (v, k), (k, v)); returns how many were written. */
static inline SINEW_HD uint32_t fps_collide_pair_entries(uint32_t v, const uint32_t tri[3],
                                                         double w, uint32_t n_free,
                                                         uint32_t rows[10], uint32_t cols[10],
                                                         double vals[10])
{
    uint32_t m = 0;
    const int v_free = v < n_free;
    if (v_free) {
        rows[m] = v, cols[m] = v, vals[m] = 3.0 * w;
        ++m;
    }
    for (int k = 0; k < 3; ++k) {
        uint32_t c = tri[k];
        if (c >= n_free) continue;
        rows[m] = c, cols[m] = c, vals[m] = w;
        ++m;
        if (v_free) {
            rows[m] = v, cols[m] = c, vals[m] = -w;
            ++m;
            rows[m] = c, cols[m] = v, vals[m] = -w;
            ++m;
        }
    }
    return m;
}

/* The constraint energy (w / 2) sum_k |(x_v - x_k) - d_k|^2 at positions x for target edge
 * vectors d (3 per corner). */
static inline SINEW_HD double fps_collide_pair_energy(const double* x, size_t ldx, uint32_t v,
                                                      const uint32_t tri[3], double w,
                                                      const double d[9])
{
    double xv[3], e = 0.0;
    fps_col_load(x, ldx, v, xv);
    for (int k = 0; k < 3; ++k) {
        double xk[3];
        fps_col_load(x, ldx, tri[k], xk);
        for (int i = 0; i < 3; ++i) {
            double r = xv[i] - xk[i] - d[3 * k + i];
            e += r * r;
        }
    }
    return 0.5 * w * e;
}

/* ---- detection (one thread per skin vertex) ---- */

/* What the detection reads: the tets and their boxes' hash, the skin triangles with their
 * rest orientation, and per skin vertex the sorted triangles it must not collide with (its
 * neighbourhood, see fps_collide.c). Skin vertices and triangles keep the model's numbering;
 * the index arrays name rows of x (the solver may renumber, Sec. 4.3: free rows first). */
typedef struct fps_collide_scene {
    const double* x;
    size_t ldx;
    const uint32_t* tets;        /* 4 rows of x per tet; prism p has tets 3p .. 3p + 2 */
    const uint32_t* triangles;   /* 3 rows of x per skin triangle (= prism) */
    const uint32_t* skin_row;    /* per skin vertex: its row of x */
    const double* tri_sign;      /* per triangle: +1 or -1 (fps_collide_normal) */
    const uint32_t* skip_ptr;    /* n + 1 */
    const uint32_t* skip;        /* sorted triangle indices per skin vertex */
    sinew_spatial_hash_view hash; /* over the prisms' boxes */
    double retain;               /* delta_col: keep a pair while |distance| < retain */
    /* The rest shape for fps_collide_behind (both NULL: no such test): per skin vertex its
     * rest position (3, model numbering), per triangle FPS_COLLIDE_TRI_REST doubles. */
    const double* skin_rest;
    const double* tri_rest;
    /* Body parts (NULL: no such test): per skin vertex its bone, and a bone_count x
     * bone_count table, nonzero where two bones are the same or meet at a joint. */
    const uint32_t* skin_bone;
    const uint32_t* tri_skin;    /* 3 skin vertices (model numbering) per triangle */
    const uint8_t* bone_near;
    uint32_t bone_count;
    /* The same test as one word per triangle (NULL: the table above; for at most 64 bones):
     * bit b set where bone b is the same as, or meets at a joint, the bone of one of the
     * triangle's corners. fps_collide_same_part reads it instead of the table when given. */
    const uint64_t* tri_near;
    /* Anchors (NULL: no such test, fps_collide_anchor_through): per skin vertex the row of x
     * of its base vertex (the tissue vertex on the bone under it), and how far below a
     * triangle's plane the base may lie before the pair is dropped (absolute, >= 0). */
    const uint32_t* base_row;
    double base_depth;
    /* Tet volumes at rest (NULL: no such test, fps_collide_tet_usable): per tet the determinant
     * of its edges from corner 0 (6 V, signed) in the rest shape. */
    const double* tet_rest;
} fps_collide_scene;

/* Per triangle at rest: outward unit normal (3), centroid (3), the prism's depth (how far its
 * base lies below the plane) and the lateral reach of its column (fps_collide_behind). */
#define FPS_COLLIDE_TRI_REST 8

/* Whether skin vertex v lay behind triangle tri at rest: deeper below its plane than the
 * prism reaches and within the column under it. Such a vertex is on the far side of the same
 * limb (a finger's top behind its bottom): it can enter the prism only through the bone, not
 * through the skin triangle, so whatever puts it there is the limb's own deformation (thin
 * parts whose prisms fold or invert), not a contact of two surfaces; projecting it onto the
 * far side's plane would fold the limb. */
static inline SINEW_HD int fps_collide_behind(const fps_collide_scene* S, uint32_t v, uint32_t tri)
{
    if (!S->skin_rest || !S->tri_rest) return 0;
    const double* t = S->tri_rest + (size_t)FPS_COLLIDE_TRI_REST * tri;
    const double* p = S->skin_rest + 3u * (size_t)v;
    double r[3] = {p[0] - t[3], p[1] - t[4], p[2] - t[5]};
    double d = r[0] * t[0] + r[1] * t[1] + r[2] * t[2];
    if (!(d < -t[6])) return 0;
    double lateral2 = fps_col_dot(r, r) - d * d;
    return lateral2 <= t[7] * t[7];
}

/* How far a tetrahedron's volume may be from its rest volume, either way, for its inside to
 * count as tissue (fps_collide_tet_usable). */
#define FPS_COLLIDE_TET_RATIO 4.0

/* Whether tet t, with corners c at the detection's positions, is a usable container: its
 * signed volume within a factor FPS_COLLIDE_TET_RATIO of its rest volume (so not inverted).
 * Sec. 6 takes a tet's inside for the tissue of the other body part and its skin triangle's
 * plane for that part's surface; an inverted or grossly stretched prism is neither. Such
 * prisms appear wherever the skin cannot follow its bones within a step (a pose that jumps:
 * the base vertices are at the new pose, the skin is not), they span space the tissue does
 * not fill, and vertices found inside them would be projected onto planes that face the wrong
 * way, holding the tangle instead of letting the skin return (the male's animations, which
 * jump back to their first key at every loop: docs/decisions/2026-11-26-fps-tet-test.md). */
static inline SINEW_HD int fps_collide_tet_usable(const fps_collide_scene* S, uint32_t t,
                                                  const double c[4][3])
{
    if (!S->tet_rest) return 1;
    double e1[3], e2[3], e3[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = c[1][k] - c[0][k];
        e2[k] = c[2][k] - c[0][k];
        e3[k] = c[3][k] - c[0][k];
    }
    double ratio = fps_col_det3(e1, e2, e3) / S->tet_rest[t];
    /* false for NaN, and for a rest volume of 0 (inf or NaN ratio) */
    return ratio > 1.0 / FPS_COLLIDE_TET_RATIO && ratio < FPS_COLLIDE_TET_RATIO;
}

/* Whether skin vertex v and triangle tri (model numbering of skin vertices) belong to the same
 * bone or to bones that meet at a joint (any corner counts). Sec. 6's collisions are global:
 * between body parts; where two parts meet at a joint, the skin folds on itself (armpit,
 * elbow, a finger's segments, the tissue prisms of such folds overlap), which projective
 * skinning leaves to skin sliding and local collisions (2018 Sec. 4.2, 5). Projecting a fold's
 * vertices onto the planes of the fold's other side pushes the neighbouring prisms into each
 * other and feeds itself (measured on the male's shoulder: the fold's pairs grow step after
 * step). */
static inline SINEW_HD int fps_collide_same_part(const fps_collide_scene* S, uint32_t v, uint32_t tri)
{
    if (!S->skin_bone) return 0;
    if (S->tri_near) return (int)((S->tri_near[tri] >> S->skin_bone[v]) & 1u);
    if (!S->bone_near) return 0;
    const size_t B = S->bone_count;
    const uint32_t bv = S->skin_bone[v];
    for (int k = 0; k < 3; ++k)
        if (S->bone_near[(size_t)bv * B + S->skin_bone[S->tri_skin[3u * tri + (uint32_t)k]]]) return 1;
    return 0;
}

static inline SINEW_HD int fps_collide_skipped(const fps_collide_scene* S, uint32_t v, uint32_t tri)
{
    if (fps_collide_same_part(S, v, tri) || fps_collide_behind(S, v, tri)) return 1;
    uint32_t lo = S->skip_ptr[v], hi = S->skip_ptr[v + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        uint32_t t = S->skip[mid];
        if (t == tri) return 1;
        if (t < tri) lo = mid + 1u;
        else hi = mid;
    }
    return 0;
}

/* The signed distance of skin vertex v above triangle tri's plane, and whether v is still
 * beside the triangle (within its longest edge plus `reach` of its centroid): the retention
 * test of Sec. 6 (pairs stay while closer than delta_col to the plane) with a lateral bound
 * of ours, so a vertex that slid far along the extended plane lets go. */
static inline SINEW_HD int fps_collide_near(const fps_collide_scene* S, uint32_t v, uint32_t tri,
                                            double reach, double* dist)
{
    double xv[3], xk[3][3], n[3], g[3];
    fps_col_load(S->x, S->ldx, S->skin_row[v], xv);
    for (int k = 0; k < 3; ++k) fps_col_load(S->x, S->ldx, S->triangles[3u * tri + (uint32_t)k], xk[k]);
    *dist = 0.0;
    if (!fps_collide_normal(xk[0], xk[1], xk[2], S->tri_sign[tri], n)) return 0;
    double longest = 0.0;
    for (int k = 0; k < 3; ++k) {
        double e[3];
        for (int i = 0; i < 3; ++i) e[i] = xk[(k + 1) % 3][i] - xk[k][i];
        double l = fps_col_dot(e, e);
        longest = l > longest ? l : longest;
        g[k] = (xk[0][k] + xk[1][k] + xk[2][k]) / 3.0 - xv[k];
    }
    double r[3] = {xv[0] - xk[0][0], xv[1] - xk[0][1], xv[2] - xk[0][2]};
    *dist = fps_col_dot(r, n);
    double lateral = sqrt(longest) + reach;
    return fps_col_dot(g, g) <= lateral * lateral;
}

/* Whether the base vertex under skin vertex v (its anchor on the bone) lies more than
 * base_depth below triangle tri's plane. Then the bone itself has passed through the other
 * surface, and no target above the plane can be reached without stretching v's own prism from
 * the bone to beyond the plane: projecting v there crushes a thin part between the other body
 * and its own bones (the male's hand swung into the side of the hip:
 * docs/decisions/2026-11-26-fps-arm-into-torso.md). Such a pair is left to the other side: the other
 * part's skin vertices inside this part's prisms are still projected out of them. */
static inline SINEW_HD int fps_collide_anchor_through(const fps_collide_scene* S, uint32_t v,
                                                      uint32_t tri)
{
    if (!S->base_row) return 0;
    double xb[3], xk[3][3], n[3];
    fps_col_load(S->x, S->ldx, S->base_row[v], xb);
    for (int k = 0; k < 3; ++k) fps_col_load(S->x, S->ldx, S->triangles[3u * tri + (uint32_t)k], xk[k]);
    if (!fps_collide_normal(xk[0], xk[1], xk[2], S->tri_sign[tri], n)) return 0;
    double r[3] = {xb[0] - xk[0][0], xb[1] - xk[0][1], xb[2] - xk[0][2]};
    return fps_col_dot(r, n) < -S->base_depth;
}

/* ---- limb capsules (fps_collide.c): each bone's rest flesh as a star-shaped tube around its
 * segment; here what the CPU and fps-cuda both evaluate per step ---- */
#define FPS_CAP_SLICES 6   /* bins along the bone */
#define FPS_CAP_SECTORS 8  /* bins around it */
#define FPS_CAP_FRAME 13   /* per bone at rest: a (3), u (3), e1 (3), length, lo, hi, reach */
#define FPS_CAP_PI 3.14159265358979323846

/* atan2(y, x) in [-pi, pi] from additions, multiplications, divisions and one square root
 * only: the C library's atan2 and CUDA's differ in the last bits, and the capsules' targets
 * must be the same bits on the CPU and the device. Range reduction to [0, tan(pi/12)] (one
 * step of atan(a) = pi/6 + atan((a sqrt3 - 1) / (a + sqrt3))), then the Taylor series to
 * z^29, below 1e-16 there. */
static inline SINEW_HD double fps_col_atan2(double y, double x)
{
    double ax = x < 0.0 ? -x : x, ay = y < 0.0 ? -y : y;
    double hi = ax > ay ? ax : ay, lo = ax > ay ? ay : ax;
    if (!(hi > 0.0)) return 0.0;
    double a = lo / hi, base = 0.0;
    const double sqrt3 = 1.7320508075688772935;
    if (a > 0.26794919243112270) { /* tan(pi/12) */
        a = (a * sqrt3 - 1.0) / (a + sqrt3);
        base = FPS_CAP_PI / 6.0;
    }
    double z2 = a * a, series = 0.0;
    for (int k = 29; k >= 3; k -= 2) series = (k % 4 == 1 ? 1.0 : -1.0) / k + z2 * series;
    double r = base + (a + a * z2 * series);
    if (ay > ax) r = FPS_CAP_PI / 2.0 - r;
    if (x < 0.0) r = FPS_CAP_PI - r;
    return signbit(y) ? -r : r;
}

/* The angle of unit radial direction dir about axis u from e1, in [-pi, pi]. */
static inline SINEW_HD double fps_capsule_angle(const double u[3], const double e1[3],
                                                const double dir[3])
{
    double e2[3] = {u[1] * e1[2] - u[2] * e1[1], u[2] * e1[0] - u[0] * e1[2],
                    u[0] * e1[1] - u[1] * e1[0]};
    return fps_col_atan2(fps_col_dot(dir, e2), fps_col_dot(dir, e1));
}

/* Where x lies in a capsule: rest is its FPS_CAP_FRAME rest values, R its FPS_CAP_SLICES x
 * FPS_CAP_SECTORS radii, f its frame at the step's pose (a, u, e1). Gives the position along
 * the axis (*t), the distance from the axis (*r) and the radial unit direction; returns the
 * capsule's radius there (bilinear between the bins' centres, wrapping around the axis), 0
 * outside the active range, on the axis, beyond the reach (largest radius plus an edge: no
 * caller needs the radius there) or where the capsule is empty. */
static inline SINEW_HD double fps_capsule_eval(const double* rest, const double* R,
                                               const double* f, const double x[3], double* t,
                                               double* r, double dir[3])
{
    double d[3] = {x[0] - f[0], x[1] - f[1], x[2] - f[2]};
    *t = fps_col_dot(d, f + 3);
    *r = 0.0;
    if (!(*t >= rest[10] && *t <= rest[11])) return 0.0;
    for (int i = 0; i < 3; ++i) dir[i] = d[i] - *t * f[3 + i];
    *r = sqrt(fps_col_dot(dir, dir));
    if (!(*r > 0.0) || *r >= rest[12]) return 0.0;
    for (int i = 0; i < 3; ++i) dir[i] /= *r;
    double ft = *t / rest[9] * FPS_CAP_SLICES - 0.5;
    ft = ft < 0.0 ? 0.0 : ft > FPS_CAP_SLICES - 1 ? FPS_CAP_SLICES - 1 : ft;
    int t0 = (int)ft, t1 = t0 + 1 < FPS_CAP_SLICES ? t0 + 1 : t0;
    double at = ft - t0;
    double fp = (fps_capsule_angle(f + 3, f + 6, dir) + FPS_CAP_PI) / (2.0 * FPS_CAP_PI) *
                    FPS_CAP_SECTORS - 0.5;
    double fl = floor(fp), ap = fp - fl;
    int p0 = ((int)fl % FPS_CAP_SECTORS + FPS_CAP_SECTORS) % FPS_CAP_SECTORS;
    int p1 = (p0 + 1) % FPS_CAP_SECTORS;
    double r0 = (1.0 - ap) * R[t0 * FPS_CAP_SECTORS + p0] + ap * R[t0 * FPS_CAP_SECTORS + p1];
    double r1 = (1.0 - ap) * R[t1 * FPS_CAP_SECTORS + p0] + ap * R[t1 * FPS_CAP_SECTORS + p1];
    return (1.0 - at) * r0 + at * r1;
}

/* The point target of a capsule contact: x moved radially onto the capsule raised by the
 * margin, or x itself where it is outside that. */
static inline SINEW_HD void fps_capsule_target(const double* rest, const double* R,
                                               const double* f, double margin, const double x[3],
                                               double p[3])
{
    double t, r, dir[3];
    for (int i = 0; i < 3; ++i) p[i] = x[i];
    double rad = fps_capsule_eval(rest, R, f, x, &t, &r, dir);
    if (!(rad > 0.0) || r >= rad + margin) return;
    for (int i = 0; i < 3; ++i) p[i] = f[i] + t * f[3 + i] + (rad + margin) * dir[i];
}

/* Sec. 6 for skin vertex v: the triangle of the prism whose tetrahedron contains v (the one
 * whose plane is nearest, previous = the pair's triangle of the last step winning ties so
 * contacts do not flip between prisms), skipping v's own neighbourhood; when none contains it,
 * `previous` is retained while v is within delta_col of its plane (and beside it). Returns
 * the triangle or FPS_COLLIDE_NONE; *retained is 1 when kept by the retention rule only. */
static inline SINEW_HD uint32_t fps_collide_detect_vertex(const fps_collide_scene* S, uint32_t v,
                                                          uint32_t previous, int* retained)
{
    const sinew_spatial_hash_view* h = &S->hash;
    double xv[3];
    fps_col_load(S->x, S->ldx, S->skin_row[v], xv);
    *retained = 0;
    uint32_t best = FPS_COLLIDE_NONE;
    double best_depth = HUGE_VAL;
    if (isfinite(xv[0]) && isfinite(xv[1]) && isfinite(xv[2])) {
        uint32_t q = sinew_spatial_hash_bucket(sinew_spatial_hash_coord(xv[0], h->inv_cell),
                                               sinew_spatial_hash_coord(xv[1], h->inv_cell),
                                               sinew_spatial_hash_coord(xv[2], h->inv_cell),
                                               h->table_mask);
        uint32_t begin = h->bucket_start ? h->bucket_start[q] : 0u;
        uint32_t end = h->bucket_start ? h->bucket_start[q + 1] : 0u;
        /* the bucket's entries, then the large boxes, as one sequence */
        for (uint32_t e = begin; e < end + h->large_count; ++e) {
            uint32_t tri;
            if (e < end) {
                tri = h->entries[e];
                if (e > begin && h->entries[e - 1] == tri) continue;
            } else {
                tri = h->large[e - end];
            }
            /* the body parts first: with tri_near one word, which spares most boxes */
            if (fps_collide_same_part(S, v, tri)) continue;
            if (!sinew_spatial_hash_contains(h->boxes, tri, xv)) continue;
            if (fps_collide_skipped(S, v, tri)) continue;
            int inside = 0;
            for (uint32_t t = 3u * tri; t < 3u * tri + 3u && !inside; ++t) {
                double c[4][3];
                for (int k = 0; k < 4; ++k) fps_col_load(S->x, S->ldx, S->tets[4u * t + (uint32_t)k], c[k]);
                inside = fps_point_in_tet(xv, c[0], c[1], c[2], c[3], NULL) &&
                         fps_collide_tet_usable(S, t, (const double(*)[3])c);
            }
            if (!inside || fps_collide_anchor_through(S, v, tri)) continue;
            double dist;
            fps_collide_near(S, v, tri, HUGE_VAL, &dist);
            double depth = tri == previous ? -HUGE_VAL : fabs(dist);
            if (depth < best_depth || (depth == best_depth && tri < best)) {
                best_depth = depth;
                best = tri;
            }
        }
    }
    if (best == FPS_COLLIDE_NONE && previous != FPS_COLLIDE_NONE) {
        double dist;
        if (fps_collide_near(S, v, previous, S->retain, &dist) && fabs(dist) < S->retain &&
            !fps_collide_anchor_through(S, v, previous)) {
            best = previous;
            *retained = 1;
        }
    }
    return best;
}

#endif
