/* libavif opened on first use: see avif_library.h. */
#include "avif_library.h"
#include "CImageCodecs.h"
#include "CLazyLibrary.h"

#include <stdio.h>

/* The SONAME and Debian package of the libavif whose headers this was compiled against (libavif's SONAME is
   its ABI: 0.11 is libavif.so.15, 1.0 to 1.3 are libavif.so.16), then the development package's plain name. */
#if AVIF_VERSION_MAJOR == 0 && AVIF_VERSION_MINOR == 11
#define SW_AVIF_SONAME "libavif.so.15"
#define SW_AVIF_PACKAGE "libavif15"
#elif AVIF_VERSION_MAJOR == 1
#define SW_AVIF_SONAME "libavif.so.16"
#define SW_AVIF_PACKAGE "libavif16"
#else
#define SW_AVIF_SONAME "libavif.so"
#define SW_AVIF_PACKAGE "libavif-dev"
#endif

static const sw_lazy_library sw_libavif = {"libavif", SW_AVIF_PACKAGE};
static const char *const sw_avif_sonames[] = {SW_AVIF_SONAME, "libavif.so"};

/* 1 when the loaded library's version (avifVersion(), "major.minor.patch") can stand for the headers': the same
   major and minor before 1.0 (every 0.x minor changed the ABI), the same major and at least the minor from 1.0
   (fields are only appended; avif.c sets the encoder's and the images' fields directly). */
static int sw_avif_version_matches(const char *version) {
    int major = -1, minor = -1;
    if (version == NULL || sscanf(version, "%d.%d", &major, &minor) != 2) return 0;
    if (major != AVIF_VERSION_MAJOR) return 0;
    return major == 0 ? minor == AVIF_VERSION_MINOR : minor >= AVIF_VERSION_MINOR;
}

/* The loaded libavif's version against the headers': an sw_lazy_check. */
static int sw_avif_check_version(const void *table, char *err, size_t errlen) {
    const char *version = ((const sw_avif_functions *)table)->avifVersion();
    if (sw_avif_version_matches(version)) return 1;
    char message[512];
    snprintf(message, sizeof message,
             "libavif %s was loaded but Shiftwork was built with libavif %d.%d.%d's headers; install Debian's %s "
             "package (the libavif of the headers)",
             version != NULL ? version : "(unknown version)", AVIF_VERSION_MAJOR, AVIF_VERSION_MINOR,
             AVIF_VERSION_PATCH, SW_AVIF_PACKAGE);
    sw_lazy_message(err, errlen, message);
    return 0;
}

#define SW_AVIF_FUNCTION(name) SW_LAZY_FUNCTION(sw_avif_functions, name)
static const sw_lazy_function sw_avif_function_list[] = {SW_AVIF_FUNCTIONS(SW_AVIF_FUNCTION)};

/* Opens libavif from `sonames` into `table` (a sw_avif_functions) and checks its version: an sw_lazy_opener. */
static int sw_avif_open_library(const char *const *sonames, size_t count, void *table, void *handles[2], char *err,
                                size_t errlen) {
    handles[0] = sw_lazy_open_functions(&sw_libavif, sonames, count, sw_avif_function_list,
                                        SW_LAZY_COUNT(sw_avif_function_list), table, sw_avif_check_version, err,
                                        errlen);
    return handles[0] != NULL;
}

static sw_lazy_load sw_avif_load = SW_LAZY_LOAD_INIT;
static sw_avif_functions sw_avif;

const sw_avif_functions *sw_avif_library(char *err, size_t errlen) {
    return sw_lazy_load_once(&sw_avif_load, sw_avif_open_library, sw_avif_sonames, SW_LAZY_COUNT(sw_avif_sonames),
                             &sw_avif, err, errlen);
}

int sw_avif_probe(const char *soname, char *err, size_t errlen) {
    sw_avif_functions table;
    return sw_lazy_probe(sw_avif_open_library, soname, sw_avif_sonames, SW_LAZY_COUNT(sw_avif_sonames), &table, err,
                         errlen);
}
