/* The `fps-cuda` backend plugin: fast projective skinning (Komaritzan and Botsch 2019,
 * ../shared/papers/fast-projective-skinning-2019.txt) on a CUDA device. Its own shared library
 * (sinew_fps_cuda), loaded with sinew_world_load_plugin; it exports only sinew_plugin_entry.
 * SPDX-License-Identifier: MIT
 *
 * Preparation is the CPU backend fps's, compiled into this plugin without CHOLMOD: an fps
 * instance (solver=pcg) builds ps's model, the reduced system (Sec. 4.3), the ELL/CRS matrix
 * (Sec. 4.2) and the gathers, and keeps computing the base vertices' targets per frame with
 * ps's sliding code (on the host, as fps does: fps_sim_update_targets); fps_cuda_device.cu
 * copies all of it to the device once and runs every step there (see fps_cuda_device.h).
 *
 * This file is the plugin's host half: the parameters (fps's, with solver fixed to pcg, plus
 * device, launch and batch), batch groups (skins with one batch name step in the same launches,
 * issued by the step that completes the group; a skin stepped twice or read before that
 * flushes the ready members first), the host side of the global collisions (fps's detection
 * at the device's prediction, the new pairs and the merged matrix uploaded before the step:
 * 2019 Sec. 6, fps_cuda_collide.h) and of pose discontinuities (fps's restart on the host,
 * its state and emptied contacts uploaded), the upsampling method fps resolved (MLS, 2019
 * Sec. 5, or ps's normal displacement, both run on the device), and the output: host arrays
 * copied down after each step, or a Vulkan output whose memory and timeline semaphores the
 * plugin imports so that the kernels write the slot directly, through the functions of the
 * world's Vulkan service (fps_cuda_vk.c). cuda/README.md describes each (parameters, "Launch
 * modes and batching", "Global collisions", "Output and interop"). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "builtin_backends.h"
#include "fps_collide.h"
#include "fps_cuda_collide.h"
#include "fps_cuda_device.h"
#include "fps_internal.h"
#include "fps_mls.h"
#include "sinew_cuda.h"
#include "sinew_output.h"

#define FPSC_NAME "fps-cuda"
#define FPSC_MAGIC 0x66706375u

#include "fps_cuda_vk.h"

/* ---- instance ---- */

typedef struct fpsc_group fpsc_group;

typedef struct fpsc_plugin_instance {
    uint32_t magic;
    sinew_host_api host;
    void* fps;                  /* the fps instance that prepared everything */
    fps_sim* sim;
    fps_sim_arrays arrays;
    fpsc_upsample* upsample;
    uint32_t* skin_joint;
    fpsc_instance* dev;
    fpsc_col_host* col;         /* collisions=1: detection on the host (Sec. 6), else NULL */
    bool col_stale;             /* the device's collision data failed to update: resend */
    double col_seconds;         /* profile=1: host time of the collision work per step, */
    uint64_t col_steps, col_pairs, col_changes; /* steps, pairs summed over them, changes */
    fpsc_batch* own_batch;      /* without a group */
    fpsc_group* group;
    bool pending;               /* stepped, waiting for its group */
    bool profile;
    uint32_t joint_count, render_count;
    const float* rest_positions;
    const float* rest_normals;
    bool clear_velocities;      /* a restart's step ran: zero the device's velocities */
    bool stepped;               /* the output holds a simulated shape */
    bool bound;
    bool bound_device;          /* the binding is imported Vulkan memory */
    bool binding_current;       /* the binding holds the latest shape */
    sinew_output_view binding;
    float* positions;           /* host copy for reads */
    float* normals;
    bool fresh;
    /* The imported Vulkan memory (one per output object), and the Vulkan service it came
     * through. */
    const sinew_vk_service* vk;
    struct sinew_vk_output* vk_output;
    fpsc_vk_handle vk_buffer;
    sinew_cuda_imported_memory vk_memory;
    /* The output's timeline semaphores imported into CUDA: this skin is the output's external
     * writer (sinew_vk_output_set_external_writer) and synchronises frames on its stream. */
    bool vk_sync;
    sinew_cuda_imported_timeline vk_written, vk_read;
    uint64_t frame_signal;      /* `written` value to signal after this launch (0: none) */
    bool in_flight;             /* own batch: a step runs that nobody waited for yet */
    int ordinal;
} fpsc_plugin_instance;

static fpsc_plugin_instance* cast(void* instance)
{
    fpsc_plugin_instance* p = (fpsc_plugin_instance*)instance;
    return p && p->magic == FPSC_MAGIC ? p : NULL;
}

/* ---- batch groups (process-wide) ---- */

struct fpsc_group {
    char name[64];
    int ordinal;
    fpsc_launch launch;
    fpsc_batch* batch;
    fpsc_plugin_instance** members;
    uint32_t count, capacity, ready;
    uint32_t most;              /* the largest member count (profile line) */
    bool in_flight;             /* a step runs that nobody waited for yet */
    fpsc_group* next;
};

static pthread_mutex_t g_groups_lock = PTHREAD_MUTEX_INITIALIZER;
static fpsc_group* g_groups;

/* Copies a member's new output into its host binding (host path only). */
static void deliver(fpsc_plugin_instance* p)
{
    p->stepped = true;
    p->fresh = false;
    p->binding_current = true;
    if (p->bound && !p->bound_device) {
        const float* pos = fpsc_host_positions(p->dev);
        const float* nrm = fpsc_host_normals(p->dev);
        if (pos) sinew_output_copy(pos, p->render_count, p->binding.positions,
                                   p->binding.position_stride);
        if (nrm && p->binding.normals)
            sinew_output_copy(nrm, p->render_count, p->binding.normals, p->binding.normal_stride);
    }
}

/* Enqueues one step of `batch` for the members that step (active), each Vulkan-synchronised
 * member's wait for `read` before it and its signal of `written` after it (the GPU orders
 * the frame, the CPU does not wait). The host waits for the step right away
 * unless every stepping member writes imported Vulkan memory and got its frame's signal; then
 * *in_flight says so and the wait (with the check for non-finite values, whose failure is
 * then reported by the next call that finishes the step) comes before the next step or read.
 * A claimed frame is signalled even when the step fails, so a renderer never waits forever. */
static sinew_result launch(fpsc_batch* batch, fpsc_plugin_instance* const* members,
                           uint32_t count, bool* in_flight)
{
    *in_flight = false;
    void* stream = fpsc_batch_stream(batch);
    bool async = true;
    /* first whatever may wait for the device, then the waits on the renderer */
    sinew_result r = fpsc_batch_prepare(batch);
    for (uint32_t i = 0; i < count; ++i) {
        fpsc_plugin_instance* m = members[i];
        m->frame_signal = 0;
        if (!m->pending) continue;
        if (m->vk_sync && m->bound_device) {
            uint64_t wait = 0, signal = 0;
            if (m->vk->output_external_frame(m->vk_output, &wait, &signal) == SINEW_OK) {
                m->frame_signal = signal;
                if (wait && r == SINEW_OK)
                    r = sinew_cuda_timeline_wait(&m->host, &m->vk_read, wait, stream);
            }
        }
        if (!m->frame_signal || !m->bound_device) async = false;
    }
    if (r == SINEW_OK) r = fpsc_batch_step(batch);
    for (uint32_t i = 0; i < count; ++i) {
        fpsc_plugin_instance* m = members[i];
        if (!m->frame_signal) continue;
        sinew_result s = sinew_cuda_timeline_signal(&m->host, &m->vk_written, m->frame_signal,
                                                    stream);
        if (s != SINEW_OK) {
            async = false;
            if (r == SINEW_OK) r = s;
        }
        m->frame_signal = 0;
    }
    if (r == SINEW_OK && async) {
        *in_flight = true;
        return SINEW_OK;
    }
    sinew_result w = fpsc_batch_wait(batch);
    return r == SINEW_OK ? w : r;
}

/* Steps the ready members of a group (lock held). */
static sinew_result group_flush(fpsc_group* g)
{
    if (g->ready == 0) return SINEW_OK;
    sinew_result r = SINEW_OK;
    if (g->in_flight) { /* the staging buffers of the step before are reused */
        r = fpsc_batch_wait(g->batch);
        g->in_flight = false;
    }
    for (uint32_t i = 0; i < g->count; ++i) fpsc_set_active(g->members[i]->dev, g->members[i]->pending);
    if (r == SINEW_OK) r = launch(g->batch, g->members, g->count, &g->in_flight);
    for (uint32_t i = 0; i < g->count; ++i) {
        fpsc_plugin_instance* m = g->members[i];
        if (m->pending && r == SINEW_OK) deliver(m);
        m->pending = false;
        fpsc_set_active(m->dev, 1);
    }
    g->ready = 0;
    return r;
}

/* Waits for a group's step in flight (lock held). */
static sinew_result group_finish(fpsc_group* g)
{
    if (!g->in_flight) return SINEW_OK;
    g->in_flight = false;
    return fpsc_batch_wait(g->batch);
}

static sinew_result group_join(fpsc_plugin_instance* p, const char* name, fpsc_launch launch)
{
    pthread_mutex_lock(&g_groups_lock);
    fpsc_group* g = g_groups;
    while (g && (strcmp(g->name, name) != 0 || g->ordinal != p->ordinal)) g = g->next;
    sinew_result r = SINEW_OK;
    if (!g) {
        g = (fpsc_group*)calloc(1, sizeof *g);
        if (!g) r = sinew_host_fail(&p->host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda: out of memory");
        if (r == SINEW_OK) {
            snprintf(g->name, sizeof g->name, "%s", name);
            g->ordinal = p->ordinal;
            g->launch = launch;
            r = fpsc_batch_create(&p->host, p->ordinal, launch, &g->batch);
            if (r != SINEW_OK) {
                free(g);
                g = NULL;
            } else {
                g->next = g_groups;
                g_groups = g;
            }
        }
    }
    if (r == SINEW_OK && g->count == g->capacity) {
        uint32_t cap = g->capacity ? 2u * g->capacity : 8u;
        fpsc_plugin_instance** m = (fpsc_plugin_instance**)realloc(g->members, cap * sizeof *m);
        if (!m) r = sinew_host_fail(&p->host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda: out of memory");
        else {
            g->members = m;
            g->capacity = cap;
        }
    }
    if (r == SINEW_OK) r = group_flush(g); /* the batch changes: no half-collected step */
    if (r == SINEW_OK) r = group_finish(g);
    if (r == SINEW_OK) r = fpsc_batch_add(g->batch, p->dev);
    if (r == SINEW_OK) {
        g->members[g->count++] = p;
        if (g->count > g->most) g->most = g->count;
        p->group = g;
    }
    pthread_mutex_unlock(&g_groups_lock);
    return r;
}

/* profile=1: one INFO line with the GPU time per step (CUDA events) when a batch ends. */
static void log_profile(const sinew_host_api* host, const fpsc_batch* b, const char* what,
                        uint32_t characters)
{
    double ms = 0.0;
    uint64_t steps = 0;
    fpsc_batch_profile(b, &ms, &steps);
    if (steps)
        sinew_host_log(host, SINEW_LOG_INFO, "fps-cuda profile: %s, %u characters, %llu steps, "
                       "%.4f ms GPU time per step (CUDA events, launch %s)", what,
                       characters, (unsigned long long)steps, ms / (double)steps,
                       fpsc_batch_launch(b) == FPSC_LAUNCH_COOPERATIVE ? "cooperative"
                       : fpsc_batch_launch(b) == FPSC_LAUNCH_STREAM    ? "stream"
                                                                       : "graph");
}

static void group_leave(fpsc_plugin_instance* p)
{
    fpsc_group* g = p->group;
    if (!g) return;
    pthread_mutex_lock(&g_groups_lock);
    (void)group_flush(g);
    (void)group_finish(g);
    fpsc_batch_remove(g->batch, p->dev); /* under the lock: members may be stepping */
    for (uint32_t i = 0; i < g->count; ++i)
        if (g->members[i] == p) {
            memmove(g->members + i, g->members + i + 1, (g->count - i - 1u) * sizeof *g->members);
            --g->count;
            break;
        }
    p->group = NULL;
    if (g->count == 0) {
        fpsc_group** link = &g_groups;
        while (*link != g) link = &(*link)->next;
        *link = g->next;
        log_profile(&p->host, g->batch, g->name, g->most);
        fpsc_batch_destroy(g->batch);
        free(g->members);
        free(g);
    }
    pthread_mutex_unlock(&g_groups_lock);
}

/* Launches any step of this skin that waits for its group (before changing its output). */
static sinew_result settle(fpsc_plugin_instance* p)
{
    if (!p->group) return SINEW_OK;
    pthread_mutex_lock(&g_groups_lock); /* pending is written by other members' steps */
    sinew_result r = p->pending ? group_flush(p->group) : SINEW_OK;
    pthread_mutex_unlock(&g_groups_lock);
    return r;
}

/* settle, then waits for this skin's step in flight (before reading its shape or state, and
 * before the next step reuses the staging buffers). */
static sinew_result finish(fpsc_plugin_instance* p)
{
    sinew_result r = settle(p);
    if (r != SINEW_OK) return r;
    if (p->group) {
        pthread_mutex_lock(&g_groups_lock);
        r = group_finish(p->group);
        pthread_mutex_unlock(&g_groups_lock);
        return r;
    }
    if (!p->in_flight) return SINEW_OK;
    p->in_flight = false;
    return fpsc_batch_wait(p->own_batch);
}

/* ---- probe ---- */

typedef struct probe_capture {
    char line[512];
} probe_capture;

static void probe_log(sinew_log_level level, const char* message, void* user)
{
    (void)level;
    snprintf(((probe_capture*)user)->line, sizeof ((probe_capture*)user)->line, "%s", message);
}

/* Asks CUDA for a device; the reason for a refusal goes to the host at INFO (the world logs
 * the refusal itself), so that a machine without a GPU sees one line per refused use. */
static sinew_result probe_device(const sinew_host_api* host, int ordinal)
{
    probe_capture cap;
    cap.line[0] = '\0';
    sinew_host_api quiet = *host;
    quiet.logger.func = probe_log;
    quiet.logger.user = &cap;
    quiet.log_level = SINEW_LOG_DEBUG;
    int count = 0;
    sinew_result r = sinew_cuda_probe(&quiet, &count);
    if (r == SINEW_OK && ordinal >= count) {
        sinew_host_log(host, SINEW_LOG_INFO, "fps-cuda: device %d requested, %d CUDA devices",
                       ordinal, count);
        return SINEW_ERROR_BACKEND_UNAVAILABLE;
    }
    if (r != SINEW_OK) {
        sinew_host_log(host, SINEW_LOG_INFO, "fps-cuda: unavailable: %s", cap.line);
        return SINEW_ERROR_BACKEND_UNAVAILABLE;
    }
    return SINEW_OK;
}

static sinew_result fpsc_probe(const sinew_host_api* host)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    return probe_device(host, 0);
}

/* ---- prepare ---- */

static void fpsc_destroy_instance(void* instance);

/* The plugin's own keys (sinew_params.h's X-macro rows), described first in its table. */
typedef struct fpsc_own_params {
    uint32_t device;
    int launch;
    char batch[64];
} fpsc_own_params;

#define FPSC_OWN_PARAM_ROWS(X, T)                                                                 \
    X(T, device, INTEGER, 0, 0.0, 64.0, "0", NULL, "the CUDA device's ordinal", U32, device,      \
      NULL)                                                                                       \
    X(T, launch, CHOICE, 0, 0.0, 0.0, "auto", "auto|graph|cooperative|stream",                     \
      "how a step's kernels are launched (cuda/README.md)", INT, launch, NULL)                     \
    X(T, batch, TEXT, 0, 0.0, 63.0, "", NULL,                                                      \
      "a name: every fps-cuda skin of the process with this name steps in the same launches",     \
      TEXT, batch, NULL)

static const sinew_param_slot fpsc_own_slots[] = {
    FPSC_OWN_PARAM_ROWS(SINEW_PARAM_SLOT_ROW, fpsc_own_params)};
static const sinew_param_info fpsc_param_info[] = {
    FPSC_OWN_PARAM_ROWS(SINEW_PARAM_INFO_ROW, fpsc_own_params)
    FPS_PARAM_ROWS(SINEW_PARAM_INFO_ROW, fps_params)};
enum { FPSC_OWN_PARAM_COUNT = sizeof fpsc_own_slots / sizeof fpsc_own_slots[0] };

/* Splits the plugin's own keys off and reads them with the shared parser (the launch words are
 * fpsc_launch's values in order); the rest goes to fps, with solver=pcg, joint_volume=0 and
 * inelastic_contacts=0 added unless given. `rest` has room for count + 3 entries. */
static sinew_result split_params(const sinew_host_api* host, const sinew_param* params,
                                 uint32_t count, sinew_param* rest, uint32_t* rest_count,
                                 int* ordinal, fpsc_launch* launch, char batch[64])
{
    *rest_count = 0;
    bool solver = false, joint_volume = false, inelastic = false;
    /* three keys: a fourth own entry repeats one of them, which the parser reports */
    sinew_param own[FPSC_OWN_PARAM_COUNT + 1];
    uint32_t own_count = 0;
    if (count > 0 && !params)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps-cuda: param_count is %u but params is NULL", count);
    for (uint32_t i = 0; i < count; ++i) {
        const char* k = params[i].key;
        uint32_t index = 0;
        if (k && sinew_param_choice("device|launch|batch", k, &index)) {
            if (own_count <= FPSC_OWN_PARAM_COUNT) own[own_count++] = params[i];
            continue;
        }
        if (k && strcmp(k, "solver") == 0) solver = true;
        if (k && strcmp(k, "joint_volume") == 0) joint_volume = true;
        if (k && strcmp(k, "inelastic_contacts") == 0) inelastic = true;
        rest[(*rest_count)++] = params[i];
    }
    fpsc_own_params p = {0u, FPSC_LAUNCH_AUTO, ""};
    sinew_result r = sinew_params_parse(host, FPSC_NAME, fpsc_param_info, fpsc_own_slots,
                                        FPSC_OWN_PARAM_COUNT, own, own_count, NULL, &p);
    if (r != SINEW_OK) return r;
    *ordinal = (int)p.device;
    *launch = (fpsc_launch)p.launch;
    memcpy(batch, p.batch, sizeof p.batch);
    if (!solver) {
        static const sinew_param pcg = {"solver", "pcg"};
        rest[(*rest_count)++] = pcg;
    }
    if (!joint_volume) {
        static const sinew_param none = {"joint_volume", "0"};
        rest[(*rest_count)++] = none;
    }
    if (!inelastic) {
        static const sinew_param elastic = {"inelastic_contacts", "0"};
        rest[(*rest_count)++] = elastic;
    }
    return SINEW_OK;
}

/* The plugin's own keys split off and fps's parsed, restricted to what the device runs (pcg
 * with a fixed iteration count), and the device probed. */
static sinew_result prepare_params(const sinew_host_api* host, const sinew_param* params,
                                   uint32_t param_count, sinew_param* rest, uint32_t* rest_count,
                                   int* ordinal, fpsc_launch* launch, char batch[64],
                                   fps_params* fp)
{
    if (param_count > 1024u)
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "fps-cuda: %u parameters",
                               param_count);
    sinew_result r = split_params(host, params, param_count, rest, rest_count, ordinal, launch,
                                  batch);
    if (r != SINEW_OK) return r;
    r = fps_params_parse(host, rest, *rest_count, NULL, fp);
    if (r != SINEW_OK) return r;
    if (fp->solver != FPS_SOLVER_PCG)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "fps-cuda: solves with pcg only (solver=cholmod is fps's)");
    if (fp->pcg_tolerance > 0.0)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "fps-cuda: pcg_tolerance must be 0 (the device runs exactly "
                               "pcg_iterations iterations)");
    if (fp->volume.joint > 0.0)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "fps-cuda: joint_volume must be 0 (the device does not give back "
                               "the joints' volume)");
    if (fp->inelastic_contacts)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "fps-cuda: inelastic_contacts must be 0 (the device keeps the "
                               "contacts' speeds)");
    if (fp->update.interpolate_output)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "fps-cuda: interpolate_output must be 0 (the device writes the "
                               "latest step's shape)");
    if (probe_device(host, *ordinal) != SINEW_OK)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_UNAVAILABLE,
                               "fps-cuda: no usable CUDA device %d", *ordinal);
    return SINEW_OK;
}

/* The host-side copies the device needs from fps's model: the upsampling records and each
 * skin vertex's joint, and the output arrays. */
static sinew_result copy_model(const sinew_host_api* host, fpsc_plugin_instance* p,
                               const ps_model* m)
{
    uint32_t n = m->n;
    p->upsample = (fpsc_upsample*)sinew_host_calloc(host, m->render_count ? m->render_count : 1u,
                                                    sizeof(fpsc_upsample));
    p->skin_joint = (uint32_t*)sinew_host_calloc(host, n ? n : 1u, sizeof(uint32_t));
    p->positions = (float*)sinew_host_calloc(host, p->render_count, 12u);
    p->normals = (float*)sinew_host_calloc(host, p->render_count, 12u);
    if (!p->upsample || !p->skin_joint || !p->positions || !p->normals)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda: out of memory");
    for (uint32_t k = 0; k < m->render_count; ++k) {
        const ps_upsample* u = &m->upsample[k];
        fpsc_upsample* d = &p->upsample[k];
        d->triangle = u->triangle == PS_NONE ? UINT32_MAX : u->triangle;
        d->vertex = u->vertex;
        memcpy(d->bary, u->bary, sizeof d->bary);
        memcpy(d->offset, u->offset, sizeof d->offset);
        memcpy(d->normal, u->normal, sizeof d->normal);
    }
    for (uint32_t i = 0; i < n; ++i) p->skin_joint[i] = m->bones[m->vertex_bone[i]].joint;
    return SINEW_OK;
}

/* The device's description of the simulation: fps's arrays, the iteration counts, the model's
 * skin and upsampling, and the MLS weights fps resolved for this rig and these parameters
 * (upsampling=auto|normal|mls; auto = mls for a separate or decimated simulation mesh), so
 * the device evaluates exactly what fps_sim_upsample does. */
static sinew_result fill_desc(const sinew_host_api* host, fpsc_plugin_instance* p,
                              const ps_model* m, const fps_params* fp, int ordinal, fpsc_desc* d)
{
    const fps_sim_arrays* a = &p->arrays;
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    d->n = a->n;
    d->N = a->N;
    d->ns = a->ns;
    d->prism_count = a->prism_count;
    d->h = a->h;
    d->damping = a->damping;
    d->perm = a->perm;
    d->inv = a->inv;
    d->mass_h2 = a->mass_h2;
    d->prisms = a->prisms;
    d->gather_ptr = a->gather_ptr;
    d->gather = a->gather;
    d->A = a->A;
    d->jinv = a->jinv;
    d->Ksb = a->Ksb;
    d->x = a->x;
    d->v = a->v;
    d->target = a->target;
    d->skinning = a->skinning;
    d->iterations = fp->iterations;
    d->pcg_iterations = fp->pcg_iterations;
    d->joint_count = p->joint_count;
    d->render_count = m->render_count;
    d->upsample = p->upsample;
    d->triangle_count = m->triangle_count;
    d->triangles = m->triangles;
    d->vertex_tri_offsets = m->vertex_tri_offsets;
    d->vertex_tris = m->vertex_tris;
    d->skin_joint = p->skin_joint;
    const sinew_mls_weights* mls = fps_sim_mls(p->sim);
    if (!mls) return SINEW_OK;
    if (mls->render_count != m->render_count || mls->simulation_count != m->n)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                               "fps-cuda: fps's MLS weights map %u simulation vertices to "
                               "%u render vertices, the model has %u and %u",
                               mls->simulation_count, mls->render_count, m->n, m->render_count);
    d->mls_indices = mls->indices;
    d->mls_weights = mls->weights;
    d->mls_normal_weights = mls->normal_weights;
    return SINEW_OK;
}

/* Sec. 6: fps prepared its collision state (fps_collide, none for a system without free
 * rows); the device gets its static part here and the pairs per step. */
static sinew_result attach_collisions(const sinew_host_api* host, fpsc_plugin_instance* p,
                                      const fps_params* fp, fpsc_desc* d)
{
    if (!fp->collisions || !fps_sim_collide(p->sim)) return SINEW_OK;
    fps_collide_data ex;
    memset(&ex, 0, sizeof ex);
    sinew_result r = fpsc_col_host_create(host, p->sim, &p->col);
    if (r == SINEW_OK) r = fps_collide_get_data(host, fps_sim_collide(p->sim), &ex);
    if (r != SINEW_OK) return r;
    d->collisions = 1;
    d->col_triangle_count = ex.triangle_count;
    d->col_triangles = ex.triangles;
    d->col_sign = ex.sign;
    d->col_weight = ex.weight;
    d->col_margin = ex.margin;
    if (ex.cap_frame) { /* fps's limb capsules (capsules, on with collisions=1) */
        d->col_bone_count = ex.bone_count;
        d->col_cap_frame = ex.cap_frame;
        d->col_cap_radii = ex.cap_radii;
    }
    return SINEW_OK;
}

/* The device state, in the named batch group or a batch of its own. */
static sinew_result start_device(const sinew_host_api* host, fpsc_plugin_instance* p,
                                 const fpsc_desc* d, int ordinal, fpsc_launch launch,
                                 const char* batch, int profile)
{
    sinew_result r = fpsc_create(host, d, &p->dev);
    if (r != SINEW_OK) return r;
    p->profile = profile != 0;
    if (batch[0]) {
        r = group_join(p, batch, launch);
        if (r == SINEW_OK && p->profile) r = fpsc_batch_set_profile(p->group->batch, 1);
        return r;
    }
    r = fpsc_batch_create(host, ordinal, launch, &p->own_batch);
    if (r == SINEW_OK) r = fpsc_batch_add(p->own_batch, p->dev);
    if (r == SINEW_OK && p->profile) r = fpsc_batch_set_profile(p->own_batch, 1);
    return r;
}

static sinew_result fpsc_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                 const sinew_param* params, uint32_t param_count,
                                 const void* next, void** out_instance)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out_instance)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT,
                               "fps-cuda: out_instance is NULL");
    *out_instance = NULL;
    if (next)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "fps-cuda: takes its parameters as text (sinew_param) only, but "
                               "the next chain is not NULL");
    sinew_param rest[1027]; /* the caller's, solver, joint_volume, inelastic_contacts */
    uint32_t rest_count = 0;
    int ordinal = 0;
    fpsc_launch launch = FPSC_LAUNCH_AUTO;
    char batch[64];
    fps_params fp;
    sinew_result r = prepare_params(host, params, param_count, rest, &rest_count, &ordinal,
                                    &launch, batch, &fp);
    if (r != SINEW_OK) return r;
    if (!rig) return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fps-cuda: rig is NULL");
    fpsc_plugin_instance* p = (fpsc_plugin_instance*)sinew_host_calloc(host, 1, sizeof *p);
    if (!p) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "fps-cuda: out of memory");
    p->magic = FPSC_MAGIC;
    p->host = *host;
    p->host.struct_size = (uint32_t)sizeof(sinew_host_api);
    p->ordinal = ordinal;
    /* fps prepares (its checks, model, bake restore). A rig baked for fps-cuda carries fps's
     * blob (bake below), so it is handed to fps under fps's name. */
    sinew_rig_view view = *rig;
    if (rig->struct_size >= sizeof(sinew_rig_view) && rig->baked_backend &&
        strcmp(rig->baked_backend, FPSC_NAME) == 0)
        view.baked_backend = "fps";
    r = sinew_backend_fps.prepare(host, &view, rest, rest_count, NULL, &p->fps);
    fpsc_desc d;
    if (r == SINEW_OK) {
        p->sim = fps_instance_sim(p->fps);
        fps_sim_arrays_get(p->sim, &p->arrays);
        p->joint_count = rig->joint_count;
        p->render_count = rig->render_mesh.vertex_count;
        p->rest_positions = rig->render_mesh.positions;
        p->rest_normals = rig->render_mesh.normals;
        r = copy_model(host, p, fps_instance_model(p->fps));
    }
    if (r == SINEW_OK) r = fill_desc(host, p, fps_instance_model(p->fps), &fp, ordinal, &d);
    if (r == SINEW_OK) r = attach_collisions(host, p, &fp, &d);
    if (r == SINEW_OK) r = start_device(host, p, &d, ordinal, launch, batch, fp.profile);
    if (r != SINEW_OK) {
        fpsc_destroy_instance(p);
        return r;
    }
    sinew_cuda_device_info info;
    if (sinew_cuda_device_info_get(host, ordinal, &info) == SINEW_OK)
        sinew_host_log(host, SINEW_LOG_INFO, "fps-cuda: on %s (device %d, sm %d.%d)%s%s", info.name,
                       ordinal, info.compute_major, info.compute_minor,
                       batch[0] ? ", batch " : "", batch);
    memcpy(p->positions, p->rest_positions, (size_t)p->render_count * 12u);
    memcpy(p->normals, p->rest_normals, (size_t)p->render_count * 12u);
    p->fresh = true;
    *out_instance = p;
    return SINEW_OK;
}

/* Gives the imported Vulkan objects back (no step of this skin may be in flight). */
static void release_vk(fpsc_plugin_instance* p)
{
    if (p->vk_sync) {
        (void)p->vk->output_set_external_writer(p->vk_output, 0);
        sinew_cuda_release_timeline(&p->vk_written);
        sinew_cuda_release_timeline(&p->vk_read);
        p->vk_sync = false;
    }
    sinew_cuda_release_memory(&p->vk_memory);
    p->vk = NULL;
    p->vk_output = NULL;
    p->vk_buffer = 0;
}

static void fpsc_destroy_instance(void* instance)
{
    fpsc_plugin_instance* p = cast(instance);
    if (!p) return;
    sinew_host_api host = p->host;
    group_leave(p);
    (void)finish(p);
    if (p->own_batch && p->profile) log_profile(&host, p->own_batch, "alone", 1u);
    if (p->col && p->profile && p->col_steps)
        sinew_host_log(&host, SINEW_LOG_INFO, "fps-cuda profile: collisions on the host, %llu "
                       "steps, %.4f ms per step (prediction, detection, uploads), %.1f pairs per "
                       "step, %llu changes of the pair set", (unsigned long long)p->col_steps,
                       1e3 * p->col_seconds / (double)p->col_steps,
                       (double)p->col_pairs / (double)p->col_steps,
                       (unsigned long long)p->col_changes);
    fpsc_destroy(p->dev); /* leaves its own batch first */
    fpsc_batch_destroy(p->own_batch);
    fpsc_col_host_destroy(p->col);
    release_vk(p);
    if (p->fps) sinew_backend_fps.destroy(p->fps);
    sinew_host_free(&host, p->upsample);
    sinew_host_free(&host, p->skin_joint);
    sinew_host_free(&host, p->positions);
    sinew_host_free(&host, p->normals);
    p->magic = 0;
    sinew_host_free(&host, p);
}

/* ---- per frame ---- */

/* The device's copy of the collision state (after a change of the pairs or of the state). */
static sinew_result upload_collisions(fpsc_plugin_instance* p)
{
    fpsc_collisions c;
    sinew_result r = fpsc_col_host_collisions(p->col, &c);
    /* In a group, under the groups' lock: a flush by another member may be rebuilding the
     * batch's tables from this member's device view, which an upload that grows an array
     * changes (the copies themselves only go onto the stream, behind any step in flight, in
     * which this member, not pending, takes no part). */
    if (p->group) pthread_mutex_lock(&g_groups_lock);
    if (r == SINEW_OK) r = fpsc_set_collisions(p->dev, &c);
    if (p->group) pthread_mutex_unlock(&g_groups_lock);
    p->col_stale = r != SINEW_OK; /* then the next step sends everything again */
    return r;
}

/* Wall-clock seconds for profile=1. */
static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sec. 6, "Collision detection is done on the CPU": the prediction of this step from the
 * state the device left (its copy after the last step; this skin has no step in flight here),
 * fps's detection on it and, when the pairs changed, A + A_col on the host and the device. A
 * failed detection leaves no pair on either side and returns its error.
 * In a group, another member's step may run meanwhile with this skin sitting out: its graph
 * copies this skin's unchanged state into the same pinned copy, i.e. writes the bytes this
 * reads, so the overlap is harmless. */
static sinew_result collide(fpsc_plugin_instance* p)
{
    double t0 = p->profile ? seconds_now() : 0.0;
    const double* state = fpsc_state_mirror(p->dev);
    int changed = 0;
    sinew_result r = fpsc_col_host_step(p->col, state, state + 3u * (size_t)p->arrays.N,
                                        &changed);
    if (changed || p->col_stale) {
        sinew_result u = upload_collisions(p);
        if (r == SINEW_OK) r = u;
    }
    /* the limb capsules move with their bones: their frames every step, queued on the
     * batch's stream under the groups' lock, as every other copy onto a group's stream (a
     * member flushing the group may be capturing that stream into its graph) */
    const double* frames = fpsc_col_host_capsule_pose(p->col);
    if (frames) {
        if (p->group) pthread_mutex_lock(&g_groups_lock);
        sinew_result u = fpsc_set_capsule_pose(p->dev, frames);
        if (p->group) pthread_mutex_unlock(&g_groups_lock);
        if (r == SINEW_OK) r = u;
    }
    if (p->profile) {
        p->col_seconds += seconds_now() - t0;
        p->col_steps++;
        p->col_changes += (uint64_t)changed;
        p->col_pairs += fps_collide_pair_count(fps_sim_collide(p->sim));
    }
    return r;
}

static sinew_result fpsc_set_pose(void* instance, const sinew_pose_view* pose)
{
    fpsc_plugin_instance* p = cast(instance);
    if (!p) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = ps_update_check_pose(&p->host, FPSC_NAME, pose, p->joint_count);
    if (r != SINEW_OK) return r;
    /* fps keeps the pose with its flags; its update (fps_instance_begin_update) judges the
     * change and restarts the tissue on a discontinuity, and hands each step its pose */
    return sinew_backend_fps.set_pose(p->fps, pose);
}

/* After a restart's step the velocities are zeroed, as fps zeroes them right after its step;
 * here before the next step or read (the step may still wait for its group). */
static sinew_result clear_velocities(fpsc_plugin_instance* p)
{
    if (!p->clear_velocities) return SINEW_OK;
    p->clear_velocities = false;
    sinew_result r = fpsc_download_state(p->dev);
    if (r != SINEW_OK) return r;
    memset(p->arrays.v, 0, 3u * (size_t)p->arrays.N * sizeof(double));
    return fpsc_upload_state(p->dev);
}

/* dt goes to fps's step clock (the plan of the update's steps, backends/ps/ps_update.c); when
 * the pose does not continue the last one, fps restarts its host state from it (forgetting the
 * contacts, as set_state) and the device takes it over. */
static sinew_result begin_update(fpsc_plugin_instance* p, float dt, sinew_step_plan* plan,
                                 bool* reset)
{
    sinew_result r = fps_instance_begin_update(p->fps, dt, plan, reset);
    if (r != SINEW_OK || !*reset) return r;
    r = fpsc_upload_state(p->dev);
    if (r == SINEW_OK && p->col) r = upload_collisions(p);
    p->clear_velocities = r == SINEW_OK;
    return r;
}

/* One step of h at step i's pose: its targets, the collisions, and the launch alone or with
 * the batch group. A step still waiting for its group, or still running, was finished before
 * (the targets and the staging buffers change here). */
static sinew_result step_once(fpsc_plugin_instance* p, const sinew_step_plan* plan, uint32_t i,
                              bool reset)
{
    fps_instance_step_pose(p->fps, plan, i, reset);
    fps_sim_update_targets(p->sim); /* ps's sliding on the host, as fps (copied per step) */
    sinew_result r = SINEW_OK;
    if (p->col) r = collide(p);
    if (r != SINEW_OK) return r;
    if (!p->group) {
        fpsc_plugin_instance* self = p;
        p->pending = true;
        r = launch(p->own_batch, &self, 1u, &p->in_flight);
        p->pending = false;
        if (r == SINEW_OK) deliver(p);
        return r;
    }
    pthread_mutex_lock(&g_groups_lock);
    fpsc_group* g = p->group;
    p->pending = true;
    g->ready++;
    r = g->ready == g->count ? group_flush(g) : SINEW_OK;
    pthread_mutex_unlock(&g_groups_lock);
    return r;
}

static sinew_result refresh(fpsc_plugin_instance* p);

/* Bound device memory gets the host copy of the latest shape on the batch's stream, behind
 * the renderer's release of the slot where this skin synchronises the output's frames (and
 * signalling the frame's `written` after it), else synchronously. */
static sinew_result write_device_slot(fpsc_plugin_instance* p)
{
    void* stream = fpsc_batch_stream(p->group ? p->group->batch : p->own_batch);
    uint64_t wait = 0, signal = 0;
    sinew_result r = SINEW_OK;
    if (p->vk_sync && p->vk->output_external_frame(p->vk_output, &wait, &signal) == SINEW_OK &&
        wait)
        r = sinew_cuda_timeline_wait(&p->host, &p->vk_read, wait, stream);
    if (p->group) pthread_mutex_lock(&g_groups_lock); /* a flush reads the members' outputs */
    if (r == SINEW_OK) r = fpsc_write_output(p->dev, p->positions, p->normals, stream, !signal);
    if (p->group) pthread_mutex_unlock(&g_groups_lock);
    if (signal) { /* a claimed frame is signalled whatever happened, as launch does */
        sinew_result s = sinew_cuda_timeline_signal(&p->host, &p->vk_written, signal, stream);
        if (r == SINEW_OK) r = s;
    }
    return r;
}

/* An update that runs no step still leaves the latest shape in the output: a binding made
 * since a step wrote (another slot of a double-buffered Vulkan output, other host arrays)
 * gets it from the host copy (the rest shape before the first step). */
static sinew_result repeat_output(fpsc_plugin_instance* p)
{
    if (!p->bound || p->binding_current) return SINEW_OK;
    sinew_result r = refresh(p);
    if (r == SINEW_OK && p->bound_device) {
        r = write_device_slot(p);
    } else if (r == SINEW_OK) {
        sinew_output_copy(p->positions, p->render_count, p->binding.positions,
                          p->binding.position_stride);
        if (p->binding.normals)
            sinew_output_copy(p->normals, p->render_count, p->binding.normals,
                              p->binding.normal_stride);
    }
    p->binding_current = r == SINEW_OK;
    return r;
}

/* An update: the whole steps of h that dt makes (the first restarted and quasi-static after a
 * pose jump), each a device step; a skin in a batch group that runs several steps in one
 * update flushes the ready members before its second (a step waits for the one before it). */
static sinew_result fpsc_step(void* instance, float dt)
{
    fpsc_plugin_instance* p = cast(instance);
    if (!p) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = ps_update_check_dt(&p->host, FPSC_NAME, dt);
    if (r != SINEW_OK) return r;
    sinew_step_plan plan;
    memset(&plan, 0, sizeof plan);
    bool reset = false;
    r = finish(p);
    if (r == SINEW_OK) r = clear_velocities(p);
    if (r != SINEW_OK) return r;
    r = begin_update(p, dt, &plan, &reset);
    for (uint32_t i = 0; r == SINEW_OK && i < plan.count; ++i) {
        if (i > 0) r = finish(p);
        if (r == SINEW_OK && i > 0) r = clear_velocities(p);
        if (r == SINEW_OK) r = step_once(p, &plan, i, reset);
    }
    fps_instance_end_update(p->fps);
    if (r == SINEW_OK && plan.count == 0) r = repeat_output(p);
    return r;
}

/* The current output into the host copy (rest shape before the first step). */
static sinew_result refresh(fpsc_plugin_instance* p)
{
    if (p->fresh) return SINEW_OK;
    sinew_result r = fpsc_read_output(p->dev, p->positions, p->normals);
    if (r == SINEW_OK) p->fresh = true;
    return r;
}

static sinew_result fpsc_read_output_fn(void* instance, const sinew_output_view* out)
{
    fpsc_plugin_instance* p = cast(instance);
    if (!p) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_output_view view;
    if (out) {
        view = *out;
        view.next = NULL; /* read_output copies into host arrays whatever the chain says */
    }
    sinew_result r = sinew_output_check(&p->host, FPSC_NAME, "read_output", out ? &view : NULL,
                                        p->render_count);
    if (r == SINEW_OK) r = finish(p);
    if (r == SINEW_OK) r = refresh(p);
    if (r != SINEW_OK) return r;
    sinew_output_copy(p->positions, p->render_count, out->positions,
                      out->position_stride ? out->position_stride : 12u);
    if (out->normals)
        sinew_output_copy(p->normals, p->render_count, out->normals,
                          out->normal_stride ? out->normal_stride : 12u);
    return SINEW_OK;
}

static const fpsc_vk_output_ext* find_vk_ext(const void* next)
{
    for (const sinew_ext_header* h = (const sinew_ext_header*)next; h;
         h = (const sinew_ext_header*)h->next)
        if (h->type == SINEW_EXT_VULKAN_OUTPUT && h->struct_size >= sizeof(fpsc_vk_output_ext))
            return (const fpsc_vk_output_ext*)h;
    return NULL;
}

/* Imports the output's timeline semaphores and becomes its external writer, so that steps wait
 * for `read` and signal `written` on the stream (sinew_vk_output_set_external_writer). Where
 * anything is missing (a device that cannot export timeline semaphores:
 * SINEW_ERROR_UNSUPPORTED, one line from the Vulkan module) the skin stays on the host path:
 * each step waits for its stream before returning, end_frame signals on the host, and
 * begin_frame's wait for `read` on the CPU has happened before. */
static void import_vk_sync(fpsc_plugin_instance* p)
{
    const char* why = NULL;
    int wfd = -1, rfd = -1;
    if (p->vk->output_export_semaphores(p->vk_output, &wfd, &rfd) != SINEW_OK)
        why = "the output's timeline semaphores cannot be exported";
    else if (sinew_cuda_import_timeline_fd(&p->host, wfd, &p->vk_written) != SINEW_OK) {
        close(wfd); /* a failed import leaves the fd with us */
        close(rfd);
        why = "cudaImportExternalSemaphore failed";
    } else if (sinew_cuda_import_timeline_fd(&p->host, rfd, &p->vk_read) != SINEW_OK) {
        close(rfd);
        sinew_cuda_release_timeline(&p->vk_written);
        why = "cudaImportExternalSemaphore failed";
    } else if (p->vk->output_set_external_writer(p->vk_output, 1) != SINEW_OK) {
        sinew_cuda_release_timeline(&p->vk_written);
        sinew_cuda_release_timeline(&p->vk_read);
        why = "another writer holds the output";
    }
    if (why) {
        sinew_host_log(&p->host, SINEW_LOG_INFO, "fps-cuda: frames of the Vulkan output are "
                       "synchronised on the host: %s", why);
        return;
    }
    p->vk_sync = true;
}

/* Imports the Vulkan output's memory once per output object; returns a reason on failure
 * (why == NULL: imported). */
static const char* import_vk(fpsc_plugin_instance* p, const fpsc_vk_output_ext* ext)
{
    if (p->vk_memory.handle && p->vk_output == ext->output && p->vk_buffer == ext->buffer)
        return NULL;
    release_vk(p);
    const sinew_vk_service* vk = NULL;
    const char* why = fpsc_vk_find(&p->host, &vk);
    if (why) return why;
    fpsc_vk_memory_export ex;
    if (fpsc_vk_export_memory(vk, ext->output, &ex) != SINEW_OK)
        return "the output's memory cannot be exported (create it with SINEW_VK_OUTPUT_EXPORTABLE)";
    sinew_cuda_device_info info;
    if (sinew_cuda_device_info_get(&p->host, p->ordinal, &info) != SINEW_OK ||
        memcmp(info.uuid, ex.device_uuid, 16) != 0) {
        close(ex.fd);
        return "the Vulkan device is not this CUDA device (UUIDs differ)";
    }
    if (ext->position_offset + 12u * (uint64_t)p->render_count > ex.buffer_size ||
        ext->normal_offset + 12u * (uint64_t)p->render_count > ex.buffer_size) {
        close(ex.fd);
        return "the slot does not fit the exported buffer";
    }
    if (cudaSetDevice(p->ordinal) != cudaSuccess) {
        (void)cudaGetLastError();
        close(ex.fd);
        return "cudaSetDevice failed";
    }
    if (sinew_cuda_import_memory_fd(&p->host, ex.fd, (size_t)ex.allocation_size, 0,
                                    (size_t)ex.buffer_size, ex.dedicated != 0,
                                    &p->vk_memory) != SINEW_OK) {
        close(ex.fd); /* a failed import leaves the fd with us */
        return "cudaImportExternalMemory failed";
    }
    p->vk = vk;
    p->vk_output = ext->output;
    p->vk_buffer = ext->buffer;
    import_vk_sync(p);
    return NULL;
}

static sinew_result fpsc_bind_output(void* instance, const sinew_output_view* out)
{
    fpsc_plugin_instance* p = cast(instance);
    if (!p) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = settle(p);
    if (r != SINEW_OK) return r;
    const fpsc_vk_output_ext* ext = out && out->struct_size >= sizeof(sinew_output_view)
                                        ? find_vk_ext(out->next) : NULL;
    /* Another slot of the memory imported already (every Vulkan frame): the step in flight
     * may go on, and reads find the latest shape where the last step wrote it. */
    if (ext && out->vertex_count >= p->render_count && p->bound_device &&
        p->vk_memory.handle && p->vk_output == ext->output && p->vk_buffer == ext->buffer) {
        char* base = (char*)p->vk_memory.device_ptr;
        fpsc_set_output(p->dev, (float*)(base + ext->position_offset), 12u,
                        (float*)(base + ext->normal_offset), 12u);
        p->binding = *out;
        p->binding_current = false;
        return SINEW_OK;
    }
    /* Otherwise the old binding goes away: reads need the shape it holds. */
    r = finish(p);
    if (r == SINEW_OK && p->stepped) r = refresh(p);
    if (r != SINEW_OK) return r;
    if (!out) {
        fpsc_set_output(p->dev, NULL, 0, NULL, 0);
        release_vk(p);
        p->bound = p->bound_device = false;
        return SINEW_OK;
    }
    if (ext && out->vertex_count >= p->render_count) {
        const char* why = import_vk(p, ext);
        if (!why) {
            char* base = (char*)p->vk_memory.device_ptr;
            fpsc_set_output(p->dev, (float*)(base + ext->position_offset), 12u,
                            (float*)(base + ext->normal_offset), 12u);
            p->binding = *out;
            p->bound = p->bound_device = true;
            p->binding_current = false;
            return SINEW_OK;
        }
        sinew_host_log(&p->host, SINEW_LOG_INFO, "fps-cuda: writing the Vulkan output through "
                       "its host mapping: %s", why);
    }
    sinew_output_view view;
    view = *out;
    view.next = NULL;
    r = sinew_output_check(&p->host, FPSC_NAME, "bind_output", &view, p->render_count);
    if (r != SINEW_OK) return r;
    fpsc_set_output(p->dev, NULL, 0, NULL, 0);
    release_vk(p);
    p->binding = sinew_output_binding(&view);
    p->bound = true;
    p->bound_device = false;
    p->binding_current = false;
    return SINEW_OK;
}

static sinew_result check_state(const fpsc_plugin_instance* p, const sinew_state_view* state,
                                const char* fn)
{
    const sinew_host_api* host = &p->host;
    if (!state)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fps-cuda %s: state is NULL", fn);
    if (state->struct_size < sizeof(sinew_state_view))
        return sinew_host_fail(host, SINEW_ERROR_STRUCT_SIZE, "fps-cuda %s: state struct_size %u "
                               "is below %zu", fn, state->struct_size, sizeof(sinew_state_view));
    if (state->vertex_count != p->render_count)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fps-cuda %s: a state of %u "
                               "vertices for a mesh of %u", fn, state->vertex_count,
                               p->render_count);
    if (!state->positions)
        return sinew_host_fail(host, SINEW_ERROR_INVALID_ARGUMENT, "fps-cuda %s: positions is "
                               "NULL", fn);
    return SINEW_OK;
}

static sinew_result fpsc_get_state(void* instance, const sinew_state_view* state)
{
    fpsc_plugin_instance* p = cast(instance);
    if (!p) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = check_state(p, state, "get_state");
    if (r == SINEW_OK) r = finish(p);
    if (r == SINEW_OK) r = clear_velocities(p);
    if (r == SINEW_OK) r = refresh(p);
    if (r == SINEW_OK && state->velocities && p->stepped) r = fpsc_download_state(p->dev);
    if (r != SINEW_OK) return r;
    memcpy(state->positions, p->positions, (size_t)p->render_count * 12u);
    if (state->velocities) {
        if (p->stepped) fps_sim_render_velocities(p->sim, state->velocities);
        else memset(state->velocities, 0, (size_t)p->render_count * 12u);
    }
    return SINEW_OK;
}

/* fps turns the render-mesh state into the simulation's (its set_state), then the device
 * takes the state over. */
static sinew_result fpsc_set_state(void* instance, const sinew_state_view* state)
{
    fpsc_plugin_instance* p = cast(instance);
    if (!p) return SINEW_ERROR_INVALID_ARGUMENT;
    sinew_result r = check_state(p, state, "set_state");
    if (r == SINEW_OK) r = finish(p);
    if (r == SINEW_OK) r = sinew_backend_fps.set_state(p->fps, state);
    if (r == SINEW_OK) p->clear_velocities = false; /* the given velocities replace them */
    if (r == SINEW_OK) r = fpsc_upload_state(p->dev);
    /* fps forgot its contacts (a teleport): so does the device */
    if (r == SINEW_OK && p->col) r = upload_collisions(p);
    if (r != SINEW_OK) return r;
    memcpy(p->positions, state->positions, (size_t)p->render_count * 12u);
    /* The shape's normals as fps computes them for a given state (its read_output). */
    sinew_output_view nv;
    memset(&nv, 0, sizeof nv);
    nv.struct_size = (uint32_t)sizeof nv;
    nv.vertex_count = p->render_count;
    nv.positions = p->positions;
    nv.normals = p->normals;
    r = sinew_backend_fps.read_output(p->fps, &nv);
    memcpy(p->positions, state->positions, (size_t)p->render_count * 12u);
    p->fresh = r == SINEW_OK;
    p->binding_current = false;
    return r;
}

static sinew_result fpsc_bake(const sinew_host_api* host, const sinew_rig_view* rig,
                              const sinew_param* params, uint32_t param_count,
                              const sinew_bake_writer* writer)
{
    if (!host) return SINEW_ERROR_INVALID_ARGUMENT;
    if (param_count > 1024u)
        return sinew_host_fail(host, SINEW_ERROR_PARAMETER, "fps-cuda: %u parameters",
                               param_count);
    sinew_param rest[1027]; /* the caller's, solver, joint_volume, inelastic_contacts */
    uint32_t rest_count = 0;
    int ordinal = 0;
    fpsc_launch launch;
    char batch[64];
    sinew_result r = split_params(host, params, param_count, rest, &rest_count, &ordinal,
                                  &launch, batch);
    if (r != SINEW_OK) return r;
    return sinew_backend_fps.bake(host, rig, rest, rest_count, writer);
}

static const sinew_backend_vtable fpsc_vtable = {
    (uint32_t)sizeof(sinew_backend_vtable),
    FPSC_NAME,
    SINEW_BACKEND_FLAG_PHYSICS | SINEW_BACKEND_FLAG_GPU,
    fpsc_probe,
    fpsc_prepare,
    fpsc_set_pose,
    fpsc_step,
    fpsc_read_output_fn,
    fpsc_bind_output,
    fpsc_get_state,
    fpsc_set_state,
    fpsc_destroy_instance,
    fpsc_bake,
    fpsc_param_info,
    (uint32_t)(sizeof fpsc_param_info / sizeof fpsc_param_info[0]),
};

static const sinew_backend_vtable* const fpsc_backends[] = {&fpsc_vtable};

__attribute__((visibility("default"))) sinew_result sinew_plugin_entry(const sinew_host_info* host,
                                                                       sinew_plugin_info* out)
{
    if (!host || !out) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_host_api* api =
        host->struct_size >= sizeof(sinew_host_info) ? host->host : NULL;
    if (host->struct_size < sizeof(sinew_host_info) || !api ||
        host->abi_version_min > SINEW_PLUGIN_ABI_VERSION ||
        host->abi_version_max < SINEW_PLUGIN_ABI_VERSION ||
        host->sizeof_backend_vtable < sizeof(sinew_backend_vtable) ||
        host->sizeof_rig_view < sizeof(sinew_rig_view) ||
        host->sizeof_host_api < sizeof(sinew_host_api)) {
        if (api) sinew_host_log(api, SINEW_LOG_ERROR, "fps-cuda: the host speaks another plugin "
                                "ABI (versions %u..%u)", host->abi_version_min,
                                host->abi_version_max);
        return SINEW_ERROR_PLUGIN_ABI;
    }
    out->abi_version = SINEW_PLUGIN_ABI_VERSION;
    out->plugin_name = "sinew_fps_cuda";
    out->backend_count = 1;
    out->backends = fpsc_backends;
    return SINEW_OK;
}
