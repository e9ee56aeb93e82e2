/* The text format of the test characters (see ../shared/data/README.md): a NAME.ini naming
 * an .off mesh (or two), a .skel skeleton and .anim animations.
 * SPDX-License-Identifier: MIT
 *
 * Parsing is by whitespace-separated tokens, with line structure enforced where the format
 * has it (one vertex, face, joint or axis per line), so a file that lost or gained a number
 * is reported at the line where it happened. Choices the format leaves open:
 * - `#` starts a comment that runs to the end of the line, in every file (OFF has them).
 * - OFF faces with more than three corners are triangulated as a fan around their first
 *   corner; tokens after a face's corners (OFF's optional face colour) are ignored.
 * - A NaN or infinite number is malformed content (FILE_FORMAT), as is anything after the
 *   data a header announced.
 * - A file that ends before the data its header announced is FILE_TRUNCATED; a header whose
 *   counts could not fit in the bytes that follow is refused the same way before anything is
 *   allocated for it.
 * - An animation that drives more joints than the skeleton has is SINEW_ERROR_JOINT_COUNT.
 * - Error lines say which file, line and field went wrong and never quote the file's bytes:
 *   an .ini may name any file (see import_file.c), and its contents are not the log's.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import_internal.h"
#include "sinew_number.h"

/* The smallest bytes one record can take, used to bound counts before allocating:
 * "0 0 0\n" for a vertex or an axis, "3 0 1 2\n" for a face, "0 0 0 a b\n" for a joint. */
#define MIN_VERTEX_BYTES 6u
#define MIN_FACE_BYTES 8u
#define MIN_JOINT_BYTES 10u
#define MIN_AXIS_BYTES 6u
#define MIN_ANGLE_BYTES 2u
#define MIN_STAMP_BYTES 2u


/* Seconds between key frames: the files' time stamps are not used (see the data README). */
#define TEXT_KEY_SPACING 0.5f

/* ---------------------------------------------------------------------------------------- */
/* Tokenizer                                                                                */
/* ---------------------------------------------------------------------------------------- */

typedef struct text_reader {
    const import_context* ctx;
    const char* file;       /* for messages */
    const char* p;
    const char* end;
    uint32_t line;          /* 1-based line of p */
} text_reader;

typedef struct token {
    const char* text;
    size_t length;
    uint32_t line;
} token;

static void reader_init(text_reader* r, const import_context* ctx, const char* file,
                        const char* data, size_t size)
{
    r->ctx = ctx;
    r->file = file;
    r->p = data;
    r->end = data + size;
    r->line = 1;
}

/* Reads the file at path whole and points r at it; the caller frees *data. */
static sinew_result reader_open(text_reader* r, const import_context* ctx, const char* path,
                                char** data)
{
    size_t size;
    sinew_result res = import_read_file(ctx, path, data, &size);
    if (res == SINEW_OK) reader_init(r, ctx, path, *data, size);
    return res;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Skips blanks and comments, and line breaks too when `cross_lines`. */
static void skip_blank(text_reader* r, int cross_lines)
{
    while (r->p < r->end) {
        char c = *r->p;
        if (is_blank(c)) {
            ++r->p;
        } else if (c == '#') {
            while (r->p < r->end && *r->p != '\n') ++r->p;
        } else if (c == '\n' && cross_lines) {
            ++r->p;
            ++r->line;
        } else {
            break;
        }
    }
}

static size_t bytes_left(const text_reader* r)
{
    return (size_t)(r->end - r->p);
}

/* The next token; `same_line` forbids crossing a line break to find it. */
static sinew_result next_token(text_reader* r, int same_line, const char* what, token* out)
{
    skip_blank(r, !same_line);
    if (r->p >= r->end)
        return import_fail(r->ctx, SINEW_ERROR_FILE_TRUNCATED,
                           "%s:%u: the file ends before %s", r->file, (unsigned)r->line, what);
    if (*r->p == '\n') {
        /* A short last line is a file cut at a line break, not a malformed line. */
        text_reader rest = *r;
        skip_blank(&rest, 1);
        if (rest.p >= rest.end)
            return import_fail(r->ctx, SINEW_ERROR_FILE_TRUNCATED,
                               "%s:%u: the file ends before %s", r->file, (unsigned)r->line,
                               what);
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT, "%s:%u: the line ends before %s",
                           r->file, (unsigned)r->line, what);
    }
    out->text = r->p;
    out->line = r->line;
    while (r->p < r->end && !is_blank(*r->p) && *r->p != '\n') ++r->p;
    out->length = (size_t)(r->p - out->text);
    return SINEW_OK;
}

/* Requires the rest of the line to be empty and moves to the next one. */
static sinew_result end_line(text_reader* r, const char* what)
{
    skip_blank(r, 0);
    if (r->p < r->end && *r->p != '\n') {
        token t = { r->p, 0, r->line };
        while (r->p < r->end && !is_blank(*r->p) && *r->p != '\n') ++r->p;
        t.length = (size_t)(r->p - t.text);
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT, "%s:%u: unexpected text after %s",
                           r->file, (unsigned)t.line, what);
    }
    if (r->p < r->end) {
        ++r->p;
        ++r->line;
    }
    return SINEW_OK;
}

/* Drops the rest of the line. */
static void skip_line(text_reader* r)
{
    while (r->p < r->end && *r->p != '\n') ++r->p;
    if (r->p < r->end) {
        ++r->p;
        ++r->line;
    }
}

/* Requires nothing but blanks and comments up to the end of the file. */
static sinew_result expect_end(text_reader* r, const char* what)
{
    skip_blank(r, 1);
    if (r->p < r->end) {
        token t;
        next_token(r, 1, what, &t);
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT, "%s:%u: unexpected text after %s",
                           r->file, (unsigned)t.line, what);
    }
    return SINEW_OK;
}

/* Fails with "file:line: <what> is <why>" for the token t. */
static sinew_result token_fail(const text_reader* r, token t, const char* what, const char* why)
{
    return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT, "%s:%u: %s is %s", r->file,
                       (unsigned)t.line, what, why);
}

/* Whether the token is a string of decimal digits after an optional sign. */
static int token_is_integer(token t)
{
    size_t i = (t.text[0] == '-' || t.text[0] == '+') ? 1 : 0;
    int valid = i < t.length;
    for (; i < t.length && valid; ++i) valid = t.text[i] >= '0' && t.text[i] <= '9';
    return valid;
}

static sinew_result read_float(text_reader* r, int same_line, const char* what, float* out)
{
    token t;
    sinew_result res = next_token(r, same_line, what, &t);
    if (res != SINEW_OK) return res;
    char buffer[64];
    double value = 0.0;
    bool number = false;
    if (t.length < sizeof buffer) {
        memcpy(buffer, t.text, t.length);
        buffer[t.length] = '\0';
        number = sinew_number_parse(buffer, &value);
    }
    if (!number || fabs(value) > FLT_MAX)
        return token_fail(r, t, what, "not a finite decimal number within the float range");
    *out = (float)value;
    return SINEW_OK;
}

/* A non-negative decimal integer that fits 32 bits. */
static sinew_result read_count(text_reader* r, int same_line, const char* what, uint32_t* out)
{
    token t;
    sinew_result res = next_token(r, same_line, what, &t);
    if (res != SINEW_OK) return res;
    uint64_t value = 0;
    int valid = t.length > 0;
    for (size_t i = 0; i < t.length && valid; ++i) {
        char c = t.text[i];
        if (c < '0' || c > '9') valid = 0;
        else if ((value = value * 10u + (uint64_t)(c - '0')) > UINT32_MAX) valid = 0;
    }
    if (!valid) {
        /* Say why: a sign, a number too large, or no number at all. */
        const char* why = !token_is_integer(t) ? "not a count"
                          : t.text[0] == '-'   ? "negative"
                          : t.text[0] == '+'   ? "not a plain count (no sign allowed)"
                                               : "larger than 4294967295";
        return token_fail(r, t, what, why);
    }
    *out = (uint32_t)value;
    return SINEW_OK;
}

/* An integer of any size, optionally signed (the unused time stamps of .anim frames). */
static sinew_result read_integer(text_reader* r, int same_line, const char* what)
{
    token t;
    sinew_result res = next_token(r, same_line, what, &t);
    if (res != SINEW_OK) return res;
    return token_is_integer(t) ? SINEW_OK : token_fail(r, t, what, "not an integer");
}

static int token_equals(token t, const char* word)
{
    size_t n = strlen(word);
    return t.length == n && memcmp(t.text, word, n) == 0;
}

static int token_equals_nocase(token t, const char* word)
{
    size_t n = strlen(word);
    if (t.length != n) return 0;
    for (size_t i = 0; i < n; ++i) {
        char c = t.text[i];
        if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
        if (c != word[i]) return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* .off meshes                                                                              */
/* ---------------------------------------------------------------------------------------- */

typedef struct text_mesh {
    uint32_t vertex_count;
    uint32_t triangle_count;
    float* positions;
    uint32_t* indices;
} text_mesh;

static void text_mesh_free(text_mesh* mesh)
{
    free(mesh->positions);
    free(mesh->indices);
    memset(mesh, 0, sizeof *mesh);
}

static sinew_result read_index(text_reader* r, const text_mesh* mesh, uint32_t* out)
{
    sinew_result res = read_count(r, 1, "a face's vertex index", out);
    if (res != SINEW_OK) return res;
    if (*out >= mesh->vertex_count)
        return import_fail(r->ctx, SINEW_ERROR_VERTEX_INDEX,
                           "%s:%u: vertex index %u is out of range (the mesh has %u vertices)",
                           r->file, (unsigned)r->line, (unsigned)*out,
                           (unsigned)mesh->vertex_count);
    return SINEW_OK;
}

/* One OFF face of 3 or more corners, fanned into triangles from its first corner and appended
 * to mesh->indices (*capacity triangles, grown as polygons need). */
static sinew_result read_face(text_reader* r, text_mesh* mesh, size_t* triangles,
                              size_t* capacity)
{
    uint32_t corners, first, previous, current;
    sinew_result res = read_count(r, 0, "a face's corner count", &corners);
    if (res != SINEW_OK) return res;
    if (corners < 3)
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT,
                           "%s:%u: a face with %u corners (at least 3 are needed)", r->file,
                           (unsigned)r->line, (unsigned)corners);
    if ((res = read_index(r, mesh, &first)) != SINEW_OK ||
        (res = read_index(r, mesh, &previous)) != SINEW_OK)
        return res;
    for (uint32_t c = 2; c < corners; ++c) {
        if ((res = read_index(r, mesh, &current)) != SINEW_OK) return res;
        if (*triangles == *capacity) {
            /* Only polygons get here: each adds corners - 3 triangles beyond the count. */
            if (*capacity >= UINT32_MAX / 6)
                return import_fail(r->ctx, SINEW_ERROR_LIMIT, "%s:%u: more than %u triangles",
                                   r->file, (unsigned)r->line, (unsigned)(UINT32_MAX / 6));
            size_t grown = *capacity * 2;
            uint32_t* bigger = (uint32_t*)realloc(mesh->indices, grown * 3 * sizeof(uint32_t));
            if (!bigger)
                return import_fail(r->ctx, SINEW_ERROR_OUT_OF_MEMORY,
                                   "%s: out of memory for %zu triangles", r->file, grown);
            mesh->indices = bigger;
            *capacity = grown;
        }
        uint32_t* tri = mesh->indices + *triangles * 3;
        tri[0] = first;
        tri[1] = previous;
        tri[2] = current;
        ++*triangles;
        previous = current;
    }
    skip_line(r);
    return SINEW_OK;
}

static sinew_result parse_off_body(text_reader* r, text_mesh* mesh)
{
    token header;
    sinew_result res = next_token(r, 0, "the OFF header", &header);
    if (res != SINEW_OK) return res;
    if (!token_equals(header, "OFF"))
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT,
                           "%s:%u: does not start with the OFF header", r->file,
                           (unsigned)header.line);
    uint32_t vertex_count, face_count, edge_count;
    if ((res = read_count(r, 0, "the vertex count", &vertex_count)) != SINEW_OK ||
        (res = read_count(r, 1, "the face count", &face_count)) != SINEW_OK ||
        (res = read_count(r, 1, "the edge count", &edge_count)) != SINEW_OK ||
        (res = end_line(r, "the OFF counts")) != SINEW_OK)
        return res;
    if (vertex_count == 0 || face_count == 0)
        return import_fail(r->ctx, SINEW_ERROR_EMPTY_MESH, "%s: the mesh has %u vertices and %u "
                           "faces", r->file, (unsigned)vertex_count, (unsigned)face_count);
    uint64_t needed = (uint64_t)vertex_count * MIN_VERTEX_BYTES +
                      (uint64_t)face_count * MIN_FACE_BYTES;
    if (needed > (uint64_t)bytes_left(r) + 1u)
        return import_fail(r->ctx, SINEW_ERROR_FILE_TRUNCATED,
                           "%s:%u: announces %u vertices and %u faces, but only %zu bytes follow",
                           r->file, (unsigned)(r->line - 1), (unsigned)vertex_count,
                           (unsigned)face_count, bytes_left(r));

    mesh->vertex_count = vertex_count;
    mesh->positions = (float*)import_calloc((size_t)vertex_count * 3, sizeof(float));
    size_t capacity = face_count;
    mesh->indices = (uint32_t*)import_calloc(capacity * 3, sizeof(uint32_t));
    if (!mesh->positions || !mesh->indices)
        return import_fail(r->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory for %u vertices",
                           r->file, (unsigned)vertex_count);

    for (uint32_t v = 0; v < vertex_count; ++v) {
        float* p = mesh->positions + (size_t)v * 3;
        if ((res = read_float(r, 0, "a vertex's x", &p[0])) != SINEW_OK ||
            (res = read_float(r, 1, "a vertex's y", &p[1])) != SINEW_OK ||
            (res = read_float(r, 1, "a vertex's z", &p[2])) != SINEW_OK ||
            (res = end_line(r, "a vertex's z")) != SINEW_OK)
            return res;
    }

    size_t triangles = 0;
    for (uint32_t f = 0; f < face_count; ++f)
        if ((res = read_face(r, mesh, &triangles, &capacity)) != SINEW_OK) return res;
    mesh->triangle_count = (uint32_t)triangles;
    return expect_end(r, "the last face");
}

static sinew_result parse_off(const import_context* ctx, const char* path, text_mesh* out)
{
    memset(out, 0, sizeof *out);
    char* data;
    text_reader r;
    sinew_result res = reader_open(&r, ctx, path, &data);
    if (res != SINEW_OK) return res;
    res = parse_off_body(&r, out);
    free(data);
    if (res != SINEW_OK) text_mesh_free(out);
    return res;
}

/* ---------------------------------------------------------------------------------------- */
/* .skel skeletons                                                                          */
/* ---------------------------------------------------------------------------------------- */

typedef struct name_entry {
    const char* name;
    uint32_t index;
} name_entry;

static int compare_names(const void* a, const void* b)
{
    return strcmp(((const name_entry*)a)->name, ((const name_entry*)b)->name);
}

/* Joint names are one token; control characters would corrupt every log line that
 * shows them. */
static int valid_name(token t)
{
    for (size_t i = 0; i < t.length; ++i) {
        unsigned char c = (unsigned char)t.text[i];
        if (c < 0x20 || c == 0x7f) return 0;
    }
    return 1;
}

typedef struct skel_scratch {
    float* positions;       /* 3 per joint */
    token* parent_names;
    name_entry* sorted;
    uint8_t* state;
} skel_scratch;

static sinew_result resolve_parents(text_reader* r, sinew_character* character,
                                    skel_scratch* s)
{
    import_storage* st = import_storage_of(character);
    uint32_t n = character->rig.skeleton.joint_count;
    for (uint32_t j = 0; j < n; ++j) {
        s->sorted[j].name = st->names[j];
        s->sorted[j].index = j;
    }
    qsort(s->sorted, n, sizeof *s->sorted, compare_names);
    for (uint32_t j = 0; j + 1 < n; ++j) {
        if (strcmp(s->sorted[j].name, s->sorted[j + 1].name) == 0) {
            uint32_t second = s->sorted[j].index > s->sorted[j + 1].index ? s->sorted[j].index
                                                                          : s->sorted[j + 1].index;
            return import_fail(r->ctx, SINEW_ERROR_SKELETON,
                               "%s:%u: the name of joint %u is used twice", r->file,
                               (unsigned)s->parent_names[second].line, (unsigned)second);
        }
    }
    for (uint32_t j = 0; j < n; ++j) {
        token parent = s->parent_names[j];
        if (strcmp(st->names[j], "root") == 0)
            return import_fail(r->ctx, SINEW_ERROR_SKELETON,
                               "%s:%u: a joint may not be called 'root' (the word marks a "
                               "joint without parent)", r->file, (unsigned)parent.line);
        if (token_equals(parent, "root")) {
            st->parents[j] = -1;
            continue;
        }
        char key_text[1024];
        size_t length = parent.length < sizeof key_text - 1 ? parent.length
                                                            : sizeof key_text - 1;
        memcpy(key_text, parent.text, length);
        key_text[length] = '\0';
        name_entry key = { key_text, 0 };
        const name_entry* found = (const name_entry*)bsearch(&key, s->sorted, n,
                                                             sizeof *s->sorted, compare_names);
        if (!found || length != parent.length)
            return import_fail(r->ctx, SINEW_ERROR_SKELETON,
                               "%s:%u: the parent of joint %u is not a joint of the skeleton",
                               r->file, (unsigned)parent.line, (unsigned)j);
        if (found->index == j)
            return import_fail(r->ctx, SINEW_ERROR_SKELETON,
                               "%s:%u: joint %u is its own parent", r->file,
                               (unsigned)parent.line, (unsigned)j);
        st->parents[j] = (int32_t)found->index;
    }
    /* Cycle check in linear time: walk up from each joint until a joint already known to
     * reach a root; meeting a joint of the current walk again means a cycle. */
    enum { UNSEEN = 0, WALKING = 1, ROOTED = 2 };
    for (uint32_t j = 0; j < n; ++j) {
        uint32_t k = j;
        while (s->state[k] == UNSEEN) {
            s->state[k] = WALKING;
            if (st->parents[k] < 0) break;
            k = (uint32_t)st->parents[k];
        }
        if (s->state[k] == WALKING && st->parents[k] >= 0)
            return import_fail(r->ctx, SINEW_ERROR_SKELETON,
                               "%s:%u: the parents of joint %u form a cycle", r->file,
                               (unsigned)s->parent_names[k].line, (unsigned)k);
        for (k = j; s->state[k] == WALKING; k = (uint32_t)st->parents[k]) {
            s->state[k] = ROOTED;
            if (st->parents[k] < 0) break;
        }
    }
    return SINEW_OK;
}

static sinew_result parse_skel_body(text_reader* r, sinew_character* character,
                                    skel_scratch* s)
{
    import_storage* st = import_storage_of(character);
    uint32_t n;
    sinew_result res = read_count(r, 0, "the joint count", &n);
    if (res != SINEW_OK) return res;
    unsigned header_line = (unsigned)r->line;
    if ((res = end_line(r, "the joint count")) != SINEW_OK) return res;
    if (n == 0)
        return import_fail(r->ctx, SINEW_ERROR_SKELETON, "%s:%u: the skeleton has no joints",
                           r->file, header_line);
    if ((uint64_t)n * MIN_JOINT_BYTES > (uint64_t)bytes_left(r) + 1u)
        return import_fail(r->ctx, SINEW_ERROR_FILE_TRUNCATED,
                           "%s:%u: announces %u joints, but only %zu bytes follow", r->file,
                           header_line, (unsigned)n, bytes_left(r));

    character->rig.skeleton.joint_count = n;
    st->parents = (int32_t*)import_calloc(n, sizeof(int32_t));
    st->bind_matrices = (float*)import_calloc((size_t)n * 16, sizeof(float));
    st->names = (char**)import_calloc(n, sizeof(char*));
    character->rest_local = (float*)import_calloc((size_t)n * 16, sizeof(float));
    s->positions = (float*)import_calloc((size_t)n * 3, sizeof(float));
    s->parent_names = (token*)import_calloc(n, sizeof(token));
    s->sorted = (name_entry*)import_calloc(n, sizeof(name_entry));
    s->state = (uint8_t*)import_calloc(n, 1);
    if (!st->parents || !st->bind_matrices || !st->names || !character->rest_local ||
        !s->positions || !s->parent_names || !s->sorted || !s->state)
        return import_fail(r->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory for %u joints",
                           r->file, (unsigned)n);
    st->name_count = n;

    for (uint32_t j = 0; j < n; ++j) {
        float* p = s->positions + (size_t)j * 3;
        token name;
        if ((res = read_float(r, 0, "a joint's x", &p[0])) != SINEW_OK ||
            (res = read_float(r, 1, "a joint's y", &p[1])) != SINEW_OK ||
            (res = read_float(r, 1, "a joint's z", &p[2])) != SINEW_OK ||
            (res = next_token(r, 1, "a joint's name", &name)) != SINEW_OK ||
            (res = next_token(r, 1, "a joint's parent name", &s->parent_names[j])) != SINEW_OK)
            return res;
        if (!valid_name(name) || name.length >= 1024 || !valid_name(s->parent_names[j]))
            return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT,
                               "%s:%u: a joint name holds control characters or is longer "
                               "than 1023 bytes", r->file, (unsigned)name.line);
        if ((res = end_line(r, "a joint's parent name")) != SINEW_OK) return res;
        st->names[j] = import_strndup(name.text, name.length);
        if (!st->names[j])
            return import_fail(r->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", r->file);
    }
    if ((res = expect_end(r, "the last joint")) != SINEW_OK) return res;
    if ((res = resolve_parents(r, character, s)) != SINEW_OK) return res;

    /* Joints carry no rest rotation in this format: bind = translation to the rest
     * position, and the rest local transform the offset from the parent. */
    for (uint32_t j = 0; j < n; ++j) {
        const float* p = s->positions + (size_t)j * 3;
        float* bind = st->bind_matrices + (size_t)j * 16;
        float* local = character->rest_local + (size_t)j * 16;
        int32_t parent = st->parents[j];
        const float* pp = parent >= 0 ? s->positions + (size_t)parent * 3 : NULL;
        for (int i = 0; i < 4; ++i) bind[i * 5] = local[i * 5] = 1.0f;
        for (int i = 0; i < 3; ++i) {
            bind[12 + i] = p[i];
            local[12 + i] = pp ? p[i] - pp[i] : p[i];
        }
    }
    return SINEW_OK;
}

static sinew_result parse_skel(const import_context* ctx, const char* path,
                               sinew_character* character)
{
    char* data;
    text_reader r;
    sinew_result res = reader_open(&r, ctx, path, &data);
    if (res != SINEW_OK) return res;
    skel_scratch s;
    memset(&s, 0, sizeof s);
    res = parse_skel_body(&r, character, &s);
    free(s.positions);
    free(s.parent_names);
    free(s.sorted);
    free(s.state);
    free(data);
    return res;
}

/* ---------------------------------------------------------------------------------------- */
/* .anim animations                                                                         */
/* ---------------------------------------------------------------------------------------- */

typedef struct anim_scratch {
    float* axes;            /* 3 per animated joint */
    uint32_t* axis_lines;
    float* angles;
} anim_scratch;

/* The animation's header: the frame count (at least 1) and the animated joint count (at most
 * the skeleton's), within what the bytes left can hold and the key limit allows. */
static sinew_result read_anim_header(text_reader* r, uint32_t joints, uint32_t* frames,
                                     uint32_t* animated)
{
    sinew_result res;
    if ((res = read_count(r, 0, "the frame count", frames)) != SINEW_OK ||
        (res = read_count(r, 1, "the animated joint count", animated)) != SINEW_OK)
        return res;
    unsigned header_line = (unsigned)r->line;
    if ((res = end_line(r, "the animated joint count")) != SINEW_OK) return res;
    if (*frames == 0)
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT, "%s:%u: the animation has no frames",
                           r->file, header_line);
    if (*animated > joints)
        return import_fail(r->ctx, SINEW_ERROR_JOINT_COUNT,
                           "%s:%u: animates %u joints, but the skeleton has %u", r->file,
                           header_line, (unsigned)*animated, (unsigned)joints);
    uint64_t per_frame = MIN_STAMP_BYTES +
                         (uint64_t)*animated * (MIN_AXIS_BYTES + MIN_ANGLE_BYTES);
    if ((uint64_t)*frames * per_frame > (uint64_t)bytes_left(r) + 1u)
        return import_fail(r->ctx, SINEW_ERROR_FILE_TRUNCATED,
                           "%s:%u: announces %u frames of %u joints, but only %zu bytes "
                           "follow", r->file, header_line, (unsigned)*frames,
                           (unsigned)*animated, bytes_left(r));
    if ((uint64_t)*frames * joints > MAX_ANIMATION_ENTRIES)
        return import_fail(r->ctx, SINEW_ERROR_LIMIT,
                           "%s:%u: %u frames of %u joints exceed the limit of %llu keys",
                           r->file, header_line, (unsigned)*frames, (unsigned)joints,
                           (unsigned long long)MAX_ANIMATION_ENTRIES);
    return SINEW_OK;
}

/* One frame's lines: the time stamp, an axis line per animated joint, the angles' line. */
static sinew_result read_frame(text_reader* r, uint32_t animated, anim_scratch* s)
{
    sinew_result res;
    if ((res = read_integer(r, 0, "a frame's time stamp")) != SINEW_OK ||
        (res = end_line(r, "a frame's time stamp")) != SINEW_OK)
        return res;
    for (uint32_t j = 0; j < animated; ++j) {
        float* axis = s->axes + (size_t)j * 3;
        if ((res = read_float(r, 0, "a rotation axis' x", &axis[0])) != SINEW_OK) return res;
        s->axis_lines[j] = r->line;
        if ((res = read_float(r, 1, "a rotation axis' y", &axis[1])) != SINEW_OK ||
            (res = read_float(r, 1, "a rotation axis' z", &axis[2])) != SINEW_OK ||
            (res = end_line(r, "a rotation axis' z")) != SINEW_OK)
            return res;
    }
    for (uint32_t j = 0; j < animated; ++j) {
        if ((res = read_float(r, j > 0, "a joint's rotation angle", &s->angles[j])) != SINEW_OK)
            return res;
    }
    if (animated > 0 && (res = end_line(r, "the rotation angles")) != SINEW_OK) return res;
    return SINEW_OK;
}

/* Frame f's keys: each animated joint turned by its angle about its axis (a zero axis only
 * with a zero angle), the others at rest; the rotation turns the joint about its own rest
 * position in its parent's frame: local(t) = T(p_j - p_parent) * R_j(t), with unit scale. */
static sinew_result store_frame(text_reader* r, const sinew_character* character, uint32_t f,
                                uint32_t animated, const anim_scratch* s, sinew_animation* anim)
{
    const uint32_t joints = anim->joint_count;
    anim->key_times[f] = TEXT_KEY_SPACING * (float)f;
    for (uint32_t j = 0; j < joints; ++j) {
        size_t e = (size_t)f * joints + j;
        float* q = anim->rotations + e * 4;
        q[0] = q[1] = q[2] = 0.0f;
        q[3] = 1.0f;
        if (j < animated) {
            const float* axis = s->axes + (size_t)j * 3;
            double length = sqrt((double)axis[0] * axis[0] + (double)axis[1] * axis[1] +
                                 (double)axis[2] * axis[2]);
            if (length < 1e-12) {
                if (s->angles[j] != 0.0f)
                    return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT,
                                       "%s:%u: joint %u turns by %g about a zero axis", r->file,
                                       (unsigned)s->axis_lines[j], (unsigned)j,
                                       (double)s->angles[j]);
            } else {
                import_quat_axis_angle(axis, s->angles[j], q);
            }
        }
        const float* rest = character->rest_local + (size_t)j * 16;
        for (int i = 0; i < 3; ++i) {
            anim->translations[e * 3 + i] = rest[12 + i];
            anim->scales[e * 3 + i] = 1.0f;
        }
    }
    return SINEW_OK;
}

static sinew_result parse_anim_body(text_reader* r, const sinew_character* character,
                                    sinew_animation* anim, anim_scratch* s)
{
    uint32_t joints = character->rig.skeleton.joint_count;
    uint32_t frames, animated;
    sinew_result res = read_anim_header(r, joints, &frames, &animated);
    if (res != SINEW_OK) return res;
    uint64_t entries = (uint64_t)frames * joints;
    anim->joint_count = joints;
    anim->key_count = frames;
    anim->key_times = (float*)import_calloc(frames, sizeof(float));
    anim->rotations = (float*)import_calloc((size_t)entries * 4, sizeof(float));
    anim->translations = (float*)import_calloc((size_t)entries * 3, sizeof(float));
    anim->scales = (float*)import_calloc((size_t)entries * 3, sizeof(float));
    if (animated > 0) {
        s->axes = (float*)import_calloc((size_t)animated * 3, sizeof(float));
        s->axis_lines = (uint32_t*)import_calloc(animated, sizeof(uint32_t));
        s->angles = (float*)import_calloc(animated, sizeof(float));
    }
    if (!anim->key_times || !anim->rotations || !anim->translations || !anim->scales ||
        (animated > 0 && (!s->axes || !s->axis_lines || !s->angles)))
        return import_fail(r->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory for %u frames",
                           r->file, (unsigned)frames);
    for (uint32_t f = 0; f < frames; ++f) {
        if ((res = read_frame(r, animated, s)) != SINEW_OK ||
            (res = store_frame(r, character, f, animated, s, anim)) != SINEW_OK)
            return res;
    }
    anim->duration = anim->key_times[frames - 1];
    return expect_end(r, "the last frame");
}

/* Parses into `anim`, which the caller has zeroed and counted as owned by the character, so
 * whatever a failure leaves there is freed with the character. */
static sinew_result parse_anim(const import_context* ctx, const char* path,
                               const sinew_character* character, sinew_animation* anim)
{
    anim->name = import_path_stem(path);
    if (!anim->name) return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    char* data;
    text_reader r;
    sinew_result res = reader_open(&r, ctx, path, &data);
    if (res != SINEW_OK) return res;
    anim_scratch s;
    memset(&s, 0, sizeof s);
    res = parse_anim_body(&r, character, anim, &s);
    free(s.axes);
    free(s.axis_lines);
    free(s.angles);
    free(data);
    return res;
}

/* ---------------------------------------------------------------------------------------- */
/* .ini characters                                                                          */
/* ---------------------------------------------------------------------------------------- */

typedef struct ini_animation {
    char* file;             /* resolved path */
    char* base;             /* resolved path prefix, NULL when the line has no base */
    uint32_t line;
} ini_animation;

typedef struct ini_contents {
    char* folder;           /* the ini's folder with a trailing separator, or "" */
    char* simmesh;
    char* vismesh;
    char* skeleton;
    uint32_t simmesh_line, vismesh_line, skeleton_line;
    ini_animation* animations;
    uint32_t animation_count;
} ini_contents;

static void ini_free(ini_contents* ini)
{
    free(ini->folder);
    free(ini->simmesh);
    free(ini->vismesh);
    free(ini->skeleton);
    for (uint32_t i = 0; i < ini->animation_count; ++i) {
        free(ini->animations[i].file);
        free(ini->animations[i].base);
    }
    free(ini->animations);
}

/* A path from the ini (checked by import_check_ini_name), relative to the ini's folder
 * unless absolute. */
static char* resolve_path(const ini_contents* ini, token t)
{
    int absolute = t.text[0] == '/';
#ifdef _WIN32
    absolute = absolute || t.text[0] == '\\' || (t.length > 1 && t.text[1] == ':');
#endif
    size_t folder = absolute ? 0 : strlen(ini->folder);
    char* path = (char*)malloc(folder + t.length + 1);
    if (!path) return NULL;
    memcpy(path, ini->folder, folder);
    memcpy(path + folder, t.text, t.length);
    path[folder + t.length] = '\0';
    return path;
}

/* `name` names the key in messages (the canonical spelling, not the file's). */
static sinew_result ini_path_value(text_reader* r, const ini_contents* ini, token key,
                                   const char* name, char** slot, uint32_t* slot_line)
{
    if (*slot)
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT,
                           "%s:%u: a second %s line (the first is on line %u)", r->file,
                           (unsigned)key.line, name, (unsigned)*slot_line);
    token value;
    sinew_result res = next_token(r, 1, "the file name", &value);
    if (res != SINEW_OK) return res;
    if ((res = end_line(r, "the file name")) != SINEW_OK) return res;
    res = import_check_ini_name(r->ctx, key.line, name, value.text, value.length);
    if (res != SINEW_OK) return res;
    *slot = resolve_path(ini, value);
    *slot_line = key.line;
    if (!*slot) return import_fail(r->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", r->file);
    return SINEW_OK;
}

static sinew_result ini_animation_value(text_reader* r, ini_contents* ini, token key)
{
    token file, base;
    sinew_result res = next_token(r, 1, "the animation file name", &file);
    if (res != SINEW_OK) return res;
    skip_blank(r, 0);
    int has_base = r->p < r->end && *r->p != '\n';
    if (has_base && (res = next_token(r, 1, "the animation base name", &base)) != SINEW_OK)
        return res;
    if ((res = end_line(r, "the animation base name")) != SINEW_OK) return res;
    res = import_check_ini_name(r->ctx, key.line, "ANIMATION", file.text, file.length);
    if (res == SINEW_OK && has_base)
        res = import_check_ini_name(r->ctx, key.line, "ANIMATION base", base.text, base.length);
    if (res != SINEW_OK) return res;

    ini_animation* grown = (ini_animation*)realloc(
        ini->animations, ((size_t)ini->animation_count + 1) * sizeof *grown);
    if (!grown) return import_fail(r->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", r->file);
    ini->animations = grown;
    ini_animation* a = &ini->animations[ini->animation_count++];
    memset(a, 0, sizeof *a);
    a->line = key.line;
    a->file = resolve_path(ini, file);
    if (has_base) a->base = resolve_path(ini, base);
    if (!a->file || (has_base && !a->base))
        return import_fail(r->ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", r->file);
    return SINEW_OK;
}

static sinew_result parse_ini_body(text_reader* r, ini_contents* ini)
{
    for (;;) {
        skip_blank(r, 1);
        if (r->p >= r->end) break;
        token key;
        sinew_result res = next_token(r, 0, "a key", &key);
        if (res != SINEW_OK) return res;
        if (token_equals_nocase(key, "SIMMESH"))
            res = ini_path_value(r, ini, key, "SIMMESH", &ini->simmesh, &ini->simmesh_line);
        else if (token_equals_nocase(key, "VISMESH"))
            res = ini_path_value(r, ini, key, "VISMESH", &ini->vismesh, &ini->vismesh_line);
        else if (token_equals_nocase(key, "SKELETON"))
            res = ini_path_value(r, ini, key, "SKELETON", &ini->skeleton, &ini->skeleton_line);
        else if (token_equals_nocase(key, "ANIMATION"))
            res = ini_animation_value(r, ini, key);
        else {
            /* Other tools add their own keys (solver settings and the like): skip them. */
            import_log(r->ctx, SINEW_LOG_WARNING, "%s:%u: unknown key ignored", r->file,
                       (unsigned)key.line);
            skip_line(r);
        }
        if (res != SINEW_OK) return res;
    }
    if (!ini->simmesh)
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT, "%s: no SIMMESH line", r->file);
    if (!ini->skeleton)
        return import_fail(r->ctx, SINEW_ERROR_FILE_FORMAT, "%s: no SKELETON line", r->file);
    return SINEW_OK;
}

/* A file named in the ini must exist: say so with the ini line that names it. */
static sinew_result check_named_file(const import_context* ctx, uint32_t line, const char* what,
                                     const char* path)
{
    struct stat st;
    if (stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
        return import_fail(ctx, SINEW_ERROR_FILE_NOT_FOUND,
                           "%s:%u: the %s file %s does not exist", ctx->path, (unsigned)line,
                           what, path);
    return SINEW_OK;
}

static int file_exists(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

static sinew_result add_animation(const import_context* ctx, sinew_character* character,
                                  const char* path)
{
    sinew_animation* grown = (sinew_animation*)realloc(
        character->animations, ((size_t)character->animation_count + 1) * sizeof *grown);
    if (!grown) return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    character->animations = grown;
    sinew_animation* anim = &character->animations[character->animation_count++];
    memset(anim, 0, sizeof *anim);
    return parse_anim(ctx, path, character, anim);
}

/* `ANIMATION file base`: base0.anim, base1.anim, ... until one is missing. `file` must exist;
 * when it is not one of that series it comes first. */
static sinew_result load_animations(const import_context* ctx, sinew_character* character,
                                    const ini_animation* a)
{
    sinew_result res = check_named_file(ctx, a->line, "ANIMATION", a->file);
    if (res != SINEW_OK) return res;
    if (!a->base) return add_animation(ctx, character, a->file);

    size_t base_length = strlen(a->base);
    char* path = (char*)malloc(base_length + 32);
    if (!path) return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->path);
    uint32_t series = 0;
    int file_in_series = 0;
    for (;; ++series) {
        snprintf(path, base_length + 32, "%s%u.anim", a->base, (unsigned)series);
        if (!file_exists(path)) break;
        if (strcmp(path, a->file) == 0) file_in_series = 1;
    }
    if (!file_in_series) res = add_animation(ctx, character, a->file);
    for (uint32_t i = 0; i < series && res == SINEW_OK; ++i) {
        snprintf(path, base_length + 32, "%s%u.anim", a->base, (unsigned)i);
        res = add_animation(ctx, character, path);
    }
    free(path);
    return res;
}

static sinew_result load_mesh(const import_context* ctx, uint32_t line, const char* key,
                              const char* path, text_mesh* mesh)
{
    sinew_result res = check_named_file(ctx, line, key, path);
    if (res != SINEW_OK) return res;
    return parse_off(ctx, path, mesh);
}

static sinew_result load_character(const import_context* ctx, sinew_character* character,
                                   const ini_contents* ini)
{
    import_storage* st = import_storage_of(character);
    sinew_result res = check_named_file(ctx, ini->skeleton_line, "SKELETON", ini->skeleton);
    if (res != SINEW_OK) return res;
    if ((res = parse_skel(ctx, ini->skeleton, character)) != SINEW_OK) return res;

    text_mesh sim, vis;
    memset(&vis, 0, sizeof vis);
    res = load_mesh(ctx, ini->simmesh_line, "SIMMESH", ini->simmesh, &sim);
    if (res != SINEW_OK) return res;
    if (ini->vismesh && !ctx->use_simulation_mesh) {
        res = load_mesh(ctx, ini->vismesh_line, "VISMESH", ini->vismesh, &vis);
        if (res != SINEW_OK) {
            text_mesh_free(&sim);
            return res;
        }
    }
    /* With a visualisation mesh the simulation mesh is the coarse one physics runs on and
     * the visualisation mesh is what is drawn (upsampled); alone it is both. */
    text_mesh* render = vis.positions ? &vis : &sim;
    sinew_mesh_desc* rm = &character->rig.render_mesh;
    rm->vertex_count = render->vertex_count;
    rm->triangle_count = render->triangle_count;
    st->positions = render->positions;
    st->indices = render->indices;
    if (vis.positions) {
        sinew_mesh_desc* sm = &character->rig.simulation_mesh;
        sm->vertex_count = sim.vertex_count;
        sm->triangle_count = sim.triangle_count;
        st->sim_positions = sim.positions;
        st->sim_indices = sim.indices;
    }

    for (uint32_t i = 0; i < ini->animation_count; ++i) {
        if ((res = load_animations(ctx, character, &ini->animations[i])) != SINEW_OK) return res;
    }
    return SINEW_OK;
}

sinew_result import_text_character(const import_context* ctx, sinew_character* character)
{
    char* data;
    size_t size;
    sinew_result res = import_read_file(ctx, ctx->path, &data, &size);
    if (res != SINEW_OK) return res;

    ini_contents ini;
    memset(&ini, 0, sizeof ini);
    const char* slash = strrchr(ctx->path, '/');
    ini.folder = import_strndup(ctx->path, slash ? (size_t)(slash - ctx->path) + 1 : 0);
    if (!ini.folder) {
        res = import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", ctx->path);
    } else {
        text_reader r;
        reader_init(&r, ctx, ctx->path, data, size);
        res = parse_ini_body(&r, &ini);
    }
    free(data);
    if (res == SINEW_OK) res = load_character(ctx, character, &ini);
    ini_free(&ini);
    return res;
}
