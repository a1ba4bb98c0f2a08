/* libheif opened on first use: see heif_library.h. */
#include "heif_library.h"
#include "CImageCodecs.h"
#include "CLazyLibrary.h"

#include <stdio.h>
#include <string.h>

/* libheif 1.x keeps its ABI (SONAME libheif.so.1) and only adds functions: a library of the headers' major and at
   least their minor has every function heif.c calls. Debian's package of it is libheif1. */
#define SW_HEIF_SONAME "libheif.so.1"
#define SW_HEIF_PACKAGE "libheif1"

static const sw_lazy_library sw_libheif = {"libheif", SW_HEIF_PACKAGE};
static const char *const sw_heif_sonames[] = {SW_HEIF_SONAME, "libheif.so"};

/* Opens libheif from `sonames`, resolves every function into `table` (a sw_heif_functions) and checks the version:
   an sw_lazy_opener. */
static int sw_heif_open_library(const char *const *sonames, size_t count, void *table, void *handles[2], char *err,
                                size_t errlen) {
    sw_heif_functions *functions = table;
    memset(functions, 0, sizeof *functions);
    void *handle = sw_lazy_open(&sw_libheif, sonames, count, err, errlen);
    if (handle == NULL) return 0;
#define SW_RESOLVE(name) \
    functions->name = (__typeof__(functions->name))sw_lazy_symbol(&sw_libheif, handle, #name, err, errlen); \
    if (functions->name == NULL) goto fail;
    SW_HEIF_FUNCTIONS(SW_RESOLVE)
#undef SW_RESOLVE
    int major = functions->heif_get_version_number_major(), minor = functions->heif_get_version_number_minor();
    if (major != (int)(LIBHEIF_NUMERIC_VERSION >> 24) || minor < (int)((LIBHEIF_NUMERIC_VERSION >> 16) & 0xFF)) {
        char message[512];
        snprintf(message, sizeof message,
                 "libheif %s was loaded but Shiftwork was built with libheif %s's headers; install Debian's %s package "
                 "(libheif 1.%d or newer)",
                 functions->heif_get_version(), LIBHEIF_VERSION, SW_HEIF_PACKAGE, (int)((LIBHEIF_NUMERIC_VERSION >> 16) & 0xFF));
        sw_lazy_message(err, errlen, message);
        goto fail;
    }
    handles[0] = handle;
    return 1;
fail:
    sw_lazy_close(handle);
    return 0;
}

#define SW_HEIF_SONAME_COUNT (sizeof sw_heif_sonames / sizeof *sw_heif_sonames)

static sw_lazy_load sw_heif_load = SW_LAZY_LOAD_INIT;
static sw_heif_functions sw_heif;

const sw_heif_functions *sw_heif_library(char *err, size_t errlen) {
    if (sw_lazy_load_once(&sw_heif_load, sw_heif_open_library, sw_heif_sonames, SW_HEIF_SONAME_COUNT, &sw_heif)) {
        return &sw_heif;
    }
    sw_lazy_message(err, errlen, sw_heif_load.failure);
    return NULL;
}

int sw_heif_probe(const char *soname, char *err, size_t errlen) {
    sw_heif_functions table;
    return sw_lazy_probe(sw_heif_open_library, soname, sw_heif_sonames, SW_HEIF_SONAME_COUNT, &table, err, errlen);
}
