/* libtiff opened on first use: see tiff_library.h. */
#include "tiff_library.h"
#include "CImageCodecs.h"
#include "CLazyLibrary.h"

#include <string.h>

/* libtiff 4.x is SONAME libtiff.so.6 since 4.5 (Debian 12's libtiff6); every function used exists from 4.5 on
   (TIFFOpenOptions*), which the symbol look-up checks. */
static const sw_lazy_library sw_libtiff = {"libtiff", "libtiff6"};
static const char *const sw_tiff_sonames[] = {"libtiff.so.6", "libtiff.so"};

/* Opens libtiff from `sonames` and resolves every function into `table` (a sw_tiff_functions): an sw_lazy_opener. */
static int sw_tiff_open_library(const char *const *sonames, size_t count, void *table, void *handles[2], char *err,
                                size_t errlen) {
    sw_tiff_functions *functions = table;
    memset(functions, 0, sizeof *functions);
    void *handle = sw_lazy_open(&sw_libtiff, sonames, count, err, errlen);
    if (handle == NULL) return 0;
#define SW_RESOLVE(name) \
    functions->name = (__typeof__(functions->name))sw_lazy_symbol(&sw_libtiff, handle, #name, err, errlen); \
    if (functions->name == NULL) goto fail;
    SW_TIFF_FUNCTIONS(SW_RESOLVE)
#undef SW_RESOLVE
    handles[0] = handle;
    return 1;
fail:
    sw_lazy_close(handle);
    return 0;
}

#define SW_TIFF_SONAME_COUNT (sizeof sw_tiff_sonames / sizeof *sw_tiff_sonames)

static sw_lazy_load sw_tiff_load = SW_LAZY_LOAD_INIT;
static sw_tiff_functions sw_tiff;

const sw_tiff_functions *sw_tiff_library(char *err, size_t errlen) {
    if (sw_lazy_load_once(&sw_tiff_load, sw_tiff_open_library, sw_tiff_sonames, SW_TIFF_SONAME_COUNT, &sw_tiff)) {
        return &sw_tiff;
    }
    sw_lazy_message(err, errlen, sw_tiff_load.failure);
    return NULL;
}

int sw_tiff_probe(const char *soname, char *err, size_t errlen) {
    sw_tiff_functions table;
    return sw_lazy_probe(sw_tiff_open_library, soname, sw_tiff_sonames, SW_TIFF_SONAME_COUNT, &table, err, errlen);
}
