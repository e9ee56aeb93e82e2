/* Unit dual quaternions for rigid transforms, and the conversion from a skinning matrix.
 * SPDX-License-Identifier: MIT
 *
 * Layout: 8 floats, real part x y z w then dual part x y z w. A rigid transform
 * x -> R x + t is the pair (r, e) with r the unit quaternion of R and e = 1/2 (t, 0) r
 * (Kavan et al. 2008, "Geometric skinning with approximate dual quaternion blending", Sec. 2).
 *
 * Dual quaternions represent rigid transforms only. A skinning matrix whose 3x3 part carries
 * scale or shear is projected to a rotation first:
 * - det > 0 (the usual case, including any scale and shear): the orthogonal factor of its polar
 *   decomposition, the rotation nearest to it in the Frobenius norm, computed with Higham's
 *   scaled Newton iteration (Higham 1986, "Computing the polar decomposition - with
 *   applications", SIAM J. Sci. Stat. Comput. 7(4), Sec. 3);
 * - det <= 0 (a mirror or a collapsed joint, which no rotation can express): Gram-Schmidt
 *   orthonormalisation of the first two columns, with the third axis their cross product.
 * The translation is kept as the matrix's last column; row 3 is ignored (affine matrices). */
#ifndef SINEW_COMMON_DUAL_QUAT_H
#define SINEW_COMMON_DUAL_QUAT_H

#include <math.h>

/* det of a 3x3 matrix a[row][col]. */
static inline double sinew_mat3_det(const double a[3][3])
{
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
           a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

/* The cofactor matrix: a^-T = cofactor(a) / det(a). */
static inline void sinew_mat3_cofactor(const double a[3][3], double c[3][3])
{
    c[0][0] = a[1][1] * a[2][2] - a[1][2] * a[2][1];
    c[0][1] = a[1][2] * a[2][0] - a[1][0] * a[2][2];
    c[0][2] = a[1][0] * a[2][1] - a[1][1] * a[2][0];
    c[1][0] = a[0][2] * a[2][1] - a[0][1] * a[2][2];
    c[1][1] = a[0][0] * a[2][2] - a[0][2] * a[2][0];
    c[1][2] = a[0][1] * a[2][0] - a[0][0] * a[2][1];
    c[2][0] = a[0][1] * a[1][2] - a[0][2] * a[1][1];
    c[2][1] = a[0][2] * a[1][0] - a[0][0] * a[1][2];
    c[2][2] = a[0][0] * a[1][1] - a[0][1] * a[1][0];
}

static inline double sinew_mat3_frobenius(const double a[3][3])
{
    double s = 0.0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) s += a[i][j] * a[i][j];
    return sqrt(s);
}

/* Orthogonal polar factor of `a` by Higham's Newton iteration X <- (g X + X^-T / g) / 2 with
 * the Frobenius-norm scaling g = sqrt(|X^-1| / |X|) while far from convergence (Higham 1986,
 * Sec. 3.3). Returns 0 when det(a) is not clearly positive: the iteration would converge to a
 * reflection or not at all.
 * Near the fixed point the unscaled step is quadratic: a step of Frobenius length e leaves X
 * about e^2 / 2 from the polar factor. The loop stops after a step shorter than 1e-6 (the
 * error left is below 1e-12, far under float rounding), so a skinning matrix that is a rotation
 * up to float rounding takes one step, and the scaling, about 1 there, is skipped for it. */
static inline int sinew_polar_rotation(const double a[3][3], double r[3][3])
{
    double x[3][3], c[3][3];
    double norm2 = 0.0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) norm2 += a[i][j] * a[i][j];
    sinew_mat3_cofactor(a, c);
    double det = a[0][0] * c[0][0] + a[0][1] * c[0][1] + a[0][2] * c[0][2];
    /* det > 1e-12 |a|^3, squared */
    if (!(norm2 > 0.0) || !(det > 0.0) || !(det * det > 1e-24 * norm2 * norm2 * norm2)) return 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) x[i][j] = a[i][j];
    int scaled = !(fabs(norm2 - 3.0) < 1e-3 && fabs(det - 1.0) < 1e-3);
    for (int iter = 0; iter < 60; ++iter) {
        if (iter > 0) {
            sinew_mat3_cofactor(x, c);
            det = x[0][0] * c[0][0] + x[0][1] * c[0][1] + x[0][2] * c[0][2];
        }
        double g = 1.0;
        if (scaled) g = sqrt(sinew_mat3_frobenius(c) / fabs(det) / sinew_mat3_frobenius(x));
        double gx = 0.5 * g, gc = 0.5 / (g * det);
        double change = 0.0;
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
                double next = gx * x[i][j] + gc * c[i][j];
                change += (next - x[i][j]) * (next - x[i][j]);
                x[i][j] = next;
            }
        }
        if (!scaled && change < 1e-12) break;
        if (change < 1e-4) scaled = 0;
    }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r[i][j] = x[i][j];
    return 1;
}

/* A rotation from the first two columns of `a` (Gram-Schmidt), for matrices with det <= 0. */
static inline void sinew_orthonormalise_rotation(const double a[3][3], double r[3][3])
{
    double x[3] = {a[0][0], a[1][0], a[2][0]};
    double y[3] = {a[0][1], a[1][1], a[2][1]};
    double lx = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    if (lx < 1e-30) {
        x[0] = 1.0;
        x[1] = 0.0;
        x[2] = 0.0;
    } else {
        for (int i = 0; i < 3; ++i) x[i] /= lx;
    }
    double y0 = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
    double d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    for (int i = 0; i < 3; ++i) y[i] -= d * x[i];
    double ly = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
    /* Relative test: of two parallel float columns only rounding noise would be left. */
    if (ly <= 1e-6 * y0 || ly < 1e-30) {
        /* No second axis: take the coordinate axis x is least along, made perpendicular to x
         * (a zero matrix thus becomes the identity). */
        int k = fabs(x[0]) <= fabs(x[1]) ? (fabs(x[0]) <= fabs(x[2]) ? 0 : 2)
                                         : (fabs(x[1]) <= fabs(x[2]) ? 1 : 2);
        for (int i = 0; i < 3; ++i) y[i] = (i == k ? 1.0 : 0.0) - x[k] * x[i];
        ly = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
    }
    for (int i = 0; i < 3; ++i) y[i] /= ly;
    double z[3] = {x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]};
    for (int i = 0; i < 3; ++i) {
        r[i][0] = x[i];
        r[i][1] = y[i];
        r[i][2] = z[i];
    }
}

/* Unit quaternion (x y z w, w >= 0) of a rotation matrix r[row][col], by Shepperd's method:
 * of 1 + trace and the 1 + 2 r_ii - trace (4 w^2 and 4 x^2, 4 y^2, 4 z^2) take the largest,
 * which is at least 1, and the matching column of the symmetric matrix 4 q q^T; that column is
 * the quaternion times 4 w (or 4 x, ...), and one normalisation leaves the quaternion, so it
 * never divides by a small number (Shepperd 1978, J. Guidance and Control 1(3)). */
static inline void sinew_quat_from_rotation(const double r[3][3], double q[4])
{
    double tr = r[0][0] + r[1][1] + r[2][2];
    double x, y, z, w;
    if (tr >= r[0][0] && tr >= r[1][1] && tr >= r[2][2]) {
        w = 1.0 + tr;
        x = r[2][1] - r[1][2];
        y = r[0][2] - r[2][0];
        z = r[1][0] - r[0][1];
    } else if (r[0][0] >= r[1][1] && r[0][0] >= r[2][2]) {
        x = 1.0 + r[0][0] - r[1][1] - r[2][2];
        w = r[2][1] - r[1][2];
        y = r[0][1] + r[1][0];
        z = r[0][2] + r[2][0];
    } else if (r[1][1] >= r[2][2]) {
        y = 1.0 - r[0][0] + r[1][1] - r[2][2];
        w = r[0][2] - r[2][0];
        x = r[0][1] + r[1][0];
        z = r[1][2] + r[2][1];
    } else {
        z = 1.0 - r[0][0] - r[1][1] + r[2][2];
        w = r[1][0] - r[0][1];
        x = r[0][2] + r[2][0];
        y = r[1][2] + r[2][1];
    }
    double n = 1.0 / sqrt(x * x + y * y + z * z + w * w);
    if (w < 0.0) n = -n; /* one canonical sign: q and -q are the same rotation */
    q[0] = x * n;
    q[1] = y * n;
    q[2] = z * n;
    q[3] = w * n;
}

/* The unit dual quaternion of the rigid part of column-major skinning matrix `m`. */
static inline void sinew_dual_quat_from_matrix(const float m[16], float out[8])
{
    double a[3][3], r[3][3], q[4];
    for (int row = 0; row < 3; ++row)
        for (int col = 0; col < 3; ++col) a[row][col] = (double)m[col * 4 + row];
    if (!sinew_polar_rotation(a, r)) sinew_orthonormalise_rotation(a, r);
    sinew_quat_from_rotation(r, q);
    double t[3] = {m[12], m[13], m[14]};
    /* e = 1/2 (t, 0) q: vector part (w t + t x q_v) / 2, scalar part -(t . q_v) / 2. */
    double ex = 0.5 * (q[3] * t[0] + t[1] * q[2] - t[2] * q[1]);
    double ey = 0.5 * (q[3] * t[1] + t[2] * q[0] - t[0] * q[2]);
    double ez = 0.5 * (q[3] * t[2] + t[0] * q[1] - t[1] * q[0]);
    double ew = -0.5 * (t[0] * q[0] + t[1] * q[1] + t[2] * q[2]);
    out[0] = (float)q[0];
    out[1] = (float)q[1];
    out[2] = (float)q[2];
    out[3] = (float)q[3];
    out[4] = (float)ex;
    out[5] = (float)ey;
    out[6] = (float)ez;
    out[7] = (float)ew;
}

#endif
