/* Internal: where libtiff reads and writes (TIFFClientOpenExt's procedures): bytes in memory, a FILE, or a growing
   buffer in memory; and libtiff's messages caught per handle instead of printed to stderr. */
#ifndef SHIFTWORK_TIFF_IO_H
#define SHIFTWORK_TIFF_IO_H

#include "CImageCodecs.h"

#include <tiffio.h>

typedef struct sw_tiff_io {
    /* Reading from memory: the bytes and the position. */
    const uint8_t *data;
    size_t size;
    /* Writing to memory: a growing buffer (`size` is its length, `capacity` its room). */
    uint8_t *out;
    size_t capacity;
    int writing_memory;
    uint64_t position;
    /* Reading or writing a FILE. */
    FILE *file;
    /* The first error libtiff reported on this handle (empty when none). */
    char message[256];
} sw_tiff_io;

/** Opens `io` with libtiff in `mode` ("r" or "w"); NULL with libtiff's message (or `what` failed) in io->message. */
TIFF *sw_tiff_io_open(sw_tiff_io *io, const char *mode);

#endif
