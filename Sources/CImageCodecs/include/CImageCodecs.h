#ifndef SHIFTWORK_CIMAGECODECS_H
#define SHIFTWORK_CIMAGECODECS_H

/*
 * Thin C wrappers around libjpeg-turbo and libpng for the Imaging module.
 *
 * Both libraries report fatal errors by longjmp. Every function here that calls into them does its
 * own setjmp, so a longjmp never crosses a Swift frame: failures come back as a non-zero return value
 * (SW_CODEC_ERROR) with a human-readable message copied into the caller's `err` buffer.
 *
 * Decoding is two-step so that the caller can check the image's size (decompression bombs) before it
 * allocates the pixels: `*_open` reads the header, `*_read` decodes into caller-provided memory,
 * `*_close` frees the decoder (always call it, also after an error).
 */

#include <stddef.h>
#include <stdint.h>

#define SW_CODEC_OK 0
#define SW_CODEC_ERROR 1
/** The caller's `sw_cancellation` asked to stop; nothing was produced. */
#define SW_CODEC_CANCELLED 2

/**
 * Lets a long decode or encode stop early: the codecs call `should_stop(context)` every few rows and
 * return SW_CODEC_CANCELLED when it answers non-zero. Pass NULL where the work cannot be cancelled.
 */
typedef struct sw_cancellation {
    int (*should_stop)(const void *context);
    const void *context;
} sw_cancellation;

/** What a decoder reports after reading the header. The output is always 8 bits per channel. */
typedef struct sw_image_info {
    int width;
    int height;
    /** Channels of the decoded output: 1 (gray), 3 (RGB) or 4 (RGBA). */
    int channels;
    /** EXIF orientation 1...8 (1 when absent or not recognised). JPEG only. */
    int orientation;
    /** 1 when the source was CMYK/YCCK (JPEG) and is converted to RGB. */
    int converted_from_cmyk;
    /** 1 when the PNG is interlaced (Adam7). */
    int interlaced;
    /** Bit depth of the source (1, 2, 4, 8 or 16). */
    int source_bit_depth;
} sw_image_info;

typedef struct sw_jpeg_decoder sw_jpeg_decoder;
typedef struct sw_png_decoder sw_png_decoder;

/* MARK: JPEG */

/** Reads the JPEG header from `data` (which must stay alive until `sw_jpeg_close`). NULL on error. */
sw_jpeg_decoder *sw_jpeg_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
/** Decodes every row into `pixels` (rows `stride` bytes apart, `info.channels` bytes per pixel). */
int sw_jpeg_read(sw_jpeg_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel,
                 char *err, size_t errlen);
void sw_jpeg_close(sw_jpeg_decoder *decoder);

/**
 * Encodes 1-channel (gray) or 3-channel (RGB) pixels. On success `*out` holds a malloc'd buffer of
 * `*out_size` bytes that the caller frees with `sw_codec_free`.
 */
int sw_jpeg_encode(const uint8_t *pixels, int width, int height, int channels, size_t stride, int quality,
                   const sw_cancellation *cancel, uint8_t **out, size_t *out_size, char *err, size_t errlen);

/* MARK: PNG */

/** Reads the PNG header; palette, gray < 8 bits, tRNS and 16 bits are expanded/reduced to 8-bit gray, RGB or RGBA. */
sw_png_decoder *sw_png_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
int sw_png_read(sw_png_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel,
                char *err, size_t errlen);
void sw_png_close(sw_png_decoder *decoder);

/**
 * Encodes 1, 2, 3 or 4-channel 8-bit pixels. `level` is the zlib level (0...9), `filters` a mask of
 * PNG_FILTER_* values (0 means libpng's default choice).
 */
int sw_png_encode(const uint8_t *pixels, int width, int height, int channels, size_t stride, int level, int filters,
                  const sw_cancellation *cancel, uint8_t **out, size_t *out_size, char *err, size_t errlen);

/** PNG row filter masks (the values of libpng's PNG_FILTER_*), for `sw_png_encode`. */
#define SW_PNG_FILTER_NONE 0x08
#define SW_PNG_FILTER_SUB 0x10
#define SW_PNG_FILTER_UP 0x20
#define SW_PNG_FILTER_AVG 0x40
#define SW_PNG_FILTER_PAETH 0x80

/** Frees a buffer returned by an encoder. */
void sw_codec_free(void *pointer);

#endif
