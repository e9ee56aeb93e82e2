/* Backend swaps prepared in the background: sinew_skin_set_backend hands the new backend's
 * preparation to a thread of its own and returns; the skin adopts the prepared instance at the
 * start of the next update (sinew_skin_apply_swap, called by world.c). The thread hands the
 * backend its own host api (the world's services with the backend's user pointer), and every
 * parallel_for it issues runs inline on it (world_parallel_for asks sinew_swap_thread), so that a
 * preparation neither waits for the frame's jobs nor holds the job system while a frame waits.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <pthread.h>
#include <string.h>

typedef struct sinew_swap {
    const sinew_host_api* host;
    const sinew_backend_vtable* vt;
    const sinew_rig_view* rig;  /* the rig as this backend is prepared on it (its baked blob) */
    sinew_param* params;        /* copies of the caller's, keys and values in `text` */
    uint32_t param_count;
    char* text;
    pthread_t thread;
    pthread_mutex_t lock;
    bool done;                  /* under lock: result and instance are final */
    sinew_result result;
    void* instance;
} sinew_swap;

static _Thread_local bool t_swap_thread;

bool sinew_swap_thread(void)
{
    return t_swap_thread;
}

static void* swap_main(void* arg)
{
    sinew_swap* s = (sinew_swap*)arg;
    t_swap_thread = true;
    void* inst = NULL;
    sinew_result r = sinew_backend_prepare(s->host, s->vt, s->rig, s->params, s->param_count,
                                           NULL, &inst);
    pthread_mutex_lock(&s->lock);
    s->result = r;
    s->instance = inst;
    s->done = true;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* The caller's parameters copied into one block of text. */
static bool copy_params(sinew_swap* s, const sinew_param* params, uint32_t count)
{
    size_t bytes = 1;
    for (uint32_t i = 0; i < count; ++i)
        bytes += strlen(params[i].key) + strlen(params[i].value) + 2u;
    s->params = (sinew_param*)sinew_host_calloc(s->host, count ? count : 1u, sizeof(sinew_param));
    s->text = (char*)sinew_host_alloc(s->host, bytes);
    if (!s->params || !s->text) return false;
    char* p = s->text;
    for (uint32_t i = 0; i < count; ++i) {
        size_t k = strlen(params[i].key) + 1u, v = strlen(params[i].value) + 1u;
        memcpy(p, params[i].key, k);
        memcpy(p + k, params[i].value, v);
        s->params[i].key = p;
        s->params[i].value = p + k;
        p += k + v;
    }
    s->param_count = count;
    return true;
}

static void swap_free(sinew_swap* s)
{
    const sinew_host_api* host = s->host;
    pthread_mutex_destroy(&s->lock);
    sinew_host_free(host, s->params);
    sinew_host_free(host, s->text);
    sinew_host_free(host, s);
}

static sinew_result swap_start(const sinew_host_api* host, const sinew_backend_vtable* vt,
                              const sinew_rig_view* rig, const sinew_param* params,
                              uint32_t param_count, sinew_swap** out)
{
    *out = NULL;
    sinew_swap* s = (sinew_swap*)sinew_host_calloc(host, 1, sizeof *s);
    if (!s) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "sinew_skin_set_backend: out of memory");
    s->host = host;
    s->vt = vt;
    s->rig = rig;
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        sinew_host_free(host, s);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_skin_set_backend: cannot create a lock");
    }
    if (!copy_params(s, params, param_count)) {
        swap_free(s);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "sinew_skin_set_backend: out of memory");
    }
    if (pthread_create(&s->thread, NULL, swap_main, s) != 0) {
        swap_free(s);
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "sinew_skin_set_backend: cannot start the preparation's thread");
    }
    *out = s;
    return SINEW_OK;
}

static bool swap_ready(sinew_swap* s)
{
    pthread_mutex_lock(&s->lock);
    bool done = s->done;
    pthread_mutex_unlock(&s->lock);
    return done;
}

static sinew_result swap_finish(sinew_swap* s, void** instance)
{
    pthread_join(s->thread, NULL);
    sinew_result r = s->result;
    *instance = s->instance;
    swap_free(s);
    return r;
}

/* ---- the skin's side ---- */

sinew_result sinew_skin_set_backend(sinew_world* world, sinew_skin skin, const char* backend,
                                    const sinew_param* params, uint32_t param_count)
{
    sinew_skin_data* data;
    sinew_result r = sinew_world_idle_skin(world, skin, "sinew_skin_set_backend", &data);
    if (r != SINEW_OK) return r;
    r = sinew_world_check_params(world, params, param_count, "sinew_skin_set_backend");
    if (r != SINEW_OK) return r;
    const sinew_backend_vtable* vt;
    r = sinew_world_lookup_backend(world, backend, &vt);
    if (r != SINEW_OK) return r;
    if (data->swap)
        return sinew_host_fail(&world->host, SINEW_ERROR_BUSY,
                               "sinew_skin_set_backend: skin %u is still being swapped to \"%s\" "
                               "(sinew_skin_wait_swap waits for it)", skin.id,
                               data->swap_vt->name);
    r = swap_start(sinew_world_backend_host(world, vt), vt,
                   sinew_rig_data_view_for(data->rig, vt->name), params, param_count, &data->swap);
    if (r != SINEW_OK) return r;
    data->swap_vt = vt;
    data->swap_result = SINEW_OK;
    return SINEW_OK;
}

/* The prepared instance takes over from the old one: the shape (positions and velocities) the
 * old one has now, the pose, the binding. */
static sinew_result adopt(sinew_world* world, sinew_skin_data* data, void* inst)
{
    const sinew_host_api* host = &world->host;
    uint32_t n = data->rig->view.render_mesh.vertex_count;
    sinew_state_view state = { (uint32_t)sizeof(sinew_state_view), n, NULL, NULL };
    state.positions = (float*)sinew_host_alloc(host, (size_t)n * 12u);
    state.velocities = (float*)sinew_host_alloc(host, (size_t)n * 12u);
    sinew_result r = state.positions && state.velocities ? SINEW_OK
        : sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "sinew_skin_set_backend: out of memory");
    if (r == SINEW_OK)
        r = sinew_backend_result(host, data->vt, "get_state",
                                 data->vt->get_state(data->instance, &state));
    if (r == SINEW_OK) r = sinew_skin_adopt(world, data, data->swap_vt, inst, &state);
    else data->swap_vt->destroy(inst);
    sinew_host_free(host, state.positions);
    sinew_host_free(host, state.velocities);
    if (r != SINEW_OK) return r;
    data->vt->destroy(data->instance);
    data->vt = data->swap_vt;
    data->instance = inst;
    data->pose_dirty = false; /* adopt handed the pose over, with its flags */
    data->pose_flags = 0;
    return SINEW_OK;
}

void sinew_skin_apply_swap(sinew_world* world, sinew_skin_data* data, bool wait)
{
    if (!data->swap || (!wait && !swap_ready(data->swap))) return;
    void* inst = NULL;
    sinew_result r = swap_finish(data->swap, &inst);
    data->swap = NULL;
    if (r == SINEW_OK) r = adopt(world, data, inst);
    data->swap_result = r;
    if (r != SINEW_OK)
        sinew_host_log(&world->host, SINEW_LOG_WARNING,
                       "sinew_skin_set_backend: the swap to \"%s\" failed (%s); the skin keeps "
                       "\"%s\"", data->swap_vt->name, sinew_result_string(r), data->vt->name);
}

void sinew_skin_drop_swap(sinew_skin_data* data)
{
    if (!data->swap) return;
    void* inst = NULL;
    if (swap_finish(data->swap, &inst) == SINEW_OK) data->swap_vt->destroy(inst);
    data->swap = NULL;
}

sinew_result sinew_skin_swap_status(const sinew_world* world, sinew_skin skin)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_skin_data* data = sinew_world_get_skin(world, skin);
    if (!data) return sinew_world_bad_skin(world, skin, "sinew_skin_swap_status");
    return data->swap ? SINEW_ERROR_BUSY : data->swap_result;
}

sinew_result sinew_skin_wait_swap(sinew_world* world, sinew_skin skin)
{
    sinew_skin_data* data;
    sinew_result r = sinew_world_idle_skin(world, skin, "sinew_skin_wait_swap", &data);
    if (r != SINEW_OK) return r;
    if (!data->swap) return SINEW_OK;
    sinew_skin_apply_swap(world, data, true);
    return data->swap_result;
}
