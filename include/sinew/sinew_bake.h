/*
 * sinew baked files: a rig and the pose-independent preparations of one or more backends,
 * computed once offline and loaded in milliseconds.
 * SPDX-License-Identifier: MIT
 *
 * A baked file (`.sinew`) holds a rig exactly as the runtime stores it (skeleton, render mesh,
 * simulation mesh, sub-meshes, normalised weights, unit normals) and, for each backend it was
 * baked for that has a `bake` function (sinew_plugin.h), that backend's blob. Loading it skips
 * the importer and the automatic weights, and a backend restores its preparation from its blob
 * instead of recomputing it: a skin (or a backend swap) gets the blob baked for its backend, or
 * the file's first blob when none was (a backend may accept another's, as fps takes ps's). A
 * backend without `bake` (lbs, dqs) contributes no blob.
 *
 * The file is little-endian, versioned and checksummed (CRC-32C of the payload); README.md
 * ("Baked files") and runtime/bake.c describe the layout. A file is untrusted input: every
 * count, index and value is checked when it is read.
 */
#ifndef SINEW_SINEW_BAKE_H
#define SINEW_SINEW_BAKE_H

#include "sinew.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest file format this runtime writes and reads. Version 2 holds several backends'
 * blobs; a file with at most one is written as version 1, which every runtime reads. */
#define SINEW_BAKE_FORMAT_VERSION 2u
/* The most backends one baked file holds. */
#define SINEW_BAKE_MAX_BACKENDS 8u

/* One backend's blob in a baked rig. */
typedef struct sinew_baked_blob {
    const char* backend;                /* 1 to 63 bytes */
    const void* data;
    size_t size;                        /* > 0 */
} sinew_baked_blob;

/* One backend to bake for: its name and the parameters its bake function gets. */
typedef struct sinew_bake_backend {
    const char* name;
    const sinew_param* params;
    uint32_t param_count;
} sinew_bake_backend;

/* Chained to sinew_rig_desc.next, it marks the descriptor's arrays as a rig the runtime stored
 * before (what sinew_bake_read returns): sinew_rig_create then keeps them bit for bit instead
 * of normalising them, and attaches the backend data to the rig's view. With it:
 * - both meshes must carry normals, each of unit length; they are copied unchanged;
 * - weights are required, each row sorted by decreasing weight, without a repeated joint,
 *   summing to 1 (within 1e-4); they are copied unchanged; max_influences must be 0;
 * - everything else is validated as for any rig, with the same result codes, and every error
 *   line begins with `source` when given. */
typedef struct sinew_baked_rig_ext {
    uint32_t struct_size;
    sinew_ext_type type;                /* SINEW_EXT_BAKED_RIG */
    const void* next;                   /* must be NULL */
    const char* source;                 /* optional: e.g. "baked file PATH", for messages */
    const char* backend;                /* NULL or "": no backend data */
    const void* data;                   /* the backend's blob (copied into the rig) */
    size_t size;                        /* > 0 exactly when backend is given */
    /* Appended: further backends' blobs (copied), each name distinct and none the first's;
     * only with a first backend, at most SINEW_BAKE_MAX_BACKENDS - 1. */
    uint32_t extra_count;
    const sinew_baked_blob* extra;
} sinew_baked_rig_ext;

#define SINEW_BAKED_RIG_EXT_INIT \
    { (uint32_t)sizeof(sinew_baked_rig_ext), SINEW_EXT_BAKED_RIG, NULL, NULL, NULL, NULL, 0u, \
      0u, NULL }

/* Writes `rig` and, when `backend` names a backend with a `bake` function, that backend's blob
 * (computed by calling it with `params`) to `path`. backend NULL: the rig only. The file is
 * written as `path`.tmp and renamed over `path` when complete, so `path` never holds half a
 * file. Progress goes to the world's logger at SINEW_LOG_INFO. Errors: INVALID_ARGUMENT,
 * INVALID_HANDLE, UNKNOWN_BACKEND, PARAMETER, FILE_NOT_FOUND (the folder does not exist),
 * FILE_READ (any other I/O error, writing included), OUT_OF_MEMORY, and whatever the backend's
 * bake returns; each with one log line. */
SINEW_API sinew_result sinew_bake_write(sinew_world* world, sinew_rig rig, const char* backend,
                                        const sinew_param* params, uint32_t param_count,
                                        const char* path);

/* Writes `rig` with the blobs of `count` backends (1 to SINEW_BAKE_MAX_BACKENDS, distinct
 * names, each registered; those without a bake function add nothing) to `path`, as
 * sinew_bake_write does for one: a skin of any of them, or a swap to one, then restores its
 * preparation from the file. Errors as sinew_bake_write, and PARAMETER for a repeated name. */
SINEW_API sinew_result sinew_bake_write_backends(sinew_world* world, sinew_rig rig,
                                                 const sinew_bake_backend* backends,
                                                 uint32_t count, const char* path);

/* Reads a baked file and creates its rig: the same arrays, bit for bit, that were written,
 * with the backend's blob in the rig's view (baked_backend, baked_data, baked_size; owned by
 * the rig). Errors, each with one log line naming the file: FILE_NOT_FOUND; FILE_READ;
 * FILE_FORMAT (wrong magic, inconsistent sizes, a bad or missing chunk, or a checksum
 * mismatch); FILE_TRUNCATED (shorter than its header says); UNSUPPORTED (a newer format
 * version); and for invalid content the codes of sinew_rig_create (JOINT_INDEX, NONFINITE,
 * SKELETON, ...). A failed load changes nothing in the world. */
SINEW_API sinew_result sinew_rig_load_baked(sinew_world* world, const char* path,
                                            sinew_rig* out_rig);

/* The backend data attached to a rig (NULL/0 when it has none); with several backends, the
 * first's. Any out pointer may be NULL; the pointers stay valid until the rig is destroyed. */
SINEW_API sinew_result sinew_rig_get_baked(const sinew_world* world, sinew_rig rig,
                                           const char** backend, const void** data,
                                           size_t* size);

/* How many backends' blobs the rig carries (0 to SINEW_BAKE_MAX_BACKENDS). */
SINEW_API sinew_result sinew_rig_get_baked_count(const sinew_world* world, sinew_rig rig,
                                                 uint32_t* out_count);
/* The index-th of them (in the file's order; index 0 is sinew_rig_get_baked's). An index at
 * or past the count is INVALID_ARGUMENT. Out pointers as sinew_rig_get_baked. */
SINEW_API sinew_result sinew_rig_get_baked_at(const sinew_world* world, sinew_rig rig,
                                              uint32_t index, const char** backend,
                                              const void** data, size_t* size);

/* A baked file read without a world, e.g. by tools that also need the arrays themselves.
 * `rig` is ready for sinew_rig_create (its next points to `baked`) and has passed the same
 * validation. Everything belongs to the file object; sinew_bake_free releases it. The
 * descriptors are reached through pointers so that this struct's layout does not change when
 * they grow; later fields are only appended (struct_size tells which exist). */
typedef struct sinew_baked_file {
    uint32_t struct_size;               /* sizeof(sinew_baked_file) of the runtime */
    uint32_t format_version;
    const char* source_path;
    const sinew_rig_desc* rig;
    const sinew_baked_rig_ext* baked;   /* backend name and blob (NULL/0 when none) */
    const sinew_param* params;          /* the first backend's parameters the bake used */
    uint32_t param_count;
    void* internal;                     /* storage; do not touch */
    /* Appended: every backend of the file, in its order (the first is `baked` above). */
    uint32_t backend_count;
    const sinew_bake_backend* backends; /* name and the parameters its bake used */
    const sinew_baked_blob* blobs;      /* name and blob */
} sinew_baked_file;

/* Reads and checks a baked file as sinew_rig_load_baked does (same errors), logging through
 * `logger` (NULL: errors and warnings to stderr). */
SINEW_API sinew_result sinew_bake_read(const char* path, const sinew_logger* logger,
                                       sinew_baked_file** out_file);
/* NULL is ignored. */
SINEW_API void sinew_bake_free(sinew_baked_file* file);

#ifdef __cplusplus
}
#endif

#endif /* SINEW_SINEW_BAKE_H */
