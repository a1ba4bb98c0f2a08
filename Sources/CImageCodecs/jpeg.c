/* JPEG decode/encode through libjpeg-turbo. Every libjpeg call happens below a setjmp in this file. */
#include "CImageCodecs.h"
#include "cancellation.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

typedef struct sw_jpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} sw_jpeg_error;

struct sw_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    sw_jpeg_error error;
    int cmyk;
    int inverted_cmyk;
    int channels;
};

static void sw_copy_message(char *err, size_t errlen, const char *message) {
    if (err == NULL || errlen == 0) return;
    snprintf(err, errlen, "%s", message);
}

static void sw_jpeg_error_exit(j_common_ptr cinfo) {
    sw_jpeg_error *error = (sw_jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    longjmp(error->jump, 1);
}

/* Warnings are ignored (real-world files are often slightly off), except a premature end of data:
   libjpeg would fill the missing rows with gray and call it a success. */
static void sw_jpeg_emit_message(j_common_ptr cinfo, int level) {
    if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
        sw_jpeg_error *error = (sw_jpeg_error *)cinfo->err;
        snprintf(error->message, sizeof error->message, "truncated JPEG data (premature end of file)");
        longjmp(error->jump, 1);
    }
}

static void sw_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void sw_jpeg_install_errors(sw_jpeg_error *error) {
    jpeg_std_error(&error->base);
    error->base.error_exit = sw_jpeg_error_exit;
    error->base.emit_message = sw_jpeg_emit_message;
    error->base.output_message = sw_jpeg_output_message;
    error->message[0] = 0;
}

static unsigned sw_read16(const uint8_t *p, int little) {
    return little ? (unsigned)(p[0] | (p[1] << 8)) : (unsigned)((p[0] << 8) | p[1]);
}

static uint32_t sw_read32(const uint8_t *p, int little) {
    return little ? ((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24))
                  : (((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3]);
}

/* The orientation tag (0x0112) of IFD0 in an APP1 "Exif\0\0" payload; 1 when absent or malformed. */
static int sw_exif_orientation(const uint8_t *data, size_t size) {
    if (size < 14 || memcmp(data, "Exif\0\0", 6) != 0) return 1;
    const uint8_t *tiff = data + 6;
    size_t length = size - 6;
    int little;
    if (tiff[0] == 'I' && tiff[1] == 'I') little = 1;
    else if (tiff[0] == 'M' && tiff[1] == 'M') little = 0;
    else return 1;
    if (sw_read16(tiff + 2, little) != 42) return 1;
    uint32_t ifd = sw_read32(tiff + 4, little);
    if ((size_t)ifd + 2 > length) return 1;
    unsigned count = sw_read16(tiff + ifd, little);
    for (unsigned i = 0; i < count; i++) {
        size_t entry = (size_t)ifd + 2 + (size_t)i * 12;
        if (entry + 12 > length) return 1;
        if (sw_read16(tiff + entry, little) == 0x0112) {
            unsigned type = sw_read16(tiff + entry + 2, little);
            unsigned value = type == 3 ? sw_read16(tiff + entry + 8, little) : 1;
            return (value >= 1 && value <= 8) ? (int)value : 1;
        }
    }
    return 1;
}

sw_jpeg_decoder *sw_jpeg_open(const uint8_t *data, size_t size, sw_image_info *info, char *err, size_t errlen) {
    memset(info, 0, sizeof *info);
    sw_jpeg_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        sw_copy_message(err, errlen, "out of memory");
        return NULL;
    }
    if (size == 0 || size > (size_t)0xFFFFFFFFu) {
        sw_copy_message(err, errlen, size == 0 ? "empty JPEG data" : "JPEG data larger than 4 GiB");
        free(decoder);
        return NULL;
    }
    decoder->cinfo.err = &decoder->error.base;
    sw_jpeg_install_errors(&decoder->error);
    if (setjmp(decoder->error.jump)) {
        sw_copy_message(err, errlen, decoder->error.message);
        jpeg_destroy_decompress(&decoder->cinfo);
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    jpeg_mem_src(&decoder->cinfo, (unsigned char *)data, (unsigned long)size);
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&decoder->cinfo, TRUE);

    int orientation = 1;
    for (jpeg_saved_marker_ptr marker = decoder->cinfo.marker_list; marker != NULL; marker = marker->next) {
        if (marker->marker == JPEG_APP0 + 1) {
            orientation = sw_exif_orientation(marker->data, marker->data_length);
            if (orientation != 1) break;
        }
    }

    switch (decoder->cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
        decoder->cinfo.out_color_space = JCS_GRAYSCALE;
        decoder->channels = 1;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        decoder->cinfo.out_color_space = JCS_CMYK;
        decoder->cmyk = 1;
        /* Photoshop writes inverted CMYK and says so with an Adobe marker. */
        decoder->inverted_cmyk = decoder->cinfo.saw_Adobe_marker;
        decoder->channels = 3;
        break;
    default:
        decoder->cinfo.out_color_space = JCS_RGB;
        decoder->channels = 3;
        break;
    }
    jpeg_calc_output_dimensions(&decoder->cinfo);

    info->width = (int)decoder->cinfo.output_width;
    info->height = (int)decoder->cinfo.output_height;
    info->channels = decoder->channels;
    info->orientation = orientation;
    info->converted_from_cmyk = decoder->cmyk;
    info->source_bit_depth = 8;
    return decoder;
}

int sw_jpeg_read(sw_jpeg_decoder *decoder, uint8_t *pixels, size_t stride, const sw_cancellation *cancel,
                 char *err, size_t errlen) {
    uint8_t *volatile cmyk_row = NULL;
    if (setjmp(decoder->error.jump)) {
        free(cmyk_row);
        sw_copy_message(err, errlen, decoder->error.message);
        return SW_CODEC_ERROR;
    }
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    jpeg_start_decompress(cinfo);
    if (decoder->cmyk) {
        cmyk_row = malloc((size_t)cinfo->output_width * 4);
        if (cmyk_row == NULL) {
            sw_copy_message(err, errlen, "out of memory");
            return SW_CODEC_ERROR;
        }
    }
    while (cinfo->output_scanline < cinfo->output_height) {
        if (sw_should_stop(cancel, cinfo->output_scanline)) {
            free(cmyk_row);
            jpeg_abort_decompress(cinfo);
            return SW_CODEC_CANCELLED;
        }
        uint8_t *row = pixels + (size_t)cinfo->output_scanline * stride;
        if (!decoder->cmyk) {
            JSAMPROW rows[1] = { row };
            jpeg_read_scanlines(cinfo, rows, 1);
            continue;
        }
        JSAMPROW rows[1] = { cmyk_row };
        jpeg_read_scanlines(cinfo, rows, 1);
        /* A naive CMYK -> RGB conversion (no colour profile): R = (1-C)(1-K), etc. */
        for (JDIMENSION x = 0; x < cinfo->output_width; x++) {
            unsigned c = cmyk_row[4 * x], m = cmyk_row[4 * x + 1], y = cmyk_row[4 * x + 2], k = cmyk_row[4 * x + 3];
            if (!decoder->inverted_cmyk) {
                c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k;
            }
            row[3 * x] = (uint8_t)((c * k + 127) / 255);
            row[3 * x + 1] = (uint8_t)((m * k + 127) / 255);
            row[3 * x + 2] = (uint8_t)((y * k + 127) / 255);
        }
    }
    jpeg_finish_decompress(cinfo);
    free(cmyk_row);
    return SW_CODEC_OK;
}

void sw_jpeg_close(sw_jpeg_decoder *decoder) {
    if (decoder == NULL) return;
    /* jpeg_destroy never raises an error. */
    jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder);
}

int sw_jpeg_encode(const uint8_t *pixels, int width, int height, int channels, size_t stride, int quality,
                   const sw_cancellation *cancel, uint8_t **out, size_t *out_size, char *err, size_t errlen) {
    *out = NULL;
    *out_size = 0;
    if (channels != 1 && channels != 3) {
        sw_copy_message(err, errlen, "JPEG encoding needs 1 (gray) or 3 (RGB) channels");
        return SW_CODEC_ERROR;
    }
    if (width <= 0 || height <= 0 || width > 65500 || height > 65500) {
        sw_copy_message(err, errlen, "JPEG dimensions must be between 1 and 65500 pixels");
        return SW_CODEC_ERROR;
    }
    struct jpeg_compress_struct cinfo;
    sw_jpeg_error error;
    unsigned char *buffer = NULL;
    unsigned long buffer_size = 0;
    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = &error.base;
    sw_jpeg_install_errors(&error);
    if (setjmp(error.jump)) {
        sw_copy_message(err, errlen, error.message);
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        return SW_CODEC_ERROR;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buffer, &buffer_size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = channels;
    cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality < 1 ? 1 : (quality > 100 ? 100 : quality), TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        if (sw_should_stop(cancel, cinfo.next_scanline)) {
            jpeg_destroy_compress(&cinfo);
            free(buffer);
            return SW_CODEC_CANCELLED;
        }
        JSAMPROW rows[1] = { (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * stride) };
        jpeg_write_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = buffer;
    *out_size = (size_t)buffer_size;
    return SW_CODEC_OK;
}

void sw_codec_free(void *pointer) { free(pointer); }
