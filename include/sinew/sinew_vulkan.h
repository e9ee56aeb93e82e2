/*
 * sinew: a skinning runtime for game engines.
 * SPDX-License-Identifier: MIT
 *
 * The Vulkan module (library sinew_vulkan, which links the Vulkan loader; the core runtime
 * never does): a context over the engine's own Vulkan objects, device output buffers that a
 * skin writes, export of their memory to other APIs, and the compute backends vk-lbs,
 * vk-dqs and vk-pbd.
 *
 * Conventions are those of sinew.h (struct_size first, zero means default, one log line per
 * refusal). Thread safety: a context is externally synchronised, like a world. sinew submits
 * to the queue it is given; if the engine submits to the same VkQueue from another thread, it
 * must serialise those submissions with sinew's calls (Vulkan requires it for any queue).
 */
#ifndef SINEW_SINEW_VULKAN_H
#define SINEW_SINEW_VULKAN_H

#include <sinew/sinew.h>
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Context                                                                                  */
/* ---------------------------------------------------------------------------------------- */

typedef struct sinew_vk_context sinew_vk_context;

enum {
    /* Own instance only: enable VK_LAYER_KHRONOS_validation and VK_EXT_debug_utils; every
     * validation message is logged (errors and warnings at SINEW_LOG_ERROR) and counted in
     * sinew_vk_context_info.validation_messages. Refused with SINEW_ERROR_UNSUPPORTED when
     * the layer is not installed. */
    SINEW_VK_CONTEXT_VALIDATION = 1u << 0,
    /* Own device only: require a queue family with graphics as well as compute (the
     * renderer's). Without it a compute-only family may be chosen. */
    SINEW_VK_CONTEXT_GRAPHICS = 1u << 1
};

/* Capabilities found on the device (sinew_vk_context_info.caps). */
enum {
    SINEW_VK_CAP_GRAPHICS = 1u << 0,           /* the context's queue family has graphics */
    SINEW_VK_CAP_TIMELINE_SEMAPHORE = 1u << 1, /* Vulkan 1.2 timeline semaphores enabled */
    SINEW_VK_CAP_EXPORT_MEMORY_FD = 1u << 2,   /* VK_KHR_external_memory_fd, OPAQUE_FD */
    SINEW_VK_CAP_EXPORT_SEMAPHORE_FD = 1u << 3 /* VK_KHR_external_semaphore_fd, OPAQUE_FD,
                                                  for timeline semaphores */
};

typedef struct sinew_vk_context_desc {
    uint32_t struct_size;
    const void* next;
    /* The engine's objects. Either all of instance, physical_device, device and queue are
     * given, or none (the default): sinew then creates its own instance (Vulkan 1.2 or
     * later), picks the first device with a compute queue family (a discrete GPU before an
     * integrated one before a CPU implementation; SINEW_VK_DEVICE_INDEX in the environment
     * overrides), and creates a device with one queue and every extension in caps that the
     * device offers. Given objects are never destroyed by sinew. An engine's device must
     * have the Vulkan 1.2 feature timelineSemaphore enabled, and VK_KHR_external_memory_fd /
     * VK_KHR_external_semaphore_fd for the export caps. */
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;        /* the family of queue (with given objects) */
    uint32_t flags;                     /* SINEW_VK_CONTEXT_* */
    const sinew_allocator* allocator;   /* NULL: aligned malloc/free */
    const sinew_logger* logger;         /* NULL: stderr, warnings and errors only */
    sinew_log_level log_level;          /* as in sinew_world_desc */
} sinew_vk_context_desc;

#define SINEW_VK_CONTEXT_DESC_INIT { (uint32_t)sizeof(sinew_vk_context_desc), NULL, \
    VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE, 0u, 0u, NULL, NULL, \
    SINEW_LOG_WARNING }

/* Creates a context. No Vulkan loader, no driver or no device with a compute queue:
 * SINEW_ERROR_NO_DEVICE (one log line, nothing leaked). */
SINEW_API sinew_result sinew_vk_context_create(const sinew_vk_context_desc* desc,
                                               sinew_vk_context** out_context);
/* Waits for the queue to be idle, then destroys what sinew created. NULL is ignored. Every
 * output, renderer and skin using the context must be gone first. */
SINEW_API void sinew_vk_context_destroy(sinew_vk_context* context);

typedef struct sinew_vk_context_info {
    uint32_t struct_size;
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;
    uint32_t api_version;               /* of the physical device */
    uint32_t caps;                      /* SINEW_VK_CAP_* */
    uint8_t device_uuid[VK_UUID_SIZE];  /* to match the device in CUDA (cudaDeviceProp.uuid) */
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    uint64_t validation_messages;       /* messages seen so far (SINEW_VK_CONTEXT_VALIDATION) */
} sinew_vk_context_info;

#define SINEW_VK_CONTEXT_INFO_INIT { (uint32_t)sizeof(sinew_vk_context_info), VK_NULL_HANDLE, \
    VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE, 0u, 0u, 0u, {0}, {0}, 0u }

SINEW_API sinew_result sinew_vk_context_get_info(const sinew_vk_context* context,
                                                 sinew_vk_context_info* out_info);

/* Runs a one-time command buffer on the context's queue and waits for it (uploads, readbacks
 * in samples and tests). record is called with a command buffer in the recording state. */
SINEW_API sinew_result sinew_vk_context_submit_wait(sinew_vk_context* context,
                                                    void (*record)(VkCommandBuffer cmd,
                                                                   void* user),
                                                    void* user);

/* The context's queue is externally synchronised (Vulkan spec, "Threading Behavior"), and
 * sinew submits to it from the world's worker threads (every Vulkan skin's update) and from
 * output calls. sinew serialises its own submissions with one lock per context; an engine that
 * gave its own queue and submits to it (or presents, or waits for it to be idle) from other
 * threads while sinew may run takes the same lock around those calls. Not recursive: never
 * call a sinew function while holding it. NULL is ignored. */
SINEW_API void sinew_vk_context_lock_queue(sinew_vk_context* context);
SINEW_API void sinew_vk_context_unlock_queue(sinew_vk_context* context);

/* Index of a memory type with all of `required` among type_bits, or -1. */
SINEW_API int32_t sinew_vk_context_find_memory_type(const sinew_vk_context* context,
                                                    uint32_t type_bits,
                                                    VkMemoryPropertyFlags required);


/* ---------------------------------------------------------------------------------------- */
/* Output buffers                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* A skin component's output on the device: one VkBuffer holding `slot_count` slots, each with
 * the positions and then the normals of up to vertex_capacity vertices (packed xyz floats,
 * 12 bytes per vertex). The buffer's usage is VERTEX_BUFFER | STORAGE_BUFFER | TRANSFER_SRC |
 * TRANSFER_DST (plus desc.usage), so a renderer binds a slot's positions and normals as
 * vertex buffers at the offsets sinew_vk_output_get_info reports.
 *
 * Frames. Frame f (0, 1, 2, ...) is written into slot f % slot_count:
 *   sinew_vk_output_begin_frame   picks the slot and waits until the renderer released it,
 *                                 then points the bound skin at it;
 *   sinew_world_update            the skin's backend writes the slot (a CPU backend through
 *                                 the mapped memory, vk-lbs/vk-dqs on the GPU);
 *   sinew_vk_output_end_frame     publishes the frame: the timeline semaphore `written`
 *                                 reaches f + 1 once the slot's contents are complete
 *                                 (signalled by sinew, or by an external GPU writer, see
 *                                 sinew_vk_output_set_external_writer).
 * The renderer waits for `written` >= f + 1 (on the GPU with the semaphore, or on the CPU with
 * vkWaitSemaphores), draws slot f % slot_count (the previous frame, for motion vectors, is in
 * slot (f - 1) % slot_count), and then signals the second timeline semaphore `read` with
 * f + 1, meaning "done with frame f and every earlier one" (from its queue submission, or on
 * the CPU with sinew_vk_output_release). Writing frame f waits for `read` >= f - slot_count
 * + 1, i.e. until the frame that last used the slot was released. A renderer that reads the
 * previous slot for motion vectors while sinew writes the next frame wants slot_count 3.
 *
 * Both semaphores are timeline semaphores created by sinew (Vulkan 1.2); the values only
 * grow. The wait in begin_frame runs on the CPU (vkWaitSemaphores) when the skin's backend
 * runs on the CPU; with vk-lbs/vk-dqs it becomes a GPU wait in the backend's submission. */
typedef struct sinew_vk_output sinew_vk_output;

#define SINEW_VK_OUTPUT_MAX_SLOTS 4u

enum {
    /* Allocate the memory exportable as an opaque fd (VkExportMemoryAllocateInfo, with a
     * dedicated allocation where the driver requires one) and the semaphores exportable where
     * the caps have SINEW_VK_CAP_EXPORT_SEMAPHORE_FD. Needs SINEW_VK_CAP_EXPORT_MEMORY_FD. */
    SINEW_VK_OUTPUT_EXPORTABLE = 1u << 0,
    /* Device-local memory (for GPU backends). Without it the memory is host-visible and
     * persistently mapped (coherent where the device has such memory, else flushed in
     * end_frame), which CPU backends need. Device-local memory is mapped as well when it
     * happens to be host-visible (integrated GPUs, lavapipe); when it is not, a CPU backend
     * cannot write it and binding one is refused with SINEW_ERROR_OUTPUT_BINDING. */
    SINEW_VK_OUTPUT_DEVICE_LOCAL = 1u << 1
};

typedef struct sinew_vk_output_desc {
    uint32_t struct_size;
    const void* next;                   /* no extension is defined: must be NULL */
    uint32_t vertex_capacity;           /* required: at least the skin's render vertex count */
    uint32_t slot_count;                /* 0: 2 (double-buffered); at most MAX_SLOTS */
    uint32_t flags;                     /* SINEW_VK_OUTPUT_* */
    VkBufferUsageFlags usage;           /* extra usage bits for the buffer (e.g. index use) */
} sinew_vk_output_desc;

#define SINEW_VK_OUTPUT_DESC_INIT { (uint32_t)sizeof(sinew_vk_output_desc), NULL, 0u, 0u, 0u, 0u }

/* Creates the buffer, its memory (mapped when host-visible) and the two timeline semaphores.
 * The context must have SINEW_VK_CAP_TIMELINE_SEMAPHORE (else SINEW_ERROR_UNSUPPORTED), and
 * EXPORT_MEMORY_FD for SINEW_VK_OUTPUT_EXPORTABLE. */
SINEW_API sinew_result sinew_vk_output_create(sinew_vk_context* context,
                                              const sinew_vk_output_desc* desc,
                                              sinew_vk_output** out_output);
/* Waits for the queue to be idle, unbinds a still-bound skin (its world must still exist),
 * and frees everything. NULL is ignored. */
SINEW_API void sinew_vk_output_destroy(sinew_vk_output* output);

/* The extension that a sinew_output_desc of kind SINEW_OUTPUT_EXTERNAL carries in `next` to
 * name one slot of an output (sinew.h says how the runtime hands it to backends). The output
 * owns one per slot; sinew_vk_output_get_desc returns a desc pointing at it. */
typedef struct sinew_vk_output_ext {
    sinew_ext_header header;            /* type SINEW_EXT_VULKAN_OUTPUT */
    sinew_vk_output* output;
    uint32_t slot;
    VkBuffer buffer;
    VkDeviceSize position_offset;       /* bytes into buffer */
    VkDeviceSize normal_offset;
} sinew_vk_output_ext;

/* Fills *out_desc for binding `slot` by hand with sinew_skin_bind_output: kind EXTERNAL,
 * vertex_capacity, next = the slot's sinew_vk_output_ext, and positions/normals = the mapped
 * slot when the memory is host-visible (NULL otherwise). out_desc->struct_size must be set. */
SINEW_API sinew_result sinew_vk_output_get_desc(const sinew_vk_output* output, uint32_t slot,
                                                sinew_output_desc* out_desc);

/* Binds the skin's output to this output's current write slot (slot 0 before the first frame)
 * and remembers the skin, so that every begin_frame moves it to the next slot. One skin per
 * output; binding another skin unbinds the first. The binding survives backend swaps. A world
 * without a Vulkan service (SINEW_SERVICE_VULKAN) gets one with the output functions and no
 * context, so that a GPU backend of another module (fps-cuda) can import the output; a skin
 * bound by hand (sinew_vk_output_get_desc, sinew_skin_bind_output) in a world that has none is
 * written through the host mapping by such a backend. */
SINEW_API sinew_result sinew_vk_output_bind(sinew_vk_output* output, sinew_world* world,
                                            sinew_skin skin);
/* Unbinds the remembered skin (its backend goes back to its own buffers). */
SINEW_API sinew_result sinew_vk_output_unbind(sinew_vk_output* output);

/* Starts frame f = frames published so far: waits until the renderer released slot
 * f % slot_count (up to timeout_ns; SINEW_ERROR_IN_USE when it has not by then, and the frame
 * does not start), and rebinds the remembered skin to that slot. out_slot may be NULL.
 * Refused with SINEW_ERROR_INVALID_ARGUMENT inside a frame. */
SINEW_API sinew_result sinew_vk_output_begin_frame(sinew_vk_output* output, uint64_t timeout_ns,
                                                   uint32_t* out_slot);
/* Publishes the frame: flushes non-coherent memory, then signals `written` = f + 1 (on the
 * host after a CPU backend, in queue order after a GPU backend's submission). */
SINEW_API sinew_result sinew_vk_output_end_frame(sinew_vk_output* output);
/* The renderer's "done with frame value - 1 and earlier" from the CPU: signals `read` =
 * value on the host. value must be at most the frames published and above the current one. */
SINEW_API sinew_result sinew_vk_output_release(sinew_vk_output* output, uint64_t value);

typedef struct sinew_vk_output_info {
    uint32_t struct_size;
    VkBuffer buffer;
    VkDeviceSize buffer_size;
    uint32_t vertex_capacity;
    uint32_t slot_count;
    uint32_t flags;                     /* as created */
    uint32_t host_visible;              /* 1 when mapped: positions/normals below are set */
    VkSemaphore written;                /* timeline: f + 1 once frame f is complete */
    VkSemaphore read;                   /* timeline: the renderer's releases */
    uint64_t frames;                    /* frames published = the last `written` value */
    uint32_t read_slot;                 /* slot of the latest frame (UINT32_MAX: none yet) */
    uint32_t previous_slot;             /* slot of the frame before (UINT32_MAX: none) */
    uint32_t write_slot;                /* inside a frame: the slot being written, else
                                           UINT32_MAX */
    VkDeviceSize position_offset;       /* of read_slot (slot 0 before the first frame) */
    VkDeviceSize normal_offset;
    VkDeviceSize previous_position_offset; /* of previous_slot (0 when none) */
    VkDeviceSize slot_bytes;            /* of the positions (= of the normals): 12 * capacity */
    const float* positions;             /* read_slot mapped, or NULL */
    const float* normals;
    /* Appended (a caller's struct_size up to `normals` is still accepted): */
    uint32_t external_writer;           /* 1 while sinew_vk_output_set_external_writer holds */
    uint32_t ownership_transfer;        /* 1 when sinew_vk_output_cmd_acquire/_release record
                                           barriers: external_writer on EXPORTABLE memory */
} sinew_vk_output_info;

#define SINEW_VK_OUTPUT_INFO_INIT { (uint32_t)sizeof(sinew_vk_output_info), VK_NULL_HANDLE, \
    0u, 0u, 0u, 0u, 0u, VK_NULL_HANDLE, VK_NULL_HANDLE, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, NULL, NULL, \
    0u, 0u }

SINEW_API sinew_result sinew_vk_output_get_info(const sinew_vk_output* output,
                                                sinew_vk_output_info* out_info);

/* ---------------------------------------------------------------------------------------- */
/* Export                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* What a consumer (CUDA, another VkDevice on the same physical device) needs to import an
 * output's memory. Ownership of fd: each call creates a new file descriptor and hands it to
 * the caller, who either closes it or imports it; a successful import (vkAllocateMemory with
 * VkImportMemoryFdInfoKHR, cudaImportExternalMemory) takes the fd over, and the caller must
 * then not close it. sinew keeps no reference to the fds it returns. The imported memory stays
 * valid after the output is destroyed until the importer frees it (the driver refcounts it),
 * but sinew writes it only while the output lives. */
typedef struct sinew_vk_memory_export {
    uint32_t struct_size;
    int fd;                             /* opaque fd (VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD) */
    VkDeviceSize allocation_size;       /* import exactly this size */
    uint32_t memory_type_index;         /* a Vulkan importer must use the same type */
    uint32_t dedicated;                 /* 1: import as a dedicated allocation of a buffer of
                                           buffer_size bytes (cudaExternalMemoryDedicated) */
    VkDeviceSize buffer_size;
    uint32_t vertex_capacity;
    uint32_t slot_count;
    VkDeviceSize position_offsets[SINEW_VK_OUTPUT_MAX_SLOTS]; /* per slot, bytes */
    VkDeviceSize normal_offsets[SINEW_VK_OUTPUT_MAX_SLOTS];
    uint8_t device_uuid[VK_UUID_SIZE];  /* the importer's device must match */
} sinew_vk_memory_export;

#define SINEW_VK_MEMORY_EXPORT_INIT { (uint32_t)sizeof(sinew_vk_memory_export), -1, 0u, 0u, \
    0u, 0u, 0u, 0u, { 0u }, { 0u }, { 0u } }

/* Exports the output's memory. Needs SINEW_VK_OUTPUT_EXPORTABLE (else
 * SINEW_ERROR_INVALID_ARGUMENT). */
SINEW_API sinew_result sinew_vk_output_export_memory(const sinew_vk_output* output,
                                                     sinew_vk_memory_export* out_export);
/* Exports the `written` and `read` timeline semaphores as two new opaque fds (owned by the
 * caller as above; importing transfers ownership). Where the device cannot export timeline
 * semaphores (no SINEW_VK_CAP_EXPORT_SEMAPHORE_FD, e.g. lavapipe): SINEW_ERROR_UNSUPPORTED
 * with one log line, and the consumer synchronises on the CPU instead (wait with
 * sinew_vk_output_get_info().frames / vkWaitSemaphores, release with sinew_vk_output_release).
 * Needs SINEW_VK_OUTPUT_EXPORTABLE. */
SINEW_API sinew_result sinew_vk_output_export_semaphores(const sinew_vk_output* output,
                                                         int* out_written_fd, int* out_read_fd);

/* An external GPU writer: a writer outside this module on the same GPU that can wait on and
 * signal the two timeline semaphores from its own queue or stream (the fps-cuda plugin through
 * CUDA, having imported the fds of sinew_vk_output_export_semaphores; or an engine's own
 * Vulkan queue on the same VkDevice, with the handles of sinew_vk_output_info) synchronises
 * each frame there, so that neither it nor the application waits on the CPU:
 *
 *   sinew_vk_output_set_external_writer(output, 1)   once, by the writer (when it binds);
 *   sinew_vk_output_begin_frame                       then no longer waits for `read` on the
 *                                                     CPU: the wait is handed to the writer;
 *   sinew_vk_output_external_frame                    by the writer, inside the frame, before
 *                                                     it enqueues its writes: *out_wait_read
 *                                                     (0: none) is the `read` value its
 *                                                     stream must wait for before writing the
 *                                                     slot, *out_signal_written the `written`
 *                                                     value it must signal after its writes;
 *   sinew_vk_output_end_frame                         then publishes the frame without
 *                                                     signalling `written` itself (the writer
 *                                                     does, once its writes are done).
 *
 * A frame in which the registered writer does not call external_frame (its skin did not step)
 * is published as before: end_frame signals `written` on the host, after waiting on the CPU
 * for the writer's signal of the previous frame (timeline values only grow). A second call of
 * external_frame in the same frame, and a call outside a frame, return 0 and 0 (SINEW_OK):
 * there is no value to hand out, and the writer must finish those writes on the CPU (before
 * end_frame, inside a frame).
 *
 * A writer in another API checks sinew_vk_output_export_semaphores first (where it says
 * SINEW_ERROR_UNSUPPORTED, e.g. lavapipe, the writer stays on the CPU path and does not
 * register). set_external_writer is refused with SINEW_ERROR_IN_USE while a vk-lbs/vk-dqs skin
 * writes the output (binding one later replaces the registration). Unregistering (enabled 0)
 * waits on the CPU for a `read` release handed out for the current frame but not taken, so the
 * next writer finds the slot released; the writer must have finished (or enqueued) its signal
 * first. external_frame without registration: SINEW_ERROR_INVALID_ARGUMENT. Each logs one line
 * on refusal. A reader of an exportable output with a registered writer acquires each slot
 * before reading it and releases it after (sinew_vk_output_cmd_acquire / _release, below). */
SINEW_API sinew_result sinew_vk_output_set_external_writer(sinew_vk_output* output, int enabled);
SINEW_API sinew_result sinew_vk_output_external_frame(sinew_vk_output* output,
                                                      uint64_t* out_wait_read,
                                                      uint64_t* out_signal_written);

/* ---------------------------------------------------------------------------------------- */
/* Queue family ownership of externally written slots                                       */
/* ---------------------------------------------------------------------------------------- */

/* A slot that another API writes through the exported memory (the fps-cuda plugin, from
 * CUDA) is owned by VK_QUEUE_FAMILY_EXTERNAL while it is written. The Vulkan specification
 * ("Queue Family Ownership Transfer", "External Memory") requires the reading queue family to
 * acquire it from VK_QUEUE_FAMILY_EXTERNAL with a buffer memory barrier before reading it,
 * and to release it back before the writer writes it again. These two functions record those
 * barriers for one slot (its positions and normals) into a command buffer the caller owns:
 * in the recording state, outside a render pass, allocated from a pool of
 * queue_family_index. A reader of frame f:
 *
 *   wait for `written` >= f + 1          (a semaphore wait at dst_stage or an earlier stage,
 *                                         or vkWaitSemaphores on the CPU)
 *   sinew_vk_output_cmd_acquire(output, slot, cmd, family, dst_stage, dst_access)
 *   the reads of the slot                (vertex input, a shader, a copy)
 *   sinew_vk_output_cmd_release(output, slot, cmd, family, src_stage, src_access)
 *   signal `read` = f + 1                (after the release in submission order)
 *
 * The acquire's source stage is dst_stage, so the semaphore wait chains into it; its source
 * access is ignored by Vulkan. The release's destination stage is BOTTOM_OF_PIPE, from which
 * the `read` signal chains; its destination access is ignored. Every acquire of a slot is
 * followed by its release before the slot's `read` release; a reader that also reads the
 * previous slot (motion vectors) acquires and releases that slot the same way.
 *
 * A barrier is recorded only where there is an ownership transfer: an external writer is
 * registered (sinew_vk_output_set_external_writer) and the output was created with
 * SINEW_VK_OUTPUT_EXPORTABLE, the only way its memory reaches another API
 * (sinew_vk_output_info.ownership_transfer says so). Otherwise (vk-lbs/vk-dqs on the
 * context's queue, a CPU backend through the mapping, an engine queue on the same VkDevice as
 * the registered writer, which wants an output without EXPORTABLE) nothing is recorded and
 * SINEW_OK returned: the engine's own barriers apply as before. That is a documented no-op
 * rather than a refusal because the writer registers itself and may come and go at run time
 * (fps-cuda registers when it binds and its semaphores export, not on lavapipe; a backend
 * swap unregisters it), so a render loop calls both every frame without asking who writes.
 * The check is made when the barrier is recorded: record a slot's acquire and release
 * between the same two world updates, so that both see the same writer.
 *
 * Arguments, each refused with SINEW_ERROR_INVALID_ARGUMENT and one log line (a NULL or
 * destroyed output without a line, as everywhere in this header), nothing recorded: slot <
 * slot_count; cmd not VK_NULL_HANDLE; queue_family_index a queue family of the context's
 * physical device (not VK_QUEUE_FAMILY_IGNORED / EXTERNAL / FOREIGN_EXT); a non-zero stage
 * mask; a non-zero dst_access for the acquire (without one the reads need not see the
 * writer's data). src_access may be 0: reads make nothing available. sinew_render does all of
 * this itself for the output buffers it draws from (sinew_render.h). */
SINEW_API sinew_result sinew_vk_output_cmd_acquire(const sinew_vk_output* output, uint32_t slot,
                                                   VkCommandBuffer cmd,
                                                   uint32_t queue_family_index,
                                                   VkPipelineStageFlags dst_stage,
                                                   VkAccessFlags dst_access);
SINEW_API sinew_result sinew_vk_output_cmd_release(const sinew_vk_output* output, uint32_t slot,
                                                   VkCommandBuffer cmd,
                                                   uint32_t queue_family_index,
                                                   VkPipelineStageFlags src_stage,
                                                   VkAccessFlags src_access);

/* ---------------------------------------------------------------------------------------- */
/* Recording into the engine's frame                                                       */
/* ---------------------------------------------------------------------------------------- */

/* A range of a buffer the engine owns, as a skin's output: bound through sinew_skin_bind_output
 * with kind SINEW_OUTPUT_EXTERNAL and this extension in `next` (positions and normals NULL).
 * The skin's positions go to [position_offset, + 12 n) and, with normals on, its normals to
 * [normal_offset, + 12 n), packed xyz floats, n the render vertex count; many skins may share
 * one buffer at disjoint ranges. The buffer is the engine's: created on the tied context's
 * device with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT (and whatever the engine reads it with), both
 * offsets multiples of the device's minStorageBufferOffsetAlignment, both ranges within
 * buffer_size and apart. Only vk-lbs and vk-dqs take a range (other backends refuse the bind
 * with SINEW_ERROR_OUTPUT_BINDING, a swap to them likewise); a bad range is refused with
 * SINEW_ERROR_OUTPUT_BINDING and one log line. The struct must stay valid while bound.
 * Binding the skin to another range rewrites what its recorded dispatches read: the engine's
 * frames that recorded it must have completed first. Removing the skin or swapping its backend
 * needs no such wait (below).
 *
 * A skin bound to a range does not submit: sinew_world_update leaves its pose in a ring of
 * SINEW_VK_RECORD_FRAMES slots, and sinew_vk_record records its dispatch into the engine's
 * command buffer, which the engine submits. read_output, get_state and swaps compute the
 * latest shape apart on the context's queue, so they need nothing of the engine's buffer. An
 * instance that was recorded and goes (the skin removed, a swap taking over) is freed
 * SINEW_VK_RECORD_FRAMES sinew_vk_record calls later, or with the world. */
typedef struct sinew_vk_range_ext {
    sinew_ext_header header;            /* type SINEW_EXT_VULKAN_RANGE */
    VkBuffer buffer;
    VkDeviceSize buffer_size;           /* bytes, for the bounds check */
    VkDeviceSize position_offset;       /* bytes into buffer */
    VkDeviceSize normal_offset;         /* bytes into buffer; unused with normals = 0 */
} sinew_vk_range_ext;

#define SINEW_VK_RANGE_EXT_INIT \
    { { (uint32_t)sizeof(sinew_vk_range_ext), SINEW_EXT_VULKAN_RANGE, NULL }, VK_NULL_HANDLE, \
      0u, 0u, 0u }

/* The frames a recorded command buffer may stay in flight: the pose of recorded frame f lives
 * in ring slot f % SINEW_VK_RECORD_FRAMES until the device has run it, so the command buffer
 * of the sinew_vk_record call SINEW_VK_RECORD_FRAMES calls back must have completed before the
 * sinew_world_update that precedes the next call (an engine with at most that many frames in
 * flight, waiting on each frame's fence before reusing it, meets this). */
#define SINEW_VK_RECORD_FRAMES 3u

typedef struct sinew_vk_record_info {
    uint32_t struct_size;
    const void* next;
    /* Where the engine reads the skinned vertices: the one barrier after the dispatches makes
     * their shader writes visible there. 0: vertex input and vertex attribute reads (compute
     * shader and shader reads on a context without graphics). */
    VkPipelineStageFlags dst_stage_mask;
    VkAccessFlags dst_access_mask;
} sinew_vk_record_info;

#define SINEW_VK_RECORD_INFO_INIT { (uint32_t)sizeof(sinew_vk_record_info), NULL, 0u, 0u }

/* Records into `cmd` (the engine's, in the recording state, outside a render pass, from a pool
 * of the tied context's queue family) the dispatch of every skin of `world` bound to a range
 * that sinew_world_update (or sinew_skin_update) stepped since its last recording, then one
 * memory barrier (compute shader writes to info's stage and access); nothing when no skin is
 * pending. The engine submits cmd; sinew never touches its queue for these skins. Call it
 * between updates (never while sinew_world_update runs) from one thread, like every world
 * call. out_recorded (may be NULL): the skins recorded. NULL world or cmd:
 * SINEW_ERROR_INVALID_ARGUMENT; info (may be NULL: the defaults) below its size:
 * SINEW_ERROR_STRUCT_SIZE; a world not tied to a context (sinew_vk_register_backends):
 * SINEW_ERROR_NO_SERVICE; each with one line in the context's log where there is one. */
SINEW_API sinew_result sinew_vk_record(sinew_world* world, VkCommandBuffer cmd,
                                       const sinew_vk_record_info* info,
                                       uint32_t* out_recorded);

/* ---------------------------------------------------------------------------------------- */
/* Compute backends                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* Registers "vk-lbs", "vk-dqs" and "vk-pbd" (flags SINEW_BACKEND_FLAG_GPU; vk-pbd also
 * SINEW_BACKEND_FLAG_PHYSICS) in the world and ties the world to the context: every instance of
 * these backends in this world runs on `context`'s device and queue. The tie is the world's
 * Vulkan service (SINEW_SERVICE_VULKAN, sinew_plugin.h: the context and the output export
 * functions, for plugins such as fps-cuda) and the user pointer the three backends are
 * registered with (sinew_world_register_backend_with_user); the world owns it and frees it
 * when it is destroyed (through sinew_world_add_destroy_hook). Any number of worlds may be
 * tied at once. Registering again keeps the backends and ties the world to the new context;
 * destroying the context unties every world tied to it, whose probe then answers
 * SINEW_ERROR_BACKEND_UNAVAILABLE. The context must outlive every skin using these backends,
 * and its destruction must not overlap a call on a world tied to it. Behaviour and parameters
 * equal lbs/dqs (normals = 1 | 0; no simd); results agree with them within float rounding.
 * vk-pbd is pbd's solver in compute shaders with pbd's parameters but simd and grain
 * (backends/pbd/README.md, "vk-pbd"). NULL world or context: SINEW_ERROR_INVALID_ARGUMENT
 * (one line when the context is given); BUSY while the world updates. */
/* Once the most worlds tied at once; there is no such limit now (kept so that code naming it
 * still compiles). */
#define SINEW_VK_MAX_WORLDS 64u
SINEW_API sinew_result sinew_vk_register_backends(sinew_world* world,
                                                  sinew_vk_context* context);

#ifdef __cplusplus
}
#endif

#endif /* SINEW_SINEW_VULKAN_H */
