/* libtiff opened on first use: see tiff_library.h. */
#include "tiff_library.h"
#include "CImageCodecs.h"
#include "CLazyLibrary.h"

/* libtiff 4.x is SONAME libtiff.so.6 since 4.5 (Debian 12's libtiff6); every function used exists from 4.5 on
   (TIFFOpenOptions*), which the symbol look-up checks. */
static const sw_lazy_library sw_libtiff = {"libtiff", "libtiff6"};
static const char *const sw_tiff_sonames[] = {"libtiff.so.6", "libtiff.so"};

#define SW_TIFF_FUNCTION(name) SW_LAZY_FUNCTION(sw_tiff_functions, name)
static const sw_lazy_function sw_tiff_function_list[] = {SW_TIFF_FUNCTIONS(SW_TIFF_FUNCTION)};

/* Opens libtiff from `sonames` into `table` (a sw_tiff_functions): an sw_lazy_opener. */
static int sw_tiff_open_library(const char *const *sonames, size_t count, void *table, void *handles[2], char *err,
                                size_t errlen) {
    handles[0] = sw_lazy_open_functions(&sw_libtiff, sonames, count, sw_tiff_function_list,
                                        SW_LAZY_COUNT(sw_tiff_function_list), table, NULL, err, errlen);
    return handles[0] != NULL;
}

static sw_lazy_load sw_tiff_load = SW_LAZY_LOAD_INIT;
static sw_tiff_functions sw_tiff;

const sw_tiff_functions *sw_tiff_library(char *err, size_t errlen) {
    return sw_lazy_load_once(&sw_tiff_load, sw_tiff_open_library, sw_tiff_sonames, SW_LAZY_COUNT(sw_tiff_sonames),
                             &sw_tiff, err, errlen);
}

int sw_tiff_probe(const char *soname, char *err, size_t errlen) {
    sw_tiff_functions table;
    return sw_lazy_probe(sw_tiff_open_library, soname, sw_tiff_sonames, SW_LAZY_COUNT(sw_tiff_sonames), &table, err,
                         errlen);
}
