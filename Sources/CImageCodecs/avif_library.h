#ifndef SW_AVIF_LIBRARY_H
#define SW_AVIF_LIBRARY_H
/* libavif, opened on the first AVIF decode or encode (avif_library.c) instead of at every process start: its
   dependency tree (dav1d, libgav1, rav1e, SVT-AV1, libaom, libyuv, abseil) cost every `shiftwork` command about
   2.65 ms. avif.c calls libavif only through this table, whose fields are typed from <avif/avif.h>. */
#include <stddef.h>

#include <avif/avif.h>

/* Every libavif function avif.c calls. */
#define SW_AVIF_FUNCTIONS(X) \
    X(avifVersion) \
    X(avifResultToString) \
    X(avifDecoderCreate) \
    X(avifDecoderDestroy) \
    X(avifDecoderSetIOMemory) \
    X(avifDecoderParse) \
    X(avifDecoderNextImage) \
    X(avifImageCreate) \
    X(avifImageDestroy) \
    X(avifImageSetProfileICC) \
    X(avifImageSetMetadataExif) \
    X(avifImageSetMetadataXMP) \
    X(avifImageRGBToYUV) \
    X(avifImageYUVToRGB) \
    X(avifRGBImageSetDefaults) \
    X(avifEncoderCreate) \
    X(avifEncoderDestroy) \
    X(avifEncoderWrite) \
    X(avifRWDataFree)

#define SW_AVIF_FUNCTION_FIELD(name) __typeof__(name) *name;

typedef struct {
    SW_AVIF_FUNCTIONS(SW_AVIF_FUNCTION_FIELD)
} sw_avif_functions;

/* libavif's functions, loading the library the first time; NULL with a message in `err` (naming libavif and the
   package to install) when it cannot be loaded or is not the version of the headers Shiftwork was built with. */
const sw_avif_functions *sw_avif_library(char *err, size_t errlen);

#endif
