/* Local collisions of the ps backend (projective skinning Sec. 5): the joints chosen for the
 * extreme poses, the candidate pairs found there (a male elbow, two joints of the cylinder), the
 * candidates' round trip through baked data bit for bit and the refusal of a damaged candidate
 * section, the run-time angle test of Fig. 10 (nothing reported on a straight limb, pairs
 * reported in a deep bend, many more in a rigidly bent shape than in the settled one) and the
 * second factor (a vanishing collision weight leaves the step unchanged), and bad
 * parameter values refused with one log line. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_backends.h"
#include "ps_fixture.h"
#include "ps_internal.h"

static const sinew_backend_vtable* vt = &sinew_backend_ps;

static int32_t joint_index(const ps_test_rig* rig, const char* name)
{
    for (uint32_t j = 0; j < rig->view.joint_count; ++j)
        if (strcmp(rig->view.names[j], name) == 0) return (int32_t)j;
    fail_msg("no joint %s", name);
    return -1;
}

/* The automatic choice on the male (H-Anim names) takes the elbows, knees, shoulders, hips and
 * vertebrae, and not the wrists, fingers or head; an explicit list is taken as it is; a name
 * the rig lacks or a joint without two bones is refused with one line. */
static void test_select_male(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/male/male.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_model m;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
    uint8_t* chosen = calloc(m.joint_count, 1);
    uint32_t count = 0;
    assert_int_equal(ps_collide_select(&host.api, &rig.view, &m, "", chosen, &count), SINEW_OK);
    const char* yes[] = {"l_elbow", "r_elbow", "l_knee", "r_knee", "l_shoulder", "r_shoulder",
                         "l_hip", "r_hip", "vt10"};
    const char* no[] = {"l_wrist", "r_ankle", "head", "l_index2", "HumanoidRoot"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; ++i)
        if (!chosen[joint_index(&rig, yes[i])]) fail_msg("%s is not chosen", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; ++i)
        if (chosen[joint_index(&rig, no[i])]) fail_msg("%s is chosen", no[i]);
    print_message("male: %u joints chosen automatically\n", count);

    assert_int_equal(ps_collide_select(&host.api, &rig.view, &m, "l_elbow,r_knee", chosen, &count),
                     SINEW_OK);
    assert_int_equal(count, 2);
    assert_true(chosen[joint_index(&rig, "l_elbow")] && chosen[joint_index(&rig, "r_knee")]);
    const char* bad[] = {"l_elbow,nosuch", "HumanoidRoot", "l_elb"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        sinew_test_log_reset(&host.log);
        assert_int_equal(ps_collide_select(&host.api, &rig.view, &m, bad[i], chosen, &count),
                         SINEW_ERROR_PARAMETER);
        assert_int_equal(host.log.total, 1);
        assert_non_null(strstr(host.log.last, "collision_joints"));
    }
    free(chosen);
    ps_model_free(&host.api, &m);
    ps_test_rig_free(&rig);
}

/* Every pair: distinct skin vertices, the pose's incoming bone on i's side and outgoing bone
 * on j's, the joint an end of bone_i; sorted without duplicates. Returns the pairs at joint. */
static uint32_t check_pairs(const ps_model* m, uint32_t joint)
{
    uint32_t at = 0;
    for (uint32_t k = 0; k < m->collision_pair_count; ++k) {
        const ps_collision_pair* p = &m->collision_pairs[k];
        assert_true(p->i < m->n && p->j < m->n && p->i != p->j);
        assert_true(p->bone_i < m->bone_count && p->bone_j < m->bone_count);
        assert_int_equal(m->bones[p->bone_i].end[1], p->joint);
        assert_int_equal(m->bones[p->bone_j].end[0], p->joint);
        if (k > 0) assert_true(memcmp(&m->collision_pairs[k - 1], p, sizeof *p) != 0);
        if (p->joint == joint) ++at;
    }
    return at;
}

/* Sec. 5.1 on the male: the offline extreme poses of an elbow give pairs there, with the
 * patches on the upper arm (i) and the forearm (j). One joint only: each costs 8 offline
 * simulations (the union over several joints is checked on the cylinder below). */
static void test_candidates_male(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/male/male.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_model m;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
    ps_params p;
    ps_params_default(&p);
    strcpy(p.collision_joints, "l_elbow");
    assert_int_equal(ps_collide_candidates(&host.api, &rig.view, &m, &p), SINEW_OK);
    assert_true(m.has_collision_pairs);
    uint32_t elbow = (uint32_t)joint_index(&rig, "l_elbow");
    uint32_t at_elbow = check_pairs(&m, m.joint_rep[elbow]);
    print_message("male: %u pairs, %u at l_elbow\n", m.collision_pair_count, at_elbow);
    assert_true(at_elbow > 10);
    assert_int_equal(at_elbow, m.collision_pair_count);
    /* i on the upper arm's side of the elbow, j on the forearm's (rest positions). */
    double e[3], w[3];
    ps_joint_position(&m, elbow, e);
    ps_joint_position(&m, (uint32_t)joint_index(&rig, "l_wrist"), w);
    double axis[3] = {w[0] - e[0], w[1] - e[1], w[2] - e[2]};
    uint32_t agree = 0, total = 0;
    for (uint32_t k = 0; k < m.collision_pair_count; ++k) {
        const ps_collision_pair* c = &m.collision_pairs[k];
        double si = 0.0, sj = 0.0;
        for (int q = 0; q < 3; ++q) {
            si += (m.rest[3u * c->i + q] - e[q]) * axis[q];
            sj += (m.rest[3u * c->j + q] - e[q]) * axis[q];
        }
        agree += si < sj;
        ++total;
    }
    assert_true(agree * 10u >= total * 9u);
    ps_model_free(&host.api, &m);
    ps_test_rig_free(&rig);
}

/* Two joints of the cylinder: pairs at both, their union is the whole list, and each joint's
 * pairs are the ones it finds alone (the joints' extreme poses are independent). */
static void test_candidates_two_joints(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_model both, one;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &both), SINEW_OK);
    assert_int_equal(ps_model_build(&host.api, &rig.view, &one), SINEW_OK);
    ps_params p;
    ps_params_default(&p);
    strcpy(p.collision_joints, "joint1,joint2");
    assert_int_equal(ps_collide_candidates(&host.api, &rig.view, &both, &p), SINEW_OK);
    strcpy(p.collision_joints, "joint2");
    assert_int_equal(ps_collide_candidates(&host.api, &rig.view, &one, &p), SINEW_OK);
    uint32_t j1 = both.joint_rep[joint_index(&rig, "joint1")];
    uint32_t j2 = both.joint_rep[joint_index(&rig, "joint2")];
    uint32_t at1 = check_pairs(&both, j1), at2 = check_pairs(&both, j2);
    print_message("cylinder: %u pairs, %u at joint1, %u at joint2 (%u with joint2 alone)\n",
                  both.collision_pair_count, at1, at2, one.collision_pair_count);
    assert_true(at1 > 10 && at2 > 10);
    assert_int_equal(at1 + at2, both.collision_pair_count);
    assert_int_equal(at2, one.collision_pair_count);
    uint32_t k2 = 0;
    for (uint32_t k = 0; k < both.collision_pair_count; ++k) {
        if (both.collision_pairs[k].joint != j2) continue;
        assert_memory_equal(&both.collision_pairs[k], &one.collision_pairs[k2], sizeof(ps_collision_pair));
        ++k2;
    }
    ps_model_free(&host.api, &both);
    ps_model_free(&host.api, &one);
    ps_test_rig_free(&rig);
}

/* The global collisions' rest skip lists ("PSKP", the blob's last section): refused with one
 * error line when an offset runs backwards, a triangle is out of range or the section appears
 * twice (the round trip itself: test_runtime_two_backends, tests/ps/test_ps_bake.c). */
static void check_skip_section(const sinew_backend_vtable* v, ps_test_host* host,
                               sinew_rig_view* baked, const ps_test_buffer* blob)
{
    size_t at = blob->size - 4u;
    while (at > 0 && memcmp(blob->data + at, "PSKP", 4) != 0) --at;
    assert_memory_equal(blob->data + at, "PSKP", 4);
    uint32_t n, total;
    memcpy(&n, blob->data + at + 4u, 4);
    memcpy(&total, blob->data + at + 8u, 4);
    size_t end = at + 12u + 4u * ((size_t)n + 1u + total);
    assert_memory_equal(blob->data + end, "PEND", 4);
    assert_true(total > n); /* every vertex skips at least its own triangles */
    unsigned char* copy = malloc(blob->size + end - at);
    const size_t hits[2] = {at + 16u, end - 4u}; /* offsets[1]; the last triangle */
    baked->baked_data = copy;
    void* inst = NULL;
    for (int i = 0; i < 2; ++i) {
        memcpy(copy, blob->data, blob->size);
        memset(copy + hits[i], 0xff, 4);
        baked->baked_size = blob->size;
        sinew_test_log_reset(&host->log);
        assert_int_equal(v->prepare(&host->api, baked, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
        assert_null(inst);
        assert_int_equal(host->log.count[SINEW_LOG_ERROR], 1);
    }
    memcpy(copy, blob->data, end);
    memcpy(copy + end, blob->data + at, end - at);
    memcpy(copy + end + (end - at), blob->data + end, blob->size - end);
    baked->baked_size = blob->size + (end - at);
    sinew_test_log_reset(&host->log);
    assert_int_equal(v->prepare(&host->api, baked, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
    assert_non_null(strstr(host->log.last, "twice"));
    free(copy);
}

/* The cylinder: bake with collisions=1 (candidates in the blob), restore, compare every array;
 * then damage the candidate section. */
static void test_bake_round_trip(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    sinew_param on[] = {{"collisions", "1"}, {"collision_joints", "joint2"}};
    ps_test_buffer blob = {0};
    sinew_bake_writer w = ps_test_buffer_writer(&blob);
    assert_int_equal(vt->bake(&host.api, &rig.view, on, 2, &w), SINEW_OK);
    ps_test_buffer plain = {0};
    sinew_bake_writer wp = ps_test_buffer_writer(&plain);
    sinew_param off[] = {{"collisions", "0"}};
    assert_int_equal(vt->bake(&host.api, &rig.view, off, 1, &wp), SINEW_OK);
    assert_true(blob.size > plain.size + 4u);

    /* The model built in memory with the same candidates (the default: near the joint). */
    ps_model fresh;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &fresh), SINEW_OK);
    ps_params p;
    ps_params_default(&p);
    strcpy(p.collision_joints, "joint2");
    assert_int_equal(ps_collide_candidates_near(&host.api, &rig.view, &fresh, &p, 0.0), SINEW_OK);
    assert_true(fresh.collision_pair_count > 0);
    check_pairs(&fresh, PS_NONE);

    sinew_rig_view baked = rig.view;
    baked.baked_backend = "ps";
    baked.baked_data = blob.data;
    baked.baked_size = blob.size;
    void* inst = NULL;
    assert_int_equal(vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst), SINEW_OK);
    const ps_model* restored = ps_instance_model(inst);
    assert_int_equal(restored->collision_pair_count, fresh.collision_pair_count);
    ps_test_buffer a = {0}, b = {0};
    sinew_bake_writer wa = ps_test_buffer_writer(&a), wb = ps_test_buffer_writer(&b);
    assert_int_equal(ps_model_dump(&fresh, &wa), SINEW_OK);
    assert_int_equal(ps_model_dump(restored, &wb), SINEW_OK);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.data, b.data, a.size);
    vt->destroy(inst);

    /* Damaged candidates: a vertex index out of range, pairs out of order, the section twice,
     * cut inside the section. The section starts where the two blobs first differ. */
    size_t start = 0;
    while (start < plain.size && blob.data[start] == plain.data[start]) ++start;
    while (start > 0 && memcmp(blob.data + start, "PCOL", 4) != 0) --start; /* tags share 'P' */
    assert_memory_equal(blob.data + start, "PCOL", 4);
    uint32_t count = (uint32_t)fresh.collision_pair_count;
    size_t end = start + 8u + 20u * (size_t)count;
    unsigned char* copy = malloc(blob.size + 24u);
    size_t last = end - 20u; /* the last pair */
    struct {
        size_t offset;
        uint32_t value;
    } hits[] = {{last, 0xffffffffu}, {last, 0u}, {last + 16u, 0xffffffffu}};
    baked.baked_data = copy;
    for (size_t i = 0; i < sizeof hits / sizeof hits[0]; ++i) {
        memcpy(copy, blob.data, blob.size);
        for (int k = 0; k < 4; ++k) copy[hits[i].offset + (size_t)k] = (unsigned char)(hits[i].value >> (8 * k));
        baked.baked_size = blob.size;
        inst = NULL;
        sinew_test_log_reset(&host.log);
        assert_int_equal(vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
        assert_null(inst);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
    }
    /* the section twice: an empty second one right after it */
    memcpy(copy, blob.data, end);
    const unsigned char twice[8] = {'P', 'C', 'O', 'L', 0, 0, 0, 0};
    memcpy(copy + end, twice, sizeof twice);
    memcpy(copy + end + 8u, blob.data + end, blob.size - end);
    baked.baked_size = blob.size + 8u;
    sinew_test_log_reset(&host.log);
    assert_int_equal(vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
    assert_non_null(strstr(host.log.last, "twice"));
    for (size_t cut = start; cut < end; cut += 7u) {
        memcpy(copy, blob.data, cut);
        baked.baked_size = cut;
        sinew_test_log_reset(&host.log);
        assert_int_equal(vt->prepare(&host.api, &baked, NULL, 0, NULL, &inst), SINEW_ERROR_FILE_FORMAT);
        assert_int_equal(host.log.count[SINEW_LOG_ERROR], 1);
    }
    free(copy);
    check_skip_section(vt, &host, &baked, &blob);
    ps_test_buffer_free(&a);
    ps_test_buffer_free(&b);
    ps_test_buffer_free(&blob);
    ps_test_buffer_free(&plain);
    ps_model_free(&host.api, &fresh);
    ps_test_rig_free(&rig);
}

static void step_posed(ps_sim* sim, const ps_test_rig* rig, uint32_t joint, float degrees,
                       float twist, uint32_t steps)
{
    float* skinning = malloc(sizeof(float) * 16u * rig->view.joint_count);
    ps_test_skinning(rig, joint, degrees, twist, skinning);
    ps_sim_set_pose(sim, skinning);
    for (uint32_t s = 0; s < steps; ++s) assert_int_equal(ps_sim_step(sim, NULL), SINEW_OK);
    free(skinning);
}

static void step_bent(ps_sim* sim, const ps_test_rig* rig, uint32_t joint, float degrees,
                      uint32_t steps)
{
    step_posed(sim, rig, joint, degrees, 0.0f, steps);
}

/* The run time on the cylinder (through the simulation directly): the contact-plane test flags
 * nothing while the limb is straight and flags vertices in a 135-degree bend, where the base
 * layer of the fold is kept a tissue thickness off the plane; all positions stay finite; and
 * with a vanishing collision weight the two-matrix step gives the one-matrix step's shape (in
 * a twist, where no base target crosses a contact plane). */
static void test_runtime(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_model m;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
    ps_params p;
    ps_params_default(&p);
    strcpy(p.collision_joints, "joint2");
    assert_int_equal(ps_collide_candidates(&host.api, &rig.view, &m, &p), SINEW_OK);
    uint32_t joint = (uint32_t)joint_index(&rig, "joint2");

    p.collisions = 1;
    p.collision_angle_test = 1; /* collision_test=angle */
    ps_sim* sim = NULL;
    assert_int_equal(ps_sim_create(&host.api, &m, &p, &sim), SINEW_OK);
    const ps_collide* col = ps_sim_collide(sim);
    assert_non_null(col);
    assert_true(ps_collide_vertex_count(col) > 0);
    step_bent(sim, &rig, joint, 0.0f, 3);
    assert_int_equal(ps_collide_active_pairs(col), 0);
    assert_int_equal(ps_collide_detected(col), 0);
    /* Into the bend in one jump: the patches cross in the preliminary shape of the first
     * steps (the angle test reports pairs, their vertices are projected); once the fold has
     * settled with its base layer kept off the plane, no pair has crossed any more. */
    uint32_t most_pairs = 0, most_flagged = 0;
    for (uint32_t st = 0; st < 40; ++st) {
        step_bent(sim, &rig, joint, 135.0f, 1);
        if (ps_collide_active_pairs(col) > most_pairs) most_pairs = ps_collide_active_pairs(col);
        if (ps_collide_detected(col) > most_flagged) most_flagged = ps_collide_detected(col);
    }
    print_message("cylinder: %u pairs, %u constrained vertices; into bend:135 at most %u pairs "
                  "reported by the angle test and %u vertices projected, %u and %u when settled\n",
                  m.collision_pair_count, ps_collide_vertex_count(col), most_pairs, most_flagged,
                  ps_collide_active_pairs(col), ps_collide_detected(col));
    assert_true(most_pairs > 0);
    assert_true(most_flagged > 0);
    /* Fig. 10 on shapes made by hand: the rest shape reports nothing (a straight limb has no
     * fold); the two sides rigidly bent to 135 degrees pass through each other, and far more
     * pairs report a crossing there than in the settled simulation. */
    {
        ps_collide* probe = NULL;
        assert_int_equal(ps_collide_create(&host.api, &m, &probe), SINEW_OK);
        uint32_t N = 2u * m.n;
        double* shape = malloc(sizeof(double) * 3u * N);
        float* skinning = malloc(sizeof(float) * 16u * rig.view.joint_count);
        for (uint32_t v = 0; v < N; ++v)
            for (int r = 0; r < 3; ++r) shape[(size_t)r * N + v] = m.rest[3u * v + r];
        ps_collide_detect(probe, shape, N);
        assert_int_equal(ps_collide_active_pairs(probe), 0);
        ps_test_skinning(&rig, joint, 135.0f, 0.0f, skinning);
        ps_collide_pose(probe, skinning);
        for (uint32_t v = 0; v < N; ++v) {
            const float* T = skinning + 16u * m.bones[m.vertex_bone[v]].joint;
            const double* q = m.rest + 3u * v;
            for (int r = 0; r < 3; ++r)
                shape[(size_t)r * N + v] =
                    T[r] * q[0] + T[4 + r] * q[1] + T[8 + r] * q[2] + T[12 + r];
        }
        ps_collide_detect(probe, shape, N);
        uint32_t rigid = ps_collide_active_pairs(probe);
        ps_collide_detect(probe, ps_sim_positions(sim), N);
        uint32_t settled = ps_collide_active_pairs(probe);
        print_message("cylinder bend:135: %u pairs cross in the rigidly bent shape, %u in the "
                      "settled one\n", rigid, settled);
        assert_true(rigid > 10u * (settled + 1u));
        free(skinning);
        free(shape);
        ps_collide_destroy(probe);
    }
    const double* x = ps_sim_positions(sim);
    for (size_t k = 0; k < 6u * (size_t)m.n; ++k) assert_true(isfinite(x[k]));
    /* The base layer stays on its side: at most 1 % of a thickness short of its margin from
     * the plane that halves the bend (through joint2 at the rest origin of its bones). */
    {
        const ps_bone* bi = NULL;
        for (uint32_t b = 0; b < m.bone_count; ++b)
            if (m.bones[b].end[1] == m.joint_rep[joint]) bi = &m.bones[b];
        assert_non_null(bi);
        float* skinning = malloc(sizeof(float) * 16u * rig.view.joint_count);
        ps_test_skinning(&rig, joint, 135.0f, 0.0f, skinning);
        double jp[3], a[3], e[3] = {0.0, 0.0, 0.0}, ui[3], uj[3], nn[3], l = 0.0, lj = 0.0;
        ps_joint_position(&m, joint, jp);
        ps_joint_position(&m, bi->end[0], a);
        for (uint32_t b = 0; b < m.bone_count; ++b)
            if (m.bones[b].end[0] == m.joint_rep[joint]) ps_joint_position(&m, m.bones[b].end[1], e);
        /* the child end moved by joint2's matrix */
        const float* T = skinning + 16u * joint;
        double ep[3];
        for (int r = 0; r < 3; ++r)
            ep[r] = T[r] * e[0] + T[4 + r] * e[1] + T[8 + r] * e[2] + T[12 + r];
        double n0[3], l0 = 0.0;
        for (int r = 0; r < 3; ++r) ui[r] = a[r] - jp[r], uj[r] = ep[r] - jp[r];
        for (int r = 0; r < 3; ++r) l += ui[r] * ui[r], lj += uj[r] * uj[r], l0 += (e[r] - jp[r]) * (e[r] - jp[r]);
        for (int r = 0; r < 3; ++r) {
            nn[r] = ui[r] / sqrt(l) - uj[r] / sqrt(lj);
            n0[r] = ui[r] / sqrt(l) - (e[r] - jp[r]) / sqrt(l0); /* at rest */
        }
        double ln = sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
        double ln0 = sqrt(n0[0] * n0[0] + n0[1] * n0[1] + n0[2] * n0[2]);
        uint32_t N = 2u * m.n, checked = 0;
        const uint32_t* cv = ps_collide_vertices(col);
        for (uint32_t k = 0; k < ps_collide_vertex_count(col); ++k) {
            uint32_t v = m.n + cv[k];
            double s0 = 0.0, s1 = 0.0;
            for (int r = 0; r < 3; ++r) {
                s0 += (m.rest[3u * v + r] - jp[r]) * n0[r] / ln0;
                s1 += (x[(size_t)r * N + v] - jp[r]) * nn[r] / ln;
            }
            if (fabs(s0) < m.thickness) continue; /* near the plane at rest: smaller margin */
            ++checked;
            if (!(s0 * s1 > 0.0 && fabs(s1) > 0.99 * m.thickness))
                fail_msg("base vertex %u: %.4f from the plane (rest %.4f), thickness %.4f", v, s1,
                         s0, m.thickness);
        }
        assert_true(checked > 0);
        free(skinning);
    }
    ps_sim_destroy(sim);

    /* collision_test=plane (the default): no angle test runs, and the side test alone projects
     * vertices on the way into the bend. */
    p.collision_angle_test = 0;
    assert_int_equal(ps_sim_create(&host.api, &m, &p, &sim), SINEW_OK);
    col = ps_sim_collide(sim);
    most_flagged = 0;
    for (uint32_t st = 0; st < 10; ++st) {
        step_bent(sim, &rig, joint, 135.0f, 1);
        assert_int_equal(ps_collide_active_pairs(col), 0);
        if (ps_collide_detected(col) > most_flagged) most_flagged = ps_collide_detected(col);
    }
    print_message("cylinder, collision_test=plane: at most %u vertices projected into bend:135\n",
                  most_flagged);
    assert_true(most_flagged > 0);
    ps_sim_destroy(sim);

    /* A vanishing weight: the second matrix is the first up to 1e-9 of each diagonal. Without
     * skin sliding, so that no base target near the joint slides across its contact plane
     * under the twist (the clamp would move it whatever the weight). */
    p.collision_weight = 1e-9;
    p.sliding = 0;
    p.global_collisions = 0;
    p.volume.joint = 0.0; /* its third matrix differs with and without the local constraints */
    ps_sim* with = NULL;
    ps_sim* without = NULL;
    assert_int_equal(ps_sim_create(&host.api, &m, &p, &with), SINEW_OK);
    p.collisions = 0;
    assert_int_equal(ps_sim_create(&host.api, &m, &p, &without), SINEW_OK);
    step_posed(with, &rig, joint, 0.0f, 90.0f, 10);
    step_posed(without, &rig, joint, 0.0f, 90.0f, 10);
    const double* xa = ps_sim_positions(with);
    const double* xb = ps_sim_positions(without);
    double worst = 0.0;
    for (size_t k = 0; k < 6u * (size_t)m.n; ++k) worst = fmax(worst, fabs(xa[k] - xb[k]));
    print_message("cylinder: weight 1e-9 moves the shape by %.3g of the diagonal\n",
                  worst / m.diagonal);
    assert_true(worst < 1e-6 * m.diagonal);
    ps_sim_destroy(with);
    ps_sim_destroy(without);
    ps_model_free(&host.api, &m);
    ps_test_rig_free(&rig);
}

/* Bad collision parameters: one log line each, no instance. */
/* The global collisions (2019 Sec. 6, fps_collide.c) change nothing where nothing collides:
 * the cylinder's bend:90 gives the same bits with and without them; at bend:135 its limb
 * capsules hold the fold's outer skin and the shapes differ. */
static void test_global_collisions(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    ps_model m;
    assert_int_equal(ps_model_build(&host.api, &rig.view, &m), SINEW_OK);
    ps_params p;
    ps_params_default(&p);
    assert_int_equal(ps_collide_candidates_near(&host.api, &rig.view, &m, &p, 0.0), SINEW_OK);
    uint32_t joint = (uint32_t)joint_index(&rig, "joint2");
    const float bends[2] = {90.0f, 135.0f};
    double differ[2];
    for (int b = 0; b < 2; ++b) {
        ps_sim* sim[2] = {NULL, NULL};
        for (int g = 0; g < 2; ++g) {
            p.global_collisions = g;
            assert_int_equal(ps_sim_create(&host.api, &m, &p, &sim[g]), SINEW_OK);
            for (uint32_t st = 1; st <= 60; ++st)
                step_bent(sim[g], &rig, joint, bends[b] * (float)(st < 30 ? st : 30) / 30.0f, 1);
        }
        const double* xa = ps_sim_positions(sim[0]);
        const double* xb = ps_sim_positions(sim[1]);
        differ[b] = 0.0;
        for (size_t k = 0; k < 6u * (size_t)m.n; ++k) differ[b] = fmax(differ[b], fabs(xa[k] - xb[k]));
        ps_sim_destroy(sim[0]);
        ps_sim_destroy(sim[1]);
    }
    print_message("cylinder, global collisions on against off: bend:90 %.3g, bend:135 %.3g of "
                  "the diagonal\n", differ[0] / m.diagonal, differ[1] / m.diagonal);
    assert_true(differ[0] == 0.0);
    assert_true(differ[1] > 1e-4 * m.diagonal);
    ps_model_free(&host.api, &m);
    ps_test_rig_free(&rig);
}

static void test_bad_parameters(void** state)
{
    (void)state;
    const char* path = sinew_test_data_path("characters/cylinder/cylinder.ini");
    ps_test_rig rig;
    ps_test_rig_load(&rig, path);
    ps_test_host host;
    ps_test_host_init(&host, SINEW_LOG_WARNING, 0);
    static const struct {
        const char* key;
        const char* value;
        sinew_result expect;
    } bad[] = {
        {"collision_weight", "0", SINEW_ERROR_PARAMETER},
        {"collision_weight", "-1", SINEW_ERROR_PARAMETER},
        {"collision_weight", "heavy", SINEW_ERROR_PARAMETER},
        {"collision_weight", "1e7", SINEW_ERROR_PARAMETER},
        {"collision_joints", "", SINEW_ERROR_PARAMETER},
        {"collision_joints", ",joint2", SINEW_ERROR_PARAMETER},
        {"collision_joints", "joint2,,joint1", SINEW_ERROR_PARAMETER},
        {"collision_joints", "elbow", SINEW_ERROR_PARAMETER},  /* no such joint */
        {"collision_joints", "joint0", SINEW_ERROR_PARAMETER}, /* the root: no incoming bone */
        {"collisions", "on", SINEW_ERROR_PARAMETER},
        {"collision_test", "sideways", SINEW_ERROR_PARAMETER},
        {"collision_test", "", SINEW_ERROR_PARAMETER},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        sinew_param prm = {bad[i].key, bad[i].value};
        void* inst = (void*)&prm;
        sinew_test_log_reset(&host.log);
        sinew_result r = vt->prepare(&host.api, &rig.view, &prm, 1, NULL, &inst);
        if (r != bad[i].expect)
            fail_msg("%s=%s: %s", bad[i].key, bad[i].value, sinew_result_string(r));
        assert_null(inst);
        assert_int_equal(host.log.total, 1);
        assert_non_null(strstr(host.log.last, bad[i].key));
        /* the same through bake */
        ps_test_buffer blob = {0};
        sinew_bake_writer w = ps_test_buffer_writer(&blob);
        sinew_test_log_reset(&host.log);
        assert_int_equal(vt->bake(&host.api, &rig.view, &prm, 1, &w), bad[i].expect);
        assert_int_equal(host.log.total, 1);
        assert_int_equal(blob.size, 0);
        ps_test_buffer_free(&blob);
    }
    /* good values pass */
    sinew_param good[] = {{"collision_weight", "2.5"}, {"collision_joints", "joint1,joint2"},
                          {"collision_test", "angle"}};
    void* inst = NULL;
    assert_int_equal(vt->prepare(&host.api, &rig.view, good, 3, NULL, &inst), SINEW_OK);
    vt->destroy(inst);
    ps_test_rig_free(&rig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_male),     cmocka_unit_test(test_candidates_male),
        cmocka_unit_test(test_candidates_two_joints),
        cmocka_unit_test(test_bake_round_trip), cmocka_unit_test(test_runtime),
        cmocka_unit_test(test_global_collisions),
        cmocka_unit_test(test_bad_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
