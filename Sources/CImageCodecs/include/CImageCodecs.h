#ifndef SHIFTWORK_CIMAGECODECS_H
#define SHIFTWORK_CIMAGECODECS_H

/*
 * Thin C wrappers around libjpeg-turbo, libpng, libwebp, libavif, libtiff, giflib and libheif (and a BMP reader
 * of our own) for the Imaging module.
 *
 * Both libraries report fatal errors by longjmp. Every function here that calls into them does its
 * own setjmp, so a longjmp never crosses a Swift frame: failures come back as a non-zero return value
 * (SW_CODEC_ERROR) with a human-readable message copied into the caller's `err` buffer.
 *
 * Decoding is two-step so that the caller can check the image's size (decompression bombs) before it
 * allocates the pixels: `*_open` reads the header, `*_read_rows` decodes the next rows into caller-provided
 * memory (call it until every row is read: the image streams through in rows), `*_close` frees the decoder
 * (always call it, also after an error). Encoders are the same the other way: `*_encoder_open`,
 * `*_encoder_write` the rows in order, `*_encoder_finish`, `*_encoder_close`. Data comes from memory or a
 * FILE and goes to memory or a FILE, so an image never needs to be whole in memory.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Only the kernel table below states its pointers' nullability (so that Swift sees its functions as
   non-optional); the rest of this header leaves it unspecified, on purpose. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"

#define SW_CODEC_OK 0
#define SW_CODEC_ERROR 1
/** The caller's `sw_cancellation` asked to stop; nothing was produced. */
#define SW_CODEC_CANCELLED 2
/** The input cannot be read that way (the message says why); another way may work. */
#define SW_CODEC_UNSUPPORTED 3

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
    /** Pages (TIFF), frames (GIF) or further top-level images (HEIF) after the one decoded; 0 for a single image.
        GIF knows it only after sw_gif_read (sw_gif_more_frames). */
    int more_frames;
} sw_image_info;

/**
 * Metadata carried from an input into its output (the bytes belong to whoever filled the struct). EXIF is
 * the TIFF structure itself (from "II"/"MM"), without JPEG's "Exif\0\0"; XMP the packet without JPEG's
 * namespace prefix; IPTC the Photoshop APP13 payload (JPEG only). Empty parts have size 0.
 */
typedef struct sw_image_metadata {
    const uint8_t *icc;
    size_t icc_size;
    const uint8_t *exif;
    size_t exif_size;
    const uint8_t *xmp;
    size_t xmp_size;
    const uint8_t *iptc;
    size_t iptc_size;
} sw_image_metadata;

/* MARK: Colour (LittleCMS) */

/** Whether `icc` is a profile LittleCMS reads, for pixels of `channels` (1 gray, 3 RGB, 4 CMYK); the reason in
    `err` when not. */
int sw_icc_check(const uint8_t *icc, size_t size, int channels, char *err, size_t errlen);

typedef struct sw_colour_transform sw_colour_transform;
/** A transform from pixels described by `icc` (3: RGB; 4: CMYK, Adobe-inverted when `inverted_cmyk`) to sRGB
    RGB, 8 bits. NULL, with the reason, when the profile is broken or does not fit. */
sw_colour_transform *sw_colour_to_srgb(const uint8_t *icc, size_t size, int channels, int inverted_cmyk, char *err,
                                       size_t errlen);
/** The same for RGB of 16-bit samples (host-order uint16_t) to sRGB at 16 bits. */
sw_colour_transform *sw_colour_to_srgb16(const uint8_t *icc, size_t size, char *err, size_t errlen);
/** Converts `pixels` pixels (input as the transform was made for; output RGB). Thread-safe. */
void sw_colour_apply(const sw_colour_transform *transform, const uint8_t *input, uint8_t *output, size_t pixels);
void sw_colour_free(sw_colour_transform *transform);

/** The orientation tag (1...8) of EXIF data (a TIFF structure); 1 when absent or malformed. */
int sw_exif_orientation(const uint8_t *tiff, size_t size);
/** Sets the orientation tag of EXIF data to 1 (upright), in place; 0 when there is none. */
int sw_exif_reset_orientation(uint8_t *tiff, size_t size);

typedef struct sw_jpeg_decoder sw_jpeg_decoder;
typedef struct sw_png_decoder sw_png_decoder;
typedef struct sw_jpeg_encoder sw_jpeg_encoder;
typedef struct sw_png_encoder sw_png_encoder;

/* MARK: JPEG */

/** Reads the JPEG header from `data` (which must stay alive until `sw_jpeg_close`). NULL on error. */
sw_jpeg_decoder *sw_jpeg_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
/** The same from a file open for reading (which must stay open until `sw_jpeg_close`). */
sw_jpeg_decoder *sw_jpeg_open_file(FILE *file, sw_image_info *info, char *err, size_t errlen);
/** Decodes the next `rows` rows into `pixels` (rows `stride` bytes apart, `info.channels` bytes per pixel). */
int sw_jpeg_read_rows(sw_jpeg_decoder *decoder, uint8_t *pixels, size_t stride, int rows, const sw_cancellation *cancel,
                      char *err, size_t errlen);
void sw_jpeg_close(sw_jpeg_decoder *decoder);
/** Makes a CMYK/YCCK decoder (before its first read) hand out its CMYK rows, 4 bytes a pixel, unconverted (for
    a colour profile to convert). 0 when the image is not CMYK; 1 for plain CMYK; 2 for Adobe's inverted CMYK. */
int sw_jpeg_keep_cmyk(sw_jpeg_decoder *decoder);
/** The metadata read with the header (valid until sw_jpeg_close). */
void sw_jpeg_metadata(const sw_jpeg_decoder *decoder, sw_image_metadata *metadata);

/** Starts encoding 1 (gray), 3 (RGB) or 4 (RGBA, composited over white) channel rows at `quality` (1...100)
    into `file`, or into memory when `file` is NULL, with `metadata` (NULL for none; EXIF's orientation is
    written as 1: the rows are upright). NULL on error. */
sw_jpeg_encoder *sw_jpeg_encoder_open(int width, int height, int channels, int quality, FILE *file,
                                      const sw_image_metadata *metadata, char *err, size_t errlen);
/** Encodes the next `rows` rows. */
int sw_jpeg_encoder_write(sw_jpeg_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen);
/** Ends the image. In memory, `*out` then holds a malloc'd buffer of `*out_size` bytes that the caller frees with
    `sw_codec_free`; written to a file, `*out` is NULL. */
int sw_jpeg_encoder_finish(sw_jpeg_encoder *encoder, uint8_t **out, size_t *out_size, char *err, size_t errlen);
void sw_jpeg_encoder_close(sw_jpeg_encoder *encoder);

/* MARK: JPEG in its own Y'CbCr planes */

/** The layout of a JPEG's three Y'CbCr planes. */
typedef struct sw_jpeg_planes {
    /** The largest sampling factors (the luma's). */
    int max_h, max_v;
    /** Each plane's sampling factors. */
    int h[3], v[3];
    /** Each plane's size in samples. */
    int width[3], height[3];
    /** Samples per row of a plane's buffer (its width rounded up to whole 8x8 blocks). */
    int padded_width[3];
    /** A plane's rows per call of sw_jpeg_read_planes / sw_jpeg_encoder_write_planes (v * 8). */
    int group_rows[3];
} sw_jpeg_planes;

/**
 * Switches a decoder, before its first read, to its raw planes: no upsampling, no colour conversion.
 * SW_CODEC_UNSUPPORTED, with the reason in `err`, when the planes cannot be used (not 3-component Y'CbCr,
 * not 8-bit, arithmetic coding, sampling other than 4:4:4, 4:2:2, 4:4:0 or 4:2:0): read rows instead.
 */
int sw_jpeg_start_planes(sw_jpeg_decoder *decoder, sw_jpeg_planes *planes, char *err, size_t errlen);
/** Decodes the next group_rows[i] rows of padded_width[i] samples of each plane into planes[i] (rows strides[i]
    bytes apart). Rows and columns past a plane's size are padding. */
int sw_jpeg_read_planes(sw_jpeg_decoder *decoder, uint8_t *const planes[3], const size_t strides[3],
                        const sw_cancellation *cancel, char *err, size_t errlen);

/** Starts encoding raw planes laid out as `planes` (as decoded: the output keeps the sampling). */
sw_jpeg_encoder *sw_jpeg_encoder_open_planes(int width, int height, const sw_jpeg_planes *planes, int quality, FILE *file,
                                             const sw_image_metadata *metadata, char *err, size_t errlen);
/** Encodes the next group_rows[i] rows of padded_width[i] samples of each plane (the caller fills the padding,
    best by repeating the edge). Finish with sw_jpeg_encoder_finish. */
int sw_jpeg_encoder_write_planes(sw_jpeg_encoder *encoder, uint8_t *const planes[3], const size_t strides[3],
                                 const sw_cancellation *cancel, char *err, size_t errlen);

/**
 * Carries the decoder's clipping into the planes before they are filtered: for one chroma row, the pixels whose
 * R'G'B' (chroma upsampled as libjpeg's "fancy" upsampling does, converted as jdcolor.c does) leave 0...255 get
 * the Y'CbCr of (clamped − unclamped) added, to their luma sample and averaged into their chroma sample.
 * `luma`: the `luma_rows` (1...v) rows of `width` samples over this chroma row; written corrected to `luma_out`
 * only when something clipped (the return value is not 0).
 * `cb`, `cr`: the chroma rows above, at and below this one (the row itself at the image's edges; unused when v is 1),
 * `chroma_width` samples each, not changed; the corrected row goes to `cb_out`, `cr_out`. `h`, `v`: the luma's
 * sampling relative to the chroma (1 or 2). Returns the number of pixels that clipped.
 */
int sw_ycc_correct_clipping(const uint8_t *const luma[2], uint8_t *const luma_out[2], int luma_rows, int width,
                            const uint8_t *const cb[3], const uint8_t *const cr[3], uint8_t *cb_out, uint8_t *cr_out,
                            int chroma_width, int h, int v);

/* MARK: PNG */

/** Reads the PNG header; palette, gray < 8 bits, tRNS and 16 bits are expanded/reduced to 8-bit gray, RGB or RGBA. */
sw_png_decoder *sw_png_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
sw_png_decoder *sw_png_open_file(FILE *file, sw_image_info *info, char *err, size_t errlen);
/** Decodes the next `rows` rows; not for interlaced images (`info.interlaced`), which `sw_png_read` reads whole. */
int sw_png_read_rows(sw_png_decoder *decoder, uint8_t *pixels, size_t stride, int rows, const sw_cancellation *cancel,
                     char *err, size_t errlen);
/** Decodes the whole image (interlaced or not). */
int sw_png_read(sw_png_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel,
                char *err, size_t errlen);
void sw_png_close(sw_png_decoder *decoder);
/** As sw_png_open and sw_png_open_file, but a 16-bit PNG keeps its 16 bits (host-order uint16_t samples, 2 bytes
    each; `info.source_bit_depth` is 16); other depths are read as with sw_png_open. */
sw_png_decoder *sw_png_open16(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
sw_png_decoder *sw_png_open_file16(FILE *file, sw_image_info *info, char *err, size_t errlen);
/** The metadata read with the header: the ICC profile (iCCP) and EXIF (eXIf); valid until sw_png_close. */
void sw_png_metadata(const sw_png_decoder *decoder, sw_image_metadata *metadata);

/** Starts encoding 1, 2, 3 or 4-channel 8-bit rows into `file` (or memory when NULL). `level` is the zlib level
    (0...9), `filters` a mask of SW_PNG_FILTER_* values (0 means libpng's default choice). */
sw_png_encoder *sw_png_encoder_open(int width, int height, int channels, int level, int filters, FILE *file,
                                    const sw_image_metadata *metadata, char *err, size_t errlen);
/** As sw_png_encoder_open with `depth` 8 or 16 bits a sample (16: host-order uint16_t samples in). */
sw_png_encoder *sw_png_encoder_open_depth(int width, int height, int channels, int depth, int level, int filters,
                                          FILE *file, const sw_image_metadata *metadata, char *err, size_t errlen);
int sw_png_encoder_write(sw_png_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                         const sw_cancellation *cancel, char *err, size_t errlen);
int sw_png_encoder_finish(sw_png_encoder *encoder, uint8_t **out, size_t *out_size, char *err, size_t errlen);
void sw_png_encoder_close(sw_png_encoder *encoder);

/** A PNG encoder of our own for the fast levels (zlib levels 1...3): Up-filtered rows compressed by ISA-L's
    igzip at its level 1, about six times faster than zlib at level 3 for files a few per cent larger. The same
    calls as sw_png_encoder_*. */
typedef struct sw_png_fast_encoder sw_png_fast_encoder;
sw_png_fast_encoder *sw_png_fast_encoder_open(int width, int height, int channels, FILE *file,
                                              const sw_image_metadata *metadata, char *err, size_t errlen);
/** As sw_png_fast_encoder_open with `depth` 8 or 16 bits a sample (16: host-order uint16_t samples in). */
sw_png_fast_encoder *sw_png_fast_encoder_open_depth(int width, int height, int channels, int depth, FILE *file,
                                                    const sw_image_metadata *metadata, char *err, size_t errlen);
int sw_png_fast_encoder_write(sw_png_fast_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                              const sw_cancellation *cancel, char *err, size_t errlen);
int sw_png_fast_encoder_finish(sw_png_fast_encoder *encoder, uint8_t **out, size_t *out_size, char *err, size_t errlen);
void sw_png_fast_encoder_close(sw_png_fast_encoder *encoder);

/* MARK: WebP and AVIF (whole pictures)

   libwebp's encoder and libavif take a complete picture, so their encoders collect the rows written to them
   (width x height x 3 or 4 bytes; gray is widened to RGB) and encode in *_finish, which asks `cancel` whether to
   stop (libwebp through its progress hook, during the encode; libavif before the AV1 encode, which cannot be
   interrupted). Their decoders read the whole encoded input (a file up to `max_bytes`) and decode the whole
   picture into the caller's pixels with one *_read call (WebP incrementally, a slice of the input at a time,
   asking `cancel` between slices). Animated images are refused. Metadata: ICC, EXIF (orientation reset to 1 on
   output) and XMP, in WebP's ICCP/EXIF/XMP chunks and AVIF's colr/Exif/XMP items. */

typedef struct sw_webp_decoder sw_webp_decoder;
typedef struct sw_webp_encoder sw_webp_encoder;
typedef struct sw_avif_decoder sw_avif_decoder;
typedef struct sw_avif_encoder sw_avif_encoder;

/** Reads a still WebP's header (`data` must stay alive until sw_webp_close): RGB, or RGBA when it has alpha. */
sw_webp_decoder *sw_webp_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
sw_webp_decoder *sw_webp_open_file(FILE *file, size_t max_bytes, sw_image_info *info, char *err, size_t errlen);
/** Decodes the whole picture into `pixels` (rows `stride` bytes apart, `info.channels` bytes per pixel). */
int sw_webp_read(sw_webp_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                 size_t errlen);
/** The ICCP, EXIF and XMP chunks (valid until sw_webp_close). */
void sw_webp_metadata(const sw_webp_decoder *decoder, sw_image_metadata *metadata);
void sw_webp_close(sw_webp_decoder *decoder);

/** Starts a lossy WebP of 1, 3 or 4-channel rows at `quality` (1...100) into `file` (or memory when NULL). NULL,
    with the reason, for an image over WebP's 16383-pixel side. */
sw_webp_encoder *sw_webp_encoder_open(int width, int height, int channels, int quality, FILE *file,
                                      const sw_image_metadata *metadata, char *err, size_t errlen);
int sw_webp_encoder_write(sw_webp_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen);
/** Encodes the collected rows; `*out` as for sw_jpeg_encoder_finish. */
int sw_webp_encoder_finish(sw_webp_encoder *encoder, const sw_cancellation *cancel, uint8_t **out, size_t *out_size,
                           char *err, size_t errlen);
void sw_webp_encoder_close(sw_webp_encoder *encoder);

/** Reads a still AVIF's header (`data` must stay alive until sw_avif_close): RGB, or RGBA when it has alpha;
    deeper samples are scaled to 8 bits. */
sw_avif_decoder *sw_avif_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
sw_avif_decoder *sw_avif_open_file(FILE *file, size_t max_bytes, sw_image_info *info, char *err, size_t errlen);
int sw_avif_read(sw_avif_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                 size_t errlen);
/** As sw_avif_read, at 16 bits a sample (host-order uint16_t; libavif scales a 10 or 12-bit image to 0...65535). */
int sw_avif_read16(sw_avif_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                   size_t errlen);
void sw_avif_metadata(const sw_avif_decoder *decoder, sw_image_metadata *metadata);
void sw_avif_close(sw_avif_decoder *decoder);

/** Starts an AVIF (AV1, 8-bit 4:2:0, full range) of 1, 3 or 4-channel rows at `quality` (1...100, mapped to AV1's
    quantizer 63...0). */
sw_avif_encoder *sw_avif_encoder_open(int width, int height, int channels, int quality, FILE *file,
                                      const sw_image_metadata *metadata, char *err, size_t errlen);
/** As sw_avif_encoder_open for rows of 16-bit samples (host-order uint16_t), written at `depth` 10 or 12 bits. */
sw_avif_encoder *sw_avif_encoder_open_deep(int width, int height, int channels, int depth, int quality, FILE *file,
                                           const sw_image_metadata *metadata, char *err, size_t errlen);
int sw_avif_encoder_write(sw_avif_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen);
int sw_avif_encoder_finish(sw_avif_encoder *encoder, const sw_cancellation *cancel, uint8_t **out, size_t *out_size,
                           char *err, size_t errlen);
void sw_avif_encoder_close(sw_avif_encoder *encoder);

/** libavif is opened on the first AVIF decode or encode (not linked: see avif_library.c); when it cannot be, that
    decode or encode fails with a message naming libavif and the Debian package to install. For tests of that
    message: opens, resolves and checks libavif from `soname` (NULL: the names the real load tries) into a table
    of its own and closes it again: 1 when it would load, else 0 with the message in `err`. */
int sw_avif_probe(const char *soname, char *err, size_t errlen);

/* MARK: TIFF (libtiff), BMP (our own reader): rows

   Both stream: sw_*_read_rows decodes the next rows into the caller's pixels, 8 bits per channel (16-bit samples
   rounded: v * 255 / 65535). TIFF: 8 or 16-bit gray, gray+alpha (as RGBA), RGB, RGBA and CMYK (as RGB, naive,
   unless sw_tiff_keep_cmyk), strips read row by row and tiles a row of tiles at a time; anything else libtiff can
   read (palette, 1...4 bits, YCbCr, separate planes, Lab) through its RGBA reader, a strip or a row of tiles at a
   time. Only the first page (IFD) is read; `info.more_frames` counts the others. `info.orientation` is the
   Orientation tag (rows come out as stored). Metadata: the ICC profile (tag 34675) and XMP (tag 700).
   BMP: Windows BMP (headers of 12, 40, 52, 56, 108 or 124 bytes), 1, 4, 8 bits with a palette, 16, 24, 32 bits
   (BI_RGB, BI_BITFIELDS), top-down or bottom-up; RLE and embedded JPEG/PNG are refused; a V5 header's embedded
   ICC profile is kept. Nothing is allocated for the pixels before the first read (the caller checks the size). */

typedef struct sw_tiff_decoder sw_tiff_decoder;
typedef struct sw_tiff_encoder sw_tiff_encoder;
typedef struct sw_bmp_decoder sw_bmp_decoder;

sw_tiff_decoder *sw_tiff_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
/** From a file open for reading (libtiff seeks in it; it must stay open until sw_tiff_close). */
sw_tiff_decoder *sw_tiff_open_file(FILE *file, sw_image_info *info, char *err, size_t errlen);
int sw_tiff_read_rows(sw_tiff_decoder *decoder, uint8_t *pixels, size_t stride, int rows, const sw_cancellation *cancel,
                      char *err, size_t errlen);
/** Makes a CMYK decoder (before its first read) hand out CMYK rows as stored, 4 bytes a pixel. 0 when the image is
    not CMYK (or is read through libtiff's RGBA reader), 1 when it is. */
int sw_tiff_keep_cmyk(sw_tiff_decoder *decoder);
/** Before the first row: hands a 16-bit gray, gray+alpha (as RGBA), RGB or RGBA page's samples out as 16 bits (host-order
    uint16_t, 2 bytes each; alpha divided out when associated) instead of rounding them to 8. 0 (nothing changes) when
    the page is not 16-bit or is CMYK or read through libtiff's RGBA reader, 1 when it is kept. */
int sw_tiff_keep_16(sw_tiff_decoder *decoder);
void sw_tiff_metadata(const sw_tiff_decoder *decoder, sw_image_metadata *metadata);
void sw_tiff_close(sw_tiff_decoder *decoder);

/** Starts a TIFF of 1, 3 or 4-channel 8-bit rows (gray, RGB, RGBA with unassociated alpha), Deflate-compressed with
    the horizontal predictor (`lzw`: LZW instead), 16 rows a strip, with the ICC profile and XMP of `metadata`. */
sw_tiff_encoder *sw_tiff_encoder_open(int width, int height, int channels, int lzw, FILE *file,
                                      const sw_image_metadata *metadata, char *err, size_t errlen);
/** As sw_tiff_encoder_open with `depth` 8 or 16 bits a sample (16: host-order uint16_t samples in). */
sw_tiff_encoder *sw_tiff_encoder_open_depth(int width, int height, int channels, int depth, int lzw, FILE *file,
                                            const sw_image_metadata *metadata, char *err, size_t errlen);
int sw_tiff_encoder_write(sw_tiff_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen);
int sw_tiff_encoder_finish(sw_tiff_encoder *encoder, const sw_cancellation *cancel, uint8_t **out, size_t *out_size,
                           char *err, size_t errlen);
void sw_tiff_encoder_close(sw_tiff_encoder *encoder);
/** libtiff is opened on the first TIFF decode or encode (tiff_library.c), as libavif is: as sw_avif_probe. */
int sw_tiff_probe(const char *soname, char *err, size_t errlen);

sw_bmp_decoder *sw_bmp_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
/** From a file open for reading (seeked in for bottom-up rows; it must stay open until sw_bmp_close). */
sw_bmp_decoder *sw_bmp_open_file(FILE *file, sw_image_info *info, char *err, size_t errlen);
int sw_bmp_read_rows(sw_bmp_decoder *decoder, uint8_t *pixels, size_t stride, int rows, const sw_cancellation *cancel,
                     char *err, size_t errlen);
void sw_bmp_metadata(const sw_bmp_decoder *decoder, sw_image_metadata *metadata);
void sw_bmp_close(sw_bmp_decoder *decoder);

/* MARK: GIF (giflib), HEIF/HEIC (libheif): whole pictures

   Decoded whole, like WebP and AVIF: *_open reads the header (GIF: up to its first frame's descriptor), *_read the
   picture. GIF: the first frame on the logical screen (RGBA when it has a transparent colour or does not cover the
   screen, else RGB); sw_gif_more_frames says, after the read, whether frames follow. HEIF: the primary image, its
   transformations (irot, imir) applied by libheif (`info.orientation` is 1), 8 bits (deeper samples scaled by
   libheif); the ICC profile and EXIF kept. libheif is opened on first use (heif_library.c): its codecs (libde265,
   x265, libaom, dav1d) would otherwise load with every command. */

typedef struct sw_gif_decoder sw_gif_decoder;
typedef struct sw_heif_decoder sw_heif_decoder;

sw_gif_decoder *sw_gif_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
sw_gif_decoder *sw_gif_open_file(FILE *file, size_t max_bytes, sw_image_info *info, char *err, size_t errlen);
int sw_gif_read(sw_gif_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                size_t errlen);
/** 1 when another frame follows the first (known after sw_gif_read). */
int sw_gif_more_frames(const sw_gif_decoder *decoder);
void sw_gif_metadata(const sw_gif_decoder *decoder, sw_image_metadata *metadata);
void sw_gif_close(sw_gif_decoder *decoder);

sw_heif_decoder *sw_heif_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen);
sw_heif_decoder *sw_heif_open_file(FILE *file, size_t max_bytes, sw_image_info *info, char *err, size_t errlen);
int sw_heif_read(sw_heif_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel, char *err,
                 size_t errlen);
void sw_heif_metadata(const sw_heif_decoder *decoder, sw_image_metadata *metadata);
void sw_heif_close(sw_heif_decoder *decoder);
/** As sw_avif_probe, for libheif. */
int sw_heif_probe(const char *soname, char *err, size_t errlen);

/** PNG row filter masks (the values of libpng's PNG_FILTER_*), for `sw_png_encode`. */
#define SW_PNG_FILTER_NONE 0x08
#define SW_PNG_FILTER_SUB 0x10
#define SW_PNG_FILTER_UP 0x20
#define SW_PNG_FILTER_AVG 0x40
#define SW_PNG_FILTER_PAETH 0x80

/** Frees a buffer returned by an encoder. */
void sw_codec_free(void *pointer);

/* MARK: Blur kernels */

/**
 * A third-order recursive Gaussian (Young, van Vliet and van Ginkel): f[n] = b x[n] + a1 f[n-1] + a2 f[n-2]
 * + a3 f[n-3] forward, the same backward; `m` is the Triggs-Sdika matrix (times b) that gives the backward
 * pass's starting values for an edge that repeats.
 */
typedef struct sw_recursive_gaussian {
    float b, a1, a2, a3;
    float m[9];
} sw_recursive_gaussian;

/** The largest radius of the exact (FIR) Gaussian. */
#define SW_FIR_MAX_RADIUS 32

/**
 * An exact Gaussian as a finite kernel: the sampled Gaussian out to `radius` taps each side, normalised to a sum
 * of 1; `taps[k]` is the weight at distance k (the kernel is symmetric), k = 0...radius.
 */
typedef struct sw_fir_gaussian {
    int radius;
    float taps[SW_FIR_MAX_RADIUS + 1];
} sw_fir_gaussian;

#pragma clang assume_nonnull begin
/**
 * The kernels of the blur and the blend. Float rows are padded: a row of n samples has room for
 * round_up(n + 1, 16) floats, and column ranges [begin, end) of the vertical kernels are multiples of 16.
 */
typedef struct sw_blur_kernels {
    /** The horizontal pass (forward and backward) of `rows` rows of `width` pixels of `channels` (1, 3, 4)
        bytes into float rows; RGBA is premultiplied. An RGB source row is read one byte past its end.
        `scratch` is sw_blur_scratch_bytes(width, channels) bytes, aligned to 32. */
    void (*horizontal)(const sw_recursive_gaussian *g, const uint8_t *const *src, float *const *dst, int rows,
                       int width, int channels, void *scratch);
    /** The forward vertical step in place: row = b row + a1 p1 + a2 p2 + a3 p3 on [begin, end). */
    void (*forward)(const sw_recursive_gaussian *g, float *row, const float *p1, const float *p2, const float *p3,
                    size_t begin, size_t end);
    /** The backward vertical step: out = b f + a1 q1 + a2 q2 + a3 q3 on [begin, end) (out may be q3). */
    void (*backward)(const sw_recursive_gaussian *g, const float *f, float *out, const float *q1, const float *q2,
                     const float *q3, size_t begin, size_t end);
    /** The Triggs-Sdika starting values y0..y2 of the backward pass at an edge that repeats `x_end`, from the
        last three forward rows f0 (the last), f1, f2. */
    void (*end)(const sw_recursive_gaussian *g, const float *x_end, const float *f0, const float *f1, const float *f2,
                float *y0, float *y1, float *y2, size_t begin, size_t end);
    /** out = orig + weight (blurred - orig), clamped and rounded, for samples [begin, end) (out may be orig). */
    void (*blend)(const uint8_t *orig, const float *blurred, uint8_t *out, float weight, size_t begin, size_t end);
    /** The same for RGBA premultiplied by alpha in `blurred`: blended premultiplied, then divided by alpha. */
    void (*blend_premultiplied)(const uint8_t *orig, const float *blurred, uint8_t *out, float weight, size_t begin,
                                size_t end);
    /** The blend with a weight per sample (`weights`, a pixel's weight repeated over its channels) and `count`
        blurred rows (levels[k] at σ (k + 1) / count, level 0 being `orig`): a weight m takes level m count,
        interpolated between the two levels around it. One level: `blend` with a weight per sample. */
    void (*blend_levels)(const uint8_t *orig, const float *const *levels, int count, const float *weights,
                         uint8_t *out, size_t begin, size_t end);
    /** The same for RGBA premultiplied in the levels; [begin, end) multiples of 4. */
    void (*blend_levels_premultiplied)(const uint8_t *orig, const float *const *levels, int count,
                                       const float *weights, uint8_t *out, size_t begin, size_t end);
    /** The exact horizontal pass of `rows` rows (edges repeat, RGBA premultiplied), like `horizontal`. */
    void (*fir_horizontal)(const sw_fir_gaussian *g, const uint8_t *const *src, float *const *dst, int rows, int width,
                           int channels, void *scratch);
    /** The exact vertical pass of one row: out = sum of taps[|k|] rows[radius + k], k = -radius...radius, on
        [begin, end); `rows` holds the 2 radius + 1 float rows around it (edge rows repeated by the caller). */
    void (*fir_vertical)(const sw_fir_gaussian *g, const float *const *rows, float *out, size_t begin, size_t end);
} sw_blur_kernels;
#pragma clang assume_nonnull end

/** Kernel variants: the best the CPU runs, baseline x86-64 (SSE2), AVX2 with FMA. */
#define SW_SIMD_AUTO 0
#define SW_SIMD_BASELINE 1
#define SW_SIMD_AVX2 2

/** The kernels for `level`; `*chosen` (if not NULL) receives the variant used (AVX2 only where the CPU has
    AVX2 and FMA, checked at run time). */
const sw_blur_kernels *sw_blur_kernels_for(int level, int *chosen);

/** The size of the horizontal passes' scratch memory (recursive or exact). */
size_t sw_blur_scratch_bytes(int width, int channels);
/** The kernels for 16-bit samples (blur16.c): the table of `level`'s variant with the horizontal passes and the
    blends replaced by ones whose sample pointers point at host-order uint16_t samples (values 0...65535 in the
    floats); the vertical passes are the variant's own. */
const sw_blur_kernels *sw_blur_kernels16_for(int level, int *chosen);
/** 16-bit samples to 8 with an 8x8 ordered (Bayer) dither, not truncation: `pixels` pixels of `channels` samples
    of row `row` (the row picks the matrix's line). */
void sw_dither16_to_8(const uint16_t *src, uint8_t *dst, size_t pixels, int channels, int row);
/**
 * The tilt-shift's blend weights along one row for a focus line at an angle: for the samples [begin, end) of a
 * row of `channels`-sample pixels, pixel i at image x = i x_scale + x_offset gets
 * m = clamp((|(x sin_angle + row_term) / extent - focus| - half_band) / transition, 0, 1) (1 past the band when
 * transition is 0), written to out[sample]. `row_term` is the row's part, y cos_angle + the centring offset.
 * Computed in double, like the per-row weights.
 */
void sw_line_weights(float *out, size_t begin, size_t end, int channels, double x_scale, double x_offset,
                     double sin_angle, double row_term, double extent, double focus, double half_band,
                     double transition);

/* MARK: the decimated blur's resampling (resample.c) */

/**
 * Halves two rows (`above`, `below`: `width` pixels of `channels` bytes; `below` may be `above` for an odd last
 * row) into one of (width + 1) / 2 pixels: each output pixel is the rounded mean of a 2x2 block (of a 1x2 block
 * in an odd width's last column).
 */
void sw_decimate_rows(const uint8_t *above, const uint8_t *below, uint8_t *out, int width, int channels);

/**
 * Doubles a halved row back to `width` pixels and blends it over `orig`: the row between half rows `above` and
 * `below` at `below_share` (0.25 or 0.75; 0 at the top edge), then along it, full pixel x at half pixel (x − 1/2) / 2
 * with the edges repeated (bilinear); out = orig + weight (doubled − orig), clamped and rounded as the blur
 * kernels' blend (`out` may be `orig`). `scratch`: (half_width + 1) * channels + width * channels + 32 floats.
 * Channels 1 or 3.
 */
void sw_double_blend_row(const uint8_t *orig, const uint8_t *above, const uint8_t *below, float below_share,
                         float weight, uint8_t *out, int half_width, int width, int channels, float *scratch);



/* CRC-32C (Castagnoli) of `count` bytes (checksum.c, ISA-L): 0xE3069283 for "123456789". */
uint32_t sw_crc32c(const uint8_t *bytes, size_t count);

#pragma clang diagnostic pop

#endif
