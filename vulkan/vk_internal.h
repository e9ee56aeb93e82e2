/* Internals of the Vulkan module shared by its sources. SPDX-License-Identifier: MIT */
#ifndef SINEW_VK_INTERNAL_H
#define SINEW_VK_INTERNAL_H

#include <pthread.h>

#include <sinew/sinew_vulkan.h>

#include <sinew/sinew_host.h>

struct sinew_vk_context {
    /* Allocator and logger as a host table, so the common log/alloc helpers apply (its job
     * system runs inline: the context has no pool of its own). */
    sinew_host_api host;
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;
    uint32_t caps;
    int owns_instance, owns_device;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDeviceProperties properties;
    VkPhysicalDeviceMemoryProperties memory;
    uint8_t device_uuid[VK_UUID_SIZE];
    VkCommandPool command_pool;         /* for sinew_vk_context_submit_wait */
    /* Held around every use of `queue` and `command_pool` (both externally synchronised):
     * skins submit from the world's worker threads at once (sinew_vk_context_lock_queue). */
    pthread_mutex_t queue_lock;
    int queue_lock_ready;
    volatile uint64_t validation_messages;
    /* The live outputs, so that the renderer recognises an output's VkBuffer among the
     * buffers it is given (sinew_vk_output_find). */
    struct sinew_vk_output* outputs;
    /* The worlds tied to this context (vk_service.c), untied when it is destroyed. Worlds on
     * other threads come and go, hence the lock. */
    struct sinew_vk_tie* ties;
    pthread_mutex_t ties_lock;
    int ties_lock_ready;
};

/* Logs "<what>: <VkResult name>" and maps the VkResult to a sinew_result. */
sinew_result sinew_vk_fail(const sinew_vk_context* ctx, VkResult vr, const char* what);
const char* sinew_vk_result_name(VkResult vr);


/* ---- output buffers (vk_output.c) ---- */

#define SINEW_VK_OUTPUT_MAGIC 0x766b6f75u

struct sinew_vk_output {
    uint32_t magic;
    sinew_vk_context* ctx;
    uint32_t capacity, slot_count, flags;
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize buffer_size, allocation_size;
    uint32_t memory_type;
    int dedicated, coherent;
    char* mapped;                       /* NULL when not host-visible */
    VkDeviceSize slot_bytes;            /* 12 * capacity */
    VkDeviceSize position_offset[SINEW_VK_OUTPUT_MAX_SLOTS];
    VkDeviceSize normal_offset[SINEW_VK_OUTPUT_MAX_SLOTS];
    sinew_vk_output_ext ext[SINEW_VK_OUTPUT_MAX_SLOTS];
    VkSemaphore written, read;
    int semaphores_exportable;
    uint64_t frames;                    /* published frames = the last `written` value */
    int in_frame;
    uint32_t write_slot;                /* the slot the skin is pointed at */
    /* A read release the frame's writer must wait for before writing (0: none). A CPU writer
     * waits in begin_frame; a GPU writer (gpu_writer set) takes it into its submission. */
    uint64_t pending_read_wait;
    int gpu_wrote;                      /* a GPU backend submitted writes in this frame */
    void* gpu_writer;                   /* the vk backend instance bound to this output */
    sinew_world* world;                 /* the remembered skin (sinew_vk_output_bind) */
    sinew_skin skin;
    struct sinew_vk_output* next_output; /* in ctx->outputs */
};

/* The output of a chain entry when `ext` names a live output; NULL otherwise. */
sinew_vk_output* sinew_vk_output_from_ext(const sinew_vk_output_ext* ext);
/* Waits on the CPU for a deferred read release (when a GPU writer goes away mid-frame). */
sinew_result sinew_vk_output_wait_pending(sinew_vk_output* out, uint64_t timeout_ns);

/* The live output of ctx whose VkBuffer is `buffer`, or NULL. Inline, like the next one:
 * sinew_render uses them, and the module exports only its public API. */
static inline sinew_vk_output* sinew_vk_output_find(const sinew_vk_context* ctx,
                                                    VkBuffer buffer)
{
    if (!ctx || buffer == VK_NULL_HANDLE) return NULL;
    for (sinew_vk_output* out = ctx->outputs; out; out = out->next_output)
        if (out->buffer == buffer) return out;
    return NULL;
}

/* The slots whose positions or normals overlap bytes [offset, offset + size) of the output's
 * buffer, one bit per slot. */
static inline uint32_t sinew_vk_output_slots_in(const sinew_vk_output* out, VkDeviceSize offset,
                                                VkDeviceSize size)
{
    uint32_t mask = 0;
    const VkDeviceSize end = offset + size;
    for (uint32_t k = 0; size && k < out->slot_count; ++k) {
        const VkDeviceSize p = out->position_offset[k], n = out->normal_offset[k];
        if ((offset < p + out->slot_bytes && end > p) ||
            (offset < n + out->slot_bytes && end > n))
            mask |= 1u << k;
    }
    return mask;
}

/* ---- buffers shared by outputs and the compute backends (vk_output.c) ---- */

typedef struct sinew_vk_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void* mapped;                       /* when host-visible */
    int coherent;
} sinew_vk_buffer;

/* A buffer in memory with `preferred` properties if the device has such memory for it, else
 * with `required` ones; mapped when host-visible. */
sinew_result sinew_vk_buffer_create(sinew_vk_context* ctx, VkDeviceSize size,
                                    VkBufferUsageFlags usage, VkMemoryPropertyFlags required,
                                    VkMemoryPropertyFlags preferred, const char* what,
                                    sinew_vk_buffer* out);
void sinew_vk_buffer_destroy(sinew_vk_context* ctx, sinew_vk_buffer* buf);
/* Copies bytes into the buffer at offset: through the mapping, or a staging buffer and a
 * queue copy (waited for) when the buffer is not host-visible. */
sinew_result sinew_vk_buffer_upload(sinew_vk_context* ctx, sinew_vk_buffer* buf,
                                    VkDeviceSize offset, const void* data, VkDeviceSize size);
/* Makes host writes to a non-coherent mapping visible (no-op when coherent). */
sinew_result sinew_vk_buffer_flush(sinew_vk_context* ctx, VkDeviceMemory memory, int coherent,
                                   VkDeviceSize offset, VkDeviceSize size);

/* Ends `cmd` and submits it on the context's queue (under its lock) signalling `fence`, which
 * it resets first; with wait_output and a non-zero wait_read, the submission waits for that
 * read-release value of the output's `read` semaphore at the compute stage. `what` names the
 * submitter in the log line of a failure. Returns OK or sinew_vk_fail's result. */
sinew_result sinew_vk_submit_compute(sinew_vk_context* ctx, VkCommandBuffer cmd, VkFence fence,
                                     const sinew_vk_output* wait_output, uint64_t wait_read,
                                     const char* what);
/* The most storage buffers sinew_vk_compute_layouts binds. */
#define SINEW_VK_MAX_STORAGE_BINDINGS 32u
/* Creates the layouts of compute pipelines: a set of `count` storage buffers at bindings 0 ..
 * count-1 and one push-constant range of push_bytes. A failure's line names the Vulkan call,
 * followed by " (what)" unless what is empty. */
sinew_result sinew_vk_compute_layouts(sinew_vk_context* ctx, uint32_t count, uint32_t push_bytes,
                                      const char* what, VkDescriptorSetLayout* set_layout,
                                      VkPipelineLayout* layout);
/* Points bindings first .. first+count-1 of a set made by sinew_vk_compute_layouts at the
 * buffer ranges info[0 .. count-1]. */
void sinew_vk_write_storage(const sinew_vk_context* ctx, VkDescriptorSet set, uint32_t first,
                            uint32_t count, const VkDescriptorBufferInfo* info);
/* Records the barrier after a compute step's writes (made at src_stage with src_access): the
 * results feed vertex fetch (a renderer on this queue), copies, the host and later shaders;
 * vertex input exists only on a queue with graphics. */
void sinew_vk_cmd_results_barrier(const sinew_vk_context* ctx, VkCommandBuffer cmd,
                                  VkPipelineStageFlags src_stage, VkAccessFlags src_access);

/* ---- the world's Vulkan service and its tie to a context (vk_service.c) ---- */

typedef struct sinew_vk_tie sinew_vk_tie;
/* Ties the world to ctx: the world's tie (created, made its SINEW_SERVICE_VULKAN service and
 * freed with it, on the first call) now names ctx. *out is the user pointer of the world's
 * compute backends. */
sinew_result sinew_vk_tie_world(sinew_world* world, sinew_vk_context* ctx, sinew_vk_tie** out);
/* Gives a world without a Vulkan service one with the output functions and no context
 * (sinew_vk_output_bind), so that a GPU backend bound to an output finds them. */
sinew_result sinew_vk_provide_service(sinew_world* world);
/* Unties every world tied to ctx (called by sinew_vk_context_destroy). */
void sinew_vk_context_untie(sinew_vk_context* ctx);
/* The context a compute backend runs on: its tie's (host->backend_user), or NULL; and the probe
 * every compute backend answers with: OK with a context, BACKEND_UNAVAILABLE without. */
sinew_vk_context* sinew_vk_backend_context(const sinew_host_api* host);
sinew_result sinew_vk_backend_probe(const sinew_host_api* host);

/* A skin that records into the engine's command buffer (sinew_vk_record): listed in its
 * world's tie while bound to a range. record returns 1 when it recorded a dispatch. */
typedef struct sinew_vk_recorder {
    int (*record)(struct sinew_vk_recorder* self, VkCommandBuffer cmd);
    /* Frees the instance; called by the tie once retired (below). */
    void (*destroy)(struct sinew_vk_recorder* self);
    uint32_t retire_calls;              /* sinew_vk_record calls left before destroy */
    struct sinew_vk_recorder* next;
} sinew_vk_recorder;
/* The tie of the world a compute backend instance was prepared in (host->backend_user), or
 * NULL. */
sinew_vk_tie* sinew_vk_backend_tie(const sinew_host_api* host);
/* Lists and unlists a recorder (under the tie's lock; unlisting one not listed does nothing). */
void sinew_vk_tie_add_recorder(sinew_vk_tie* tie, sinew_vk_recorder* rec);
void sinew_vk_tie_remove_recorder(sinew_vk_tie* tie, sinew_vk_recorder* rec);
/* Unlists a recorder whose dispatches an engine's command buffer may still run and keeps it
 * until SINEW_VK_RECORD_FRAMES more sinew_vk_record calls have passed (or the world goes), then
 * calls its destroy. */
void sinew_vk_tie_retire_recorder(sinew_vk_tie* tie, sinew_vk_recorder* rec);

/* ---- compute backends (vk_skin.c) ---- */

/* vk-pbd's function table (vk_pbd.c), registered with vk-lbs and vk-dqs. */
extern const sinew_backend_vtable sinew_vk_pbd_table;

#endif
