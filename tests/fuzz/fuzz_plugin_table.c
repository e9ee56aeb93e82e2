/* The plugin the plugin harness loads: its entry point answers with a table built from the
 * harness's current input (fuzz_plugin.c), and its backend functions return codes taken from
 * that input. ABI version 3's fields (user pointers, service requests) come from the bytes
 * after those an older input holds, so the committed seeds keep their meaning.
 * SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <sinew/sinew_plugin.h>

#define TABLES 8

typedef void (*input_fn)(const uint8_t** data, size_t* size);

typedef struct cursor {
    const uint8_t* p;
    size_t left;
} cursor;

static uint8_t byte(cursor* c)
{
    if (!c->left) return 0;
    c->left--;
    return *c->p++;
}

static uint32_t word(cursor* c)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= (uint32_t)byte(c) << (8 * k);
    return v;
}

/* A string of up to 15 input bytes (any bytes, terminated here). */
static const char* text(cursor* c, char* buffer)
{
    size_t n = byte(c) % 16u;
    for (size_t i = 0; i < n; ++i) buffer[i] = (char)byte(c);
    buffer[n] = '\0';
    return buffer;
}

static int32_t codes[4];
static char names[TABLES + 1][16];
static sinew_backend_vtable tables[TABLES];
static const sinew_backend_vtable* list[SINEW_PLUGIN_MAX_BACKENDS];

static sinew_result stub_probe(const sinew_host_api* host) { (void)host; return (sinew_result)codes[0]; }

static sinew_result stub_prepare(const sinew_host_api* host, const sinew_rig_view* rig,
                                 const sinew_param* params, uint32_t param_count,
                                 const void* next, void** out)
{
    (void)host, (void)rig, (void)params, (void)param_count, (void)next;
    if (codes[1] != SINEW_OK) return (sinew_result)codes[1];
    *out = malloc(16);
    return *out ? SINEW_OK : SINEW_ERROR_OUT_OF_MEMORY;
}

static sinew_result stub_pose(void* i, const sinew_pose_view* p) { (void)i, (void)p; return (sinew_result)codes[2]; }
static sinew_result stub_step(void* i, float dt) { (void)i, (void)dt; return (sinew_result)codes[3]; }
static sinew_result stub_output(void* i, const sinew_output_view* o) { (void)i, (void)o; return (sinew_result)codes[2]; }
static sinew_result stub_state(void* i, const sinew_state_view* s) { (void)i, (void)s; return (sinew_result)codes[3]; }
static void stub_destroy(void* i) { free(i); }

/* Table k from the input: its size, name and flags, and each function present or NULL. */
static void make_table(cursor* c, int k)
{
    sinew_backend_vtable* t = &tables[k];
    memset(t, 0, sizeof *t);
    uint8_t shape = byte(c);
    t->struct_size = shape & 1u ? word(c) : (uint32_t)sizeof *t;
    t->name = shape & 2u ? NULL : text(c, names[k]);
    t->flags = shape & 4u ? word(c) : 0u;
    uint8_t present = byte(c);
    t->probe = present & 1u ? stub_probe : NULL;
    t->prepare = present & 2u ? stub_prepare : NULL;
    t->set_pose = present & 4u ? stub_pose : NULL;
    t->step = present & 8u ? stub_step : NULL;
    t->read_output = present & 16u ? stub_output : NULL;
    t->bind_output = present & 32u ? stub_output : NULL;
    t->get_state = t->set_state = present & 64u ? stub_state : NULL;
    t->destroy = present & 128u ? stub_destroy : NULL;
}

static int user_marks[SINEW_PLUGIN_MAX_BACKENDS];
static void* users[SINEW_PLUGIN_MAX_BACKENDS];
static sinew_service_request requests[SINEW_PLUGIN_MAX_SERVICES];

/* Version 3's fields: the backends' user pointers, and service requests (any ids, versions and
 * count, or a NULL array). */
static void answer_v3(cursor* c, sinew_plugin_info* out)
{
    uint8_t head = byte(c);
    for (uint32_t i = 0; i < SINEW_PLUGIN_MAX_BACKENDS; ++i) users[i] = &user_marks[i];
    out->backend_users = head & 1u ? users : NULL;
    out->service_count = head & 2u ? word(c) : byte(c) % 4u;
    out->services = head & 4u ? NULL : requests;
    for (uint32_t i = 0; i < SINEW_PLUGIN_MAX_SERVICES; ++i) {
        requests[i].id = word(c);
        requests[i].min_version = word(c);
    }
}

__attribute__((visibility("default"))) sinew_result sinew_plugin_entry(const sinew_host_info* host,
                                                                       sinew_plugin_info* out)
{
    (void)host;
    input_fn input = (input_fn)dlsym(RTLD_DEFAULT, "fuzz_plugin_input");
    cursor c = {NULL, 0};
    if (input) input(&c.p, &c.left);
    uint8_t head = byte(&c);
    for (int k = 0; k < 4; ++k) codes[k] = head & (1u << k) ? (int32_t)word(&c) : 0;
    out->abi_version = head & 16u ? word(&c) : SINEW_PLUGIN_ABI_VERSION;
    out->plugin_name = head & 32u ? NULL : text(&c, names[TABLES]);
    out->backend_count = head & 64u ? word(&c) : byte(&c) % (TABLES + 1u);
    out->backends = head & 128u ? NULL : list;
    for (uint32_t i = 0; i < SINEW_PLUGIN_MAX_BACKENDS; ++i) list[i] = NULL;
    for (int k = 0; k < TABLES; ++k) {
        make_table(&c, k);
        uint8_t slot = byte(&c);
        if (slot < 0xF0u) list[k] = &tables[k];
    }
    sinew_result answer = (sinew_result)(int32_t)word(&c);
    answer_v3(&c, out);
    return answer;
}
