/* The constraint graph of pbd and its colouring (Sec. 4): hand-made graphs with known colour
 * counts, then the tissue meshes of the test characters, without and with the bending
 * constraints: every constraint of the tissue mesh is there once, no colour holds two
 * constraints that share a particle, and the number of colours is at most the constraint
 * graph's degeneracy + 1 (eq. 15), the degeneracy computed here by plain peeling.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "pbd_internal.h"
#include "ps_fixture.h"

#define NONE PBD_NONE

static void colour_of(const uint32_t* particles, uint32_t count, uint32_t particle_count,
                      uint32_t expect_colours, uint32_t expect_degeneracy)
{
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    uint32_t colour[16], colours = 99, degeneracy = 99;
    assert_int_equal(pbd_colour(&host.api, particle_count, count, particles, colour, &colours,
                                &degeneracy),
                     SINEW_OK);
    assert_int_equal(colours, expect_colours);
    assert_int_equal(degeneracy, expect_degeneracy);
    for (uint32_t a = 0; a < count; ++a)
        for (uint32_t b = a + 1u; b < count; ++b) {
            if (colour[a] != colour[b]) continue;
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) {
                    uint32_t p = particles[4u * a + i];
                    if (p != NONE && p == particles[4u * b + j])
                        fail_msg("constraints %u and %u share particle %u in colour %u", a, b, p,
                                 colour[a]);
                }
        }
}

/* Graphs small enough to colour by hand. */
static void test_small_graphs(void** state)
{
    (void)state;
    /* a chain of 5 edges: each shares a particle with its neighbours only */
    const uint32_t chain[] = {0, 1, NONE, NONE, 1, 2, NONE, NONE, 2, 3, NONE, NONE,
                              3, 4, NONE, NONE, 4, 5, NONE, NONE};
    colour_of(chain, 5, 6, 2, 1);
    /* a star: 4 edges at particle 0 form a clique of 4 */
    const uint32_t star[] = {0, 1, NONE, NONE, 0, 2, NONE, NONE, 0, 3, NONE, NONE,
                             0, 4, NONE, NONE};
    colour_of(star, 4, 5, 4, 3);
    /* two tets on a shared face, an edge apart from both, and an edge of the first tet */
    const uint32_t tets[] = {0, 1, 2, 3, 1, 2, 3, 4, 5, 6, NONE, NONE, 0, 1, NONE, NONE};
    colour_of(tets, 4, 7, 3, 2);
    /* nothing to colour */
    colour_of(tets, 0, 7, 0, 0);
}

/* The degeneracy of the constraint graph by peeling: repeatedly remove a node of least degree
 * (found by a linear scan); the largest degree removed is the degeneracy. */
static uint32_t peel_degeneracy(const pbd_constraints* c)
{
    uint32_t n = c->stretch_count + c->volume_count + c->bending_count, P = c->particle_count;
    uint32_t (*parts)[4] = malloc(sizeof *parts * n);
    uint32_t* count = calloc(P, sizeof(uint32_t));
    uint32_t** at = calloc(P, sizeof(uint32_t*));
    uint32_t* degree = calloc(n, sizeof(uint32_t));
    uint8_t* gone = calloc(n, 1);
    uint32_t* mark = calloc(n, sizeof(uint32_t));
    assert_true(parts && count && at && degree && gone && mark);
    for (uint32_t k = 0; k < n; ++k) {
        uint32_t colour;
        pbd_constraint_particles(c, k, parts[k], &colour);
        for (int a = 0; a < 4; ++a)
            if (parts[k][a] != NONE) {
                uint32_t p = parts[k][a];
                at[p] = realloc(at[p], sizeof(uint32_t) * (count[p] + 1u));
                at[p][count[p]++] = k;
            }
    }
    /* neighbours of k: the distinct other constraints at its particles (mark[o] == k + 1) */
#define FOR_NEIGHBOURS(k, body)                                                   \
    for (int a_ = 0; a_ < 4; ++a_) {                                              \
        uint32_t p_ = parts[k][a_];                                               \
        if (p_ == NONE) continue;                                                 \
        for (uint32_t e_ = 0; e_ < count[p_]; ++e_) {                             \
            uint32_t o = at[p_][e_];                                              \
            if (o == k || gone[o] || mark[o] == stamp) continue;                  \
            mark[o] = stamp;                                                      \
            body;                                                                 \
        }                                                                         \
    }
    uint32_t stamp = 0;
    for (uint32_t k = 0; k < n; ++k) {
        ++stamp;
        FOR_NEIGHBOURS(k, degree[k]++)
    }
    uint32_t degeneracy = 0;
    for (uint32_t removed = 0; removed < n; ++removed) {
        uint32_t best = NONE;
        for (uint32_t k = 0; k < n; ++k)
            if (!gone[k] && (best == NONE || degree[k] < degree[best])) best = k;
        if (degree[best] > degeneracy) degeneracy = degree[best];
        gone[best] = 1;
        ++stamp;
        FOR_NEIGHBOURS(best, degree[o]--)
    }
#undef FOR_NEIGHBOURS
    for (uint32_t p = 0; p < P; ++p) free(at[p]);
    free(parts), free(count), free(at), free(degree), free(gone), free(mark);
    return degeneracy;
}

/* No colour holds two constraints that share a particle; the colour runs cover every
 * constraint once. */
static void check_colours(const pbd_constraints* c)
{
    uint32_t* seen = calloc(c->particle_count, sizeof(uint32_t));
    assert_non_null(seen);
    assert_int_equal(c->stretch_offsets[c->colour_count], c->stretch_count);
    assert_int_equal(c->volume_offsets[c->colour_count], c->volume_count);
    assert_int_equal(c->bending_offsets[c->colour_count], c->bending_count);
    for (uint32_t q = 0; q < c->colour_count; ++q) {
        assert_true(pbd_colour_size(c, q) > 0);
        for (uint32_t i = c->stretch_offsets[q]; i < c->stretch_offsets[q + 1u]; ++i) {
            uint32_t p[2] = {c->stretch_a[i], c->stretch_b[i]};
            for (int a = 0; a < 2; ++a) {
                if (seen[p[a]] == q + 1u) fail_msg("colour %u: particle %u twice", q, p[a]);
                seen[p[a]] = q + 1u;
            }
        }
        for (uint32_t i = c->volume_offsets[q]; i < c->volume_offsets[q + 1u]; ++i)
            for (int a = 0; a < 4; ++a) {
                uint32_t p = c->volume_p[a][i];
                if (seen[p] == q + 1u) fail_msg("colour %u: particle %u twice", q, p);
                seen[p] = q + 1u;
            }
        for (uint32_t i = c->bending_offsets[q]; i < c->bending_offsets[q + 1u]; ++i)
            for (int a = 0; a < 4; ++a) {
                uint32_t p = c->bending_p[a][i];
                if (seen[p] == q + 1u) fail_msg("colour %u: particle %u twice", q, p);
                seen[p] = q + 1u;
            }
    }
    free(seen);
}

static int key_order(const void* a, const void* b)
{
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* The constraints the tissue mesh should give: the unique edges and the tets of the kept tets
 * that move (a corner of positive inverse mass). */
static void check_counts(const ps_model* m, const pbd_constraints* c)
{
    uint64_t N = 2u * (uint64_t)m->n;
    uint64_t* keys = malloc(sizeof(uint64_t) * 6u * (m->tet_count + 1u));
    uint32_t k = 0, tets = 0;
    for (uint32_t t = 0; t < m->tet_count; ++t) {
        if (m->tet_excluded[t]) continue;
        const uint32_t* v = m->tets + 4u * t;
        bool moves = false;
        for (int a = 0; a < 4; ++a) moves = moves || c->inv_mass[v[a]] > 0.0;
        tets += moves;
        for (int a = 0; a < 4; ++a)
            for (int b = a + 1; b < 4; ++b) {
                uint64_t lo = v[a] < v[b] ? v[a] : v[b], hi = v[a] < v[b] ? v[b] : v[a];
                if (c->inv_mass[lo] > 0.0 || c->inv_mass[hi] > 0.0) keys[k++] = lo * N + hi;
            }
    }
    qsort(keys, k, sizeof *keys, key_order);
    uint32_t unique = 0;
    for (uint32_t i = 0; i < k; ++i) unique += i == 0 || keys[i] != keys[i - 1u];
    assert_int_equal(c->stretch_count, unique);
    assert_int_equal(c->volume_count, tets);
    free(keys);
}

/* The bending pairs the skin should give: its edges that exactly two triangles share, of the
 * pairs with a moving corner; each pair's edge and corners as the constraint holds them. */
static void check_pairs(const ps_model* m, const pbd_constraints* c, bool bending)
{
    uint64_t n = m->n;
    uint64_t* keys = malloc(sizeof(uint64_t) * 3u * (m->triangle_count + 1u));
    uint32_t k = 0;
    for (uint32_t t = 0; t < m->triangle_count; ++t)
        for (int a = 0; a < 3; ++a) {
            uint64_t u = m->triangles[3u * t + a], v = m->triangles[3u * t + (a + 1) % 3];
            keys[k++] = u < v ? u * n + v : v * n + u;
        }
    qsort(keys, k, sizeof *keys, key_order);
    uint32_t pairs = 0;
    for (uint32_t i = 0; i < k;) {
        uint32_t j = i;
        while (j < k && keys[j] == keys[i]) ++j;
        pairs += j - i == 2u;
        i = j;
    }
    /* every skin vertex of the test characters moves: no pair drops out for want of one */
    assert_int_equal(c->bending_count, bending ? pairs : 0u);
    for (uint32_t i = 0; i < c->bending_count; ++i) {
        const uint32_t* p[4] = {&c->bending_p[0][i], &c->bending_p[1][i], &c->bending_p[2][i],
                                &c->bending_p[3][i]};
        for (int a = 0; a < 4; ++a) assert_true(*p[a] < m->n); /* skin particles only */
        assert_true(*p[0] != *p[1] && *p[2] != *p[3] && *p[2] != *p[0] && *p[3] != *p[1]);
    }
    free(keys);
}

/* The most constraints at one particle: they form a clique, so no colouring needs fewer. */
static uint32_t largest_clique_at_a_particle(const pbd_constraints* c)
{
    uint32_t* at = calloc(c->particle_count, sizeof(uint32_t));
    assert_non_null(at);
    uint32_t n = c->stretch_count + c->volume_count + c->bending_count, most = 0;
    for (uint32_t k = 0; k < n; ++k) {
        uint32_t p[4], colour;
        pbd_constraint_particles(c, k, p, &colour);
        for (int a = 0; a < 4; ++a)
            if (p[a] != NONE && ++at[p[a]] > most) most = at[p[a]];
    }
    free(at);
    return most;
}

static void check_character(const char* relative, bool bending)
{
    const char* path = sinew_test_data_path(relative);
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_INFO, 0);
    void* inst = NULL;
    const sinew_param params[] = {{"bending", bending ? "1" : "0"}};
    assert_int_equal(sinew_backend_pbd.prepare(&host.api, &rig.view, params, 1, NULL, &inst),
                     SINEW_OK);
    /* the preparation's INFO line names the colour count */
    char expect[64];
    uint32_t colours = pbd_instance_colour_count(inst);
    snprintf(expect, sizeof expect, "in %u colours of ", colours);
    assert_non_null(strstr(host.log.last, expect));
    const pbd_constraints* c = pbd_sim_constraints(pbd_instance_sim(inst));
    assert_int_equal(c->colour_count, colours);
    check_counts(pbd_instance_model(inst), c);
    check_pairs(pbd_instance_model(inst), c, bending);
    check_colours(c);
    uint32_t degeneracy = peel_degeneracy(c), clique = largest_clique_at_a_particle(c);
    print_message("%s: %u stretch + %u volume + %u bending constraints, %u colours, degeneracy "
                  "%u (colouring found %u), %u constraints at the busiest particle\n", relative,
                  c->stretch_count, c->volume_count, c->bending_count, colours, degeneracy,
                  c->degeneracy, clique);
    assert_int_equal(c->degeneracy, degeneracy);
    assert_true(colours <= degeneracy + 1u);
    assert_true(colours >= clique);
    sinew_backend_pbd.destroy(inst);
    ps_test_rig_free(&rig);
}

static void test_cylinder(void** state)
{
    (void)state;
    check_character("characters/cylinder/cylinder.ini", false);
    check_character("characters/cylinder/cylinder.ini", true);
}

static void test_tbone(void** state)
{
    (void)state;
    check_character("characters/tbone/tbone.ini", false);
    check_character("characters/tbone/tbone.ini", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_graphs),
        cmocka_unit_test(test_cylinder),
        cmocka_unit_test(test_tbone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
