/* Internal: where libtiff reads and writes (TIFFClientOpenExt's procedures): bytes in memory, a FILE, or a growing
   buffer in memory; and libtiff's messages caught per handle instead of printed to stderr. */
#ifndef SHIFTWORK_TIFF_IO_H
#define SHIFTWORK_TIFF_IO_H

#include "CImageCodecs.h"
#include "tiff_library.h"

#include <tiffio.h>

typedef struct sw_tiff_io {
    /* libtiff's functions (opened on first use: tiff_library.h); set by sw_tiff_io_open. */
    const sw_tiff_functions *lib;
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

/** Opens `io` with libtiff in `mode` ("r" or "w"), loading libtiff the first time; NULL with the loader's or
    libtiff's message in io->message. */
TIFF *sw_tiff_io_open(sw_tiff_io *io, const char *mode);

#endif
