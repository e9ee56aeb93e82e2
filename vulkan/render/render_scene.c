/* The camera, lights and floor of a rendered scene, and the host-side helpers of mesh data.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "render_internal.h"

#define RENDER_PI 3.14159265358979323846
/* Vertical field of view; narrow enough that the characters are not distorted. */
#define RENDER_FOV_Y_DEGREES 30.0

static void v3_set(double* o, double x, double y, double z) { o[0] = x; o[1] = y; o[2] = z; }
static double v3_dot(const double* a, const double* b) { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2]; }
static void v3_cross(const double* a, const double* b, double* o)
{
    double t[3] = {a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]};
    memcpy(o, t, sizeof t);
}
static int v3_normalize(double* a)
{
    double l = sqrt(v3_dot(a, a));
    if (!(l > 1e-12)) return 0;
    a[0] /= l; a[1] /= l; a[2] /= l;
    return 1;
}
/* Rotates v about the unit axis k by angle (Rodrigues' formula). */
static void v3_rotate(double* v, const double* k, double angle)
{
    double c = cos(angle), s = sin(angle), kxv[3];
    v3_cross(k, v, kxv);
    double kv = v3_dot(k, v);
    for (int i = 0; i < 3; i++) v[i] = v[i] * c + kxv[i] * s + k[i] * kv * (1.0 - c);
}

float render_grid_spacing(float diagonal)
{
    double target = diagonal > 0.0f ? diagonal / 8.0 : 1.0;
    double p = pow(10.0, floor(log10(target)));
    double best = p;
    const double steps[3] = {1.0, 2.0, 5.0};
    for (int i = 0; i < 3; i++)
        if (fabs(log(steps[i] * p / target)) < fabs(log(best / target))) best = steps[i] * p;
    if (fabs(log(10.0 * p / target)) < fabs(log(best / target))) best = 10.0 * p;
    return (float)best;
}

/* The unit up axis and the unit direction from the target to the camera: the caller's, or
 * the model's usual front (+z for y up as in glTF, -y for z up as in Blender and 3ds Max
 * exports) turned about up and raised, a three-quarter view that shows depth and the floor.
 * A view straight along up has no horizon: up is tilted aside to keep the basis defined. */
static void view_axes(const float up_in[3], const float view_direction[3], double up[3],
                      double dir[3])
{
    v3_set(up, up_in[0], up_in[1], up_in[2]);
    if (!v3_normalize(up)) v3_set(up, 0.0, 1.0, 0.0);
    double front[3];
    int up_axis = fabs(up[2]) >= fabs(up[1]) && fabs(up[2]) >= fabs(up[0]) ? 2
                : fabs(up[1]) >= fabs(up[0]) ? 1 : 0;
    if (up_axis == 2) v3_set(front, 0.0, up[2] > 0.0 ? -1.0 : 1.0, 0.0);
    else v3_set(front, 0.0, 0.0, 1.0);
    v3_set(dir, view_direction[0], view_direction[1], view_direction[2]);
    if (!v3_normalize(dir)) {
        double f_up = v3_dot(front, up);
        for (int i = 0; i < 3; i++) dir[i] = front[i] - f_up * up[i];
        v3_normalize(dir);
        v3_rotate(dir, up, 25.0 * RENDER_PI / 180.0);
        double side[3];
        v3_cross(dir, up, side);
        v3_normalize(side);
        v3_rotate(dir, side, 20.0 * RENDER_PI / 180.0);
    }
    if (fabs(v3_dot(dir, up)) > 0.999) {
        double other[3] = {up[1], up[2], up[0]};
        v3_cross(dir, other, up);
        v3_normalize(up);
    }
}

/* The nearest camera distance at which all eight box corners (half extents `half`) lie inside
 * the frustum (a corner at lateral offsets x, y and depth z towards the camera needs
 * d >= z + |x| / tan_x and d >= z + |y| / tan_y), with a margin, and outside the box; tighter
 * than fitting the bounding sphere, which leaves a tall character small in a narrow column. */
static double camera_distance(const double half[3], const double dir[3], const double s[3],
                              const double u[3], double tan_x, double tan_y, double radius)
{
    double distance = 0.0;
    for (int corner = 0; corner < 8; corner++) {
        double p[3] = {(corner & 1) ? half[0] : -half[0], (corner & 2) ? half[1] : -half[1],
                       (corner & 4) ? half[2] : -half[2]};
        double x = fabs(v3_dot(p, s)), y = fabs(v3_dot(p, u)), z = v3_dot(p, dir);
        double need = z + (x / tan_x > y / tan_y ? x / tan_x : y / tan_y);
        if (need > distance) distance = need;
    }
    distance *= 1.08;
    if (distance < 1.2 * radius) distance = 1.2 * radius;
    return distance;
}

/* view_proj for the camera at `eye` looking along f (s right, u up), in Vulkan clip space: x
 * right, y down, depth 0 at near and 1 at far. */
static void view_projection(const double s[3], const double u[3], const double f[3],
                            const double eye[3], double tan_x, double tan_y, double znear,
                            double zfar, float out[16])
{
    double view[16] = {
        s[0], -u[0], f[0], 0.0,
        s[1], -u[1], f[1], 0.0,
        s[2], -u[2], f[2], 0.0,
        -v3_dot(s, eye), v3_dot(u, eye), -v3_dot(f, eye), 1.0};
    double proj[16];
    memset(proj, 0, sizeof proj);
    proj[0] = 1.0 / tan_x;
    proj[5] = 1.0 / tan_y;
    proj[10] = zfar / (zfar - znear);
    proj[11] = 1.0;
    proj[14] = -znear * zfar / (zfar - znear);
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) {
            double sum = 0.0;
            for (int k = 0; k < 4; k++) sum += proj[k * 4 + r] * view[c * 4 + k];
            out[c * 4 + r] = (float)sum;
        }
}

/* Key light from above-left of the camera, fill from the right and lower. */
static void scene_lights(const double dir[3], const double s[3], const double u[3],
                         render_frame_ubo* out)
{
    double key[3], fill[3];
    for (int i = 0; i < 3; i++) {
        key[i] = dir[i] * 0.8 - s[i] * 0.6 + u[i] * 0.9;
        fill[i] = dir[i] * 0.5 + s[i] * 0.9 - u[i] * 0.2;
    }
    v3_normalize(key);
    v3_normalize(fill);
    for (int i = 0; i < 3; i++) {
        out->light0[i] = (float)key[i];
        out->light1[i] = (float)fill[i];
    }
    out->light0[3] = 0.85f;
    out->light1[3] = 0.35f;
}

/* The floor under the box: its centre projected down the up axis to the box's lowest point
 * along up, a hair below so that feet resting on it do not flicker; 1.6 radii each way. */
static void scene_floor(const float bounds[6], const double center[3], const double up[3],
                        double radius, render_frame_ubo* out)
{
    double lowest = 0.0;
    for (int corner = 0; corner < 8; corner++) {
        double p[3] = {bounds[(corner & 1) ? 3 : 0], bounds[(corner & 2) ? 4 : 1],
                       bounds[(corner & 4) ? 5 : 2]};
        double h = v3_dot(p, up);
        if (corner == 0 || h < lowest) lowest = h;
    }
    double c_up = v3_dot(center, up) - lowest + radius * 1e-3;
    double a[3], b[3];
    double other[3] = {fabs(up[0]) < 0.9 ? 1.0 : 0.0, fabs(up[0]) < 0.9 ? 0.0 : 1.0, 0.0};
    v3_cross(up, other, a);
    v3_normalize(a);
    v3_cross(up, a, b);
    double extent = 1.6 * radius;
    for (int i = 0; i < 3; i++) {
        out->floor_center[i] = (float)(center[i] - c_up * up[i]);
        out->floor_u[i] = (float)(a[i] * extent);
        out->floor_v[i] = (float)(b[i] * extent);
    }
    out->floor_center[3] = render_grid_spacing((float)(2.0 * radius));
}

void render_scene_setup(const float bounds[6], const float up_in[3],
                        const float view_direction[3], float aspect, render_frame_ubo* out)
{
    memset(out, 0, sizeof *out);
    double up[3], dir[3];
    view_axes(up_in, view_direction, up, dir);
    double center[3], half[3];
    for (int i = 0; i < 3; i++) {
        center[i] = 0.5 * ((double)bounds[i] + bounds[i + 3]);
        half[i] = 0.5 * ((double)bounds[i + 3] - bounds[i]);
    }
    double radius = sqrt(v3_dot(half, half));
    if (!(radius > 1e-6)) radius = 1e-6;
    /* View basis: f towards the target, s to the right, u up. */
    double f[3] = {-dir[0], -dir[1], -dir[2]}, s[3], u[3];
    v3_cross(f, up, s);
    v3_normalize(s);
    v3_cross(s, f, u);
    double tan_y = tan(0.5 * RENDER_FOV_Y_DEGREES * RENDER_PI / 180.0);
    double tan_x = tan_y * (aspect > 0.0f ? aspect : 1.0);
    double distance = camera_distance(half, dir, s, u, tan_x, tan_y, radius);
    double eye[3];
    for (int i = 0; i < 3; i++) eye[i] = center[i] + dir[i] * distance;
    /* The floor reaches 1.6 radii out, so the depth range covers up to 2 radii past the
     * centre; near stays well above zero for depth precision. */
    double znear = distance - 2.0 * radius;
    if (znear < distance * 0.02) znear = distance * 0.02;
    double zfar = distance + 2.0 * radius;
    view_projection(s, u, f, eye, tan_x, tan_y, znear, zfar, out->view_proj);
    for (int i = 0; i < 3; i++) out->camera_pos[i] = (float)eye[i];
    scene_lights(dir, s, u, out);
    scene_floor(bounds, center, up, radius, out);
    out->background[0] = 0.045f;
    out->background[1] = 0.050f;
    out->background[2] = 0.062f;
    out->background[3] = 1.0f;
}

void render_bounds_add(float box[6], const float* xyz, uint32_t count, size_t stride)
{
    const unsigned char* base = (const unsigned char*)xyz;
    for (uint32_t v = 0; v < count; v++) {
        const float* p = (const float*)(const void*)(base + (size_t)v * stride);
        for (int i = 0; i < 3; i++) {
            if (p[i] < box[i]) box[i] = p[i];
            if (p[i] > box[i + 3]) box[i + 3] = p[i];
        }
    }
}

void render_compute_normals(const float* positions, size_t stride, uint32_t vertex_count,
                            const uint32_t* indices, uint32_t triangle_count, float* out)
{
    const unsigned char* base = (const unsigned char*)positions;
    memset(out, 0, sizeof(float) * 3 * (size_t)vertex_count);
    for (uint32_t t = 0; t < triangle_count; t++) {
        const uint32_t* tri = indices + 3 * (size_t)t;
        const float* p[3];
        for (int k = 0; k < 3; k++) p[k] = (const float*)(const void*)(base + tri[k] * stride);
        double e1[3], e2[3], n[3];
        for (int i = 0; i < 3; i++) {
            e1[i] = (double)p[1][i] - p[0][i];
            e2[i] = (double)p[2][i] - p[0][i];
        }
        /* The unnormalised cross product weighs each face by its area. */
        v3_cross(e1, e2, n);
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++) out[3 * (size_t)tri[k] + i] += (float)n[i];
    }
    for (uint32_t v = 0; v < vertex_count; v++) {
        float* n = out + 3 * (size_t)v;
        float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (l > 0.0f) { n[0] /= l; n[1] /= l; n[2] /= l; }
    }
}
