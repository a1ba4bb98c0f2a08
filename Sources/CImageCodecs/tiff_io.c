/* libtiff's input and output on memory or a FILE; see tiff_io.h. */
#include "tiff_io.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static tmsize_t sw_tiff_read(thandle_t handle, void *buffer, tmsize_t size) {
    sw_tiff_io *io = handle;
    if (size < 0) return -1;
    if (io->file != NULL) return (tmsize_t)fread(buffer, 1, (size_t)size, io->file);
    if (io->writing_memory) return 0;
    if (io->position >= io->size) return 0;
    size_t available = io->size - (size_t)io->position;
    size_t count = (size_t)size < available ? (size_t)size : available;
    memcpy(buffer, io->data + io->position, count);
    io->position += count;
    return (tmsize_t)count;
}

static tmsize_t sw_tiff_write(thandle_t handle, void *buffer, tmsize_t size) {
    sw_tiff_io *io = handle;
    if (size < 0) return -1;
    if (io->file != NULL) return (tmsize_t)fwrite(buffer, 1, (size_t)size, io->file);
    if (!io->writing_memory) return -1;
    uint64_t end = io->position + (uint64_t)size;
    if (end > SIZE_MAX / 2) return -1;
    if (end > io->capacity) {
        size_t capacity = io->capacity < 65536 ? 65536 : io->capacity;
        while (capacity < end) capacity *= 2;
        uint8_t *grown = realloc(io->out, capacity);
        if (grown == NULL) return -1;
        memset(grown + io->capacity, 0, capacity - io->capacity);
        io->out = grown;
        io->capacity = capacity;
    }
    memcpy(io->out + io->position, buffer, (size_t)size);
    io->position = end;
    if (end > io->size) io->size = (size_t)end;
    return size;
}

static toff_t sw_tiff_seek(thandle_t handle, toff_t offset, int whence) {
    sw_tiff_io *io = handle;
    if (io->file != NULL) {
        if (offset > (toff_t)INT64_MAX || fseeko(io->file, (off_t)offset, whence) != 0) return (toff_t)-1;
        off_t position = ftello(io->file);
        return position < 0 ? (toff_t)-1 : (toff_t)position;
    }
    uint64_t base = whence == SEEK_SET ? 0 : (whence == SEEK_CUR ? io->position : io->size);
    /* libtiff passes negative offsets for SEEK_CUR/SEEK_END as large unsigned values. */
    uint64_t target = base + offset;
    if (whence == SEEK_SET) target = offset;
    if (target > (uint64_t)INT64_MAX) return (toff_t)-1;
    io->position = target;
    return target;
}

static int sw_tiff_close_proc(thandle_t handle) {
    (void)handle;
    return 0;
}

static toff_t sw_tiff_size(thandle_t handle) {
    sw_tiff_io *io = handle;
    if (io->file != NULL) {
        struct stat status;
        if (fstat(fileno(io->file), &status) != 0) return 0;
        return (toff_t)status.st_size;
    }
    return io->size;
}

static int sw_tiff_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle;
    (void)base;
    (void)size;
    return 0;
}

static void sw_tiff_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle;
    (void)base;
    (void)size;
}

/* Keeps libtiff's first error of this handle (the later ones usually follow from it). */
static int sw_tiff_error(TIFF *tif, void *user, const char *module, const char *format, va_list arguments) {
    (void)tif;
    sw_tiff_io *io = user;
    if (io != NULL && io->message[0] == 0) {
        char text[200];
        vsnprintf(text, sizeof text, format, arguments);
        snprintf(io->message, sizeof io->message, "%s%s%s", module != NULL ? module : "", module != NULL ? ": " : "",
                 text);
    }
    return 1;
}

/* Warnings (unknown tags, odd but readable values) are not errors: dropped. */
static int sw_tiff_warning(TIFF *tif, void *user, const char *module, const char *format, va_list arguments) {
    (void)tif;
    (void)user;
    (void)module;
    (void)format;
    (void)arguments;
    return 1;
}

/** The largest single allocation libtiff may make for one of our handles (a strip, a tile, a tag's data): a
    header that claims more fails instead of allocating it. */
#define SW_TIFF_MAX_ALLOCATION ((tmsize_t)256 * 1024 * 1024)

TIFF *sw_tiff_io_open(sw_tiff_io *io, const char *mode) {
    io->lib = sw_tiff_library(io->message, sizeof io->message);
    if (io->lib == NULL) return NULL;
    TIFFOpenOptions *options = io->lib->TIFFOpenOptionsAlloc();
    if (options == NULL) {
        snprintf(io->message, sizeof io->message, "out of memory");
        return NULL;
    }
    io->lib->TIFFOpenOptionsSetMaxSingleMemAlloc(options, SW_TIFF_MAX_ALLOCATION);
    io->lib->TIFFOpenOptionsSetErrorHandlerExtR(options, sw_tiff_error, io);
    io->lib->TIFFOpenOptionsSetWarningHandlerExtR(options, sw_tiff_warning, io);
    /* "m": no memory mapping (our procedures have none anyway). */
    char full_mode[8];
    snprintf(full_mode, sizeof full_mode, "%sm", mode);
    TIFF *tif = io->lib->TIFFClientOpenExt("image", full_mode, io, sw_tiff_read, sw_tiff_write, sw_tiff_seek,
                                  sw_tiff_close_proc, sw_tiff_size, sw_tiff_map, sw_tiff_unmap, options);
    io->lib->TIFFOpenOptionsFree(options);
    if (tif == NULL && io->message[0] == 0) snprintf(io->message, sizeof io->message, "not a readable TIFF file");
    return tif;
}
