#ifndef SW_TIFF_LIBRARY_H
#define SW_TIFF_LIBRARY_H
/* libtiff, opened on the first TIFF decode or encode (tiff_library.c) instead of at every process start: Debian 12's
   libtiff6 brings libzstd, liblzma, libLerc, libjbig and libdeflate, which cost every `shiftwork` command about
   0.9 ms of CPU to map and bind (docs/benchmarks.md). tiff.c and tiff_io.c call libtiff only through this table,
   whose fields are typed from <tiffio.h> (TIFFGetField and TIFFSetField are variadic: called through their typed
   pointers as they would be directly). */
#include <stddef.h>

#include <tiffio.h>

/* Every libtiff function tiff.c and tiff_io.c call. */
#define SW_TIFF_FUNCTIONS(X) \
    X(TIFFGetVersion) \
    X(TIFFOpenOptionsAlloc) \
    X(TIFFOpenOptionsFree) \
    X(TIFFOpenOptionsSetMaxSingleMemAlloc) \
    X(TIFFOpenOptionsSetErrorHandlerExtR) \
    X(TIFFOpenOptionsSetWarningHandlerExtR) \
    X(TIFFClientOpenExt) \
    X(TIFFClose) \
    X(TIFFCleanup) \
    X(TIFFGetField) \
    X(TIFFGetFieldDefaulted) \
    X(TIFFSetField) \
    X(TIFFIsCODECConfigured) \
    X(TIFFFindCODEC) \
    X(TIFFIsTiled) \
    X(TIFFNumberOfDirectories) \
    X(TIFFScanlineSize64) \
    X(TIFFTileSize64) \
    X(TIFFReadScanline) \
    X(TIFFReadTile) \
    X(TIFFWriteScanline) \
    X(TIFFRGBAImageOK) \
    X(TIFFRGBAImageBegin) \
    X(TIFFRGBAImageGet) \
    X(TIFFRGBAImageEnd)

#define SW_TIFF_FUNCTION_FIELD(name) __typeof__(name) *name;

typedef struct {
    SW_TIFF_FUNCTIONS(SW_TIFF_FUNCTION_FIELD)
} sw_tiff_functions;

/* libtiff's functions, loading the library the first time; NULL with a message in `err` (naming libtiff and the
   package to install) when it cannot be loaded or lacks a function (libtiff before 4.5 has no TIFFOpenOptions). */
const sw_tiff_functions *sw_tiff_library(char *err, size_t errlen);

#endif
