/* Baked files: writing a rig and a backend's blob, reading them back bit for bit.
 * SPDX-License-Identifier: MIT
 *
 * File format, version 2 (version 1 is the same with at most one backend). Every integer and float is little-endian and written or read byte by
 * byte (never a struct dump), so hosts of either byte order agree; floats are IEEE-754 binary32
 * bit patterns, so a value comes back with the very bits it had.
 *
 *   offset  size  field
 *   0       8     magic "SINEWBAK"
 *   8       4     u32 format_version (1 or 2; a reader refuses newer versions)
 *   12      4     u32 header_size (32 here; the payload starts there, so a later version may
 *                 grow the header; a multiple of 8, at most 4096)
 *   16      8     u64 payload_size (a multiple of 8; the file is exactly header + payload)
 *   24      4     u32 checksum: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial
 *                 value and final xor 0xFFFFFFFF) of the payload's bytes
 *   28      4     u32 flags (none defined; a reader refuses a flag it does not know)
 *   32      ...   payload: a sequence of chunks
 *
 * A chunk is { 4 ASCII bytes tag, u32 reserved (0), u64 size, `size` bytes, zero padding to a
 * multiple of 8 }. Chunks may come in any order; a tag a reader does not know is skipped (so a
 * later version can add chunks that old readers ignore); a known tag twice, or a required one
 * missing, is an error, except BKND and BLOB in version 2. The chunks:
 *
 *   RIG0  required  the rig's name, UTF-8 without a terminator (may be empty)
 *   SKEL  required  u32 joint_count, u32 reserved; i32 parents[n] (-1: root); f32
 *                   bind_matrices[16 n] (column-major, model space); u32 name_length[n]; the
 *                   names' bytes one after the other, without terminators
 *   MESH  required  the render mesh: u32 vertex_count, u32 triangle_count, u32 submesh_count,
 *                   u32 reserved; f32 positions[3 v]; f32 normals[3 v] (unit length); u32
 *                   indices[3 t]; u32 submesh_first_triangle[s]
 *   SIMM  optional  the simulation mesh, laid out as MESH
 *   WGHT  required  render-mesh weights as the runtime stores them (normalised, each row sorted
 *                   by decreasing weight): u32 vertex_count, u32 entry_count; u32
 *                   offsets[v + 1]; u32 joints[e]; f32 weights[e]
 *   BKND  optional  u32 name_length, u32 param_count; the backend's name; per parameter u32
 *                   key_length, u32 value_length, the key's bytes, the value's bytes
 *   BLOB  optional  the backend's bytes as its bake function wrote them (present exactly when
 *                   BKND is)
 *
 * Version 2 may repeat BKND and BLOB, up to SINEW_BAKE_MAX_BACKENDS times each, as many of
 * one as of the other: the i-th BLOB is the i-th BKND's, and no backend name comes twice. The
 * writer uses version 1 for a file with at most one backend, so that older runtimes read it.
 *
 * Reading checks, in order: magic, version, header, file size, checksum, chunk framing, chunk
 * sizes against their counts, then the content through the rig validation of
 * sinew_rig_create (indices in range, finite values, an acyclic skeleton, normalised weights).
 * Nothing is trusted before it is checked, and a failure logs one line naming the file. */
#define _POSIX_C_SOURCE 200809L /* fstat, fileno, fsync, clock_gettime, posix_memalign */
#include "internal.h"

#include <sinew/sinew_bake.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BAKE_MAGIC "SINEWBAK"
#define BAKE_HEADER_SIZE 32u
#define BAKE_MAX_HEADER_SIZE 4096u
#define BAKE_MAX_NAME 63u /* backend names, as the plugin ABI limits them */

enum { CHUNK_RIG0, CHUNK_SKEL, CHUNK_MESH, CHUNK_SIMM, CHUNK_WGHT, CHUNK_BKND, CHUNK_BLOB,
       CHUNK_COUNT };
static const char chunk_tags[CHUNK_COUNT][5] = { "RIG0", "SKEL", "MESH", "SIMM", "WGHT", "BKND",
                                                 "BLOB" };

/* ---------------------------------------------------------------------------------------- */
/* Shared helpers                                                                            */
/* ---------------------------------------------------------------------------------------- */

static void prefix_log(sinew_log_level level, const char* message, void* user)
{
    const sinew_prefix_logger* p = (const sinew_prefix_logger*)user;
    char line[2048];
    snprintf(line, sizeof line, "%s: %s", p->prefix, message);
    p->inner.func(level, line, p->inner.user);
}

sinew_host_api sinew_host_with_prefix(const sinew_host_api* host, const char* prefix,
                                      sinew_prefix_logger* storage)
{
    sinew_host_api copy = *host;
    if (host->logger.func) {
        storage->inner = host->logger;
        storage->prefix = prefix;
        copy.logger.func = prefix_log;
        copy.logger.user = storage;
    }
    return copy;
}

/* CRC-32C, table-driven one byte at a time; the table is built per use (256 steps) so that
 * no shared state needs initialising across threads. */
static void crc32c_table(uint32_t table[256])
{
    for (uint32_t i = 0; i < 256u; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define BAKE_CRC_SSE42 1
/* The same CRC with SSE4.2's crc32 instruction (which computes CRC-32C), 8 bytes at a time:
 * a baked file of tens of megabytes is checked in milliseconds. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p,
                                                                size_t size)
{
#if defined(__x86_64__)
    uint64_t c = crc;
    for (; size >= 8u; size -= 8u, p += 8u) {
        uint64_t v;
        memcpy(&v, p, 8u); /* little-endian: the first byte is the lowest */
        c = __builtin_ia32_crc32di(c, v);
    }
    crc = (uint32_t)c;
#endif
    for (; size > 0u; --size, ++p) crc = __builtin_ia32_crc32qi(crc, *p);
    return crc;
}
#endif

/* Continues a CRC: start from 0xFFFFFFFF, xor the result with 0xFFFFFFFF at the end. */
static uint32_t crc32c_update(const uint32_t table[256], uint32_t crc, const void* data,
                              size_t size)
{
    const uint8_t* p = (const uint8_t*)data;
#if defined(BAKE_CRC_SSE42)
    if (__builtin_cpu_supports("sse4.2")) return crc32c_sse42(crc, p, size);
#endif
    for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
    return crc;
}

static void put_le32(uint8_t* p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put_le64(uint8_t* p, uint64_t v)
{
    put_le32(p, (uint32_t)v);
    put_le32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get_le32(const uint8_t* p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static uint64_t get_le64(const uint8_t* p)
{
    return (uint64_t)get_le32(p) | ((uint64_t)get_le32(p + 4) << 32);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t pad8(uint64_t size)
{
    return (size + 7u) & ~(uint64_t)7u;
}

/* "baked file 'PATH'": the prefix of every line about a file. */
static char* make_label(const sinew_host_api* host, const char* path)
{
    size_t n = strlen(path) + 16u;
    char* label = (char*)sinew_host_alloc(host, n);
    if (label) snprintf(label, n, "baked file '%s'", path);
    return label;
}

/* ---------------------------------------------------------------------------------------- */
/* Writing                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* The growable buffer behind the backend's sinew_bake_writer. */
typedef struct blob_buffer {
    const sinew_host_api* host;
    uint8_t* data;
    size_t size, capacity;
} blob_buffer;

static sinew_result blob_write(const void* data, size_t size, void* user)
{
    blob_buffer* b = (blob_buffer*)user;
    if (size == 0) return SINEW_OK;
    if (!data)
        return sinew_host_fail(b->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "bake: the backend wrote %zu bytes from NULL", size);
    if (size > SIZE_MAX - b->size)
        return sinew_host_fail(b->host, SINEW_ERROR_LIMIT, "bake: the backend's blob overflows");
    size_t needed = b->size + size;
    if (needed > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 65536u;
        while (cap < needed) cap = cap > SIZE_MAX / 2u ? needed : cap * 2u;
        uint8_t* grown = (uint8_t*)sinew_host_alloc(b->host, cap);
        if (!grown)
            return sinew_host_fail(b->host, SINEW_ERROR_OUT_OF_MEMORY,
                                   "bake: out of memory for a blob of %zu bytes", needed);
        if (b->size) memcpy(grown, b->data, b->size);
        sinew_host_free(b->host, b->data);
        b->data = grown;
        b->capacity = cap;
    }
    memcpy(b->data + b->size, data, size);
    b->size = needed;
    return SINEW_OK;
}

/* The output file: everything after the header also goes through the checksum. */
typedef struct bake_out {
    FILE* f;
    uint32_t table[256];
    uint32_t crc;
    uint64_t size;
    bool failed;
} bake_out;

static void out_bytes(bake_out* o, const void* data, size_t size)
{
    if (o->failed || size == 0) return;
    o->crc = crc32c_update(o->table, o->crc, data, size);
    o->size += size;
    if (fwrite(data, 1, size, o->f) != size) o->failed = true;
}

static void out_u32(bake_out* o, uint32_t v)
{
    uint8_t b[4];
    put_le32(b, v);
    out_bytes(o, b, 4);
}

/* 32-bit words (u32, i32 or f32 bit patterns) through a staging buffer in file order. */
static void out_words(bake_out* o, const void* words, size_t count)
{
    const uint8_t* src = (const uint8_t*)words;
    uint8_t stage[4096];
    while (count > 0) {
        size_t n = count < sizeof stage / 4u ? count : sizeof stage / 4u;
        for (size_t i = 0; i < n; ++i) {
            uint32_t w;
            memcpy(&w, src + 4u * i, 4);
            put_le32(stage + 4u * i, w);
        }
        out_bytes(o, stage, 4u * n);
        src += 4u * n;
        count -= n;
    }
}

static void out_chunk(bake_out* o, int chunk, uint64_t size)
{
    uint8_t head[16];
    memcpy(head, chunk_tags[chunk], 4);
    put_le32(head + 4, 0u);
    put_le64(head + 8, size);
    out_bytes(o, head, sizeof head);
}

static void out_pad(bake_out* o, uint64_t size)
{
    static const uint8_t zeros[8] = { 0 };
    out_bytes(o, zeros, (size_t)(pad8(size) - size));
}

static uint64_t mesh_chunk_size(const sinew_mesh_view* m)
{
    return 16u + 24u * (uint64_t)m->vertex_count + 12u * (uint64_t)m->triangle_count +
           4u * (uint64_t)m->submesh_count;
}

static void out_mesh(bake_out* o, int chunk, const sinew_mesh_view* m)
{
    uint64_t size = mesh_chunk_size(m);
    out_chunk(o, chunk, size);
    out_u32(o, m->vertex_count);
    out_u32(o, m->triangle_count);
    out_u32(o, m->submesh_count);
    out_u32(o, 0u);
    out_words(o, m->positions, 3u * (size_t)m->vertex_count);
    out_words(o, m->normals, 3u * (size_t)m->vertex_count);
    out_words(o, m->indices, 3u * (size_t)m->triangle_count);
    out_words(o, m->submesh_first_triangle, m->submesh_count);
    out_pad(o, size);
}

/* One backend's BKND and BLOB chunks. */
static void out_backend(bake_out* o, const sinew_bake_backend* backend, const blob_buffer* blob)
{
    const sinew_param* params = backend->params;
    uint32_t param_count = backend->param_count;
    uint64_t size = 8u + strlen(backend->name);
    for (uint32_t i = 0; i < param_count; ++i)
        size += 8u + strlen(params[i].key) + strlen(params[i].value);
    out_chunk(o, CHUNK_BKND, size);
    out_u32(o, (uint32_t)strlen(backend->name));
    out_u32(o, param_count);
    out_bytes(o, backend->name, strlen(backend->name));
    for (uint32_t i = 0; i < param_count; ++i) {
        out_u32(o, (uint32_t)strlen(params[i].key));
        out_u32(o, (uint32_t)strlen(params[i].value));
        out_bytes(o, params[i].key, strlen(params[i].key));
        out_bytes(o, params[i].value, strlen(params[i].value));
    }
    out_pad(o, size);

    out_chunk(o, CHUNK_BLOB, blob->size);
    out_bytes(o, blob->data, blob->size);
    out_pad(o, blob->size);
}

/* Streams the payload: the rig's arrays go straight from its storage to the file, then each
 * backend with its blob. */
static void out_payload(bake_out* o, const sinew_rig_data* rig, const sinew_bake_backend* backends,
                        const blob_buffer* blobs, uint32_t count)
{
    const sinew_rig_view* v = &rig->view;
    uint64_t size = strlen(rig->name);
    out_chunk(o, CHUNK_RIG0, size);
    out_bytes(o, rig->name, (size_t)size);
    out_pad(o, size);

    uint32_t jn = v->joint_count;
    size = 8u + 72u * (uint64_t)jn;
    for (uint32_t j = 0; j < jn; ++j) size += strlen(v->names[j]);
    out_chunk(o, CHUNK_SKEL, size);
    out_u32(o, jn);
    out_u32(o, 0u);
    out_words(o, v->parents, jn);
    out_words(o, v->bind_matrices, 16u * (size_t)jn);
    for (uint32_t j = 0; j < jn; ++j) out_u32(o, (uint32_t)strlen(v->names[j]));
    for (uint32_t j = 0; j < jn; ++j) out_bytes(o, v->names[j], strlen(v->names[j]));
    out_pad(o, size);

    out_mesh(o, CHUNK_MESH, &v->render_mesh);
    if (v->simulation_mesh.vertex_count > 0) out_mesh(o, CHUNK_SIMM, &v->simulation_mesh);

    uint32_t vn = v->render_mesh.vertex_count;
    uint32_t entries = v->weight_offsets[vn];
    size = 8u + 4u * ((uint64_t)vn + 1u) + 8u * (uint64_t)entries;
    out_chunk(o, CHUNK_WGHT, size);
    out_u32(o, vn);
    out_u32(o, entries);
    out_words(o, v->weight_offsets, (size_t)vn + 1u);
    out_words(o, v->weight_joints, entries);
    out_words(o, v->weight_values, entries);
    out_pad(o, size);

    for (uint32_t i = 0; i < count; ++i) out_backend(o, &backends[i], &blobs[i]);
}

/* Writes the whole file as `tmp`, then renames it to `path`: a reader never sees half a file
 * under the real name. `host` names the file in its lines. */
static sinew_result write_file(const sinew_host_api* host, const char* path, const char* tmp,
                               const sinew_rig_data* rig, const sinew_bake_backend* backends,
                               const blob_buffer* blobs, uint32_t count, uint64_t* out_size)
{
    bake_out* o = (bake_out*)sinew_host_calloc(host, 1, sizeof *o);
    if (!o) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "out of memory");
    o->f = fopen(tmp, "wb");
    if (!o->f) {
        int err = errno;
        sinew_host_free(host, o);
        return sinew_host_fail(host, err == ENOENT || err == ENOTDIR ? SINEW_ERROR_FILE_NOT_FOUND
                                                                     : SINEW_ERROR_FILE_READ,
                               "cannot create %s: %s", tmp, strerror(err));
    }
    crc32c_table(o->table);
    o->crc = 0xFFFFFFFFu;
    uint8_t header[BAKE_HEADER_SIZE];
    memset(header, 0, sizeof header);
    if (fwrite(header, 1, sizeof header, o->f) != sizeof header) o->failed = true;
    out_payload(o, rig, backends, blobs, count);
    /* The header goes last: it needs the payload's size and checksum. */
    memcpy(header, BAKE_MAGIC, 8);
    put_le32(header + 8, count > 1u ? 2u : 1u);
    put_le32(header + 12, BAKE_HEADER_SIZE);
    put_le64(header + 16, o->size);
    put_le32(header + 24, o->crc ^ 0xFFFFFFFFu);
    put_le32(header + 28, 0u);
    bool ok = !o->failed && fseek(o->f, 0, SEEK_SET) == 0 &&
              fwrite(header, 1, sizeof header, o->f) == sizeof header && fflush(o->f) == 0 &&
              fsync(fileno(o->f)) == 0;
    int err = errno;
    if (fclose(o->f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    *out_size = BAKE_HEADER_SIZE + o->size;
    sinew_host_free(host, o);
    if (!ok) {
        remove(tmp);
        return sinew_host_fail(host, SINEW_ERROR_FILE_READ, "cannot write %s: %s", tmp,
                               strerror(err));
    }
    if (rename(tmp, path) != 0) {
        err = errno;
        remove(tmp);
        return sinew_host_fail(host, SINEW_ERROR_FILE_READ, "cannot rename %s to %s: %s", tmp,
                               path, strerror(err));
    }
    return SINEW_OK;
}

static bool has_bake(const sinew_backend_vtable* vt)
{
    /* A plugin built before `bake` existed has a shorter table: the field is not there. */
    size_t end = offsetof(sinew_backend_vtable, bake) + sizeof vt->bake;
    return vt->struct_size >= end && vt->bake != NULL;
}

/* A parameter list with keys and values of a writable length. */
static sinew_result check_params(const sinew_host_api* whost, const char* fn,
                                 const sinew_param* params, uint32_t param_count)
{
    if (param_count > 0 && !params)
        return sinew_host_fail(whost, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: param_count is %u but params is NULL", fn, param_count);
    for (uint32_t i = 0; i < param_count; ++i) {
        if (!params[i].key || !params[i].value)
            return sinew_host_fail(whost, SINEW_ERROR_PARAMETER,
                                   "%s: parameter %u has a NULL %s", fn, i,
                                   params[i].key ? "value" : "key");
        if (strlen(params[i].key) > UINT32_MAX / 2u || strlen(params[i].value) > UINT32_MAX / 2u)
            return sinew_host_fail(whost, SINEW_ERROR_LIMIT, "%s: parameter %u is too long", fn,
                                   i);
    }
    return SINEW_OK;
}

/* The backends to bake for: each named, registered, once, with valid parameters; vts[i] is
 * backends[i]'s table. */
static sinew_result check_backends(sinew_world* world, const char* fn,
                                   const sinew_bake_backend* backends, uint32_t count,
                                   const sinew_backend_vtable** vts)
{
    const sinew_host_api* whost = &world->host;
    for (uint32_t i = 0; i < count; ++i) {
        const char* name = backends[i].name;
        if (!name || !*name)
            return sinew_host_fail(whost, SINEW_ERROR_INVALID_ARGUMENT,
                                   "%s: backend %u has no name", fn, i);
        sinew_result r = check_params(whost, fn, backends[i].params, backends[i].param_count);
        if (r != SINEW_OK) return r;
        vts[i] = sinew_world_find_backend(world, name);
        if (!vts[i])
            return sinew_host_fail(whost, SINEW_ERROR_UNKNOWN_BACKEND,
                                   "%s: no backend named \"%s\" is registered", fn, name);
        for (uint32_t k = 0; k < i; ++k)
            if (strcmp(backends[k].name, name) == 0)
                return sinew_host_fail(whost, SINEW_ERROR_PARAMETER,
                                       "%s: backend \"%s\" is named twice", fn, name);
    }
    return SINEW_OK;
}

/* The backend's blob for the rig into `blob`: it must return a result and write something.
 * The backend gets its own host api (bhost): its lines are its own business; ours go to
 * `host`, which names the file. */
static sinew_result bake_blob(const sinew_host_api* bhost, const sinew_host_api* host,
                              const sinew_backend_vtable* vt, const sinew_rig_data* data,
                              const sinew_param* params, uint32_t param_count, blob_buffer* blob)
{
    const sinew_rig_view* v = &data->view;
    double start = now_seconds();
    sinew_host_log(host, SINEW_LOG_INFO,
                   "backend \"%s\" baking rig \"%s\" (%u joints, %u vertices, %u simulation "
                   "vertices)", vt->name, data->name, v->joint_count,
                   v->render_mesh.vertex_count, v->simulation_mesh.vertex_count);
    sinew_bake_writer writer = { blob_write, blob };
    sinew_result r = sinew_backend_result(host, vt, "bake",
                                          vt->bake(bhost, v, params, param_count, &writer));
    if (r == SINEW_OK && blob->size == 0)
        return sinew_host_fail(host, SINEW_ERROR_BACKEND_FAILED,
                               "backend \"%s\": bake succeeded but wrote nothing", vt->name);
    if (r == SINEW_OK)
        sinew_host_log(host, SINEW_LOG_INFO, "backend \"%s\" baked %zu bytes in %.3f s",
                       vt->name, blob->size, now_seconds() - start);
    return r;
}

/* Bakes every backend that has a bake function (the others are logged and left out) and
 * writes the file through `tmp`. `baked` receives the backends kept. */
static sinew_result bake_and_write(const sinew_world* world, const sinew_host_api* host,
                                   const sinew_rig_data* data,
                                   const sinew_bake_backend* backends,
                                   const sinew_backend_vtable* const* vts, uint32_t count,
                                   const char* path, const char* tmp, blob_buffer* blobs,
                                   sinew_bake_backend* baked)
{
    sinew_result r = SINEW_OK;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < count && r == SINEW_OK; ++i) {
        if (!has_bake(vts[i])) {
            sinew_host_log(host, SINEW_LOG_INFO,
                           "backend \"%s\" has no bake function: it adds nothing to the file",
                           vts[i]->name);
            continue;
        }
        blobs[kept].host = &world->host;
        r = bake_blob(sinew_world_backend_host(world, vts[i]), host, vts[i], data,
                      backends[i].params, backends[i].param_count, &blobs[kept]);
        baked[kept] = backends[i];
        baked[kept].name = vts[i]->name;
        ++kept;
    }
    if (r != SINEW_OK) return r;
    double write_start = now_seconds();
    uint64_t file_size = 0;
    r = write_file(host, path, tmp, data, baked, blobs, kept, &file_size);
    if (r == SINEW_OK)
        sinew_host_log(host, SINEW_LOG_INFO, "wrote %llu bytes in %.3f s",
                       (unsigned long long)file_size, now_seconds() - write_start);
    return r;
}

/* sinew_bake_write and sinew_bake_write_backends after their own checks: the path, the rig,
 * the backends, then the blobs and the file. */
static sinew_result write_backends(sinew_world* world, const char* fn, sinew_rig rig,
                                   const sinew_bake_backend* backends, uint32_t count,
                                   const char* path)
{
    const sinew_host_api* whost = &world->host;
    if (!path || !*path)
        return sinew_host_fail(whost, SINEW_ERROR_INVALID_ARGUMENT, "%s: path is empty", fn);
    const sinew_rig_data* data = sinew_world_get_rig(world, rig);
    if (!data)
        return sinew_host_fail(whost, SINEW_ERROR_INVALID_HANDLE,
                               "%s: rig handle 0x%08x is not a live rig", fn, rig.id);
    const sinew_backend_vtable* vts[SINEW_BAKE_MAX_BACKENDS];
    sinew_result r = check_backends(world, fn, backends, count, vts);
    if (r != SINEW_OK) return r;
    char* label = make_label(whost, path);
    size_t tmp_size = strlen(path) + 5u;
    char* tmp = (char*)sinew_host_alloc(whost, tmp_size);
    if (!label || !tmp) {
        sinew_host_free(whost, label);
        sinew_host_free(whost, tmp);
        return sinew_host_fail(whost, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    snprintf(tmp, tmp_size, "%s.tmp", path);
    sinew_prefix_logger prefix;
    sinew_host_api host = sinew_host_with_prefix(whost, label, &prefix);
    blob_buffer blobs[SINEW_BAKE_MAX_BACKENDS];
    sinew_bake_backend baked[SINEW_BAKE_MAX_BACKENDS];
    memset(blobs, 0, sizeof blobs);
    r = bake_and_write(world, &host, data, backends, vts, count, path, tmp, blobs, baked);
    for (uint32_t i = 0; i < count; ++i) sinew_host_free(whost, blobs[i].data);
    sinew_host_free(whost, tmp);
    sinew_host_free(whost, label);
    return r;
}

sinew_result sinew_bake_write(sinew_world* world, sinew_rig rig, const char* backend,
                              const sinew_param* params, uint32_t param_count, const char* path)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const char* fn = "sinew_bake_write";
    sinew_result r = check_params(&world->host, fn, params, param_count);
    if (r != SINEW_OK) return r;
    sinew_bake_backend one = { backend, params, param_count };
    return write_backends(world, fn, rig, &one, backend && *backend ? 1u : 0u, path);
}

sinew_result sinew_bake_write_backends(sinew_world* world, sinew_rig rig,
                                       const sinew_bake_backend* backends, uint32_t count,
                                       const char* path)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const char* fn = "sinew_bake_write_backends";
    if (!backends || count == 0 || count > SINEW_BAKE_MAX_BACKENDS)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "%s: %u backends%s (1 to %u)", fn, count,
                               backends ? "" : " from NULL", SINEW_BAKE_MAX_BACKENDS);
    return write_backends(world, fn, rig, backends, count, path);
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Everything a read file owns: allocations are chained so one walk frees them. */
typedef struct kept_block {
    struct kept_block* next;
} kept_block;

typedef struct baked_impl {
    sinew_baked_file file;              /* what the caller sees; internal points back here */
    sinew_rig_desc rig;                 /* file.rig points here */
    sinew_baked_rig_ext baked;          /* file.baked and rig.next point here */
    sinew_bake_backend backends[SINEW_BAKE_MAX_BACKENDS]; /* file.backends */
    sinew_baked_blob blobs[SINEW_BAKE_MAX_BACKENDS];      /* file.blobs; baked.extra: blobs + 1 */
    sinew_allocator allocator;          /* what to free with */
    kept_block* blocks;
} baked_impl;

/* An allocation of `count` items of `size` bytes owned by the file (at least one item,
 * so that an empty array still has an address); NULL on overflow or out of memory. */
static void* keep(const sinew_host_api* host, baked_impl* impl, uint64_t count, size_t size)
{
    if (count == 0) count = 1;
    if (count > (SIZE_MAX - 64u) / size) return NULL;
    kept_block* b = (kept_block*)sinew_host_alloc(host, 64u + (size_t)count * size);
    if (!b) return NULL;
    b->next = impl->blocks;
    impl->blocks = b;
    return (char*)b + 64u;
}

static void free_impl(baked_impl* impl)
{
    if (!impl) return;
    sinew_allocator a = impl->allocator;
    for (kept_block* b = impl->blocks; b;) {
        kept_block* next = b->next;
        a.free(b, a.user);
        b = next;
    }
    a.free(impl, a.user);
}

/* A bounds-checked cursor over one chunk. */
typedef struct cursor {
    const uint8_t* p;
    uint64_t left;
} cursor;

static bool take_u32(cursor* c, uint32_t* out)
{
    if (c->left < 4u) return false;
    *out = get_le32(c->p);
    c->p += 4;
    c->left -= 4u;
    return true;
}

/* count 32-bit words into `dst` (which has room), converted from little-endian. */
static void take_words(cursor* c, void* dst, uint64_t count)
{
    uint8_t* d = (uint8_t*)dst;
    for (uint64_t i = 0; i < count; ++i) {
        uint32_t w = get_le32(c->p + 4u * i);
        memcpy(d + 4u * i, &w, 4);
    }
    c->p += 4u * count;
    c->left -= 4u * count;
}

/* A string of `length` bytes from the cursor, NUL-terminated and owned by the file; NULL
 * (after logging) when it holds a NUL byte or memory runs out. */
static char* take_string(const sinew_host_api* host, baked_impl* impl, cursor* c,
                         uint64_t length, const char* what, sinew_result* r)
{
    if (memchr(c->p, 0, (size_t)length)) {
        *r = sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT, "%s contains a NUL byte", what);
        return NULL;
    }
    char* s = (char*)keep(host, impl, length + 1u, 1);
    if (!s) {
        *r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    memcpy(s, c->p, (size_t)length);
    s[length] = '\0';
    c->p += length;
    c->left -= length;
    return s;
}

static sinew_result bad_size(const sinew_host_api* host, int chunk, uint64_t size,
                             uint64_t expected)
{
    return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                           "chunk %s holds %llu bytes, but its counts need %llu",
                           chunk_tags[chunk], (unsigned long long)size,
                           (unsigned long long)expected);
}

static sinew_result read_skeleton(const sinew_host_api* host, baked_impl* impl, cursor c,
                                  sinew_skeleton_desc* sk)
{
    uint64_t size = c.left;
    uint32_t n = 0, reserved = 0;
    if (!take_u32(&c, &n) || !take_u32(&c, &reserved)) return bad_size(host, CHUNK_SKEL, size, 8u);
    uint64_t fixed = 8u + 72u * (uint64_t)n;
    if (size < fixed) return bad_size(host, CHUNK_SKEL, size, fixed);
    int32_t* parents = (int32_t*)keep(host, impl, n, 4u);
    float* bind = (float*)keep(host, impl, 16u * (uint64_t)n, 4u);
    uint32_t* lengths = (uint32_t*)keep(host, impl, n, 4u);
    const char** names = (const char**)keep(host, impl, n, sizeof(char*));
    if (!parents || !bind || !lengths || !names)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "out of memory for %u joints", n);
    take_words(&c, parents, n);
    take_words(&c, bind, 16u * (uint64_t)n);
    take_words(&c, lengths, n);
    uint64_t total = 0;
    for (uint32_t j = 0; j < n; ++j) total += lengths[j];
    if (c.left != total) return bad_size(host, CHUNK_SKEL, size, fixed + total);
    sinew_result r = SINEW_OK;
    for (uint32_t j = 0; j < n; ++j) {
        names[j] = take_string(host, impl, &c, lengths[j], "a joint name", &r);
        if (!names[j]) return r;
    }
    sk->joint_count = n;
    sk->parents = parents;
    sk->bind_matrices = bind;
    sk->names = names;
    return SINEW_OK;
}

static sinew_result read_mesh(const sinew_host_api* host, baked_impl* impl, int chunk, cursor c,
                              sinew_mesh_desc* m)
{
    uint64_t size = c.left;
    uint32_t vn = 0, tn = 0, sn = 0, reserved = 0;
    if (!take_u32(&c, &vn) || !take_u32(&c, &tn) || !take_u32(&c, &sn) ||
        !take_u32(&c, &reserved))
        return bad_size(host, chunk, size, 16u);
    uint64_t expected = 16u + 24u * (uint64_t)vn + 12u * (uint64_t)tn + 4u * (uint64_t)sn;
    if (size != expected) return bad_size(host, chunk, size, expected);
    float* positions = (float*)keep(host, impl, 3u * (uint64_t)vn, 4u);
    float* normals = (float*)keep(host, impl, 3u * (uint64_t)vn, 4u);
    uint32_t* indices = (uint32_t*)keep(host, impl, 3u * (uint64_t)tn, 4u);
    uint32_t* submeshes = (uint32_t*)keep(host, impl, sn, 4u);
    if (!positions || !normals || !indices || !submeshes)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "out of memory for a mesh of %u vertices", vn);
    take_words(&c, positions, 3u * (uint64_t)vn);
    take_words(&c, normals, 3u * (uint64_t)vn);
    take_words(&c, indices, 3u * (uint64_t)tn);
    take_words(&c, submeshes, sn);
    m->vertex_count = vn;
    m->positions = positions;
    m->normals = normals;
    m->triangle_count = tn;
    m->indices = indices;
    m->submesh_count = sn;
    m->submesh_first_triangle = sn ? submeshes : NULL;
    return SINEW_OK;
}

static sinew_result read_weights(const sinew_host_api* host, baked_impl* impl, cursor c,
                                 uint32_t mesh_vertices, sinew_weights_desc* w)
{
    uint64_t size = c.left;
    uint32_t vn = 0, en = 0;
    if (!take_u32(&c, &vn) || !take_u32(&c, &en)) return bad_size(host, CHUNK_WGHT, size, 8u);
    if (vn != mesh_vertices)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "chunk WGHT is for %u vertices, the render mesh has %u", vn,
                               mesh_vertices);
    uint64_t expected = 8u + 4u * ((uint64_t)vn + 1u) + 8u * (uint64_t)en;
    if (size != expected) return bad_size(host, CHUNK_WGHT, size, expected);
    uint32_t* offsets = (uint32_t*)keep(host, impl, (uint64_t)vn + 1u, 4u);
    uint32_t* joints = (uint32_t*)keep(host, impl, en, 4u);
    float* weights = (float*)keep(host, impl, en, 4u);
    if (!offsets || !joints || !weights)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "out of memory for %u weights", en);
    take_words(&c, offsets, (uint64_t)vn + 1u);
    take_words(&c, joints, en);
    take_words(&c, weights, en);
    /* The rig walks rows up to offsets[v + 1] before it could see a later offset fall back:
     * the framing must hold before anything reads through it. */
    for (uint32_t v = 0; v < vn; ++v) {
        if (offsets[v + 1] < offsets[v])
            return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                                   "chunk WGHT: the offsets descend at vertex %u", v);
    }
    if (offsets[vn] != en)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "chunk WGHT: the offsets end at %u, not at its %u entries",
                               offsets[vn], en);
    w->offsets = offsets;
    w->joints = joints;
    w->weights = weights;
    return SINEW_OK;
}

/* The i-th BKND chunk: the backend's name and parameters into backends[i]. */
static sinew_result read_backend(const sinew_host_api* host, baked_impl* impl, cursor c,
                                 uint32_t i_backend)
{
    uint64_t size = c.left;
    uint32_t name_length = 0, count = 0;
    if (!take_u32(&c, &name_length) || !take_u32(&c, &count))
        return bad_size(host, CHUNK_BKND, size, 8u);
    if (name_length == 0 || name_length > BAKE_MAX_NAME || name_length > c.left)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "chunk BKND: backend name of %u bytes (1 to %u, within the chunk)",
                               name_length, BAKE_MAX_NAME);
    sinew_result r = SINEW_OK;
    char* name = take_string(host, impl, &c, name_length, "the backend name", &r);
    if (!name) return r;
    if (count > c.left / 8u)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "chunk BKND: %u parameters cannot fit in %llu bytes", count,
                               (unsigned long long)c.left);
    sinew_param* params = (sinew_param*)keep(host, impl, count, sizeof(sinew_param));
    if (!params) return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t kn = 0, vn = 0;
        if (!take_u32(&c, &kn) || !take_u32(&c, &vn) || (uint64_t)kn + vn > c.left)
            return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                                   "chunk BKND: parameter %u runs past the chunk", i);
        params[i].key = take_string(host, impl, &c, kn, "a parameter key", &r);
        if (!params[i].key) return r;
        params[i].value = take_string(host, impl, &c, vn, "a parameter value", &r);
        if (!params[i].value) return r;
    }
    if (c.left != 0)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "chunk BKND has %llu bytes after its last parameter",
                               (unsigned long long)c.left);
    for (uint32_t k = 0; k < i_backend; ++k)
        if (strcmp(impl->backends[k].name, name) == 0)
            return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                                   "chunk BKND names backend \"%s\" twice", name);
    impl->backends[i_backend].name = name;
    impl->backends[i_backend].params = params;
    impl->backends[i_backend].param_count = count;
    return SINEW_OK;
}

/* Reads the header and the payload (into storage the file keeps) and checks the checksum. */
/* What the header of a baked file announces. */
typedef struct bake_header {
    uint32_t version, header_size, checksum;
    uint64_t payload_size;
} bake_header;

/* The magic and the format version of the first `got` bytes of the header (a prefix of the
 * magic is a cut-off baked file; anything else is some other file). */
static sinew_result check_magic(const sinew_host_api* host, const uint8_t* h, size_t got,
                                uint32_t* version)
{
    if (memcmp(h, BAKE_MAGIC, got < 8u ? got : 8u) != 0)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "not a baked sinew file (no \"" BAKE_MAGIC "\" magic)");
    if (got < 12u)
        return sinew_host_fail(host, SINEW_ERROR_FILE_TRUNCATED,
                               "the file ends after %zu bytes, inside its header", got);
    *version = get_le32(h + 8);
    if (*version > SINEW_BAKE_FORMAT_VERSION)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "format version %u, this runtime reads %u", *version,
                               SINEW_BAKE_FORMAT_VERSION);
    if (*version == 0)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT, "format version 0 does not exist");
    if (got < BAKE_HEADER_SIZE)
        return sinew_host_fail(host, SINEW_ERROR_FILE_TRUNCATED,
                               "the file ends after %zu bytes, inside its header", got);
    return SINEW_OK;
}

/* The header's sizes and flags against each other and against the file's size. */
static sinew_result check_sizes(const sinew_host_api* host, const uint8_t* h, uint64_t file_size,
                                bake_header* out)
{
    uint32_t header_size = get_le32(h + 12), flags = get_le32(h + 28);
    uint64_t payload_size = get_le64(h + 16);
    if (header_size < BAKE_HEADER_SIZE || header_size > BAKE_MAX_HEADER_SIZE || header_size % 8u)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "header size %u (a multiple of 8 from %u to %u)", header_size,
                               BAKE_HEADER_SIZE, BAKE_MAX_HEADER_SIZE);
    if (flags != 0)
        return sinew_host_fail(host, SINEW_ERROR_UNSUPPORTED,
                               "flags 0x%08x, which this runtime does not know", flags);
    if (file_size < header_size || payload_size > file_size - header_size)
        return sinew_host_fail(host, SINEW_ERROR_FILE_TRUNCATED,
                               "the file has %llu bytes, its header announces %llu",
                               (unsigned long long)file_size,
                               (unsigned long long)header_size + payload_size);
    if (payload_size != file_size - header_size)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "the file has %llu bytes after the %llu its header announces",
                               (unsigned long long)(file_size - header_size - payload_size),
                               (unsigned long long)header_size + payload_size);
    if (payload_size % 8u)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "payload size %llu is not a multiple of 8",
                               (unsigned long long)payload_size);
    if (payload_size > SIZE_MAX - 64u)
        return sinew_host_fail(host, SINEW_ERROR_LIMIT, "payload of %llu bytes is too large here",
                               (unsigned long long)payload_size);
    out->header_size = header_size;
    out->payload_size = payload_size;
    out->checksum = get_le32(h + 24);
    return SINEW_OK;
}

/* The header of open file f (a regular file of file_size bytes), checked. */
static sinew_result read_header(const sinew_host_api* host, FILE* f, uint64_t file_size,
                                bake_header* out)
{
    uint8_t h[BAKE_HEADER_SIZE];
    size_t got = fread(h, 1, sizeof h, f);
    if (got < sizeof h && ferror(f))
        return sinew_host_fail(host, SINEW_ERROR_FILE_READ, "cannot read: %s", strerror(errno));
    sinew_result r = check_magic(host, h, got, &out->version);
    return r == SINEW_OK ? check_sizes(host, h, file_size, out) : r;
}

/* The payload that header hd announces, read into memory the file object keeps and checked
 * against the header's CRC-32C. */
static sinew_result read_body(const sinew_host_api* host, baked_impl* impl, FILE* f,
                              const bake_header* hd, uint8_t** out)
{
    uint8_t* payload = (uint8_t*)keep(host, impl, hd->payload_size, 1);
    if (!payload)
        return sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY,
                               "out of memory for a payload of %llu bytes",
                               (unsigned long long)hd->payload_size);
    if (fseek(f, (long)hd->header_size, SEEK_SET) != 0)
        return sinew_host_fail(host, SINEW_ERROR_FILE_READ, "cannot seek: %s", strerror(errno));
    size_t got = fread(payload, 1, (size_t)hd->payload_size, f);
    if (got != hd->payload_size) {
        /* The size was checked above: a short read now is an error or a file cut meanwhile. */
        return ferror(f) ? sinew_host_fail(host, SINEW_ERROR_FILE_READ, "cannot read: %s",
                                           strerror(errno))
                         : sinew_host_fail(host, SINEW_ERROR_FILE_TRUNCATED,
                                           "the file ends after %zu of %llu payload bytes", got,
                                           (unsigned long long)hd->payload_size);
    }
    uint32_t table[256];
    crc32c_table(table);
    uint32_t crc = crc32c_update(table, 0xFFFFFFFFu, payload, (size_t)hd->payload_size) ^
                   0xFFFFFFFFu;
    if (crc != hd->checksum)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               "checksum mismatch: the header says 0x%08x, the payload gives "
                               "0x%08x (the file is corrupt)", hd->checksum, crc);
    *out = payload;
    return SINEW_OK;
}

static sinew_result read_payload(const sinew_host_api* host, baked_impl* impl, const char* path,
                                 const uint8_t** out_payload, uint64_t* out_size,
                                 uint64_t* out_offset)
{
    FILE* f = fopen(path, "rb");
    if (!f) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR)
            return sinew_host_fail(host, SINEW_ERROR_FILE_NOT_FOUND, "no such file");
        return sinew_host_fail(host, SINEW_ERROR_FILE_READ, "cannot open: %s", strerror(err));
    }
    struct stat st;
    bake_header hd = { 0u, 0u, 0u, 0u };
    uint8_t* payload = NULL;
    sinew_result r = SINEW_OK;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        r = sinew_host_fail(host, SINEW_ERROR_FILE_READ, "not a regular file");
    if (r == SINEW_OK) r = read_header(host, f, (uint64_t)st.st_size, &hd);
    if (r == SINEW_OK) r = read_body(host, impl, f, &hd, &payload);
    fclose(f);
    if (r != SINEW_OK) return r;
    impl->file.format_version = hd.version;
    *out_payload = payload;
    *out_size = hd.payload_size;
    *out_offset = hd.header_size;
    return SINEW_OK;
}

/* Where the chunks of a payload are: one of each kind, and every BKND and BLOB in order. */
typedef struct chunk_set {
    cursor one[CHUNK_COUNT];
    bool present[CHUNK_COUNT];
    cursor bknd[SINEW_BAKE_MAX_BACKENDS], blob[SINEW_BAKE_MAX_BACKENDS];
    uint32_t bknd_count, blob_count;
} chunk_set;

/* Notes a BKND or BLOB chunk: in version 1 at most one of each, in version 2 at most
 * SINEW_BAKE_MAX_BACKENDS. */
static sinew_result note_backend_chunk(const sinew_host_api* host, uint32_t version, int which,
                                       cursor c, chunk_set* set)
{
    uint32_t* n = which == CHUNK_BKND ? &set->bknd_count : &set->blob_count;
    uint32_t most = version >= 2u ? SINEW_BAKE_MAX_BACKENDS : 1u;
    if (*n == most)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                               most == 1u ? "chunk %s appears twice"
                                          : "chunk %s appears more than 8 times",
                               chunk_tags[which]);
    (which == CHUNK_BKND ? set->bknd : set->blob)[(*n)++] = c;
    return SINEW_OK;
}

/* The payload's chunks: each known tag at most once (BKND and BLOB: note_backend_chunk),
 * every chunk inside the payload; the required ones present, as many BKND as BLOB. */
static sinew_result find_chunks(const sinew_host_api* host, const uint8_t* payload,
                                uint64_t payload_size, uint64_t base, uint32_t version,
                                chunk_set* set)
{
    bool* present = set->present;
    for (uint64_t at = 0; at < payload_size;) {
        uint64_t left = payload_size - at;
        if (left < 16u)
            return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                                   "chunk header at offset %llu runs past the end",
                                   (unsigned long long)(base + at));
        const uint8_t* head = payload + at;
        uint64_t size = get_le64(head + 8);
        if (size > left - 16u || pad8(size) > left - 16u)
            return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT,
                                   "chunk at offset %llu claims %llu bytes, %llu are left",
                                   (unsigned long long)(base + at), (unsigned long long)size,
                                   (unsigned long long)(left - 16u));
        int which = -1;
        for (int k = 0; k < CHUNK_COUNT; ++k) {
            if (memcmp(head, chunk_tags[k], 4) == 0) which = k;
        }
        cursor c = { head + 16, size };
        if (which == CHUNK_BKND || which == CHUNK_BLOB) {
            sinew_result r = note_backend_chunk(host, version, which, c, set);
            if (r != SINEW_OK) return r;
            present[which] = true;
        } else if (which >= 0) {
            if (present[which])
                return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT, "chunk %s appears twice",
                                       chunk_tags[which]);
            present[which] = true;
            set->one[which] = c;
        }
        at += 16u + pad8(size);
    }
    static const int required[] = { CHUNK_RIG0, CHUNK_SKEL, CHUNK_MESH, CHUNK_WGHT };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i) {
        if (!present[required[i]])
            return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT, "chunk %s is missing",
                                   chunk_tags[required[i]]);
    }
    if (set->bknd_count != set->blob_count)
        return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT, "chunk %s comes without chunk %s",
                               set->bknd_count > set->blob_count ? "BKND" : "BLOB",
                               set->bknd_count > set->blob_count ? "BLOB" : "BKND");
    return SINEW_OK;
}

/* Each backend's name, parameters and blob; the first in the baked extension, the others as
 * its extra blobs. */
static sinew_result read_backends(const sinew_host_api* host, baked_impl* impl,
                                  const chunk_set* set)
{
    uint32_t n = set->bknd_count;
    for (uint32_t i = 0; i < n; ++i) {
        sinew_result r = read_backend(host, impl, set->bknd[i], i);
        if (r != SINEW_OK) return r;
        if (set->blob[i].left == 0)
            return sinew_host_fail(host, SINEW_ERROR_FILE_FORMAT, "chunk BLOB is empty");
        /* The blob stays in the payload the file keeps: no copy. */
        impl->blobs[i].backend = impl->backends[i].name;
        impl->blobs[i].data = set->blob[i].p;
        impl->blobs[i].size = (size_t)set->blob[i].left;
    }
    impl->file.backend_count = n;
    if (n == 0) return SINEW_OK;
    impl->baked.backend = impl->blobs[0].backend;
    impl->baked.data = impl->blobs[0].data;
    impl->baked.size = impl->blobs[0].size;
    impl->baked.extra_count = n - 1u;
    impl->baked.extra = n > 1u ? impl->blobs + 1 : NULL;
    impl->file.params = impl->backends[0].params;
    impl->file.param_count = impl->backends[0].param_count;
    return SINEW_OK;
}

/* The rig and the backend data from the chunks find_chunks located. */
static sinew_result read_chunks(const sinew_host_api* host, baked_impl* impl,
                                const chunk_set* set)
{
    const cursor* chunks = set->one;
    const bool* present = set->present;
    sinew_rig_desc* rig = &impl->rig;
    sinew_result r = SINEW_OK;
    cursor c = chunks[CHUNK_RIG0];
    rig->name = take_string(host, impl, &c, c.left, "the rig name", &r);
    if (r == SINEW_OK) r = read_skeleton(host, impl, chunks[CHUNK_SKEL], &rig->skeleton);
    if (r == SINEW_OK)
        r = read_mesh(host, impl, CHUNK_MESH, chunks[CHUNK_MESH], &rig->render_mesh);
    if (r == SINEW_OK && present[CHUNK_SIMM])
        r = read_mesh(host, impl, CHUNK_SIMM, chunks[CHUNK_SIMM], &rig->simulation_mesh);
    if (r == SINEW_OK)
        r = read_weights(host, impl, chunks[CHUNK_WGHT], rig->render_mesh.vertex_count,
                         &rig->weights);
    if (r == SINEW_OK) r = read_backends(host, impl, set);
    return r;
}

/* The file object for `path`: its label for messages, its source path and the empty
 * descriptors it will hold. NULL when out of memory. */
static baked_impl* new_impl(const sinew_host_api* whost, const char* path)
{
    baked_impl* impl = (baked_impl*)sinew_host_calloc(whost, 1, sizeof *impl);
    if (impl) impl->allocator = whost->allocator;
    char* label = impl ? (char*)keep(whost, impl, strlen(path) + 16u, 1) : NULL;
    char* source = impl ? (char*)keep(whost, impl, strlen(path) + 1u, 1) : NULL;
    if (!impl || !label || !source) {
        free_impl(impl);
        return NULL;
    }
    snprintf(label, strlen(path) + 16u, "baked file '%s'", path);
    memcpy(source, path, strlen(path) + 1u);
    sinew_baked_file* file = &impl->file;
    file->struct_size = (uint32_t)sizeof *file;
    file->internal = impl;
    file->source_path = source;
    file->rig = &impl->rig;
    file->baked = &impl->baked;
    file->backends = impl->backends;
    file->blobs = impl->blobs;
    sinew_rig_desc init = SINEW_RIG_DESC_INIT;
    impl->rig = init;
    sinew_baked_rig_ext ext = SINEW_BAKED_RIG_EXT_INIT;
    impl->baked = ext;
    impl->baked.source = label;
    return impl;
}

static sinew_result read_baked(const sinew_host_api* whost, const char* path,
                               baked_impl** out_impl)
{
    *out_impl = NULL;
    baked_impl* impl = new_impl(whost, path);
    if (!impl)
        return sinew_host_fail(whost, SINEW_ERROR_OUT_OF_MEMORY, "baked file '%s': out of memory",
                               path);
    sinew_prefix_logger prefix;
    sinew_host_api named = sinew_host_with_prefix(whost, impl->baked.source, &prefix);
    const sinew_host_api* host = &named;
    const uint8_t* payload = NULL;
    uint64_t payload_size = 0, base = 0;
    sinew_result r = read_payload(host, impl, path, &payload, &payload_size, &base);
    chunk_set* set = (chunk_set*)sinew_host_calloc(whost, 1, sizeof *set);
    if (!set && r == SINEW_OK) r = sinew_host_fail(host, SINEW_ERROR_OUT_OF_MEMORY, "out of memory");
    if (r == SINEW_OK)
        r = find_chunks(host, payload, payload_size, base, impl->file.format_version, set);
    if (r == SINEW_OK) r = read_chunks(host, impl, set);
    sinew_host_free(whost, set);
    if (r != SINEW_OK) {
        free_impl(impl);
        return r;
    }
    impl->rig.next = &impl->baked;
    *out_impl = impl;
    return SINEW_OK;
}

sinew_result sinew_rig_load_baked(sinew_world* world, const char* path, sinew_rig* out_rig)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out_rig || !path || !*path)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_rig_load_baked: %s", out_rig ? "path is empty"
                                                                   : "out_rig is NULL");
    out_rig->id = 0;
    baked_impl* impl = NULL;
    sinew_result r = read_baked(&world->host, path, &impl);
    if (r != SINEW_OK) return r;
    /* The rig checks the content; its lines begin with the file's name (baked.source). */
    r = sinew_rig_create(world, &impl->rig, out_rig);
    free_impl(impl);
    return r;
}

sinew_result sinew_rig_get_baked(const sinew_world* world, sinew_rig rig, const char** backend,
                                 const void** data, size_t* size)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_rig_data* rd = sinew_world_get_rig(world, rig);
    if (!rd)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_HANDLE,
                               "sinew_rig_get_baked: rig handle 0x%08x is not a live rig", rig.id);
    if (backend) *backend = rd->view.baked_backend;
    if (data) *data = rd->view.baked_data;
    if (size) *size = rd->view.baked_size;
    return SINEW_OK;
}

sinew_result sinew_rig_get_baked_count(const sinew_world* world, sinew_rig rig,
                                       uint32_t* out_count)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    if (!out_count)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_rig_get_baked_count: out_count is NULL");
    *out_count = 0;
    const sinew_rig_data* rd = sinew_world_get_rig(world, rig);
    if (!rd)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_HANDLE,
                               "sinew_rig_get_baked_count: rig handle 0x%08x is not a live rig",
                               rig.id);
    *out_count = rd->baked_count;
    return SINEW_OK;
}

sinew_result sinew_rig_get_baked_at(const sinew_world* world, sinew_rig rig, uint32_t index,
                                    const char** backend, const void** data, size_t* size)
{
    if (!world) return SINEW_ERROR_INVALID_ARGUMENT;
    const sinew_rig_data* rd = sinew_world_get_rig(world, rig);
    if (!rd)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_HANDLE,
                               "sinew_rig_get_baked_at: rig handle 0x%08x is not a live rig",
                               rig.id);
    if (index >= rd->baked_count)
        return sinew_host_fail(&world->host, SINEW_ERROR_INVALID_ARGUMENT,
                               "sinew_rig_get_baked_at: index %u, the rig has %u baked blobs",
                               index, rd->baked_count);
    if (backend) *backend = rd->baked[index].backend;
    if (data) *data = rd->baked[index].data;
    if (size) *size = rd->baked[index].size;
    return SINEW_OK;
}

/* ---- reading without a world ---- */

static void* plain_alloc(size_t size, size_t alignment, void* user)
{
    (void)user;
    void* p = NULL;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    if (posix_memalign(&p, alignment, size) != 0) return NULL;
    sinew_advise_large_block(p, size);
    return p;
}

static void plain_free(void* ptr, void* user)
{
    (void)user;
    free(ptr);
}

static void stderr_log(sinew_log_level level, const char* message, void* user)
{
    (void)user;
    static const char* const names[] = { "error", "warning", "info", "debug" };
    fprintf(stderr, "sinew: %s: %s\n", (unsigned)level < 4u ? names[level] : "log", message);
}

static void serial_for(sinew_job_fn fn, void* data, uint32_t count, uint32_t grain, void* user)
{
    (void)grain;
    (void)user;
    if (count) fn(data, 0, count);
}

sinew_result sinew_bake_read(const char* path, const sinew_logger* logger,
                             sinew_baked_file** out_file)
{
    sinew_host_api host;
    memset(&host, 0, sizeof host);
    host.struct_size = (uint32_t)sizeof host;
    host.allocator.alloc = plain_alloc;
    host.allocator.free = plain_free;
    host.logger.func = stderr_log;
    if (logger && logger->func) host.logger = *logger;
    host.log_level = SINEW_LOG_WARNING;
    host.jobs.parallel_for = serial_for;
    host.jobs.thread_count = 1;
    if (!out_file || !path || !*path)
        return sinew_host_fail(&host, SINEW_ERROR_INVALID_ARGUMENT, "sinew_bake_read: %s",
                               out_file ? "path is empty" : "out_file is NULL");
    *out_file = NULL;
    baked_impl* impl = NULL;
    sinew_result r = read_baked(&host, path, &impl);
    if (r != SINEW_OK) return r;
    /* The rig's checks, so the caller gets only content that sinew_rig_create accepts: tools
     * index the arrays before they create a rig. */
    r = sinew_rig_data_check(&host, &impl->rig);
    if (r != SINEW_OK) {
        free_impl(impl);
        return r;
    }
    *out_file = &impl->file;
    return SINEW_OK;
}

void sinew_bake_free(sinew_baked_file* file)
{
    if (file) free_impl((baked_impl*)file->internal);
}
