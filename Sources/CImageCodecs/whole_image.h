/* Internal: what the WebP and AVIF shims share. Their libraries encode a whole picture at once (libwebp's
   encoder and libavif's take the complete image; neither accepts rows as they come), so the encoders collect
   the rows here first; and both write their result to a FILE or hand it back in memory. */
#ifndef SHIFTWORK_WHOLE_IMAGE_H
#define SHIFTWORK_WHOLE_IMAGE_H

#include "CImageCodecs.h"

/** Rows collected for an encoder that needs the whole picture: gray is widened to RGB (neither WebP nor our
    AVIF output stores gray), RGB and RGBA are kept. */
typedef struct sw_whole_image {
    int width, height;
    /** Channels of the rows the caller writes (1, 3 or 4). */
    int input_channels;
    /** Channels stored in `pixels` (3 or 4). */
    int channels;
    uint8_t *pixels;
    int rows;
    /** Bytes a sample: 1, or 2 (host-order uint16_t, sw_whole_image_new_deep). */
    int sample_bytes;
    /** The depth to encode (8, or 10/12 for AVIF from 16-bit rows). */
    int depth;
    /** Copies of the metadata to write: the ICC profile, EXIF (orientation reset to 1), XMP. */
    uint8_t *icc, *exif, *xmp;
    size_t icc_size, exif_size, xmp_size;
    /** The encoder's quality (1...100) and where its output goes (NULL: memory). */
    int quality;
    FILE *file;
} sw_whole_image;

void sw_whole_message(char *err, size_t errlen, const char *message);
/** A new collector (an encoder whose struct begins with it): the pixels allocated, the metadata copied, the
    quality clamped to 1...100. NULL, with the reason, when it cannot be made. Free it with sw_whole_image_delete. */
sw_whole_image *sw_whole_image_new(int width, int height, int channels, int quality, FILE *file,
                                   const sw_image_metadata *metadata, char *err, size_t errlen);
/** The start of every *_encoder_finish: clears `*out` and `*out_size`; SW_CODEC_OK when every row was written,
    else SW_CODEC_ERROR with the reason. */
/** The same for rows of 16-bit samples (host-order uint16_t), to be encoded at `depth` bits. */
sw_whole_image *sw_whole_image_new_deep(int width, int height, int channels, int depth, int quality, FILE *file,
                                        const sw_image_metadata *metadata, char *err, size_t errlen);
int sw_whole_image_complete(const sw_whole_image *image, uint8_t **out, size_t *out_size, char *err, size_t errlen);
/** Appends `rows` rows (`stride` bytes apart). */
int sw_whole_image_append(sw_whole_image *image, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen);
void sw_whole_image_delete(sw_whole_image *image);
/** Writes `size` bytes to `file`, or, without one, hands back a malloc'd copy in *out (for sw_codec_free). */
int sw_whole_output(const uint8_t *data, size_t size, FILE *file, uint8_t **out, size_t *out_size, char *err,
                    size_t errlen);
/** Reads the rest of `file` into a malloc'd buffer (`*size` bytes); NULL, with the reason, when it is larger than
    `max_bytes` or memory runs out. */
uint8_t *sw_whole_read_file(FILE *file, size_t max_bytes, size_t *size, char *err, size_t errlen);
/** A malloc'd copy of `size` bytes (NULL for none); the EXIF copy's orientation is reset to 1. */
uint8_t *sw_whole_copy(const uint8_t *data, size_t size);

#endif
