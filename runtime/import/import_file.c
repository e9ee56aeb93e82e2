/* The files the importers read: regular files only, opened without blocking, of bounded
 * size; and the file names an .ini may use.
 * SPDX-License-Identifier: MIT
 *
 * A name in an .ini could otherwise point anywhere: a FIFO that blocks the import forever, a
 * device that never ends (/dev/zero fills memory up to the size bound), or any readable file
 * of the machine. So a file is checked with stat before it is opened (nothing is opened that
 * is not a regular file), opened with O_NONBLOCK and checked again with fstat on the same
 * descriptor (nothing can be swapped in between), and .ini names stay inside the .ini's
 * folder unless the caller sets SINEW_IMPORT_ALLOW_ANY_PATH. */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_internal.h"

/* Files larger than this are refused before reading: no test character comes near it, and
 * the bound keeps a wrong path (a disk image) from exhausting memory. */
#define IMPORT_MAX_FILE_SIZE ((size_t)1 << 30)

static sinew_result open_error(const import_context* ctx, const char* path, int error)
{
    if (error == ENOENT || error == ENOTDIR)
        return import_fail(ctx, SINEW_ERROR_FILE_NOT_FOUND, "%s: file not found", path);
    return import_fail(ctx, SINEW_ERROR_FILE_READ, "%s: cannot open: %s", path,
                       strerror(error));
}

static const char* file_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a plain file";
}

static sinew_result not_regular(const import_context* ctx, const char* path, mode_t mode)
{
    return import_fail(ctx, SINEW_ERROR_FILE_READ, "%s: is %s, not a regular file", path,
                       file_kind(mode));
}

/* A descriptor open for reading on `path`, which must be a regular file; *size is its size. */
static sinew_result open_regular(const import_context* ctx, const char* path, int* out_fd,
                                 size_t* size)
{
    struct stat st;
    if (stat(path, &st) != 0) return open_error(ctx, path, errno);
    if (!S_ISREG(st.st_mode)) return not_regular(ctx, path, st.st_mode);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return open_error(ctx, path, errno);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int error = errno;
        close(fd);
        return S_ISREG(st.st_mode) ? open_error(ctx, path, error)
                                   : not_regular(ctx, path, st.st_mode);
    }
    *out_fd = fd;
    *size = (size_t)st.st_size;
    return SINEW_OK;
}

sinew_result import_check_readable(const import_context* ctx, const char* path)
{
    int fd = -1;
    size_t size = 0;
    sinew_result r = open_regular(ctx, path, &fd, &size);
    if (r == SINEW_OK) close(fd);
    return r;
}

/* Reads fd to its end into a buffer grown as needed: a file that grows while being read
 * still comes out whole, up to the size bound. */
static sinew_result read_all(const import_context* ctx, const char* path, int fd,
                             size_t expected, char** out_data, size_t* out_size)
{
    size_t capacity = expected + 1, size = 0;
    char* data = (char*)malloc(capacity + 1);
    if (!data) return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    for (;;) {
        if (size == capacity) {
            size_t grown = capacity * 2 < IMPORT_MAX_FILE_SIZE ? capacity * 2 : IMPORT_MAX_FILE_SIZE;
            char* bigger = grown > capacity ? (char*)realloc(data, grown + 1) : NULL;
            if (!bigger) {
                free(data);
                if (grown <= capacity)
                    return import_fail(ctx, SINEW_ERROR_LIMIT, "%s: larger than %zu bytes",
                                       path, IMPORT_MAX_FILE_SIZE);
                return import_fail(ctx, SINEW_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
            }
            data = bigger;
            capacity = grown;
        }
        ssize_t n = read(fd, data + size, capacity - size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int error = errno;
            free(data);
            return import_fail(ctx, SINEW_ERROR_FILE_READ, "%s: read error: %s", path,
                               strerror(error));
        }
        if (n == 0) break;
        size += (size_t)n;
    }
    data[size] = '\0';
    *out_data = data;
    *out_size = size;
    return SINEW_OK;
}

sinew_result import_read_file(const import_context* ctx, const char* path, char** out_data,
                              size_t* out_size)
{
    *out_data = NULL;
    *out_size = 0;
    int fd = -1;
    size_t size = 0;
    sinew_result r = open_regular(ctx, path, &fd, &size);
    if (r != SINEW_OK) return r;
    if (size > IMPORT_MAX_FILE_SIZE) {
        close(fd);
        return import_fail(ctx, SINEW_ERROR_LIMIT, "%s: larger than %zu bytes", path,
                           IMPORT_MAX_FILE_SIZE);
    }
    r = read_all(ctx, path, fd, size, out_data, out_size);
    close(fd);
    return r;
}

static int is_separator(char c)
{
#ifdef _WIN32
    if (c == '\\') return 1;
#endif
    return c == '/';
}

sinew_result import_check_ini_name(const import_context* ctx, uint32_t line, const char* key,
                                   const char* name, size_t length)
{
    for (size_t i = 0; i < length; ++i) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f)
            return import_fail(ctx, SINEW_ERROR_FILE_FORMAT,
                               "%s:%u: the %s file name holds control characters", ctx->path,
                               (unsigned)line, key);
    }
    if (ctx->flags & SINEW_IMPORT_ALLOW_ANY_PATH) return SINEW_OK;
    int absolute = length > 0 && is_separator(name[0]);
#ifdef _WIN32
    absolute = absolute || (length > 1 && name[1] == ':');
#endif
    if (absolute)
        return import_fail(ctx, SINEW_ERROR_FILE_PATH,
                           "%s:%u: the %s file name is absolute; an .ini may name files in its "
                           "own folder only (SINEW_IMPORT_ALLOW_ANY_PATH allows others)",
                           ctx->path, (unsigned)line, key);
    for (size_t begin = 0; begin < length;) {
        size_t end = begin;
        while (end < length && !is_separator(name[end])) ++end;
        if (end - begin == 2 && name[begin] == '.' && name[begin + 1] == '.')
            return import_fail(ctx, SINEW_ERROR_FILE_PATH,
                               "%s:%u: the %s file name goes up a folder (..); an .ini may name "
                               "files in its own folder only (SINEW_IMPORT_ALLOW_ANY_PATH "
                               "allows others)", ctx->path, (unsigned)line, key);
        begin = end + 1;
    }
    return SINEW_OK;
}
