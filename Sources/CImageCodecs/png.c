/* PNG decode/encode through libpng. Every libpng call happens below a setjmp in this file. */
#include "CImageCodecs.h"
#include "cancellation.h"
#include "metadata.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

typedef struct sw_png_error {
    jmp_buf jump;
    char message[256];
} sw_png_error;

typedef struct sw_png_source {
    const uint8_t *data;
    size_t size;
    size_t offset;
} sw_png_source;

struct sw_png_decoder {
    png_structp png;
    png_infop info;
    sw_png_error error;
    sw_png_source source;
    int height;
    int interlaced;
    int next_row;
    uint8_t *icc, *exif;     /* copies of the iCCP profile and the eXIf data */
    size_t icc_size, exif_size;
};

static void sw_copy(char *err, size_t errlen, const char *message) {
    if (err == NULL || errlen == 0) return;
    snprintf(err, errlen, "%s", message);
}

static void sw_png_error_fn(png_structp png, png_const_charp message) {
    sw_png_error *error = (sw_png_error *)png_get_error_ptr(png);
    snprintf(error->message, sizeof error->message, "%s", message ? message : "unknown libpng error");
    longjmp(error->jump, 1);
}

static void sw_png_warning_fn(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

static void sw_png_read_fn(png_structp png, png_bytep out, png_size_t length) {
    sw_png_source *source = (sw_png_source *)png_get_io_ptr(png);
    if (length > source->size - source->offset) {
        png_error(png, "truncated PNG data (premature end of file)");
    }
    memcpy(out, source->data + source->offset, length);
    source->offset += length;
}

static uint8_t *sw_png_copy_bytes(const uint8_t *bytes, size_t size) {
    if (bytes == NULL || size == 0) return NULL;
    uint8_t *copy = malloc(size);
    if (copy != NULL) memcpy(copy, bytes, size);
    return copy;
}

/* Copies the ICC profile and the EXIF data out of libpng's info (a profile libpng finds invalid is dropped
   by libpng, with a warning that is ignored). */
static void sw_png_keep_metadata(sw_png_decoder *decoder) {
    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 length = 0;
    if (png_get_iCCP(decoder->png, decoder->info, &name, &compression, &profile, &length) != 0) {
        decoder->icc = sw_png_copy_bytes(profile, length);
        decoder->icc_size = decoder->icc != NULL ? length : 0;
    }
    png_bytep exif = NULL;
    png_uint_32 exif_length = 0;
    if (png_get_eXIf_1(decoder->png, decoder->info, &exif_length, &exif) != 0) {
        decoder->exif = sw_png_copy_bytes(exif, exif_length);
        decoder->exif_size = decoder->exif != NULL ? exif_length : 0;
    }
}

void sw_png_metadata(const sw_png_decoder *decoder, sw_image_metadata *metadata) {
    sw_metadata_view(metadata, decoder->icc, decoder->icc_size, decoder->exif, decoder->exif_size, NULL, 0);
}

static sw_png_decoder *sw_png_open_source(const uint8_t *data, size_t size, FILE *file, int keep16, sw_image_info *info,
                                         char *err, size_t errlen) {
    memset(info, 0, sizeof *info);
    uint8_t signature[8];
    if (file != NULL) {
        if (fread(signature, 1, 8, file) != 8) {
            sw_copy(err, errlen, "not a PNG file (shorter than its signature)");
            return NULL;
        }
        data = signature;
        size = 8;
    }
    if (size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0) {
        sw_copy(err, errlen, "not a PNG file (bad signature)");
        return NULL;
    }
    sw_png_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_copy(err, errlen, "out of memory");
        return NULL;
    }
    decoder->source.data = data;
    decoder->source.size = size;
    decoder->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &decoder->error, sw_png_error_fn, sw_png_warning_fn);
    if (decoder->png == NULL) {
        sw_copy(err, errlen, "cannot create the PNG decoder");
        free(decoder);
        return NULL;
    }
    decoder->info = png_create_info_struct(decoder->png);
    if (decoder->info == NULL) {
        sw_copy(err, errlen, "cannot create the PNG decoder");
        png_destroy_read_struct(&decoder->png, NULL, NULL);
        free(decoder);
        return NULL;
    }
    if (setjmp(decoder->error.jump)) {
        sw_copy(err, errlen, decoder->error.message);
        sw_png_close(decoder);
        return NULL;
    }
    if (file != NULL) {
        png_init_io(decoder->png, file);
        png_set_sig_bytes(decoder->png, 8);
    } else {
        png_set_read_fn(decoder->png, &decoder->source, sw_png_read_fn);
    }
    /* The caller enforces its own pixel limit; lift libpng's 1M x 1M default only as far as ints allow. */
    png_set_user_limits(decoder->png, 0x7FFFFFFF, 0x7FFFFFFF);
    png_read_info(decoder->png, decoder->info);
    sw_png_keep_metadata(decoder);

    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
    png_get_IHDR(decoder->png, decoder->info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);

    int has_trns = png_get_valid(decoder->png, decoder->info, PNG_INFO_tRNS) != 0;
    /* Palette -> RGB, gray < 8 bits -> 8 bits, tRNS -> alpha. */
    png_set_expand(decoder->png);
    /* 16 -> 8 bits with rounding (png_set_strip_16 would truncate), unless kept: then in host order. */
    if (bit_depth == 16 && !keep16) png_set_scale_16(decoder->png);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (bit_depth == 16 && keep16) png_set_swap(decoder->png);
#endif
    int alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 || has_trns;
    int gray = (color_type & PNG_COLOR_MASK_COLOR) == 0;
    /* Gray with alpha has no place in our buffers (1, 3 or 4 channels): make it RGBA. */
    if (gray && alpha) png_set_gray_to_rgb(decoder->png);
    if (interlace != PNG_INTERLACE_NONE) png_set_interlace_handling(decoder->png);
    png_read_update_info(decoder->png, decoder->info);

    int channels = (int)png_get_channels(decoder->png, decoder->info);
    if (channels != 1 && channels != 3 && channels != 4) {
        snprintf(decoder->error.message, sizeof decoder->error.message, "unexpected PNG channel count %d", channels);
        sw_copy(err, errlen, decoder->error.message);
        sw_png_close(decoder);
        return NULL;
    }
    decoder->height = (int)height;
    decoder->interlaced = interlace != PNG_INTERLACE_NONE;
    info->width = (int)width;
    info->height = (int)height;
    info->channels = channels;
    info->orientation = 1;
    info->interlaced = interlace != PNG_INTERLACE_NONE;
    info->source_bit_depth = bit_depth;
    return decoder;
}

sw_png_decoder *sw_png_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    return sw_png_open_source(data, size, NULL, 0, info, err, errlen);
}

sw_png_decoder *sw_png_open16(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    return sw_png_open_source(data, size, NULL, 1, info, err, errlen);
}

sw_png_decoder *sw_png_open_file16(FILE *file, sw_image_info *info, char *err, size_t errlen) {
    return sw_png_open_source(NULL, 0, file, 1, info, err, errlen);
}

sw_png_decoder *sw_png_open_file(FILE *file, sw_image_info *info, char *err, size_t errlen) {
    return sw_png_open_source(NULL, 0, file, 0, info, err, errlen);
}

int sw_png_read(sw_png_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel,
                char *err, size_t errlen) {
    if (!decoder->interlaced) return sw_png_read_rows(decoder, pixels, stride, decoder->height, cancel, err, errlen);
    png_bytep *volatile rows = malloc(sizeof(png_bytep) * (size_t)(decoder->height > 0 ? decoder->height : 1));
    if (rows == NULL) {
        sw_copy(err, errlen, "out of memory");
        return SW_CODEC_ERROR;
    }
    for (int y = 0; y < decoder->height; y++) rows[y] = pixels + (size_t)y * stride;
    if (setjmp(decoder->error.jump)) {
        free(rows);
        sw_copy(err, errlen, decoder->error.message);
        return SW_CODEC_ERROR;
    }
    /* An interlaced image is read in its seven passes (png_set_interlace_handling, called again, says how
       many), each over every row, so that the caller can stop the work between rows. */
    int passes = png_set_interlace_handling(decoder->png);
    for (int pass = 0; pass < passes; pass++) {
        for (int y = 0; y < decoder->height; y++) {
            if (sw_should_stop(cancel, (unsigned)y)) {
                free(rows);
                return SW_CODEC_CANCELLED;
            }
            png_read_row(decoder->png, rows[y], NULL);
        }
    }
    png_read_end(decoder->png, NULL);
    decoder->next_row = decoder->height;
    free(rows);
    return SW_CODEC_OK;
}

int sw_png_read_rows(sw_png_decoder *decoder, uint8_t *pixels, size_t stride, int rows, const sw_cancellation *cancel,
                     char *err, size_t errlen) {
    if (decoder->interlaced) {
        sw_copy(err, errlen, "an interlaced PNG cannot be read row by row (read it whole)");
        return SW_CODEC_ERROR;
    }
    if (setjmp(decoder->error.jump)) {
        sw_copy(err, errlen, decoder->error.message);
        return SW_CODEC_ERROR;
    }
    for (int i = 0; i < rows && decoder->next_row < decoder->height; i++) {
        if (sw_should_stop(cancel, (unsigned)decoder->next_row)) return SW_CODEC_CANCELLED;
        png_read_row(decoder->png, pixels + (size_t)i * stride, NULL);
        decoder->next_row++;
    }
    if (decoder->next_row == decoder->height) {
        png_read_end(decoder->png, NULL);
        decoder->next_row++; /* read_end once */
    }
    return SW_CODEC_OK;
}

void sw_png_close(sw_png_decoder *decoder) {
    if (decoder == NULL) return;
    png_destroy_read_struct(&decoder->png, &decoder->info, NULL);
    free(decoder->icc);
    free(decoder->exif);
    free(decoder);
}

typedef struct sw_png_sink {
    uint8_t *data;
    size_t size;
    size_t capacity;
    int failed;
} sw_png_sink;

static void sw_png_write_fn(png_structp png, png_bytep bytes, png_size_t length) {
    sw_png_sink *sink = (sw_png_sink *)png_get_io_ptr(png);
    if (sink->size + length > sink->capacity) {
        size_t capacity = sink->capacity ? sink->capacity : 65536;
        while (capacity < sink->size + length) capacity *= 2;
        uint8_t *grown = realloc(sink->data, capacity);
        if (grown == NULL) {
            sink->failed = 1;
            png_error(png, "out of memory while encoding PNG");
        }
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->size, bytes, length);
    sink->size += length;
}

static void sw_png_flush_fn(png_structp png) { (void)png; }

struct sw_png_encoder {
    png_structp png;
    png_infop info;
    sw_png_error error;
    sw_png_sink sink;
    int height;
    int next_row;
};

sw_png_encoder *sw_png_encoder_open(int width, int height, int channels, int level, int filters, FILE *file,
                                    const sw_image_metadata *metadata, char *err, size_t errlen) {
    return sw_png_encoder_open_depth(width, height, channels, 8, level, filters, file, metadata, err, errlen);
}

sw_png_encoder *sw_png_encoder_open_depth(int width, int height, int channels, int depth, int level, int filters,
                                          FILE *file, const sw_image_metadata *metadata, char *err, size_t errlen) {
    if (depth != 8 && depth != 16) {
        sw_copy(err, errlen, "PNG encoding takes 8 or 16 bits a sample");
        return NULL;
    }
    int color_type;
    switch (channels) {
    case 1: color_type = PNG_COLOR_TYPE_GRAY; break;
    case 2: color_type = PNG_COLOR_TYPE_GRAY_ALPHA; break;
    case 3: color_type = PNG_COLOR_TYPE_RGB; break;
    case 4: color_type = PNG_COLOR_TYPE_RGB_ALPHA; break;
    default:
        sw_copy(err, errlen, "PNG encoding needs 1 to 4 channels");
        return NULL;
    }
    if (width <= 0 || height <= 0) {
        sw_copy(err, errlen, "PNG dimensions must be positive");
        return NULL;
    }
    sw_png_encoder *encoder = calloc(1, sizeof *encoder);
    if (encoder == NULL) {
        sw_copy(err, errlen, "out of memory");
        return NULL;
    }
    encoder->height = height;
    encoder->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &encoder->error, sw_png_error_fn, sw_png_warning_fn);
    encoder->info = encoder->png != NULL ? png_create_info_struct(encoder->png) : NULL;
    if (encoder->info == NULL) {
        sw_copy(err, errlen, "cannot create the PNG encoder");
        sw_png_encoder_close(encoder);
        return NULL;
    }
    if (setjmp(encoder->error.jump)) {
        sw_copy(err, errlen, encoder->error.message);
        sw_png_encoder_close(encoder);
        return NULL;
    }
    if (file != NULL) {
        png_init_io(encoder->png, file);
    } else {
        png_set_write_fn(encoder->png, &encoder->sink, sw_png_write_fn, sw_png_flush_fn);
    }
    png_set_compression_level(encoder->png, level < 0 ? 0 : (level > 9 ? 9 : level));
    if (filters != 0) png_set_filter(encoder->png, PNG_FILTER_TYPE_BASE, filters);
    png_set_IHDR(encoder->png, encoder->info, (png_uint_32)width, (png_uint_32)height, depth, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (metadata != NULL && metadata->icc_size > 0 && metadata->icc_size <= 0x7FFFFFFF) {
        /* A profile libpng finds invalid is left out (a benign error, made a warning, which is ignored). */
        png_set_benign_errors(encoder->png, 1);
        png_set_iCCP(encoder->png, encoder->info, "ICC Profile", PNG_COMPRESSION_TYPE_BASE, metadata->icc,
                     (png_uint_32)metadata->icc_size);
    }
    if (metadata != NULL && metadata->exif_size > 0 && metadata->exif_size <= 0x7FFFFFFF) {
        uint8_t *exif = sw_png_copy_bytes(metadata->exif, metadata->exif_size);
        if (exif != NULL) {
            sw_exif_reset_orientation(exif, metadata->exif_size);
            png_set_eXIf_1(encoder->png, encoder->info, (png_uint_32)metadata->exif_size, exif);
            free(exif);
        }
    }
    png_write_info(encoder->png, encoder->info);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (depth == 16) png_set_swap(encoder->png); /* host-order samples in, big-endian in the file */
#endif
    return encoder;
}

int sw_png_encoder_write(sw_png_encoder *encoder, const uint8_t *pixels, size_t stride, int rows,
                         const sw_cancellation *cancel, char *err, size_t errlen) {
    if (setjmp(encoder->error.jump)) {
        sw_copy(err, errlen, encoder->error.message);
        return SW_CODEC_ERROR;
    }
    for (int i = 0; i < rows && encoder->next_row < encoder->height; i++) {
        if (sw_should_stop(cancel, (unsigned)encoder->next_row)) return SW_CODEC_CANCELLED;
        png_write_row(encoder->png, (png_const_bytep)(pixels + (size_t)i * stride));
        encoder->next_row++;
    }
    return SW_CODEC_OK;
}

int sw_png_encoder_finish(sw_png_encoder *encoder, uint8_t **out, size_t *out_size, char *err, size_t errlen) {
    *out = NULL;
    *out_size = 0;
    if (setjmp(encoder->error.jump)) {
        sw_copy(err, errlen, encoder->error.message);
        return SW_CODEC_ERROR;
    }
    if (encoder->next_row < encoder->height) {
        sw_copy(err, errlen, "PNG encoder finished before its last row");
        return SW_CODEC_ERROR;
    }
    png_write_end(encoder->png, NULL);
    *out = encoder->sink.data;
    *out_size = encoder->sink.size;
    encoder->sink.data = NULL;
    return SW_CODEC_OK;
}

void sw_png_encoder_close(sw_png_encoder *encoder) {
    if (encoder == NULL) return;
    if (encoder->png != NULL) png_destroy_write_struct(&encoder->png, encoder->info != NULL ? &encoder->info : NULL);
    free(encoder->sink.data);
    free(encoder);
}
