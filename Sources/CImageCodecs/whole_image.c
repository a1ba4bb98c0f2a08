/* Rows collected for the encoders that need a whole picture (WebP, AVIF); see whole_image.h. */
#include "whole_image.h"
#include "cancellation.h"

#include <stdlib.h>
#include <string.h>

void sw_whole_message(char *err, size_t errlen, const char *message) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "%s", message);
}

uint8_t *sw_whole_copy(const uint8_t *data, size_t size) {
    if (data == NULL || size == 0) return NULL;
    uint8_t *copy = malloc(size);
    if (copy != NULL) memcpy(copy, data, size);
    return copy;
}

static sw_whole_image *sw_whole_image_make(int width, int height, int channels, int sample_bytes, int depth, int quality,
                                          FILE *file, const sw_image_metadata *metadata, char *err, size_t errlen);

sw_whole_image *sw_whole_image_new(int width, int height, int channels, int quality, FILE *file,
                                   const sw_image_metadata *metadata, char *err, size_t errlen) {
    return sw_whole_image_make(width, height, channels, 1, 8, quality, file, metadata, err, errlen);
}

sw_whole_image *sw_whole_image_new_deep(int width, int height, int channels, int depth, int quality, FILE *file,
                                        const sw_image_metadata *metadata, char *err, size_t errlen) {
    return sw_whole_image_make(width, height, channels, 2, depth, quality, file, metadata, err, errlen);
}

static sw_whole_image *sw_whole_image_make(int width, int height, int channels, int sample_bytes, int depth, int quality,
                                          FILE *file, const sw_image_metadata *metadata, char *err, size_t errlen) {
    if (width <= 0 || height <= 0 || (channels != 1 && channels != 3 && channels != 4)) {
        sw_whole_message(err, errlen, "invalid image size or channel count");
        return NULL;
    }
    sw_whole_image *image = calloc(1, sizeof *image);
    if (image == NULL) {
        sw_whole_message(err, errlen, "out of memory");
        return NULL;
    }
    image->width = width;
    image->height = height;
    image->input_channels = channels;
    image->channels = channels == 4 ? 4 : 3;
    image->quality = quality < 1 ? 1 : (quality > 100 ? 100 : quality);
    image->file = file;
    image->sample_bytes = sample_bytes;
    image->depth = depth;
    image->pixels = malloc((size_t)width * (size_t)height * (size_t)image->channels * (size_t)sample_bytes);
    if (image->pixels == NULL) {
        sw_whole_message(err, errlen, "out of memory for the picture");
        free(image);
        return NULL;
    }
    if (metadata != NULL) {
        image->icc = sw_whole_copy(metadata->icc, metadata->icc_size);
        image->icc_size = image->icc ? metadata->icc_size : 0;
        image->exif = sw_whole_copy(metadata->exif, metadata->exif_size);
        image->exif_size = image->exif ? metadata->exif_size : 0;
        if (image->exif != NULL) sw_exif_reset_orientation(image->exif, image->exif_size);
        image->xmp = sw_whole_copy(metadata->xmp, metadata->xmp_size);
        image->xmp_size = image->xmp ? metadata->xmp_size : 0;
    }
    return image;
}

int sw_whole_image_complete(const sw_whole_image *image, uint8_t **out, size_t *out_size, char *err, size_t errlen) {
    *out = NULL;
    *out_size = 0;
    if (image->rows == image->height) return SW_CODEC_OK;
    sw_whole_message(err, errlen, "the image ended before its last row");
    return SW_CODEC_ERROR;
}

int sw_whole_image_append(sw_whole_image *image, const uint8_t *pixels, size_t stride, int rows,
                          const sw_cancellation *cancel, char *err, size_t errlen) {
    if (rows < 0 || rows > image->height - image->rows) {
        sw_whole_message(err, errlen, "more rows written than the image has");
        return SW_CODEC_ERROR;
    }
    const size_t sb = (size_t)image->sample_bytes;
    size_t row_bytes = (size_t)image->width * (size_t)image->channels * sb;
    for (int r = 0; r < rows; r++) {
        if (sw_should_stop(cancel, (unsigned)(image->rows))) return SW_CODEC_CANCELLED;
        const uint8_t *source = pixels + (size_t)r * stride;
        uint8_t *target = image->pixels + (size_t)image->rows * row_bytes;
        if (image->input_channels == 1 && sb == 2) {
            for (int x = 0; x < image->width; x++) {
                for (int k = 0; k < 3; k++) memcpy(target + 2 * (3 * (size_t)x + (size_t)k), source + 2 * (size_t)x, 2);
            }
        } else if (image->input_channels == 1) {
            for (int x = 0; x < image->width; x++) target[3 * x] = target[3 * x + 1] = target[3 * x + 2] = source[x];
        } else {
            memcpy(target, source, row_bytes);
        }
        image->rows++;
    }
    return SW_CODEC_OK;
}

void sw_whole_image_delete(sw_whole_image *image) {
    if (image == NULL) return;
    free(image->pixels);
    free(image->icc);
    free(image->exif);
    free(image->xmp);
    free(image);
}

int sw_whole_output(const uint8_t *data, size_t size, FILE *file, uint8_t **out, size_t *out_size, char *err,
                    size_t errlen) {
    *out = NULL;
    *out_size = 0;
    if (file != NULL) {
        if (fwrite(data, 1, size, file) != size) {
            sw_whole_message(err, errlen, "cannot write the output file");
            return SW_CODEC_ERROR;
        }
        return SW_CODEC_OK;
    }
    uint8_t *copy = malloc(size > 0 ? size : 1);
    if (copy == NULL) {
        sw_whole_message(err, errlen, "out of memory for the encoded image");
        return SW_CODEC_ERROR;
    }
    memcpy(copy, data, size);
    *out = copy;
    *out_size = size;
    return SW_CODEC_OK;
}

uint8_t *sw_whole_read_file(FILE *file, size_t max_bytes, size_t *size, char *err, size_t errlen) {
    size_t capacity = 1 << 20;
    *size = 0;
    uint8_t *bytes = malloc(capacity);
    while (bytes != NULL) {
        *size += fread(bytes + *size, 1, capacity - *size, file);
        if (*size > max_bytes) {
            sw_whole_message(err, errlen, "the file is larger than the byte limit");
            free(bytes);
            return NULL;
        }
        if (*size < capacity) return bytes;
        capacity *= 2;
        uint8_t *grown = realloc(bytes, capacity);
        if (grown == NULL) free(bytes);
        bytes = grown;
    }
    sw_whole_message(err, errlen, "out of memory reading the file");
    return NULL;
}
