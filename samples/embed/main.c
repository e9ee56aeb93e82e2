/* sinew-embed: how a game engine embeds sinew, in one file.
 * SPDX-License-Identifier: MIT
 *
 * A minimal game: an array of entities, each with a skinned mesh. Every entity owns a
 * sinew_skin (the skin component) and its own vertex arrays, which stand in for the
 * renderer's vertex buffers: sinew writes the skinned positions and normals straight into
 * them during sinew_world_update. Half of the entities use linear blend skinning ("lbs"),
 * half dual quaternion skinning ("dqs"); halfway through, one entity switches backend while
 * the game runs, as a quality setting or a level-of-detail change would. Nothing is drawn: at
 * the end the game checks that every vertex it received is finite and prints a summary.
 *
 * The frame of a game that uses sinew is always the same three steps:
 *   1. animate: compute each character's joint transforms (here: sample an animation clip),
 *   2. hand them over: sinew_skin_set_pose, one call per entity,
 *   3. skin: one sinew_world_update for all entities, which spreads them over threads;
 *      afterwards the bound arrays hold this frame's vertices, ready to draw.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>

#include "sample_character.h"
#include "sample_options.h"
#include "sample_stats.h"

/* One game object with a skinned mesh. */
typedef struct entity {
    sinew_skin skin;        /* the skin component: a handle into the world */
    float* positions;       /* 3 floats per render vertex, written by sinew every update */
    float* normals;         /* the same for normals */
    uint32_t animation;     /* which clip this entity plays (when the character has clips) */
    double time_offset;     /* seconds: entities do not move in lockstep */
} entity;

/* Everything the game keeps for skinning. */
typedef struct game {
    sinew_world* world;             /* owns rigs, skins and the worker threads */
    sample_character character;     /* the imported (or procedural) character */
    sinew_rig rig;                  /* one rig, shared by every entity that looks alike */
    entity* entities;
    uint32_t entity_count;
    uint32_t vertex_count;          /* render vertices per entity */
    uint32_t joint_count;
    float* pose;                    /* scratch: one entity's joint transforms */
    int32_t motion_joint;           /* joint the built-in motion bends, without clips */
} game;

enum { DEFAULT_ENTITIES = 8, DEFAULT_FRAMES = 120 };

static void usage(FILE* out)
{
    fprintf(out,
        "usage: sinew-embed [--character PATH | --procedural] [--entities N] [--frames N]\n"
        "\n"
        "A minimal game loop embedding sinew: N entities, half skinned with lbs and half\n"
        "with dqs, one switching backend halfway. Uses the male test character when it is\n"
        "present, else a procedural arm. Exits 1 when any skinned vertex is not finite.\n"
        "\n"
        "  --character PATH   character to use (.ini or any file assimp reads)\n"
        "  --procedural       use the procedural arm even when the data is present\n"
        "  --entities N       number of entities (default %d)\n"
        "  --frames N         frames to run at 60 per second (default %d)\n"
        "  --help             print this and exit\n",
        DEFAULT_ENTITIES, DEFAULT_FRAMES);
}

static int report_failure(const char* what, sinew_result r)
{
    fprintf(stderr, "sinew-embed: %s failed: %s\n", what, sinew_result_string(r));
    return SAMPLE_EXIT_FAILURE;
}

/* Step 1 of a frame, for one entity: its joint transforms at time `seconds`. A clip gives
 * local transforms (relative to the parent): the world then runs forward kinematics for us.
 * The built-in motion gives model-space transforms directly. Either way sinew multiplies by
 * the inverse bind matrices itself. */
static sinew_result animate(game* g, const entity* e, double seconds, sinew_pose_desc* pose)
{
    pose->joint_count = g->joint_count;
    pose->matrices = g->pose;
    if (g->character.animation_count > 0) {
        pose->space = SINEW_POSE_LOCAL;
        return sinew_animation_sample(&g->character.animations[e->animation],
                                      (float)(seconds + e->time_offset), 1, g->pose);
    }
    pose->space = SINEW_POSE_MODEL;
    return sample_motion_pose(&g->character, (uint32_t)g->motion_joint, seconds + e->time_offset,
                              g->pose);
}

/* Creates the skin component of entity i and binds its vertex arrays as the output. */
static sinew_result spawn(game* g, uint32_t i, const char* backend)
{
    entity* e = &g->entities[i];
    e->positions = malloc(sizeof(float) * 3 * g->vertex_count);
    e->normals = malloc(sizeof(float) * 3 * g->vertex_count);
    if (!e->positions || !e->normals) return SINEW_ERROR_OUT_OF_MEMORY;
    e->animation = g->character.animation_count ? i % g->character.animation_count : 0;
    e->time_offset = 0.37 * i;

    /* A skin is a rig plus a backend name. Backend parameters would go in params. */
    sinew_skin_desc desc = SINEW_SKIN_DESC_INIT;
    desc.rig = g->rig;
    desc.backend = backend;
    sinew_result r = sinew_world_add_skin(g->world, &desc, &e->skin);
    if (r != SINEW_OK) return r;

    /* Binding makes every later update write into these arrays, with no copy: in a real
     * engine they would be persistently mapped vertex buffers (strides let them be
     * interleaved). They must outlive the binding; the binding survives backend swaps. */
    sinew_output_desc output = SINEW_OUTPUT_DESC_INIT;
    output.vertex_capacity = g->vertex_count;
    output.positions = e->positions;
    output.normals = e->normals;
    return sinew_skin_bind_output(g->world, e->skin, &output);
}

/* Frees the game. The world destroys its skins and rigs with it, so the vertex arrays are
 * freed after the world: nothing may be bound to freed memory. */
static void shut_down(game* g)
{
    sinew_world_destroy(g->world);
    for (uint32_t i = 0; g->entities && i < g->entity_count; ++i) {
        free(g->entities[i].positions);
        free(g->entities[i].normals);
    }
    free(g->entities);
    free(g->pose);
    sample_character_free(&g->character);
}

static uint32_t count_nonfinite(const float* values, size_t count)
{
    uint32_t bad = 0;
    for (size_t k = 0; k < count; ++k) bad += !isfinite(values[k]);
    return bad;
}

int main(int argc, char** argv)
{
    const char* character_path = NULL;
    int procedural = 0;
    uint32_t entity_count = DEFAULT_ENTITIES, frames = DEFAULT_FRAMES;
    for (int i = 1; i < argc; ++i) {
        const char* value = NULL;
        int m;
        if (sample_option_flag(argv, i, "--help") || sample_option_flag(argv, i, "-h")) {
            usage(stdout);
            return SAMPLE_EXIT_OK;
        } else if (sample_option_flag(argv, i, "--procedural")) {
            procedural = 1;
        } else if ((m = sample_option_value(argc, argv, &i, "--character", &value)) != 0) {
            if (m < 0) goto usage_error;
            character_path = value;
        } else if ((m = sample_option_value(argc, argv, &i, "--entities", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--entities", value, 2, 4096, &entity_count)) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--frames", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--frames", value, 2, 1000000, &frames)) goto usage_error;
        } else {
            fprintf(stderr, "sinew-embed: unknown option %s\n", argv[i]);
            goto usage_error;
        }
    }
    if (procedural && character_path) {
        fprintf(stderr, "sinew-embed: --procedural and --character exclude each other\n");
        goto usage_error;
    }

    game g;
    memset(&g, 0, sizeof g);
    sinew_result r;

    /* The character: the male test character when the data folder has it, else an arm
     * built in code. An engine would load its own baked rig here. */
    char male_path[4096];
    snprintf(male_path, sizeof male_path, "%s/characters/male/male.ini", sinew_import_data_dir());
    FILE* probe = (!procedural && !character_path) ? fopen(male_path, "rb") : NULL;
    if (probe) {
        fclose(probe);
        character_path = male_path;
    }
    r = character_path ? sample_character_load(character_path, NULL, &g.character)
                       : sample_character_make_arm(32, 16, &g.character);
    if (r != SINEW_OK) return report_failure(character_path ? "loading the character" : "building the arm", r);

    /* The world: zero-initialised descriptor fields mean defaults (malloc, a stderr logger
     * for warnings and errors, a thread pool with one thread per core). An engine passes
     * its own allocator, logger and job system here instead. */
    sinew_world_desc world_desc = SINEW_WORLD_DESC_INIT;
    r = sinew_world_create(&world_desc, &g.world);
    if (r != SINEW_OK) {
        shut_down(&g);
        return report_failure("sinew_world_create", r);
    }

    /* The rig: skeleton, mesh and weights, copied and validated once (weights are computed
     * here when the character has none). Every entity of this character shares it. */
    r = sinew_rig_create(g.world, &g.character.rig, &g.rig);
    if (r != SINEW_OK) {
        shut_down(&g);
        return report_failure("sinew_rig_create", r);
    }
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    if ((r = sinew_rig_get_info(g.world, g.rig, &info)) != SINEW_OK) {
        shut_down(&g);
        return report_failure("sinew_rig_get_info", r);
    }
    g.vertex_count = info.vertex_count;
    g.joint_count = info.joint_count;
    g.motion_joint = sample_default_joint(&g.character);
    g.pose = malloc(sizeof(float) * 16 * g.joint_count);
    g.entities = calloc(entity_count, sizeof *g.entities);
    if (!g.pose || !g.entities) {
        shut_down(&g);
        return report_failure("allocating entities", SINEW_ERROR_OUT_OF_MEMORY);
    }

    /* Spawn: even entities get "lbs", odd ones "dqs". */
    for (uint32_t i = 0; i < entity_count; ++i) {
        g.entity_count = i + 1;
        r = spawn(&g, i, i % 2 == 0 ? "lbs" : "dqs");
        if (r != SINEW_OK) {
            shut_down(&g);
            return report_failure("spawning an entity", r);
        }
    }

    /* The game loop. */
    const float dt = 1.0f / 60.0f;
    double skinning_seconds = 0.0;
    uint32_t took_over = 0; /* the first update that ran entity 0 with dqs */
    for (uint32_t frame = 0; frame < frames; ++frame) {
        const double now = frame * (double)dt;

        /* Halfway, entity 0 switches from lbs to dqs. The call returns at once; dqs is
         * prepared in the background and takes over at a later update, from the skin's shape
         * and pose then, writing into the same bound arrays. */
        if (frame == frames / 2) {
            r = sinew_skin_set_backend(g.world, g.entities[0].skin, "dqs", NULL, 0);
            if (r != SINEW_OK) {
                shut_down(&g);
                return report_failure("sinew_skin_set_backend", r);
            }
        }

        /* Steps 1 and 2: animate every entity and hand its pose to its skin. */
        for (uint32_t i = 0; i < g.entity_count; ++i) {
            sinew_pose_desc pose = SINEW_POSE_DESC_INIT;
            r = animate(&g, &g.entities[i], now, &pose);
            if (r == SINEW_OK) r = sinew_skin_set_pose(g.world, g.entities[i].skin, &pose);
            if (r != SINEW_OK) {
                shut_down(&g);
                return report_failure("posing an entity", r);
            }
        }

        /* Step 3: skin everything. After this call each entity's arrays hold this frame's
         * vertices; a renderer would now draw them. */
        const double start = sample_now_seconds();
        r = sinew_world_update(g.world, dt);
        skinning_seconds += sample_now_seconds() - start;
        if (r != SINEW_OK) {
            shut_down(&g);
            return report_failure("sinew_world_update", r);
        }
        if (!took_over && strcmp(sinew_skin_backend(g.world, g.entities[0].skin), "dqs") == 0)
            took_over = frame;
    }
    /* A swap still preparing when the loop ends (a fast loop on a busy machine) is waited for,
     * as a loading screen would. */
    if (!took_over) {
        r = sinew_skin_wait_swap(g.world, g.entities[0].skin);
        if (r != SINEW_OK) {
            shut_down(&g);
            return report_failure("sinew_skin_wait_swap", r);
        }
        took_over = frames;
    }

    /* What a renderer would have received: every vertex must be finite. */
    uint32_t bad = 0, lbs = 0, dqs = 0;
    for (uint32_t i = 0; i < g.entity_count; ++i) {
        bad += count_nonfinite(g.entities[i].positions, 3 * (size_t)g.vertex_count);
        bad += count_nonfinite(g.entities[i].normals, 3 * (size_t)g.vertex_count);
        const char* name = sinew_skin_backend(g.world, g.entities[i].skin);
        if (name && strcmp(name, "lbs") == 0) ++lbs;
        if (name && strcmp(name, "dqs") == 0) ++dqs;
    }
    const char* swapped = sinew_skin_backend(g.world, g.entities[0].skin);
    const int swap_ok = swapped && strcmp(swapped, "dqs") == 0;
    printf("sinew-embed: %s (%u vertices, %u joints, %s), %u entities (%u lbs, %u dqs after entity 0 "
           "switched to %s at frame %u, asked at frame %u), %u frames, %u threads, %.3f ms "
           "skinning per frame, %u non-finite values\n",
           g.character.source, g.vertex_count, g.joint_count,
           g.character.animation_count ? "animation clips" : "built-in motion", g.entity_count, lbs,
           dqs, swapped ? swapped : "?", took_over, frames / 2, frames,
           sinew_world_thread_count(g.world),
           1000.0 * skinning_seconds / frames, bad);
    shut_down(&g);
    if (bad != 0 || !swap_ok) {
        fprintf(stderr, "sinew-embed: %s\n", bad ? "non-finite vertices in the output"
                                                 : "entity 0 did not switch to dqs");
        return SAMPLE_EXIT_FAILURE;
    }
    return SAMPLE_EXIT_OK;

usage_error:
    usage(stderr);
    return SAMPLE_EXIT_USAGE;
}
