/* HEIF/HEIC input through libheif (HEVC by libde265, AV1 by dav1d or libaom, whichever libheif was built with);
   see CImageCodecs.h ("GIF (giflib), HEIF/HEIC"). libheif reports errors as values: nothing here jumps.

   The primary image is decoded whole (an HEVC frame, or the grid of frames an iPhone writes, has no row interface)
   into libheif's interleaved RGB(A), 8 bits, with its transformations applied, then copied into the caller's rows.
   The size is known before (the handle's, after transformations), so the caller checks its limits first.

   libheif is not linked: every call goes through the table of heif_library.h, opened by the first decode. */
#include "CImageCodecs.h"
#include "cancellation.h"
#include "heif_library.h"
#include "metadata.h"
#include "whole_image.h"

#include <stdlib.h>
#include <string.h>

struct sw_heif_decoder {
    const sw_heif_functions *libheif;
    struct heif_context *context;
    struct heif_image_handle *handle;
    uint8_t *owned; /* the file's bytes, when read from a file */
    int width, height, channels;
    uint8_t *icc;
    size_t icc_size;
    uint8_t *exif_block;      /* libheif's EXIF item (a 4-byte offset, then the TIFF structure) */
    const uint8_t *exif;      /* the TIFF structure inside it */
    size_t exif_size;
};

/* "what: libheif's message", naming the package when a codec is missing. */
static void sw_heif_error(char *err, size_t errlen, const char *what, struct heif_error error) {
    if (err == NULL || errlen == 0) return;
    if (error.code == heif_error_Unsupported_feature && error.subcode == heif_suberror_Unsupported_codec) {
        snprintf(err, errlen,
                 "%s: libheif has no decoder for this image's codec (%s); HEIC needs libheif built with libde265 "
                 "(Debian: libheif1 with libde265-0; from Debian 13, libheif-plugin-libde265), AVIF in HEIF dav1d or "
                 "libaom (libheif-plugin-dav1d)",
                 what, error.message != NULL ? error.message : "unsupported codec");
        return;
    }
    snprintf(err, errlen, "%s: %s", what, error.message != NULL ? error.message : "unknown error");
}

/* The EXIF item's TIFF structure: libheif hands out the item with its 4-byte offset to the TIFF header first. */
static void sw_heif_read_exif(sw_heif_decoder *decoder) {
    const sw_heif_functions *libheif = decoder->libheif;
    heif_item_id id = 0;
    if (libheif->heif_image_handle_get_list_of_metadata_block_IDs(decoder->handle, "Exif", &id, 1) < 1) return;
    size_t size = libheif->heif_image_handle_get_metadata_size(decoder->handle, id);
    if (size < 8 || size > 64u * 1024 * 1024) return;
    decoder->exif_block = malloc(size);
    if (decoder->exif_block == NULL) return;
    struct heif_error error = libheif->heif_image_handle_get_metadata(decoder->handle, id, decoder->exif_block);
    if (error.code != heif_error_Ok) return;
    const uint8_t *exif = decoder->exif_block;
    for (size_t skip = 0; skip + 4 <= size && skip <= 16; skip++) {
        if ((exif[skip] == 'I' && exif[skip + 1] == 'I' && exif[skip + 2] == 42 && exif[skip + 3] == 0) ||
            (exif[skip] == 'M' && exif[skip + 1] == 'M' && exif[skip + 2] == 0 && exif[skip + 3] == 42)) {
            decoder->exif = exif + skip;
            decoder->exif_size = size - skip;
            return;
        }
    }
}

/* Opens the `size` bytes at `data`; `owned` (the same bytes, read from a file, or NULL) is the decoder's from here on:
   freed with it, or at once when it cannot be opened. */
static sw_heif_decoder *sw_heif_open_bytes(const uint8_t *data, size_t size, uint8_t *owned, sw_image_info *info,
                                           char *err, size_t errlen) {
    sw_heif_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        free(owned);
        sw_whole_message(err, errlen, "out of memory");
        return NULL;
    }
    decoder->owned = owned;
    const sw_heif_functions *libheif = sw_heif_library(err, errlen);
    if (libheif == NULL) {
        sw_heif_close(decoder);
        return NULL;
    }
    decoder->libheif = libheif;
    decoder->context = libheif->heif_context_alloc();
    if (decoder->context == NULL) {
        sw_whole_message(err, errlen, "out of memory for the HEIF decoder");
        sw_heif_close(decoder);
        return NULL;
    }
    struct heif_error error = libheif->heif_context_read_from_memory_without_copy(decoder->context, data, size, NULL);
    if (error.code == heif_error_Ok) {
        error = libheif->heif_context_get_primary_image_handle(decoder->context, &decoder->handle);
    }
    if (error.code != heif_error_Ok) {
        sw_heif_error(err, errlen, "not a readable HEIF image", error);
        sw_heif_close(decoder);
        return NULL;
    }
    decoder->width = libheif->heif_image_handle_get_width(decoder->handle);
    decoder->height = libheif->heif_image_handle_get_height(decoder->handle);
    if (decoder->width <= 0 || decoder->height <= 0) {
        sw_whole_message(err, errlen, "the HEIF image's width or height is 0");
        sw_heif_close(decoder);
        return NULL;
    }
    decoder->channels = libheif->heif_image_handle_has_alpha_channel(decoder->handle) ? 4 : 3;
    size_t icc_size = libheif->heif_image_handle_get_raw_color_profile_size(decoder->handle);
    if (icc_size > 0 && icc_size <= 16u * 1024 * 1024) {
        decoder->icc = malloc(icc_size);
        if (decoder->icc != NULL &&
            libheif->heif_image_handle_get_raw_color_profile(decoder->handle, decoder->icc).code == heif_error_Ok) {
            decoder->icc_size = icc_size;
        }
    }
    sw_heif_read_exif(decoder);
    int images = libheif->heif_context_get_number_of_top_level_images(decoder->context);
    memset(info, 0, sizeof *info);
    info->width = decoder->width;
    info->height = decoder->height;
    info->channels = decoder->channels;
    info->orientation = 1; /* libheif applies irot/imir; EXIF's orientation describes the same turn */
    info->source_bit_depth = libheif->heif_image_handle_get_luma_bits_per_pixel(decoder->handle);
    info->more_frames = images > 1 ? images - 1 : 0;
    return decoder;
}

sw_heif_decoder *sw_heif_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    return sw_heif_open_bytes(data, size, NULL, info, err, errlen);
}

sw_heif_decoder *sw_heif_open_file(FILE *file, size_t max_bytes, sw_image_info *info, char *err, size_t errlen) {
    size_t size = 0;
    uint8_t *bytes = sw_whole_read_file(file, max_bytes, &size, err, errlen);
    return bytes != NULL ? sw_heif_open_bytes(bytes, size, bytes, info, err, errlen) : NULL;
}

int sw_heif_read(sw_heif_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                 size_t errlen) {
    if (sw_should_stop_now(cancel)) return SW_CODEC_CANCELLED;
    const sw_heif_functions *libheif = decoder->libheif;
    struct heif_decoding_options *options = libheif->heif_decoding_options_alloc();
    if (options != NULL) options->convert_hdr_to_8bit = 1;
    struct heif_image *image = NULL;
    struct heif_error error =
        libheif->heif_decode_image(decoder->handle, &image, heif_colorspace_RGB,
                                   decoder->channels == 4 ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options);
    if (options != NULL) libheif->heif_decoding_options_free(options);
    if (error.code != heif_error_Ok || image == NULL) {
        sw_heif_error(err, errlen, "cannot decode the HEIF image", error);
        if (image != NULL) libheif->heif_image_release(image);
        return SW_CODEC_ERROR;
    }
    int source_stride = 0;
    const uint8_t *plane = libheif->heif_image_get_plane_readonly(image, heif_channel_interleaved, &source_stride);
    const size_t row_bytes = (size_t)decoder->width * (size_t)decoder->channels;
    /* The header's size (ispe) may lie about the coded frames: the decoded picture must be what was announced. */
    const int decoded_width = libheif->heif_image_get_width(image, heif_channel_interleaved);
    const int decoded_height = libheif->heif_image_get_height(image, heif_channel_interleaved);
    if (decoded_width != decoder->width || decoded_height != decoder->height) {
        char message[200];
        snprintf(message, sizeof message, "cannot decode the HEIF image: its header says %d×%d but it decodes to %d×%d",
                 decoder->width, decoder->height, decoded_width, decoded_height);
        sw_whole_message(err, errlen, message);
        libheif->heif_image_release(image);
        return SW_CODEC_ERROR;
    }
    if (plane == NULL || source_stride < 0 || (size_t)source_stride < row_bytes) {
        sw_whole_message(err, errlen, "cannot decode the HEIF image: libheif returned no RGB plane of the expected size");
        libheif->heif_image_release(image);
        return SW_CODEC_ERROR;
    }
    for (int y = 0; y < decoder->height; y++) {
        memcpy(pixels + (size_t)y * stride, plane + (size_t)y * (size_t)source_stride, row_bytes);
    }
    libheif->heif_image_release(image);
    return SW_CODEC_OK;
}

void sw_heif_metadata(const sw_heif_decoder *decoder, sw_image_metadata *metadata) {
    sw_metadata_view(metadata, decoder->icc, decoder->icc_size, decoder->exif, decoder->exif_size, NULL, 0);
}

void sw_heif_close(sw_heif_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->handle != NULL) decoder->libheif->heif_image_handle_release(decoder->handle);
    if (decoder->context != NULL) decoder->libheif->heif_context_free(decoder->context);
    free(decoder->owned);
    free(decoder->icc);
    free(decoder->exif_block);
    free(decoder);
}
