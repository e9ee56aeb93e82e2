/*
 * sinew: a skinning runtime for game engines.
 * SPDX-License-Identifier: MIT
 *
 * Public C11 API: results, host services, rigs, the world and its skin components.
 *
 * Conventions (see README.md):
 * - Every descriptor begins with `uint32_t struct_size`, set by its SINEW_*_INIT macro;
 *   a size of 0 or one smaller than the first published version is refused with
 *   SINEW_ERROR_STRUCT_SIZE. Fields may only be appended; a larger size from a newer
 *   caller is accepted and the unknown tail ignored.
 * - Extensible descriptors carry `const void* next`: a chain of extension structs, each
 *   beginning with sinew_ext_header. An extension type the runtime does not know is refused.
 * - Every other zero field means its documented default. Required data left empty fails
 *   validation with a specific code: zero means default for options, never for data.
 * - Matrices are 4x4, column-major, 16 floats (OpenGL / cglm layout); translation in
 *   elements 12..14.
 * - Handles (sinew_rig, sinew_skin) are an index plus a generation: a destroyed handle is
 *   detected and refused with SINEW_ERROR_INVALID_HANDLE, however many objects were created
 *   since (a slot is retired rather than given a generation it had before).
 * - Thread safety: a world is externally synchronised. Calls on one world must not overlap;
 *   the world itself uses the job system inside sinew_world_update. A call that would change
 *   the world made while sinew_world_update or sinew_skin_update runs (from a job or another
 *   host callback) is refused with SINEW_ERROR_BUSY and changes nothing; sinew_world_destroy
 *   then logs the refusal and returns.
 */
#ifndef SINEW_SINEW_H
#define SINEW_SINEW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(SINEW_SHARED)
#  ifdef SINEW_BUILDING
#    define SINEW_API __declspec(dllexport)
#  else
#    define SINEW_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define SINEW_API __attribute__((visibility("default")))
#else
#  define SINEW_API
#endif

/* The version these headers describe; the CMake package version is read from these lines. */
#define SINEW_VERSION_MAJOR 0
#define SINEW_VERSION_MINOR 1
#define SINEW_VERSION_PATCH 0

/* A version packed in 32 bits (major: 10 bits, minor: 10, patch: 12, Vulkan's layout), so
 * versions compare as integers. */
#define SINEW_MAKE_VERSION(major, minor, patch) \
    ((((uint32_t)(major)) << 22) | (((uint32_t)(minor)) << 12) | ((uint32_t)(patch)))
#define SINEW_VERSION_GET_MAJOR(version) ((uint32_t)(version) >> 22)
#define SINEW_VERSION_GET_MINOR(version) (((uint32_t)(version) >> 12) & 0x3FFu)
#define SINEW_VERSION_GET_PATCH(version) ((uint32_t)(version) & 0xFFFu)
#define SINEW_VERSION \
    SINEW_MAKE_VERSION(SINEW_VERSION_MAJOR, SINEW_VERSION_MINOR, SINEW_VERSION_PATCH)

/* ---------------------------------------------------------------------------------------- */
/* Results                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* 0 is success, negative values are errors. Pinned to 32 bits. */
typedef enum sinew_result {
    SINEW_OK = 0,
    SINEW_ERROR_INVALID_ARGUMENT = -1,   /* NULL where a value is required, bad enum value,
                                            a value outside its documented range */
    SINEW_ERROR_STRUCT_SIZE = -2,        /* struct_size 0 or too small */
    SINEW_ERROR_OUT_OF_MEMORY = -3,
    SINEW_ERROR_INVALID_HANDLE = -4,     /* destroyed or never created handle */
    SINEW_ERROR_NONFINITE = -5,          /* NaN or infinity in an input */
    SINEW_ERROR_JOINT_COUNT = -6,        /* pose or data does not match the rig's joint count */
    SINEW_ERROR_JOINT_INDEX = -7,        /* joint index out of range (weights, parents) */
    SINEW_ERROR_WEIGHTS = -8,            /* negative or all-zero weights of a vertex */
    SINEW_ERROR_EMPTY_MESH = -9,         /* zero vertices or zero triangles */
    SINEW_ERROR_SKELETON = -10,          /* cycle, missing parent, no root */
    SINEW_ERROR_VERTEX_INDEX = -11,      /* triangle index out of range */
    SINEW_ERROR_UNKNOWN_BACKEND = -12,   /* no backend registered under that name */
    SINEW_ERROR_BACKEND_UNAVAILABLE = -13, /* backend registered but its probe says no */
    SINEW_ERROR_PLUGIN_LOAD = -14,       /* shared library or entry point missing */
    SINEW_ERROR_PLUGIN_ABI = -15,        /* ABI version or struct sizes do not match */
    SINEW_ERROR_PARAMETER = -16,         /* unknown backend parameter or bad value */
    SINEW_ERROR_OUTPUT_BINDING = -17,    /* output arrays too small, bad stride */
    SINEW_ERROR_FILE_NOT_FOUND = -18,
    SINEW_ERROR_FILE_READ = -19,         /* I/O error */
    SINEW_ERROR_FILE_FORMAT = -20,       /* malformed content */
    SINEW_ERROR_FILE_TRUNCATED = -21,    /* content ends early */
    SINEW_ERROR_UNSUPPORTED = -22,       /* feature not built in or not available */
    SINEW_ERROR_IN_USE = -23,            /* e.g. removing a rig that skins still use */
    SINEW_ERROR_BACKEND_FAILED = -24,    /* a backend reported an internal failure */
    SINEW_ERROR_LIMIT = -25,             /* a count exceeds what the runtime supports */
    SINEW_ERROR_NO_DEVICE = -26,         /* no usable GPU: no driver, no device, no loader */
    SINEW_ERROR_DEVICE = -27,            /* a Vulkan or CUDA call failed (device lost,
                                            out of device memory, validation failure) */
    SINEW_ERROR_BUSY = -28,              /* the world is updating: called from a job or
                                            callback inside sinew_world_update */
    SINEW_ERROR_FILE_PATH = -29,         /* a file named by another file lies outside the
                                            folder it may name (absolute, or with ..) */
    SINEW_ERROR_GEOMETRY = -30,          /* rig geometry a backend cannot simulate, e.g. a
                                            simulation mesh away from the render mesh */
    SINEW_ERROR_NO_SERVICE = -31,        /* the world does not provide a host service a
                                            plugin or backend asked for (sinew_plugin.h) */
    SINEW_RESULT_MAX_ENUM = 0x7FFFFFFF
} sinew_result;

/* A static string naming the result, e.g. "SINEW_ERROR_NONFINITE". Never NULL. */
SINEW_API const char* sinew_result_string(sinew_result result);

/* The version of the library loaded at run time, packed as SINEW_MAKE_VERSION: compare it with
 * SINEW_VERSION, the headers' version, to find a library older than the headers. */
SINEW_API uint32_t sinew_version(void);
/* The same version as "MAJOR.MINOR.PATCH", a static string. Never NULL. */
SINEW_API const char* sinew_version_string(void);

/* ---------------------------------------------------------------------------------------- */
/* Extension chains                                                                         */
/* ---------------------------------------------------------------------------------------- */

typedef enum sinew_ext_type {
    SINEW_EXT_NONE = 0,
    /* Reserved for later headers (sinew_vulkan.h, the CUDA plugin, backend parameters). */
    SINEW_EXT_VULKAN_OUTPUT = 0x100,    /* sinew_vk_output_ext, sinew_vulkan.h */
    SINEW_EXT_VULKAN_RANGE = 0x101,     /* sinew_vk_range_ext, sinew_vulkan.h */
    SINEW_EXT_CUDA_OUTPUT = 0x200,
    SINEW_EXT_BACKEND_PARAMS = 0x300,
    SINEW_EXT_BAKED_RIG = 0x400,        /* sinew_baked_rig_ext, sinew_bake.h */
    SINEW_EXT_TYPE_MAX_ENUM = 0x7FFFFFFF
} sinew_ext_type;

/* Every struct in a `next` chain begins with this header. */
typedef struct sinew_ext_header {
    uint32_t struct_size;
    sinew_ext_type type;
    const void* next;
} sinew_ext_header;

/* ---------------------------------------------------------------------------------------- */
/* Host services                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Allocator. alloc returns memory aligned to `alignment` (a power of two, at most 4096) or
 * NULL. free accepts NULL. Both must be thread-safe: jobs may allocate. On Linux the world
 * populates every block of 64 KiB or more it gets (madvise MADV_POPULATE_WRITE, one call
 * instead of a page fault per page) and advises the whole 2 MiB pages inside blocks of 4 MiB or
 * more for transparent huge pages; both are hints that change no byte of the memory. */
typedef struct sinew_allocator {
    void* (*alloc)(size_t size, size_t alignment, void* user);
    void (*free)(void* ptr, void* user);
    void* user;
} sinew_allocator;

typedef enum sinew_log_level {
    SINEW_LOG_ERROR = 0,
    SINEW_LOG_WARNING = 1,
    SINEW_LOG_INFO = 2,
    SINEW_LOG_DEBUG = 3,
    SINEW_LOG_LEVEL_MAX_ENUM = 0x7FFFFFFF
} sinew_log_level;

/* Logger. Called with one line (no trailing newline). Must be reentrant: jobs may log. */
typedef struct sinew_logger {
    void (*func)(sinew_log_level level, const char* message, void* user);
    void* user;
} sinew_logger;

/* A job body: process items [begin, end). */
typedef void (*sinew_job_fn)(void* data, uint32_t begin, uint32_t end);

/* Job system. parallel_for runs fn over [0, count) in chunks of at least `grain` items
 * (a chunk is [begin, end)), on any threads, and returns when every item is done. It may be
 * called from inside a job (nested); an implementation may then run it inline.
 * thread_count is how many threads may run jobs at once (0 = 1). */
typedef struct sinew_job_system {
    void (*parallel_for)(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain,
                         void* user);
    uint32_t thread_count;
    void* user;
} sinew_job_system;

/* ---------------------------------------------------------------------------------------- */
/* World                                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef struct sinew_world sinew_world;

typedef struct sinew_world_desc {
    uint32_t struct_size;
    const void* next;
    const sinew_allocator* allocator; /* NULL: aligned malloc/free */
    const sinew_logger* logger;       /* NULL: stderr, warnings and errors only */
    const sinew_job_system* jobs;     /* NULL: built-in persistent pthread pool */
    uint32_t thread_count;            /* built-in pool only; 0: one thread per core */
    sinew_log_level log_level;        /* messages above this level are dropped; ERROR (0)
                                         keeps errors only. SINEW_WORLD_DESC_INIT sets
                                         WARNING, the default */
} sinew_world_desc;

#define SINEW_WORLD_DESC_INIT \
    { (uint32_t)sizeof(sinew_world_desc), NULL, NULL, NULL, NULL, 0u, SINEW_LOG_WARNING }

SINEW_API sinew_result sinew_world_create(const sinew_world_desc* desc, sinew_world** out_world);
/* Destroys every skin and rig and unloads plugins. NULL is ignored. */
SINEW_API void sinew_world_destroy(sinew_world* world);
/* Threads the world's job system may use (1 when single-threaded). */
SINEW_API uint32_t sinew_world_thread_count(const sinew_world* world);

/* Loads a backend plugin (a shared library exporting SINEW_PLUGIN_ENTRY_NAME, see
 * sinew_plugin.h) and registers its backends. A plugin with the wrong ABI is refused with
 * SINEW_ERROR_PLUGIN_ABI and nothing is registered.
 * A path with a '/' is opened as given. A bare file name (e.g. "libsinew_fps_cuda.so") is
 * looked for, first match wins, in: each folder of $SINEW_PLUGIN_PATH (':'-separated), the
 * plugin folder of the installed runtime ("sinew" beside the libsinew file, i.e.
 * <prefix>/lib/sinew), the executable's folder; failing those, the dynamic loader's own
 * search (LD_LIBRARY_PATH, runpath, system folders). */
SINEW_API sinew_result sinew_world_load_plugin(sinew_world* world, const char* path);

/* Number of registered backends, and the name of backend i (NULL when out of range). */
SINEW_API uint32_t sinew_world_backend_count(const sinew_world* world);
SINEW_API const char* sinew_world_backend_name(const sinew_world* world, uint32_t index);
/* SINEW_OK when the backend exists and can run here, else UNKNOWN_BACKEND/UNAVAILABLE. */
SINEW_API sinew_result sinew_world_probe_backend(sinew_world* world, const char* name);

/* What a backend parameter (sinew_param) accepts. */
typedef enum sinew_param_type {
    SINEW_PARAM_FLAG = 1,    /* "0" or "1" */
    SINEW_PARAM_INTEGER = 2, /* a whole number within [min, max] */
    SINEW_PARAM_REAL = 3,    /* a decimal number within min and max (open ends: flags) */
    SINEW_PARAM_CHOICE = 4,  /* one of the words of `choices` */
    SINEW_PARAM_TEXT = 5     /* text of 1 to `max` bytes that the backend checks against the rig */
} sinew_param_type;

/* sinew_param_info.flags */
#define SINEW_PARAM_MIN_OPEN 1u /* REAL: the value must be above min */
#define SINEW_PARAM_MAX_OPEN 2u /* REAL: the value must be below max */

/* One parameter of a backend, as the backend describes it. */
typedef struct sinew_param_info {
    const char* key;
    uint32_t type;                      /* sinew_param_type */
    uint32_t flags;                     /* SINEW_PARAM_MIN_OPEN, SINEW_PARAM_MAX_OPEN */
    double min, max;                    /* INTEGER, REAL: bounds; TEXT: max is the most bytes */
    const char* default_value;          /* the value when the key is not given, as a value
                                           would be written; NULL when it depends on other
                                           parameters or on the machine (the doc says how) */
    const char* choices;                /* CHOICE: the words, separated by '|'; else NULL */
    const char* doc;                    /* one line */
} sinew_param_info;

/* The parameters a registered backend takes: its table (valid while the backend stays
 * registered) and their count; *count 0 and *params NULL for a backend that describes none
 * (a plugin built against ABI version 1). UNKNOWN_BACKEND (one log line) or INVALID_ARGUMENT. */
SINEW_API sinew_result sinew_world_backend_params(const sinew_world* world, const char* backend,
                                                  const sinew_param_info** params,
                                                  uint32_t* count);

/* ---------------------------------------------------------------------------------------- */
/* Rigs                                                                                     */
/* ---------------------------------------------------------------------------------------- */

typedef struct sinew_rig { uint32_t id; } sinew_rig;     /* 0 is never valid */
typedef struct sinew_skin { uint32_t id; } sinew_skin;   /* 0 is never valid */

/* Skeleton. Parents may come in any order, but the graph must be a forest: every parent
 * index in range or -1, no cycle. */
typedef struct sinew_skeleton_desc {
    uint32_t joint_count;               /* required, >= 1 */
    const int32_t* parents;             /* required: parent index per joint, -1 for a root */
    const float* bind_matrices;         /* required: joint_count model-space rest transforms */
    const char* const* names;           /* optional: UTF-8 joint names */
} sinew_skeleton_desc;

/* A triangle mesh. Positions and normals are packed xyz floats. */
typedef struct sinew_mesh_desc {
    uint32_t vertex_count;              /* required */
    const float* positions;             /* required: 3 * vertex_count */
    const float* normals;               /* optional: computed (area-weighted) when NULL */
    uint32_t triangle_count;            /* required */
    const uint32_t* indices;            /* required: 3 * triangle_count */
    uint32_t submesh_count;             /* 0: one sub-mesh holding every triangle */
    const uint32_t* submesh_first_triangle; /* submesh_count ascending offsets, first is 0 */
} sinew_mesh_desc;

/* Skin weights, any number of influences per vertex, in compressed rows:
 * the influences of vertex v are entries offsets[v] .. offsets[v+1]-1. */
typedef struct sinew_weights_desc {
    const uint32_t* offsets;            /* vertex_count + 1 entries, offsets[0] = 0 */
    const uint32_t* joints;             /* joint index per entry */
    const float* weights;               /* weight per entry; >= 0, each vertex sums > 0
                                           (normalised by the runtime) */
} sinew_weights_desc;

typedef struct sinew_rig_desc {
    uint32_t struct_size;
    const void* next;
    const char* name;                   /* optional */
    sinew_skeleton_desc skeleton;
    sinew_mesh_desc render_mesh;        /* the mesh every backend outputs */
    sinew_mesh_desc simulation_mesh;    /* optional coarser mesh for physics backends
                                           (vertex_count 0: none) */
    sinew_weights_desc weights;         /* optional weights of the render mesh (offsets NULL:
                                           computed automatically, see README) */
    uint32_t max_influences;            /* automatic weights: 4 (default) or 8. Given
                                           weights: the largest influences kept per vertex,
                                           renormalised (0: keep all) */
} sinew_rig_desc;

#define SINEW_RIG_DESC_INIT { (uint32_t)sizeof(sinew_rig_desc), NULL, NULL, \
    { 0u, NULL, NULL, NULL }, { 0u, NULL, NULL, 0u, NULL, 0u, NULL }, \
    { 0u, NULL, NULL, 0u, NULL, 0u, NULL }, { NULL, NULL, NULL }, 0u }

/* Copies everything it needs from desc (the caller's arrays can be freed afterwards),
 * validates it, and computes what is missing (normals, weights, inverse bind matrices). */
SINEW_API sinew_result sinew_rig_create(sinew_world* world, const sinew_rig_desc* desc,
                                        sinew_rig* out_rig);
/* Refused with SINEW_ERROR_IN_USE while skins use it. */
SINEW_API sinew_result sinew_rig_destroy(sinew_world* world, sinew_rig rig);

typedef struct sinew_rig_info {
    uint32_t struct_size;
    uint32_t joint_count;
    uint32_t vertex_count;              /* render mesh */
    uint32_t triangle_count;            /* render mesh */
    uint32_t simulation_vertex_count;   /* 0 when none */
    uint32_t max_influences;            /* largest influence count of any vertex */
    uint32_t submesh_count;
} sinew_rig_info;

#define SINEW_RIG_INFO_INIT { (uint32_t)sizeof(sinew_rig_info), 0u, 0u, 0u, 0u, 0u, 0u }

SINEW_API sinew_result sinew_rig_get_info(const sinew_world* world, sinew_rig rig,
                                          sinew_rig_info* out_info);

/* Read-only views of the rig's data (valid until the rig is destroyed). Any out pointer may
 * be NULL. Weights are in compressed rows as in sinew_weights_desc, after normalisation. */
SINEW_API sinew_result sinew_rig_get_weights(const sinew_world* world, sinew_rig rig,
                                             const uint32_t** offsets, const uint32_t** joints,
                                             const float** weights);
SINEW_API sinew_result sinew_rig_get_mesh(const sinew_world* world, sinew_rig rig,
                                          const float** positions, const float** normals,
                                          const uint32_t** indices);
/* Joint index by name, or -1. */
SINEW_API int32_t sinew_rig_find_joint(const sinew_world* world, sinew_rig rig,
                                       const char* name);

/* Forward kinematics: model-space transforms from local ones (16 floats per joint). */
SINEW_API sinew_result sinew_rig_local_to_model(const sinew_world* world, sinew_rig rig,
                                                const float* local, float* out_model);

/* ---------------------------------------------------------------------------------------- */
/* Skin components                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* One backend parameter, as text: backends parse and validate their own keys. Numbers are
 * written as in C ('.' as the decimal point, an optional exponent) and read alike whatever
 * locale the application has set. */
typedef struct sinew_param {
    const char* key;
    const char* value;
} sinew_param;

/* A backend parameter with a typed value, the alternative to sinew_param's text for a caller
 * that holds numbers: FLAG, INTEGER and REAL keys (sinew_param_info) read `number` (a FLAG 0
 * or 1, an INTEGER a whole number), CHOICE and TEXT keys read `text`. */
typedef struct sinew_param_value {
    const char* key;
    double number;
    const char* text;
} sinew_param_value;

/* Typed parameters in sinew_skin_desc.next (type SINEW_EXT_BACKEND_PARAMS): read by the
 * backend like its text parameters, with the same checks; a key given both ways counts as
 * given twice. Backends that take no parameters, or none typed, refuse it with
 * SINEW_ERROR_UNSUPPORTED. Swaps and bakes take text parameters only. */
typedef struct sinew_backend_params_ext {
    sinew_ext_header header;            /* type SINEW_EXT_BACKEND_PARAMS */
    const sinew_param_value* values;
    uint32_t count;
} sinew_backend_params_ext;

#define SINEW_BACKEND_PARAMS_EXT_INIT \
    { { (uint32_t)sizeof(sinew_backend_params_ext), SINEW_EXT_BACKEND_PARAMS, NULL }, NULL, 0u }

typedef struct sinew_skin_desc {
    uint32_t struct_size;
    const void* next;                   /* sinew_backend_params_ext: typed parameters */
    sinew_rig rig;                      /* required */
    const char* backend;                /* NULL: "lbs" */
    const sinew_param* params;          /* optional */
    uint32_t param_count;
} sinew_skin_desc;

#define SINEW_SKIN_DESC_INIT { (uint32_t)sizeof(sinew_skin_desc), NULL, { 0u }, NULL, NULL, 0u }

SINEW_API sinew_result sinew_world_add_skin(sinew_world* world, const sinew_skin_desc* desc,
                                            sinew_skin* out_skin);
SINEW_API sinew_result sinew_world_remove_skin(sinew_world* world, sinew_skin skin);

/* Replaces the backend of a live skin without a frame hitch. Returns at once: the new
 * backend is prepared on a thread of its own (its parallel_for runs on that thread, not on the
 * world's job system) while the skin goes on stepping and writing its output with the old
 * one; the first sinew_world_update or sinew_skin_update after the preparation has ended
 * switches over before it steps, the new backend starting from the skin's shape (positions and
 * velocities) and pose at that moment. Errors found at once: INVALID_HANDLE, PARAMETER (a NULL
 * key or value), UNKNOWN_BACKEND, BACKEND_UNAVAILABLE, and BUSY while an earlier swap of the
 * skin is pending. A preparation that fails (a bad parameter value, an unsuitable rig, ...)
 * leaves the old backend running: the backend logs why, one WARNING line says the swap
 * failed, and sinew_skin_swap_status / sinew_skin_wait_swap return the error. Removing the
 * skin or destroying the world waits for a preparation still running. */
SINEW_API sinew_result sinew_skin_set_backend(sinew_world* world, sinew_skin skin,
                                              const char* backend, const sinew_param* params,
                                              uint32_t param_count);
/* SINEW_ERROR_BUSY while a swap of the skin is pending (preparing, or prepared and waiting for
 * the next update); else how the last swap ended: SINEW_OK (also when none was asked for) or
 * its error. Never waits, logs nothing for a pending swap. */
SINEW_API sinew_result sinew_skin_swap_status(const sinew_world* world, sinew_skin skin);
/* Waits for the skin's pending swap to finish preparing and switches over now, as the next
 * update would; returns how the swap ended (SINEW_OK when none is pending). For a loading
 * screen, a tool or a test that wants the new backend before the next frame. */
SINEW_API sinew_result sinew_skin_wait_swap(sinew_world* world, sinew_skin skin);
/* Name of the skin's current backend (NULL for an invalid handle). */
SINEW_API const char* sinew_skin_backend(const sinew_world* world, sinew_skin skin);

typedef enum sinew_pose_space {
    SINEW_POSE_MODEL = 0,   /* joint transforms in model space (the default) */
    SINEW_POSE_LOCAL = 1,   /* joint transforms relative to the parent; the rig runs FK */
    SINEW_POSE_SPACE_MAX_ENUM = 0x7FFFFFFF
} sinew_pose_space;

enum {
    /* This pose does not continue the previous one: a teleport, an animation cut, a respawn.
     * Physics backends (ps, fps, fps-cuda) then restart their tissue from this pose instead of
     * dragging the old shape through the body: the skin takes the pose's linear-blend shape,
     * velocities are zero, and the step is quasi-static (no secondary motion follows from the
     * jump). They also find large jumps themselves (their parameters jump_angle and
     * jump_distance); the flag is for the cuts those thresholds miss. Geometric backends
     * ignore it. */
    SINEW_POSE_DISCONTINUOUS = 1u << 0
};

typedef struct sinew_pose_desc {
    uint32_t struct_size;
    sinew_pose_space space;
    uint32_t joint_count;               /* required: must equal the rig's */
    const float* matrices;              /* required: 16 floats per joint, finite */
    uint32_t flags;                     /* SINEW_POSE_* bits; 0: the pose continues the
                                           previous one. Unknown bits are refused
                                           (SINEW_ERROR_INVALID_ARGUMENT); a desc of the first
                                           published size, which ends before flags, means 0 */
} sinew_pose_desc;

#define SINEW_POSE_DESC_INIT { (uint32_t)sizeof(sinew_pose_desc), SINEW_POSE_MODEL, 0u, NULL, 0u }

/* The range of a pose. Each joint's skinning transform (its model-space transform times its
 * inverse bind matrix: what backends apply to the rest mesh) must have every entry of its 3x3
 * linear part within +-SINEW_POSE_MAX_LINEAR, and a translation no longer than
 * SINEW_POSE_MAX_REACH times the rig's size: the diagonal of the box around the rest meshes,
 * the joints' rest positions and the model-space origin (1 when that box is a point). A
 * pose outside it is refused with SINEW_ERROR_INVALID_ARGUMENT (SINEW_ERROR_NONFINITE when
 * the product overflows). The bounds lie far beyond any animation and far enough below
 * FLT_MAX that no backend's arithmetic overflows. */
#define SINEW_POSE_MAX_LINEAR 1e4f
#define SINEW_POSE_MAX_REACH 1e5f

/* Sets the pose that the next sinew_world_update moves the skin to. The runtime multiplies
 * by the inverse bind matrices itself. Matrices must be finite (SINEW_ERROR_NONFINITE), and
 * in the range above. A refused pose leaves the previous one in place. Poses
 * set between two updates are not stepped through: the last one counts, with the flags of all
 * of them (a flagged pose followed by an unflagged one is still a discontinuity). */
SINEW_API sinew_result sinew_skin_set_pose(sinew_world* world, sinew_skin skin,
                                           const sinew_pose_desc* pose);

/* Steps every skin by dt seconds (finite, >= 0; 0 is a paused frame: geometric backends still
 * apply the pose, physics backends run no step), in parallel through the job system.
 * Returns the first failure; other skins still step. Its jobs and callbacks must not change
 * the world: such calls get SINEW_ERROR_BUSY. Geometric backends ignore dt. Physics backends
 * (ps, fps, fps-cuda) simulate in fixed steps of their `timestep` (1/60 s by default): an
 * update runs the whole steps that dt and the time carried from earlier updates make, at most
 * `max_substeps` (4 by default; time beyond is dropped), through the poses between the
 * previous update's and this one, and carries the rest; an update too short for a step leaves
 * their output as it was (backends/ps/README.md, "Time steps"). */
SINEW_API sinew_result sinew_world_update(sinew_world* world, float dt);
/* Steps one skin only. */
SINEW_API sinew_result sinew_skin_update(sinew_world* world, sinew_skin skin, float dt);

typedef enum sinew_output_kind {
    SINEW_OUTPUT_HOST = 0,              /* caller-owned host arrays */
    SINEW_OUTPUT_EXTERNAL = 1,          /* described by an extension in `next` (a Vulkan
                                           buffer slot, sinew_vulkan.h), see below */
    SINEW_OUTPUT_KIND_MAX_ENUM = 0x7FFFFFFF
} sinew_output_kind;

/* Where a skin's render-mesh output goes. Positions and normals are 3 floats each at the
 * given byte strides (0: tightly packed, 12). normals may be NULL.
 *
 * SINEW_OUTPUT_EXTERNAL: `next` carries an output extension (SINEW_EXT_VULKAN_OUTPUT:
 * sinew_vk_output_ext in sinew_vulkan.h, which sinew_vk_output_get_desc fills, or
 * SINEW_EXT_VULKAN_RANGE: sinew_vk_range_ext, a range of the engine's own buffer; without one the
 * desc is refused with SINEW_ERROR_UNSUPPORTED, another extension type likewise), and
 * positions/normals are the same memory mapped on the host, or NULL when it is not
 * host-visible. The runtime hands the binding to the skin's backend by one rule, also after
 * every backend swap: a GPU backend (SINEW_BACKEND_FLAG_GPU) gets the extension chain and the
 * host pointers and writes the device memory itself; a CPU backend gets the host pointers only
 * (next = NULL). With neither (a CPU backend and no host pointers) the bind, or the swap that
 * would need it, is refused with SINEW_ERROR_OUTPUT_BINDING and one log line. The extension
 * structs must stay valid while bound, like the arrays. sinew_skin_read_output copies through
 * the host pointers whatever the kind (SINEW_ERROR_OUTPUT_BINDING without them). */
typedef struct sinew_output_desc {
    uint32_t struct_size;
    const void* next;
    sinew_output_kind kind;
    uint32_t vertex_capacity;           /* required: at least the render vertex count */
    float* positions;                   /* required for HOST */
    size_t position_stride;
    float* normals;
    size_t normal_stride;
} sinew_output_desc;

#define SINEW_OUTPUT_DESC_INIT \
    { (uint32_t)sizeof(sinew_output_desc), NULL, SINEW_OUTPUT_HOST, 0u, NULL, 0u, NULL, 0u }

/* Copies the skin's current output into the arrays of desc. */
SINEW_API sinew_result sinew_skin_read_output(const sinew_world* world, sinew_skin skin,
                                              const sinew_output_desc* desc);
/* Makes every later update write straight into the arrays of desc (NULL unbinds). The arrays
 * must stay valid while bound; the binding survives backend swaps. */
SINEW_API sinew_result sinew_skin_bind_output(sinew_world* world, sinew_skin skin,
                                              const sinew_output_desc* desc);

#ifdef __cplusplus
}
#endif

#endif /* SINEW_SINEW_H */
