#ifndef SW_HEIF_LIBRARY_H
#define SW_HEIF_LIBRARY_H
/* libheif, opened on the first HEIF/HEIC decode (heif_library.c) instead of at every process start: Debian 12's
   libheif1 links its codecs (libde265 and x265 for HEVC, libaom and dav1d for AV1) and libstdc++, a dozen shared
   objects that every `shiftwork` command would otherwise map. heif.c calls libheif only through this table, whose
   fields are typed from <libheif/heif.h>. */
#include <stddef.h>

#include <libheif/heif.h>

/* Every libheif function heif.c calls. */
#define SW_HEIF_FUNCTIONS(X) \
    X(heif_get_version) \
    X(heif_get_version_number_major) \
    X(heif_get_version_number_minor) \
    X(heif_context_alloc) \
    X(heif_context_free) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_get_number_of_top_level_images) \
    X(heif_context_get_primary_image_handle) \
    X(heif_image_handle_release) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_has_alpha_channel) \
    X(heif_image_handle_get_luma_bits_per_pixel) \
    X(heif_image_handle_get_raw_color_profile_size) \
    X(heif_image_handle_get_raw_color_profile) \
    X(heif_image_handle_get_list_of_metadata_block_IDs) \
    X(heif_image_handle_get_metadata_size) \
    X(heif_image_handle_get_metadata) \
    X(heif_decoding_options_alloc) \
    X(heif_decoding_options_free) \
    X(heif_decode_image) \
    X(heif_image_get_width) \
    X(heif_image_get_height) \
    X(heif_image_get_plane_readonly) \
    X(heif_image_release)

#define SW_HEIF_FUNCTION_FIELD(name) __typeof__(name) *name;

typedef struct {
    SW_HEIF_FUNCTIONS(SW_HEIF_FUNCTION_FIELD)
} sw_heif_functions;

/* libheif's functions, loading the library the first time; NULL with a message in `err` (naming libheif and the
   package to install) when it cannot be loaded or is older than the headers Shiftwork was built with. */
const sw_heif_functions *sw_heif_library(char *err, size_t errlen);

#endif
