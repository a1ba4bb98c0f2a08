/* AVIF decode/encode through libavif (AV1 by libaom, or whichever codec libavif was built with). libavif reports
   errors by result codes: nothing here jumps.

   Both directions work on whole pictures: an AV1 frame is decoded and encoded as one (libavif has no row
   interface), so the encoder collects the rows first (sw_whole_image), converts them to Y'CbCr 4:2:0, frees
   them and encodes; the decoder converts the decoded frame into the caller's pixels. The caller is asked whether
   to stop before each long step; the AV1 encode itself cannot be interrupted.

   libavif is not linked: every call goes through the table of avif_library.h, opened by the first decode or
   encode (sw_avif_open_bytes, sw_avif_encoder_open); what cannot open it fails with the loader's message. */
#include "CImageCodecs.h"
#include "cancellation.h"
#include "avif_library.h"
#include "metadata.h"
#include "whole_image.h"

#include <stdlib.h>
#include <string.h>

/** libaom's speed (0 slowest … 10 fastest). 8: about the cost of a good JPEG encode times ten, not a hundred;
    see docs/benchmarks.md for the figures. */
#define SW_AVIF_SPEED 8

struct sw_avif_decoder {
    const sw_avif_functions *libavif;
    avifDecoder *decoder;
    uint8_t *owned;          /* the file's bytes, when read from a file */
    int channels;
    const uint8_t *exif;     /* the TIFF structure inside the decoder's EXIF payload */
    size_t exif_size;
};

static void sw_avif_error(const sw_avif_functions *libavif, char *err, size_t errlen, const char *what,
                          avifResult result) {
    char message[200];
    snprintf(message, sizeof message, "%s: %s", what, libavif->avifResultToString(result));
    sw_whole_message(err, errlen, message);
}

/* Opens the `size` bytes at `data`; `owned` (the same bytes, read from a file, or NULL) is the decoder's from here on:
   freed with it, or at once when it cannot be opened. */
static sw_avif_decoder *sw_avif_open_bytes(const uint8_t *data, size_t size, uint8_t *owned, sw_image_info *info,
                                           char *err, size_t errlen) {
    sw_avif_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        free(owned);
        sw_whole_message(err, errlen, "out of memory");
        return NULL;
    }
    decoder->owned = owned;
    const sw_avif_functions *libavif = sw_avif_library(err, errlen);
    if (libavif == NULL) {
        sw_avif_close(decoder);
        return NULL;
    }
    decoder->libavif = libavif;
    decoder->decoder = libavif->avifDecoderCreate();
    if (decoder->decoder == NULL) {
        sw_whole_message(err, errlen, "out of memory for the AVIF decoder");
        sw_avif_close(decoder);
        return NULL;
    }
    decoder->decoder->maxThreads = 1;
    avifResult result = libavif->avifDecoderSetIOMemory(decoder->decoder, data, size);
    if (result == AVIF_RESULT_OK) result = libavif->avifDecoderParse(decoder->decoder);
    if (result != AVIF_RESULT_OK) {
        sw_avif_error(libavif, err, errlen, "not a readable AVIF image", result);
        sw_avif_close(decoder);
        return NULL;
    }
    if (decoder->decoder->imageCount > 1) {
        sw_whole_message(err, errlen, "animated AVIF images are not supported (only still images)");
        sw_avif_close(decoder);
        return NULL;
    }
    const avifImage *image = decoder->decoder->image;
    decoder->channels = decoder->decoder->alphaPresent ? 4 : 3;
    /* The EXIF payload may begin with the offset of its TIFF header: keep the TIFF structure only. */
    const uint8_t *exif = image->exif.data;
    size_t exif_size = image->exif.size;
    for (size_t skip = 0; exif != NULL && skip + 4 <= exif_size && skip <= 8; skip++) {
        if ((exif[skip] == 'I' && exif[skip + 1] == 'I' && exif[skip + 2] == 42 && exif[skip + 3] == 0) ||
            (exif[skip] == 'M' && exif[skip + 1] == 'M' && exif[skip + 2] == 0 && exif[skip + 3] == 42)) {
            decoder->exif = exif + skip;
            decoder->exif_size = exif_size - skip;
            break;
        }
    }
    memset(info, 0, sizeof *info);
    info->width = (int)image->width;
    info->height = (int)image->height;
    info->channels = decoder->channels;
    info->orientation = 1;
    info->source_bit_depth = (int)image->depth;
    return decoder;
}

sw_avif_decoder *sw_avif_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    return sw_avif_open_bytes(data, size, NULL, info, err, errlen);
}

sw_avif_decoder *sw_avif_open_file(FILE *file, size_t max_bytes, sw_image_info *info, char *err, size_t errlen) {
    size_t size = 0;
    uint8_t *bytes = sw_whole_read_file(file, max_bytes, &size, err, errlen);
    return bytes != NULL ? sw_avif_open_bytes(bytes, size, bytes, info, err, errlen) : NULL;
}

static int sw_avif_read_depth(sw_avif_decoder *decoder, uint8_t *pixels, size_t stride, int depth,
                              const sw_cancellation *cancel, char *err, size_t errlen);

int sw_avif_read(sw_avif_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                 size_t errlen) {
    return sw_avif_read_depth(decoder, pixels, stride, 8, cancel, err, errlen);
}

int sw_avif_read16(sw_avif_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                   size_t errlen) {
    return sw_avif_read_depth(decoder, pixels, stride, 16, cancel, err, errlen);
}

static int sw_avif_read_depth(sw_avif_decoder *decoder, uint8_t *pixels, size_t stride, int depth,
                              const sw_cancellation *cancel, char *err, size_t errlen) {
    if (sw_should_stop_now(cancel)) return SW_CODEC_CANCELLED;
    const sw_avif_functions *libavif = decoder->libavif;
    avifResult result = libavif->avifDecoderNextImage(decoder->decoder);
    if (result != AVIF_RESULT_OK) {
        sw_avif_error(libavif, err, errlen, "cannot decode the AVIF image", result);
        return SW_CODEC_ERROR;
    }
    if (sw_should_stop_now(cancel)) return SW_CODEC_CANCELLED;
    avifRGBImage rgb;
    libavif->avifRGBImageSetDefaults(&rgb, decoder->decoder->image);
    rgb.format = decoder->channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = (uint32_t)depth;
    rgb.pixels = pixels;
    rgb.rowBytes = (uint32_t)stride;
    result = libavif->avifImageYUVToRGB(decoder->decoder->image, &rgb);
    if (result != AVIF_RESULT_OK) {
        sw_avif_error(libavif, err, errlen, "cannot convert the AVIF image to RGB", result);
        return SW_CODEC_ERROR;
    }
    return SW_CODEC_OK;
}

void sw_avif_metadata(const sw_avif_decoder *decoder, sw_image_metadata *metadata) {
    const avifImage *image = decoder->decoder->image;
    sw_metadata_view(metadata, image->icc.data, image->icc.size, decoder->exif, decoder->exif_size, image->xmp.data,
                     image->xmp.size);
}

void sw_avif_close(sw_avif_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->decoder != NULL) decoder->libavif->avifDecoderDestroy(decoder->decoder);
    free(decoder->owned);
    free(decoder);
}

/* MARK: Encoding */

/* The collected rows and settings (the struct is its sw_whole_image: see sw_whole_image_new). */
struct sw_avif_encoder {
    sw_whole_image image;
};

sw_avif_encoder *sw_avif_encoder_open(int width, int height, int channels, int quality, FILE *file,
                                      const sw_image_metadata *metadata, char *err, size_t errlen) {
    /* Loaded before the rows are collected: without libavif the encode fails at once. */
    if (sw_avif_library(err, errlen) == NULL) return NULL;
    return (sw_avif_encoder *)sw_whole_image_new(width, height, channels, quality, file, metadata, err, errlen);
}

sw_avif_encoder *sw_avif_encoder_open_deep(int width, int height, int channels, int depth, int quality, FILE *file,
                                           const sw_image_metadata *metadata, char *err, size_t errlen) {
    if (depth != 10 && depth != 12) {
        sw_whole_message(err, errlen, "AVIF is written at 10 or 12 bits from 16-bit rows");
        return NULL;
    }
    if (sw_avif_library(err, errlen) == NULL) return NULL;
    return (sw_avif_encoder *)sw_whole_image_new_deep(width, height, channels, depth, quality, file, metadata, err, errlen);
}

int sw_avif_encoder_write(sw_avif_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen) {
    return sw_whole_image_append(&encoder->image, pixels, stride, rows, cancel, err, errlen);
}

int sw_avif_encoder_finish(sw_avif_encoder *encoder, const sw_cancellation *cancel, uint8_t **out, size_t *out_size,
                           char *err, size_t errlen) {
    sw_whole_image *image = &encoder->image;
    if (sw_whole_image_complete(image, out, out_size, err, errlen) != SW_CODEC_OK) return SW_CODEC_ERROR;
    if (sw_should_stop_now(cancel)) return SW_CODEC_CANCELLED;
    const sw_avif_functions *libavif = sw_avif_library(err, errlen);
    if (libavif == NULL) return SW_CODEC_ERROR;
    avifImage *picture =
        libavif->avifImageCreate((uint32_t)image->width, (uint32_t)image->height, (uint32_t)image->depth,
                                 AVIF_PIXEL_FORMAT_YUV420);
    if (picture == NULL) {
        sw_whole_message(err, errlen, "out of memory for the AVIF image");
        return SW_CODEC_ERROR;
    }
    picture->yuvRange = AVIF_RANGE_FULL;
    if (image->icc_size > 0) {
        libavif->avifImageSetProfileICC(picture, image->icc, image->icc_size);
    } else {
        /* No profile: say sRGB (BT.709 primaries, the sRGB curve), with BT.601 coefficients as JPEG uses. */
        picture->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
        picture->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
        picture->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    }
    if (image->exif_size > 0) libavif->avifImageSetMetadataExif(picture, image->exif, image->exif_size);
    if (image->xmp_size > 0) libavif->avifImageSetMetadataXMP(picture, image->xmp, image->xmp_size);
    avifRGBImage rgb;
    libavif->avifRGBImageSetDefaults(&rgb, picture);
    rgb.format = image->channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = image->sample_bytes == 2 ? 16 : 8;
    rgb.pixels = image->pixels;
    rgb.rowBytes = (uint32_t)(image->width * image->channels * image->sample_bytes);
    avifResult result = libavif->avifImageRGBToYUV(picture, &rgb);
    /* The image now holds its own Y'CbCr planes: the rows are no longer needed. */
    free(image->pixels);
    image->pixels = NULL;
    if (result != AVIF_RESULT_OK) {
        libavif->avifImageDestroy(picture);
        sw_avif_error(libavif, err, errlen, "cannot convert the rows for AVIF", result);
        return SW_CODEC_ERROR;
    }
    if (sw_should_stop_now(cancel)) {
        libavif->avifImageDestroy(picture);
        return SW_CODEC_CANCELLED;
    }
    avifEncoder *av1 = libavif->avifEncoderCreate();
    if (av1 == NULL) {
        libavif->avifImageDestroy(picture);
        sw_whole_message(err, errlen, "out of memory for the AVIF encoder");
        return SW_CODEC_ERROR;
    }
    /* Quality 1…100 to AV1's quantizer 63…0, as libavif 1.0 maps its own quality setting. */
    int quantizer = ((100 - image->quality) * 63 + 50) / 100;
    av1->maxThreads = 1;
    av1->speed = SW_AVIF_SPEED;
    av1->minQuantizer = av1->maxQuantizer = quantizer;
    av1->minQuantizerAlpha = av1->maxQuantizerAlpha = quantizer;
    avifRWData output = AVIF_DATA_EMPTY;
    result = libavif->avifEncoderWrite(av1, picture, &output);
    libavif->avifEncoderDestroy(av1);
    libavif->avifImageDestroy(picture);
    int status;
    if (result != AVIF_RESULT_OK) {
        sw_avif_error(libavif, err, errlen, "cannot encode AVIF", result);
        status = SW_CODEC_ERROR;
    } else {
        status = sw_whole_output(output.data, output.size, image->file, out, out_size, err, errlen);
    }
    libavif->avifRWDataFree(&output);
    return status;
}

void sw_avif_encoder_close(sw_avif_encoder *encoder) {
    if (encoder != NULL) sw_whole_image_delete(&encoder->image);
}
