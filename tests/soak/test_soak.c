/* A soak: one world skins the male and the cylinder, two skins each, with every CPU backend in
 * turn (a swap every SWAP_EVERY frames, round robin), under random valid poses that jump far
 * every JUMP_EVERY frames. Checked: no non-finite vertex ever; the bytes the world holds
 * (counted through its allocator) are the same whenever the backends' rotation comes round to
 * the same assignment, after a first warm-up round; and a second run with the same seed and
 * thread count ends with the same output, bit for bit.
 * Usage: test_soak [--frames N | --minutes M] [--seed S]. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "test_support.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sinew/sinew_import.h>

#define SKINS 4
#define SWAP_EVERY 24u
#define JUMP_EVERY 90u
#define MAX_BACKENDS 16
#define PI 3.14159265358979323846

static uint32_t g_frames = 1200u; /* ctest passes its own count (CMakeLists.txt) */
static double g_minutes = 0.0;
static uint64_t g_seed = 12345u;

/* ---- the counting allocator ---- */

static atomic_llong g_live;

static void* count_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    if (alignment < 16u) alignment = 16u;
    size_t head = alignment;
    unsigned char* p = (unsigned char*)aligned_alloc(alignment, (head + size + alignment - 1u) /
                                                                    alignment * alignment);
    if (!p) return NULL;
    memcpy(p + head - sizeof(size_t), &size, sizeof size);
    atomic_fetch_add(&g_live, (long long)size);
    memcpy(p + head - 2u * sizeof(size_t), &head, sizeof head);
    return p + head;
}

static void count_free(void* ptr, void* user)
{
    (void)user;
    if (!ptr) return;
    unsigned char* q = (unsigned char*)ptr;
    size_t size, head;
    memcpy(&size, q - sizeof(size_t), sizeof size);
    memcpy(&head, q - 2u * sizeof(size_t), sizeof head);
    atomic_fetch_sub(&g_live, (long long)size);
    free(q - head);
}

/* ---- random poses ---- */

static double rnd(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Local pose: each joint's rest local transform turned about a random axis by up to `deg`
 * degrees (column-major, rotation applied before the rest transform's own). */
static void random_pose(const sinew_character* ch, double deg, uint64_t* s, float* local)
{
    uint32_t jn = ch->rig.skeleton.joint_count;
    memcpy(local, ch->rest_local, sizeof(float) * 16u * jn);
    for (uint32_t j = 0; j < jn; ++j) {
        double a[3] = {rnd(s) - 0.5, rnd(s) - 0.5, rnd(s) - 0.5};
        double n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) + 1e-9;
        double t = (rnd(s) * 2.0 - 1.0) * deg * PI / 180.0, c = cos(t), sn = sin(t);
        double x = a[0] / n, y = a[1] / n, z = a[2] / n, R[3][3] = {
            {c + x * x * (1 - c), x * y * (1 - c) - z * sn, x * z * (1 - c) + y * sn},
            {y * x * (1 - c) + z * sn, c + y * y * (1 - c), y * z * (1 - c) - x * sn},
            {z * x * (1 - c) - y * sn, z * y * (1 - c) + x * sn, c + z * z * (1 - c)}};
        float* m = local + 16u * j;
        for (int col = 0; col < 3; ++col) {
            double v[3] = {m[4 * col], m[4 * col + 1], m[4 * col + 2]};
            for (int r = 0; r < 3; ++r)
                m[4 * col + r] = (float)(R[r][0] * v[0] + R[r][1] * v[1] + R[r][2] * v[2]);
        }
    }
}

/* ---- the world ---- */

typedef struct soak {
    sinew_world* world;
    sinew_character* ch[2];
    sinew_rig rig[2];
    sinew_skin skin[SKINS];
    const char* backends[MAX_BACKENDS];
    uint32_t backend_count;
    float* local[2];
    float* out[SKINS];
    uint64_t state;
    /* Switch over as soon as a swap is asked for (sinew_skin_wait_swap): the update that adopts
     * a background preparation depends on when it ends, so runs compared bit for bit must not
     * leave it to the clock. */
    int swap_at_once;
} soak;

/* The CPU backends: every registered one but the Vulkan and CUDA ones. */
static void pick_backends(soak* s)
{
    for (uint32_t b = 0; b < sinew_world_backend_count(s->world) && s->backend_count < MAX_BACKENDS;
         ++b) {
        const char* name = sinew_world_backend_name(s->world, b);
        if (strncmp(name, "vk-", 3) == 0 || strstr(name, "cuda")) continue;
        s->backends[s->backend_count++] = name;
    }
}

static void soak_open(soak* s, const sinew_allocator* allocator)
{
    memset(s, 0, sizeof *s);
    s->state = g_seed;
    const char* paths[2] = {sinew_test_data_path("characters/male/male.ini"),
                            sinew_test_data_path("characters/cylinder/cylinder.ini")};
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.allocator = allocator;
    wd.thread_count = 2;
    assert_int_equal(sinew_world_create(&wd, &s->world), SINEW_OK);
    pick_backends(s);
    for (int c = 0; c < 2; ++c) {
        assert_int_equal(sinew_import_character(paths[c], NULL, &s->ch[c]), SINEW_OK);
        assert_int_equal(sinew_rig_create(s->world, &s->ch[c]->rig, &s->rig[c]), SINEW_OK);
        s->local[c] = malloc(sizeof(float) * 16u * s->ch[c]->rig.skeleton.joint_count);
    }
    for (int k = 0; k < SKINS; ++k) {
        sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
        sd.rig = s->rig[k / 2];
        sd.backend = s->backends[(uint32_t)k % s->backend_count];
        assert_int_equal(sinew_world_add_skin(s->world, &sd, &s->skin[k]), SINEW_OK);
        s->out[k] = malloc(sizeof(float) * 3u * s->ch[k / 2]->rig.render_mesh.vertex_count);
    }
}

static void soak_close(soak* s)
{
    sinew_world_destroy(s->world);
    for (int c = 0; c < 2; ++c) {
        sinew_import_free(s->ch[c]);
        free(s->local[c]);
    }
    for (int k = 0; k < SKINS; ++k) free(s->out[k]);
}

/* A frame's poses (a far jump every JUMP_EVERY frames) and its swap (every SWAP_EVERY). */
static void soak_frame(soak* s, uint32_t f)
{
    double deg = f % JUMP_EVERY == JUMP_EVERY - 1u ? 170.0 : 25.0;
    for (int c = 0; c < 2; ++c) {
        random_pose(s->ch[c], deg, &s->state, s->local[c]);
        sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
        pd.joint_count = s->ch[c]->rig.skeleton.joint_count;
        pd.matrices = s->local[c];
        pd.space = SINEW_POSE_LOCAL;
        for (int k = 2 * c; k < 2 * c + 2; ++k)
            assert_int_equal(sinew_skin_set_pose(s->world, s->skin[k], &pd), SINEW_OK);
    }
    if (f % SWAP_EVERY == SWAP_EVERY - 1u) {
        uint32_t swap = f / SWAP_EVERY;
        int k = (int)(swap % SKINS);
        const char* next = s->backends[(swap / SKINS + (uint32_t)k + 1u) % s->backend_count];
        /* the skin's last swap has long been adopted; this one prepares in the background
         * and is adopted by a later update */
        assert_int_equal(sinew_skin_wait_swap(s->world, s->skin[k]), SINEW_OK);
        assert_int_equal(sinew_skin_set_backend(s->world, s->skin[k], next, NULL, 0), SINEW_OK);
        if (s->swap_at_once) assert_int_equal(sinew_skin_wait_swap(s->world, s->skin[k]), SINEW_OK);
    }
}

/* Every skin cut to its rest pose (a teleport, SINEW_POSE_DISCONTINUOUS) and updated once:
 * the scratch a backend grows to what a pose needs (the hash of the global collisions, their
 * pairs) then holds what the rest pose needs, whatever poses came before. */
static void soak_rest(soak* s)
{
    for (int c = 0; c < 2; ++c) {
        sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
        pd.joint_count = s->ch[c]->rig.skeleton.joint_count;
        pd.matrices = s->ch[c]->rest_local;
        pd.space = SINEW_POSE_LOCAL;
        pd.flags = SINEW_POSE_DISCONTINUOUS;
        for (int k = 2 * c; k < 2 * c + 2; ++k)
            assert_int_equal(sinew_skin_set_pose(s->world, s->skin[k], &pd), SINEW_OK);
    }
    assert_int_equal(sinew_world_update(s->world, 1.0f / 60.0f), SINEW_OK);
}

/* The frame's update, and every output checked finite. */
static void soak_update(soak* s)
{
    assert_int_equal(sinew_world_update(s->world, 1.0f / 60.0f), SINEW_OK);
    for (int k = 0; k < SKINS; ++k) {
        uint32_t n = s->ch[k / 2]->rig.render_mesh.vertex_count;
        sinew_output_desc od = SINEW_OUTPUT_DESC_INIT;
        od.vertex_capacity = n;
        od.positions = s->out[k];
        assert_int_equal(sinew_skin_read_output(s->world, s->skin[k], &od), SINEW_OK);
        for (size_t i = 0; i < 3u * n; ++i) assert_true(isfinite(s->out[k][i]));
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_soak(void** state)
{
    (void)state;
    const sinew_allocator allocator = {count_alloc, count_free, NULL};
    soak s;
    soak_open(&s, &allocator);
    /* a round: every skin has had every backend; the assignment repeats each round */
    uint32_t round = SWAP_EVERY * SKINS * s.backend_count;
    long long first = -1, last = -1, peak = 0;
    double t0 = now();
    uint32_t f = 0;
    for (; g_minutes > 0.0 ? now() - t0 < 60.0 * g_minutes || f % round : f < g_frames; ++f) {
        soak_frame(&s, f);
        long long live = atomic_load(&g_live);
        /* Right after the round's last swap (adopted at once here; it prepares in the
         * background) every skin has had every backend again and holds the same assignment:
         * cut to the rest pose, the world holds the same memory, round after round (an update
         * may grow a backend's scratch to what the pose needs; none of that may pile up). */
        if (f + 1u >= 2u * round && (f + 1u) % round == 0u) {
            for (int k = 0; k < SKINS; ++k)
                assert_int_equal(sinew_skin_wait_swap(s.world, s.skin[k]), SINEW_OK);
            soak_rest(&s);
            live = atomic_load(&g_live);
            if (first < 0) first = live;
            last = live;
            assert_true(live <= first + first / 100);
        }
        soak_update(&s);
        live = atomic_load(&g_live);
        if (live > peak) peak = live;
    }
    print_message("soak: %u frames (%u backends, rounds of %u), %.1f s; %lld bytes held after "
                  "the second round, %lld after the last, peak %lld\n", f, s.backend_count, round,
                  now() - t0, first, last, peak);
    soak_close(&s);
    assert_int_equal(atomic_load(&g_live), 0);
}

/* The same seed and thread count give the same output. */
static void test_same_inputs_same_output(void** state)
{
    (void)state;
    soak a, b;
    soak_open(&a, NULL);
    soak_open(&b, NULL);
    a.swap_at_once = b.swap_at_once = 1;
    uint32_t frames = 3u * SWAP_EVERY * SKINS;
    for (uint32_t f = 0; f < frames; ++f) {
        soak_frame(&a, f);
        soak_update(&a);
        soak_frame(&b, f);
        soak_update(&b);
    }
    for (int k = 0; k < SKINS; ++k)
        assert_memory_equal(a.out[k], b.out[k],
                            sizeof(float) * 3u * a.ch[k / 2]->rig.render_mesh.vertex_count);
    soak_close(&a);
    soak_close(&b);
}

int main(int argc, char** argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--frames") == 0) g_frames = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--minutes") == 0) g_minutes = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--seed") == 0) g_seed = strtoull(argv[i + 1], NULL, 10);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soak),
        cmocka_unit_test(test_same_inputs_same_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
