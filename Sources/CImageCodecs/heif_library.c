/* libheif opened on first use: see heif_library.h. */
#include "heif_library.h"
#include "CImageCodecs.h"
#include "CLazyLibrary.h"

#include <stdio.h>

/* libheif 1.x keeps its ABI (SONAME libheif.so.1) and only adds functions: a library of the headers' major and at
   least their minor has every function heif.c calls. Debian's package of it is libheif1. */
#define SW_HEIF_SONAME "libheif.so.1"
#define SW_HEIF_PACKAGE "libheif1"

static const sw_lazy_library sw_libheif = {"libheif", SW_HEIF_PACKAGE};
static const char *const sw_heif_sonames[] = {SW_HEIF_SONAME, "libheif.so"};

/* The loaded libheif's version against the headers' (the same major, at least their minor): an sw_lazy_check. */
static int sw_heif_check_version(const void *table, char *err, size_t errlen) {
    const sw_heif_functions *functions = table;
    int major = functions->heif_get_version_number_major(), minor = functions->heif_get_version_number_minor();
    if (major == (int)(LIBHEIF_NUMERIC_VERSION >> 24) && minor >= (int)((LIBHEIF_NUMERIC_VERSION >> 16) & 0xFF)) {
        return 1;
    }
    char message[512];
    snprintf(message, sizeof message,
             "libheif %s was loaded but Shiftwork was built with libheif %s's headers; install Debian's %s package "
             "(libheif 1.%d or newer)",
             functions->heif_get_version(), LIBHEIF_VERSION, SW_HEIF_PACKAGE,
             (int)((LIBHEIF_NUMERIC_VERSION >> 16) & 0xFF));
    sw_lazy_message(err, errlen, message);
    return 0;
}

#define SW_HEIF_FUNCTION(name) SW_LAZY_FUNCTION(sw_heif_functions, name)
static const sw_lazy_function sw_heif_function_list[] = {SW_HEIF_FUNCTIONS(SW_HEIF_FUNCTION)};

/* Opens libheif from `sonames` into `table` (a sw_heif_functions) and checks its version: an sw_lazy_opener. */
static int sw_heif_open_library(const char *const *sonames, size_t count, void *table, void *handles[2], char *err,
                                size_t errlen) {
    handles[0] = sw_lazy_open_functions(&sw_libheif, sonames, count, sw_heif_function_list,
                                        SW_LAZY_COUNT(sw_heif_function_list), table, sw_heif_check_version, err,
                                        errlen);
    return handles[0] != NULL;
}

static sw_lazy_load sw_heif_load = SW_LAZY_LOAD_INIT;
static sw_heif_functions sw_heif;

const sw_heif_functions *sw_heif_library(char *err, size_t errlen) {
    return sw_lazy_load_once(&sw_heif_load, sw_heif_open_library, sw_heif_sonames, SW_LAZY_COUNT(sw_heif_sonames),
                             &sw_heif, err, errlen);
}

int sw_heif_probe(const char *soname, char *err, size_t errlen) {
    sw_heif_functions table;
    return sw_lazy_probe(sw_heif_open_library, soname, sw_heif_sonames, SW_LAZY_COUNT(sw_heif_sonames), &table, err,
                         errlen);
}
