/* Threads: three worlds, each driven from its own thread with a job pool of 2 to 4 threads,
 * each skinning the cylinder with every CPU backend in turn, swapping between updates. Run
 * under ThreadSanitizer by ./sinew.sh tsan, where any report fails; in a plain build it checks
 * that all of it works side by side. SPDX-License-Identifier: MIT */
#include "test_support.h"

#include <pthread.h>
#include <string.h>

#include <sinew/sinew_import.h>

#define WORLDS 3
#define SKINS 3
#define FRAMES 120

typedef struct driver {
    const sinew_character* ch;
    uint32_t threads;
    int ok;
} driver;

/* One world's life: skins added, posed, updated, swapped and removed. */
static void* drive(void* arg)
{
    driver* d = (driver*)arg;
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.thread_count = d->threads;
    sinew_world* w = NULL;
    if (sinew_world_create(&wd, &w) != SINEW_OK) return NULL;
    const char* names[8];
    uint32_t count = 0;
    for (uint32_t b = 0; b < sinew_world_backend_count(w) && count < 8; ++b) {
        const char* n = sinew_world_backend_name(w, b);
        if (strncmp(n, "vk-", 3) != 0 && !strstr(n, "cuda")) names[count++] = n;
    }
    sinew_rig rig;
    int ok = sinew_rig_create(w, &d->ch->rig, &rig) == SINEW_OK;
    sinew_skin skins[SKINS];
    for (int k = 0; ok && k < SKINS; ++k) {
        sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
        sd.rig = rig;
        sd.backend = names[(uint32_t)k % count];
        ok = sinew_world_add_skin(w, &sd, &skins[k]) == SINEW_OK;
    }
    uint32_t jn = d->ch->rig.skeleton.joint_count;
    sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
    pd.joint_count = jn;
    pd.matrices = d->ch->rig.skeleton.bind_matrices;
    for (int f = 0; ok && f < FRAMES; ++f) {
        for (int k = 0; ok && k < SKINS; ++k) ok = sinew_skin_set_pose(w, skins[k], &pd) == SINEW_OK;
        if (ok && f % 10 == 9) {
            int k = (f / 10) % SKINS;
            /* prepared in the background, adopted by a later update of this world */
            ok = sinew_skin_wait_swap(w, skins[k]) == SINEW_OK &&
                 sinew_skin_set_backend(w, skins[k], names[(uint32_t)(f / 10) % count], NULL,
                                        0) == SINEW_OK;
        }
        if (ok) ok = sinew_world_update(w, 1.0f / 60.0f) == SINEW_OK;
    }
    sinew_world_destroy(w);
    d->ok = ok;
    return NULL;
}

static void test_worlds_side_by_side(void** state)
{
    (void)state;
    sinew_character* ch = NULL;
    assert_int_equal(sinew_import_character(
                         sinew_test_data_path("characters/cylinder/cylinder.ini"), NULL, &ch),
                     SINEW_OK);
    driver d[WORLDS];
    pthread_t t[WORLDS];
    for (int i = 0; i < WORLDS; ++i) {
        d[i] = (driver){ch, 2u + (uint32_t)i % 3u, 0};
        assert_int_equal(pthread_create(&t[i], NULL, drive, &d[i]), 0);
    }
    for (int i = 0; i < WORLDS; ++i) pthread_join(t[i], NULL);
    for (int i = 0; i < WORLDS; ++i) assert_true(d[i].ok);
    sinew_import_free(ch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_worlds_side_by_side)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
